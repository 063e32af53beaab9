"""Faults over real DDS that start their own nodes: the memory node SIGKILLed 20 times during
writes, `frankenbot up`'s restart with backoff (and --no-restart), and a whole stack on a
read-only memory. Kept apart from test_reliability_ros.py's module-wide stack: two memory nodes
in one ROS domain would answer the same service."""

from __future__ import annotations

import signal
import subprocess
import threading
import time

import pytest

from frankenbot.bringup.faults import NodeFaults, memory_node_kill_trials
from frankenbot.bringup.processes import NodeGroup
from frankenbot.eval.reliability import _mount_tmpfs, _umount, _write

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.heavy]


def test_twenty_sigkills_of_the_memory_node_during_writes_lose_nothing(tmp_path):
    results = memory_node_kill_trials(tmp_path, kills=20, seed=1, max_delay_s=1.0)
    assert len(results) == 20
    assert sum(r.data_lost for r in results) == 0
    assert all(r.survived for r in results), [r.line() for r in results if not r.survived]


def test_supervisor_restarts_a_crashed_node_with_backoff_and_a_log_line(tmp_path):
    lines: list[str] = []
    params = {"memory": {"db_path": str(tmp_path / "m.sqlite3"), "use_embeddings": False}}
    with NodeGroup(setup="sim", log_dir=tmp_path / "logs", parameters=params) as group:
        group.start(["memory"])
        first_pid = group.get("memory").process.pid
        watcher = threading.Thread(target=group.supervise, kwargs=dict(
            restart=True, backoff_s=0.5, log=lines.append, stop_after_s=40.0), daemon=True)
        watcher.start()
        time.sleep(2.0)
        group.kill("memory", signal.SIGKILL)
        deadline = time.monotonic() + 20.0
        while group.get("memory").process.pid == first_pid and time.monotonic() < deadline:
            time.sleep(0.1)
        second = group.get("memory")
        assert second.process.pid != first_pid and second.alive() and second.restarts == 1
        group.kill("memory", signal.SIGKILL)  # crashes again at once: the delay doubles
        deadline = time.monotonic() + 20.0
        while group.get("memory").restarts < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert group.get("memory").restarts == 2
    text = "\n".join(lines)
    assert "frankenbot_memory exited (-9); restarting in 0.5 s" in text, text
    assert "restarting in 1 s" in text and "frankenbot_memory restarted" in text, text


def test_no_restart_ends_the_watch_with_the_exit_code(tmp_path):
    lines: list[str] = []
    params = {"memory": {"db_path": str(tmp_path / "m.sqlite3"), "use_embeddings": False}}
    with NodeGroup(setup="sim", log_dir=tmp_path / "logs", parameters=params) as group:
        group.start(["memory"])
        threading.Timer(2.0, lambda: group.kill("memory", signal.SIGKILL)).start()
        code = group.supervise(restart=False, log=lines.append, stop_after_s=30.0)
    assert code == -9 and "not restarting (--no-restart)" in lines[0]


def test_a_read_only_memory_lets_the_task_run_and_reports_the_error(tmp_path):
    """The memory node serves a read-only database; the task succeeds by the oracle and its
    summary says the episode was not recorded, and why."""
    ro = tmp_path / "ro"
    mounted = _mount_tmpfs(ro, "8m")
    ro.mkdir(exist_ok=True)
    db = ro / "memory.sqlite3"
    _write(db, 1)  # one episode, no promoted skill: the plan is the one an empty memory gives
    if mounted:
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
    else:
        db.chmod(0o444)
        ro.chmod(0o555)
    before = db.read_bytes()
    try:
        with NodeFaults(tmp_path / "stack", db_path=db) as f:
            for seed in (1, 101):  # a second scene if the first fails on its own (loaded machine)
                run, ok = f.run_task("put_in_bowl", seed)
                if ok:
                    break
        assert ok, run.text
        assert run.result is not None and run.result.success
        assert "memory error, episode not recorded" in run.result.summary
        assert "read-only" in run.result.summary
        assert db.read_bytes() == before
    finally:
        if mounted:
            _umount(ro)
        else:
            ro.chmod(0o755)

"""The task-suite runner and its in-process brain: real sim, perception, executor and offline
planner."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow


def test_suite_runs_an_episode_judged_by_the_oracle_and_writes_its_report(tmp_path) -> None:
    from frankenbot.eval.recording import summarise_mcap
    from frankenbot.eval.suite import SuiteSpec, run_suite

    lines: list[str] = []
    outcomes, json_path, md_path = run_suite(SuiteSpec(("pick_up",), (0,), record=True),
                                             out_dir=tmp_path, realtime_factor=3.0,
                                             log=lines.append)
    (o,) = outcomes
    assert o.success and o.program_ok, o.detail
    assert o.vlm_calls == 0 and o.program_lines > 0 and o.wall_time > 0
    data = json.loads(json_path.read_text())
    assert json.dumps(data).count('"pick_up"') >= 1
    assert "| pick_up | 1 | 1 |" in md_path.read_text()
    assert any(line.startswith("  ok   pick_up") for line in lines)
    assert any(line.startswith("suite: 1/1 (100%)") for line in lines)  # progress, plain
    for plot in ("success", "anomaly-classes", "latency"):
        assert (tmp_path / f"suite-offline-{plot}.png").stat().st_size > 5000
    # the episode's recording, in ROS 2 encoding, read back
    topics = summarise_mcap(tmp_path / "recordings" / "suite-offline" / "pick_up-0.mcap").topics
    assert topics["/joint_states"][0] == "sensor_msgs/msg/JointState"
    assert topics["/joint_states"][1] > 50  # 50 Hz of sim time over the episode
    assert topics["/frankenbot/tree_state"][1] >= 4  # every tree change
    assert topics["/frankenbot/task_status"][1] == 2  # start and end
    assert topics["/frankenbot/scene"][1] >= 2 and topics["/camera/camera/color/image_raw"][1] >= 2
    assert "/frankenbot/events" in topics


def test_brain_cancels_an_episode_past_its_timeout_and_records_into_memory(tmp_path) -> None:
    from frankenbot.eval.inprocess import BrainOptions, InProcessBrain
    from frankenbot.memory.store import MemoryStore

    db = tmp_path / "memory.db"
    with InProcessBrain(BrainOptions(realtime_factor=1.0, episode_timeout=1.5,
                                     memory_path=db)) as brain:
        timed_out = brain.run_episode("put_in_bowl", 0)
        assert not brain.world.trajectory_active()  # the watchdog's cancel stopped the arm
    assert not timed_out.success and not timed_out.program_ok
    assert "episode timeout" in timed_out.detail and "cancelled" in timed_out.detail
    store = MemoryStore.open(db)
    try:
        (episode,) = store.episodes()
        assert episode.record.instruction == timed_out.instruction
        assert not episode.record.success and episode.record.outcome == "cancelled"
    finally:
        store.close()


def test_an_episode_with_an_anomaly_says_what_it_was_and_how_it_was_handled() -> None:
    from frankenbot.eval.inprocess import BrainOptions, InProcessBrain

    with InProcessBrain(BrainOptions(realtime_factor=3.0)) as brain:
        o = brain.run_episode("put_in_bowl", 2, inject=("drop_in_transport", "transport"))
    assert o.anomalies >= 1 and len(o.anomaly_notes) == o.anomalies == len(o.tiers)
    # the dropped block as the brain saw it: the fingers closing on nothing or the program's own
    # drop monitor, whichever fired first
    first = o.anomaly_notes[0]
    assert first.split(" at ", 1)[0] in ("grasp_lost", "program_monitor"), first
    assert "green_block" in first, first
    from frankenbot.common import RecoveryOutcome

    assert first.endswith(tuple(f"({v.value})" for v in RecoveryOutcome)), first
    assert all(f"-> tier {t} " in note
               for t, note in zip(o.tiers, o.anomaly_notes, strict=True))

"""Faults over real DDS, every node in its own process (issue 21): the ROS half of the
reliability checks (the store-level half is ``frankenbot.eval.reliability``).

* ``NodeFaults``: all nodes as processes (``NodeGroup``) plus a client; ``kill_trial`` SIGKILLs
  one node mid-task: the rest must end the task within ``END_BOUND_S``, the result must name
  the vanished dependency, the arm must be still, the other nodes alive, and after a restart
  the next task must succeed by the sim oracle.
* ``fuzz_trial``: ``TopicFuzzer`` publishes random field values on every subscribed topic
  while a task runs; no node may die, the task must end, the next one must succeed.
* ``memory_node_kill_trials``: the memory node SIGKILLed during ``record_episode`` calls; every
  episode it acknowledged must be in the reopened, sound store.

``run_benchmark`` is ``frankenbot bench --component reliability``.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frankenbot.eval.reliability import (
    FaultResult,
    TopicFuzzer,
    stored_task_ids,
    writer_program,
)
from frankenbot.eval.reliability import run_benchmark as _run_store_benchmark

NODES = ("perception", "memory", "planner", "executor", "sim")
END_BOUND_S = 60.0  # s from a kill to the task's end that counts as "ended cleanly"
NEXT_ATTEMPTS = 2  # scenes tried for "the next task succeeds" (see next_task_succeeds)
STILL_RAD_S = 0.02  # rad/s: joint speeds below this on every joint count as "arm stopped"


def memory_node_kill_trials(log_dir: Path, kills: int = 20, seed: int = 0,
                            max_delay_s: float = 1.5) -> list[FaultResult]:
    """SIGKILL the memory node (its own process, over DDS) ``kills`` times while a client
    records episodes through /frankenbot/memory/record_episode; every episode the node
    answered ``ok`` for must be in the store afterwards, and the store must be sound."""
    from frankenbot.bringup.processes import NodeGroup
    from frankenbot.bringup.ros_client import BrainClient
    from frankenbot.errors import FrankenbotError
    from frankenbot_interfaces.srv import RecordEpisode

    rng = random.Random(seed)
    db = Path(log_dir) / "memory.sqlite3"
    params = {"memory": {"db_path": str(db), "use_embeddings": False, "load_seeds": False,
                         "min_support": 2}}
    service = "/frankenbot/memory/record_episode"
    committed: set[str] = set()
    results: list[FaultResult] = []
    counter = [0]
    with NodeGroup(setup="sim", log_dir=Path(log_dir) / "logs", parameters=params) as group, \
            BrainClient("frankenbot_memory_killer") as client:
        group.start(["memory"])
        for k in range(kills):
            if client.wait_for_services([service], timeout=60.0):
                results.append(FaultResult(f"memory node sigkill {k + 1}", False,
                                           detail="the memory node did not come up"))
                group.restart("memory")
                continue
            stop = threading.Event()
            got: list[str] = []

            def write(stop: threading.Event = stop, got: list[str] = got) -> None:
                while not stop.is_set():
                    i = counter[0]
                    counter[0] += 1
                    req = RecordEpisode.Request(
                        task_id=f"n-{i}", instruction=f"put block {i} in the green bowl",
                        program=writer_program(i), success=True, outcome="success",
                        trace_json="[]")
                    try:
                        res = client._call(RecordEpisode, service, req, 5.0)
                    except FrankenbotError:
                        return  # the node is gone
                    if res.ok:
                        got.append(req.task_id)

            writer = threading.Thread(target=write, daemon=True)
            writer.start()
            deadline = time.monotonic() + 30.0
            while not got and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, max_delay_s))
            group.kill("memory", signal.SIGKILL)
            stop.set()
            writer.join(10.0)
            committed |= set(got)
            t0 = time.monotonic()
            ids, problems, promoted = stored_task_ids(db)
            lost = committed - ids
            results.append(FaultResult(
                f"memory node sigkill {k + 1}", bool(got) and not lost and not problems,
                len(lost), time.monotonic() - t0,
                f"{len(got)} acknowledged this run, {len(committed)} in all, {promoted} "
                f"promoted" + (f"; integrity: {problems[:2]}" if problems else "")))
            group.restart("memory")
    return results



# ------------------------------------------------------------------ node faults over DDS

SERVICES = ["/frankenbot/submit_task", "/frankenbot/memory/get_context",
            "/frankenbot/memory/record_episode", "/frankenbot_sim/reset",
            "/frankenbot_sim/evaluate"]
NODE_SERVICES = {"perception": "/frankenbot_perception/reset",
                 "memory": "/frankenbot/memory/record_episode",
                 "planner": "/frankenbot/submit_task", "sim": "/frankenbot_sim/reset",
                 "executor": ""}
# what the task's result must name when this node vanished
NAMES = {"perception": ("perception",), "memory": ("memory",), "planner": ("planner",),
         "executor": ("executor",), "sim": ("sim", "joint_states", "driver")}


@dataclass
class TaskRun:
    """One task over the run_task action, watched from another thread."""

    instruction: str
    phase: str = ""
    executing_at: float | None = None
    result: Any = None
    error: str = ""
    ended_at: float | None = None
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def text(self) -> str:
        if self.result is not None:
            return f"{self.result.outcome}: {self.result.summary}"
        return self.error


class JointWatch:
    """Latest joint speeds from /joint_states (to check that the arm is still)."""

    def __init__(self, client: Any) -> None:
        from sensor_msgs.msg import JointState

        self.latest: tuple[float, float] | None = None  # (monotonic time, max |velocity|)
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup

        # depth 1 in its own group: only the latest sample matters, and a backlog at 125 Hz must
        # never delay the client's service answers
        self._sub = client.node.create_subscription(
            JointState, "/joint_states", self._on, 1,
            callback_group=MutuallyExclusiveCallbackGroup())

    def _on(self, msg: Any) -> None:
        vel = [abs(v) for v in msg.velocity[:6]]
        self.latest = (time.monotonic(), max(vel) if vel else 0.0)

    def still_within(self, timeout: float) -> bool | None:
        """True once the arm is still (a fresh message with all speeds small), None if no
        joint states arrive (the sim is down)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.latest
            if got is not None and time.monotonic() - got[0] < 0.5 and got[1] < STILL_RAD_S:
                return True
            time.sleep(0.05)
        got = self.latest
        return None if got is None or time.monotonic() - got[0] > 1.0 else False


class NodeFaults:
    """All nodes as processes plus a client: run tasks, kill and restart nodes."""

    def __init__(self, log_dir: Path, *, db_path: Path | None = None,
                 planner: str = "offline") -> None:
        from frankenbot.bringup.processes import NODE_EXECUTABLES, NodeGroup
        from frankenbot.bringup.ros_client import BrainClient

        self.log_dir = Path(log_dir)
        db = db_path or self.log_dir / "memory.sqlite3"
        params = {"sim": {"task": "put_in_bowl", "seed": 0},
                  "memory": {"db_path": str(db)}, "planner": {"planner_mode": planner}}
        self.group = NodeGroup(setup="sim", log_dir=self.log_dir / "logs", parameters=params)
        self.group.start(NODE_EXECUTABLES)
        self.client = BrainClient("frankenbot_reliability")
        self._joints: JointWatch | None = None  # made on first use: only kill trials need it
        missing = self.client.wait_for_services(SERVICES, timeout=180.0)
        self.group.check_alive()
        if missing:
            self.close()
            from frankenbot.errors import FrankenbotError

            raise FrankenbotError(f"services missing after start-up: {missing}")

    @property
    def joints(self) -> JointWatch:
        """/joint_states at 125 Hz cost the client's executor: subscribed only when needed."""
        if self._joints is None:
            self._joints = JointWatch(self.client)
        return self._joints

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            self.group.stop()

    def __enter__(self) -> "NodeFaults":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def prepare(self, family: str, seed: int) -> str:
        """Reset the sim to (family, seed), wait for perception to see it; the instruction."""
        response = self.client.sim_reset(family, seed, timeout=120.0)  # a loaded machine
        self.client.wait_for_scene(after=self.client.sim_time(), timeout=60.0)
        return response.instruction

    def start_task(self, instruction: str, timeout: float = 300.0) -> TaskRun:
        run = TaskRun(instruction)

        def on_feedback(fb: Any) -> None:
            run.phase = fb.phase
            if fb.phase == "executing" and run.executing_at is None:
                run.executing_at = time.monotonic()

        def go() -> None:
            try:
                run.result = self.client.run_task(instruction, timeout=timeout,
                                                  on_feedback=on_feedback)
            except Exception as e:  # a vanished planner, a timeout: recorded, judged later
                run.error = str(e)
            run.ended_at = time.monotonic()
            run.done.set()

        threading.Thread(target=go, name="reliability-task", daemon=True).start()
        return run

    def run_task(self, family: str, seed: int, timeout: float = 300.0) -> tuple[TaskRun, bool]:
        """One task end to end: (the run, the oracle's verdict)."""
        instruction = self.prepare(family, seed)
        run = self.start_task(instruction, timeout)
        run.done.wait(timeout + 30.0)
        verdict = self.client.sim_evaluate()
        return run, bool(verdict.success)

    def restart(self, node: str, timeout: float = 120.0) -> None:
        self.group.restart(node)
        service = NODE_SERVICES[node]
        if service:
            missing = self.client.wait_for_services([service], timeout=timeout)
            if missing:
                from frankenbot.errors import FrankenbotError

                raise FrankenbotError(f"{node} did not come back: {missing} missing")
        else:  # the executor serves an action only: wait until its server is discovered
            from frankenbot.nodes.action_client import ActionClient
            from frankenbot_interfaces.action import ExecuteProgram

            probe = ActionClient(self.client.node, ExecuteProgram, "/frankenbot/execute_program")
            try:
                if not probe.wait_for_server(timeout_sec=timeout):
                    from frankenbot.errors import FrankenbotError

                    raise FrankenbotError(f"{node} did not come back: no action server")
            finally:
                probe.destroy()
        time.sleep(2.0)  # let the other nodes discover it too (action servers, latched topics)

    def next_task_succeeds(self, family: str, seed: int, attempts: int = NEXT_ATTEMPTS
                           ) -> tuple[bool, str]:
        """(success by the oracle, what happened) for a task after a fault, on fresh scenes.

        A second scene is tried when the first task fails: on a loaded shared machine a task can
        fail on its own (a late camera frame reads as a stale scene), which says nothing about
        recovery; a stack that did not recover fails every attempt. The attempt is reported.
        """
        text = ""
        for k in range(attempts):
            try:
                run, ok = self.run_task(family, seed + 100 * k)
            except Exception as e:  # a reset or scene wait that failed
                ok, text = False, f"attempt {k + 1}: {e}"
                continue
            text = f"attempt {k + 1}: {run.text[:80]}"
            if ok:
                return True, text
        return False, text

    def kill_trial(self, node: str, *, family: str = "put_in_bowl", seed: int = 1,
                   kill_after_s: float = 2.0, next_family: str = "pick_up",
                   next_seed: int = 2) -> FaultResult:
        """SIGKILL ``node`` ``kill_after_s`` after execution starts; judge the aftermath."""
        _ = self.joints  # subscribed before the kill
        instruction = self.prepare(family, seed)
        run = self.start_task(instruction)
        deadline = time.monotonic() + 120.0
        while run.executing_at is None and not run.done.is_set() \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        if run.executing_at is None:
            return FaultResult(f"sigkill {node}", False,
                               detail=f"the task never started executing ({run.text[:80]})")
        time.sleep(kill_after_s)
        t_kill = time.monotonic()
        self.group.kill(node, signal.SIGKILL)
        ended = run.done.wait(END_BOUND_S)
        seconds = (run.ended_at or time.monotonic()) - t_kill
        text = run.text
        named = any(w in text.lower() for w in NAMES[node])
        still = self.joints.still_within(15.0) if node != "sim" else True
        if node == "planner":  # nobody is left to hear the result: the executor must stop
            time.sleep(1.0)
            named = named and "planner (frankenbot_planner) vanished" in \
                self.group.get("executor").tail(400)
        others_alive = all(p.alive() for p in self.group.processes if p.executable != node)
        try:
            self.restart(node)
            if node in ("sim", "perception"):
                time.sleep(1.0)
            next_ok, next_text = self.next_task_succeeds(next_family, next_seed)
        except Exception as e:
            next_ok, next_text = False, f"restart failed: {e}"
        # the planner's result travels with it: its death is named by the client's error
        ok = ended and named and bool(still) and others_alive and next_ok
        detail = (f"ended {'yes' if ended else 'NO'} ({text[:110]}); names it "
                  f"{'yes' if named else 'NO'}; arm still {still}; others alive "
                  f"{others_alive}; next task {'ok' if next_ok else 'FAILED'} ({next_text})")
        return FaultResult(f"sigkill {node}", ok, 0, seconds, detail)


# ---------------------------------------------------------------------- bad messages (DDS)


def fuzz_trial(faults: NodeFaults, *, duration_s: float = 20.0, max_messages: int = 800,
               seed: int = 0) -> FaultResult:
    """Random messages on every subscribed topic while a task runs: no node may die, the task
    must end; the next task (fuzzing over) must succeed by the oracle."""
    fuzzer = TopicFuzzer(faults.client, seed)
    instruction = faults.prepare("put_in_bowl", 3)
    t0 = time.monotonic()
    run = faults.start_task(instruction, timeout=240.0)
    sent = fuzzer.run(duration_s, max_messages)
    ended = run.done.wait(240.0)
    alive = [p.executable for p in faults.group.processes if p.alive()]
    dead = [n for n in NODES if n not in alive]
    next_ok, next_text = faults.next_task_succeeds("pick_up", 4)
    ok = ended and not dead and next_ok
    return FaultResult(f"fuzz {len(fuzzer.topics())} topics", ok, 0, time.monotonic() - t0,
                       f"{sent} messages; task {run.text[:70]}; dead {dead or 'none'}; next "
                       f"task {'ok' if next_ok else 'FAILED'} ({next_text})")


def ros_trials(tmp: Path) -> list[FaultResult]:
    """The DDS faults of the benchmark: 20 memory-node kills, the fuzz, one kill per node."""
    print("memory node SIGKILLed 20 times during record_episode calls over DDS", flush=True)
    rows = memory_node_kill_trials(tmp / "memory-node", kills=20, seed=0)
    print("node faults over DDS (all nodes as processes, offline planner)", flush=True)
    with NodeFaults(tmp / "ros") as faults:
        rows.append(fuzz_trial(faults))
        print(rows[-1].line(), flush=True)
        for node in NODES:
            rows.append(faults.kill_trial(node))
            print(rows[-1].line(), flush=True)
    return rows


def run_benchmark(quick: bool = False) -> dict[str, object]:
    """``frankenbot bench --component reliability``: the store faults, and (not ``quick``) the
    faults over DDS (about 10 minutes on a loaded 2-core machine)."""
    return _run_store_benchmark(quick=quick, ros_trials=ros_trials)

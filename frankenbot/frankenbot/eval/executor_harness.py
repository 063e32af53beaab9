"""Run the executor in-process against the MuJoCo sim: for the executor's tests and benchmark.

Over a ``frankenbot.eval.stack.SimStack`` (SimWorld stepped by a SimRunner thread, the SimRobot
adapter, the JTC backend with the safety envelope, the real Primitives), with the offline planner
for the first program and for tier-3 replans and a ``ProgramExecutor`` over them. Anomalies are
injected through the sim's own ``inject`` and judged by the sim's oracle.

Scene: by default the objects' poses are read from the simulator (the stack's ``ground_truth``
mode), so these measurements isolate the executor from perception (whose latency perception's
benchmark reports); it honours the camera-freeze anomaly by freezing the stamp, as perception's
staleness would. The brain itself never reads ground truth: this harness is measurement
scaffolding only.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from frankenbot.execution.executor import ExecutionOutcome, ExecutorParams, ProgramExecutor


@dataclass
class SimRun:
    """Result of one harness run: the executor's outcome, the oracle, the sim's anomaly log and
    the wall-clock onset of the first injected anomaly (None when none fired)."""

    outcome: ExecutionOutcome
    oracle_ok: bool
    oracle_text: str
    injected: list[Any] = field(default_factory=list)
    onset_wall: float | None = None
    wall_s: float = 0.0
    motions: tuple[float, ...] = ()  # monotonic times at which trajectories were sent

    def first_motion_after(self, t: float) -> float | None:
        """When the first trajectory at or after ``t`` was sent (a recovery's first motion)."""
        return next((m for m in self.motions if m >= t), None)


class SimHarness:
    """One sim stack + executor; ``run`` plays a task with optional injections."""

    def __init__(self, *, realtime_factor: float = 2.0,
                 params: ExecutorParams = ExecutorParams(), expert: Any = None,
                 scene: str = "ground_truth") -> None:
        from frankenbot.eval.stack import SimStack
        from frankenbot.planner.planner import Planner

        self.realtime_factor = realtime_factor
        self.stack = SimStack(scene=scene, realtime_factor=realtime_factor)
        self.world, self.robot = self.stack.world, self.stack.robot
        self.planner = Planner()
        self.params = params
        self.expert = expert
        self.executor = self._executor()

    def _executor(self) -> ProgramExecutor:
        return self.stack.executor(self.planner, params=self.params, expert=self.expert)

    def plan(self, instruction: str) -> str:
        from frankenbot.errors import PlannerError
        from frankenbot.planner.request import PlanRequest

        out = self.planner.plan(PlanRequest(instruction=instruction, scene=self.stack.scene()))
        if not out.ok:
            raise PlannerError(f"offline planner refused {instruction!r}: {out.message}")
        return str(out.program_text)

    def run(self, family: str, seed: int, *, inject: tuple[str, str] | None = None,
            program: str | None = None, params: dict[str, Any] | None = None,
            during: Callable[["SimHarness"], None] | None = None) -> SimRun:
        """Reset to (family, seed), plan (or use ``program``), inject, execute, judge."""
        instance = self.stack.reset(family, seed)
        self.executor = self._executor()
        instruction = instance.instruction
        motions: list[float] = []
        send = self.robot.send_trajectory

        def timed_send(trajectory: Any) -> Any:  # measurement only: when did the arm move
            motions.append(time.monotonic())
            return send(trajectory)

        self.robot.send_trajectory = timed_send  # type: ignore[method-assign]
        onset: list[float] = []
        seen_at_start = len(self.world.anomaly_log())
        seen = [seen_at_start]

        def watch(sample: Any) -> None:  # runner thread: stamp the injection's wall onset
            if onset:
                return
            log = self.world.anomaly_log()
            for rec in log[seen[0]:]:
                if rec.event == "fired":
                    onset.append(time.monotonic()
                                 - max(0.0, sample.stamp - rec.time) / self.realtime_factor)
                    return
            seen[0] = len(log)

        try:
            with self.stack.running(on_joint_state=watch):
                text = program if program is not None else self.plan(instruction)
                if inject is not None:
                    self.world.inject(inject[0], inject[1], params or {})
                t0 = time.monotonic()
                if during is not None:
                    threading.Thread(target=during, args=(self,), daemon=True).start()
                outcome = self.executor.run(text, task_id=f"{family}-{seed}",
                                            instruction=instruction)
        finally:
            del self.robot.send_trajectory  # back to the class's method
        wall = time.monotonic() - t0
        verdict = self.world.evaluate()
        fired = [r for r in self.world.anomaly_log()[seen_at_start:] if r.event == "fired"]
        return SimRun(outcome, bool(verdict.success), verdict.text, fired,
                      onset[0] if onset else None, wall, tuple(motions))

    def close(self) -> None:
        self.stack.close()

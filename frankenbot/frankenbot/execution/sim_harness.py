"""Run the executor in-process against the MuJoCo sim: for the executor's tests and benchmark.

Builds the real stack below the executor (SimWorld stepped by a SimRunner thread, the SimRobot
adapter, the JTC backend with the safety envelope, the real Primitives), the offline planner for
the first program and for tier-3 replans, and a ``ProgramExecutor`` over them. Anomalies are
injected through the sim's own ``inject`` and judged by the sim's oracle.

Scene: by default the objects' poses are read from the simulator (``pose_feed_scene``), so these
measurements isolate the executor from perception (whose latency perception's benchmark reports);
it honours the camera-freeze anomaly by freezing the stamp, as perception's staleness would. The
brain itself never reads ground truth: this harness is measurement scaffolding only.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from frankenbot.execution.executor import ExecutionOutcome, ExecutorParams, ProgramExecutor
from frankenbot.state import Scene, SceneObject


def _yaw(q: tuple[float, float, float, float]) -> float:
    w, x, y, z = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def pose_feed_scene(world: Any) -> Callable[[], Scene]:
    """Scene from simulator poses (measurement harness only), frozen while the camera is."""
    from frankenbot.sim import layout

    d, zone = layout.DRAWER, layout.ZONE
    last: list[Scene] = [Scene(stale=True)]

    def source() -> Scene:
        if world.camera_frozen():
            return last[0]
        objs = [SceneObject(st.name, st.name.replace("_", " "), st.shape, st.colour,
                            st.position, st.size, _yaw(st.quaternion), last_seen=world.time)
                for st in world.object_states().values()]
        objs.append(SceneObject("drawer", "drawer", "drawer", "", d.body_centre, d.body_size,
                                is_fixture=True))
        objs.append(SceneObject("zone", "cyan zone", "zone", "cyan",
                                (zone.centre[0], zone.centre[1], 0.0005),
                                (zone.size[0], zone.size[1], 0.001), is_fixture=True))
        last[0] = Scene.of(objs, stamp=world.time)
        return last[0]

    return source


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


class SimHarness:
    """One sim world + stack + executor; ``run`` plays a task with optional injections."""

    def __init__(self, *, realtime_factor: float = 2.0,
                 params: ExecutorParams = ExecutorParams(), expert: Any = None) -> None:
        from frankenbot.motion.sim_adapter import SimRobot
        from frankenbot.perception.eval import default_fixtures_path
        from frankenbot.planner.planner import Planner
        from frankenbot.primitives.factory import build_primitives
        from frankenbot.primitives.primitives import Primitives
        from frankenbot.sim.world import SimWorld

        self.realtime_factor = realtime_factor
        self.world = SimWorld()
        self.scene = pose_feed_scene(self.world)
        self.robot = SimRobot(self.world, scene_source=self.scene, physics_thread=True)
        fixtures = default_fixtures_path()

        def fresh() -> Primitives:  # beliefs (held object, drawer state) start empty per task
            return build_primitives(self.robot, fixtures=fixtures)

        self._fresh_primitives = fresh
        self.primitives = fresh()
        self.planner = Planner()
        self.params = params
        self.expert = expert
        self.executor = self._executor()

    def _executor(self) -> ProgramExecutor:
        return ProgramExecutor(
            self.primitives, self.primitives.snapshot, self.scene, stop_arm=self.robot.stop,
            params=self.params, expert=self.expert, replanner_for=self._replanner)

    def _replanner(self, task_id: str, instruction: str, text: str) -> Any:
        from frankenbot.execution.replanner import PlannerReplanner

        return PlannerReplanner(self.planner, instruction=instruction, program_text=text,
                                scene=self.scene)

    def plan(self, instruction: str) -> str:
        from frankenbot.errors import PlannerError
        from frankenbot.planner.request import PlanRequest

        out = self.planner.plan(PlanRequest(instruction=instruction, scene=self.scene()))
        if not out.ok:
            raise PlannerError(f"offline planner refused {instruction!r}: {out.message}")
        return str(out.program_text)

    def run(self, family: str, seed: int, *, inject: tuple[str, str] | None = None,
            program: str | None = None, params: dict[str, Any] | None = None,
            during: Callable[["SimHarness"], None] | None = None) -> SimRun:
        """Reset to (family, seed), plan (or use ``program``), inject, execute, judge."""
        from frankenbot.sim.runner import SimRunner

        self.robot.set_estop(False)
        self.world.reset(family, seed)
        self.primitives = self._fresh_primitives()
        self.executor = self._executor()
        instruction = self.world.task.instruction
        text = program if program is not None else self.plan(instruction)
        onset: list[float] = []
        seen_at_start = len(self.world.anomaly_log())
        seen = [seen_at_start]
        if inject is not None:
            self.world.inject(inject[0], inject[1], params or {})

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

        runner = SimRunner(self.world, realtime_factor=self.realtime_factor, render=False)
        runner.on_joint_state(watch)
        t0 = time.monotonic()
        with runner:
            if during is not None:
                threading.Thread(target=during, args=(self,), daemon=True).start()
            outcome = self.executor.run(text, task_id=f"{family}-{seed}",
                                        instruction=instruction)
            self.robot.stop()
        wall = time.monotonic() - t0
        verdict = self.world.evaluate()
        fired = [r for r in self.world.anomaly_log()[seen_at_start:] if r.event == "fired"]
        return SimRun(outcome, bool(verdict.success), verdict.text, fired,
                      onset[0] if onset else None, wall)

    def close(self) -> None:
        self.world.close()

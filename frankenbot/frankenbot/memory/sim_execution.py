"""Judge benchmark programs by running them in the MuJoCo sim and asking the sim's oracle.

For ``memory.benchmark.run(executor=SimExecutor())``: each call resets the world to the task
(family, seed), starts the physics thread and perception (rendered frames -> perceived scene, no
ground truth for the brain), runs the given program with the interpreter and the real primitives
(motion through the JTC backend and the safety envelope), then returns the oracle's verdict.

What this deliberately leaves out: the executor's monitor thread and escalation tiers. Memory's
benchmark compares programs written with and without skills in the nominal case, so the only
differences between arms are the programs themselves; anomaly handling is measured by the
executor's own benchmark and by the task suite. The episode counts as successful when the
oracle says the task's goal holds, whatever the program's own exit status.
"""

from __future__ import annotations

import time
from typing import Any

from frankenbot.program.catalog import Catalog
from frankenbot.program.tree import Program

SCENE_WAIT_S = 30.0  # wall seconds for the first perceived frame after a reset


class SimExecutor:
    """``(family, seed, program, catalog) -> (success, detail, trace JSON)``; then ``close()``."""

    def __init__(self, *, realtime_factor: float = 3.0, camera_rate: float = 10.0,
                 perception_rate: float = 10.0) -> None:
        from frankenbot.motion.sim_adapter import SimRobot
        from frankenbot.perception.eval import camera_of_world, default_fixtures_path
        from frankenbot.perception.fixtures import load_fixture_geometry
        from frankenbot.perception.pipeline import PerceptionPipeline
        from frankenbot.primitives.factory import build_primitives
        from frankenbot.primitives.primitives import Primitives
        from frankenbot.sim.world import SimWorld

        self.realtime_factor = realtime_factor
        self.camera_rate = camera_rate
        self.perception_rate = perception_rate
        self.world = SimWorld()
        self.pipeline = PerceptionPipeline(camera_of_world(self.world),
                                           load_fixture_geometry(default_fixtures_path()))
        self._source: Any = None
        self.robot = SimRobot(self.world, scene_source=self._scene, physics_thread=True)
        fixtures = default_fixtures_path()

        def fresh_primitives() -> Primitives:
            # New per episode: primitives keep beliefs (held object, drawer states) that must
            # not leak from one task's world into the next.
            return build_primitives(self.robot, fixtures=fixtures)

        self._fresh_primitives = fresh_primitives
        self.primitives = fresh_primitives()
        self.wall_time = 0.0

    def _scene(self) -> Any:
        from frankenbot.state import Scene

        return self._source.scene() if self._source is not None else Scene(stale=True)

    def __call__(self, family: str, seed: int, program: Program,
                 catalog: Catalog) -> tuple[bool, str, str]:
        from frankenbot.perception.sim_source import SimSceneSource
        from frankenbot.program.interpreter import Interpreter
        from frankenbot.sim.runner import SimRunner
        from frankenbot.state import WorldSnapshot

        t0 = time.monotonic()
        self.robot.set_estop(False)
        self.world.reset(family, seed)
        self.primitives = self._fresh_primitives()
        self.pipeline.reset()
        runner = SimRunner(self.world, realtime_factor=self.realtime_factor,
                           camera_rate=self.camera_rate, render=True)
        source = SimSceneSource(runner, self.pipeline, rate_hz=self.perception_rate)
        try:
            with runner, source:
                self._source = source
                source.wait_for_scene(timeout=SCENE_WAIT_S)

                def snapshot() -> WorldSnapshot:
                    return WorldSnapshot(self.primitives.snapshot(), self._scene(),
                                         self.primitives.facts(), self.robot.now())

                result = Interpreter(program, catalog, self.primitives, snapshot=snapshot,
                                     clock=self.robot.now).run()
                self.robot.stop()
                verdict = self.world.evaluate()
        finally:
            self._source = None
            self.wall_time += time.monotonic() - t0
        from frankenbot.program.trace import trace_to_json

        detail = f"program {result.status.value}: {result.reason}; oracle: {verdict.text}"
        return bool(verdict.success), detail.replace("\n", " "), trace_to_json(result.trace)

    def close(self) -> None:
        self.world.close()

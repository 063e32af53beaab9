"""The whole brain in one process over the MuJoCo sim: the task-suite benchmark's episode runner.

Same components as the ROS deployment, minus DDS: the sim stepped by a ``SimRunner`` thread with
rendering, perception (``SimSceneSource``) turning rendered frames into the scene the brain sees,
the SimRobot adapter, the JTC backend behind the safety envelope, the primitives, the executor
with its monitor thread and escalation tiers, the planner (offline or VLM) and, optionally, the
memory store. Success is the sim oracle's verdict; the brain never reads ground truth.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frankenbot.bench.report import EpisodeOutcome
from frankenbot.errors import FrankenbotError

SCENE_WAIT_S = 30.0  # wall seconds to wait for the first perceived frame after a reset


@dataclass(frozen=True)
class BrainOptions:
    planner: str = "offline"  # offline | vlm
    realtime_factor: float = 2.0  # sim seconds per wall second (the physics thread's pace)
    camera_rate: float = 10.0  # Hz of sim time
    perception_rate: float = 10.0  # Hz of wall time
    memory_path: Path | None = None  # None: no memory
    episode_timeout: float = 240.0  # wall seconds per episode


class InProcessBrain:
    """Build once, then ``run_episode(family, seed)`` as often as needed; ``close()`` at the end."""

    def __init__(self, options: BrainOptions = BrainOptions()) -> None:
        from frankenbot.execution.executor import ProgramExecutor
        from frankenbot.motion.sim_adapter import SimRobot
        from frankenbot.perception.eval import camera_of_world, default_fixtures_path
        from frankenbot.perception.fixtures import load_fixture_geometry
        from frankenbot.perception.pipeline import PerceptionPipeline
        from frankenbot.perception.sim_source import SimSceneSource
        from frankenbot.planner.planner import Planner
        from frankenbot.primitives.factory import build_primitives
        from frankenbot.sim.runner import SimRunner
        from frankenbot.sim.world import SimWorld

        self.options = options
        self.world = SimWorld()
        self._pipeline = PerceptionPipeline(camera_of_world(self.world),
                                            load_fixture_geometry(default_fixtures_path()))
        self._runner_type, self._source_type = SimRunner, SimSceneSource
        self.runner: Any = None  # one runner + perception thread per episode
        self.scene: Any = None
        self.robot = SimRobot(self.world, scene_source=self._perceived, physics_thread=True)
        self._build_primitives = lambda: build_primitives(self.robot,
                                                          fixtures=default_fixtures_path())
        self.planner = Planner(client=_vlm_client() if options.planner == "vlm" else None)
        self.planner_kind = options.planner
        self.memory = None
        if options.memory_path is not None:
            from frankenbot.memory.store import MemoryStore

            self.memory = MemoryStore.open(options.memory_path)
        self._executor_type = ProgramExecutor
        self.primitives: Any = None
        self.executor: Any = None

    def _fresh_executor(self) -> None:
        """New primitives and executor per episode: nothing (held object, drawer facts, escalation
        budgets) leaks from one episode into the next."""
        self.primitives = self._build_primitives()
        self.executor = self._executor_type(self.primitives, self.primitives.snapshot,
                                            self._perceived, stop_arm=self.robot.stop,
                                            replanner_for=self._replanner)

    def _perceived(self) -> Any:
        """The latest perceived scene (stale before the first frame of an episode)."""
        from frankenbot.state import Scene

        return self.scene.scene() if self.scene is not None else Scene(stale=True)

    def _replanner(self, task_id: str, instruction: str, text: str) -> Any:
        from frankenbot.execution.replanner import PlannerReplanner

        return PlannerReplanner(self.planner, instruction=instruction, program_text=text,
                                scene=self._perceived)

    def _plan(self, instruction: str) -> Any:
        from frankenbot.planner.request import PlanRequest

        skills: tuple = ()
        exemplars: tuple = ()
        experience: tuple = ()
        if self.memory is not None:
            from frankenbot.planner.request import Exemplar

            ctx = self.memory.get_context(instruction)
            wanted = {s.name for s in ctx.skills}
            skills = tuple(s for s in self.memory.catalog().skills if s.name in wanted)
            exemplars = tuple(Exemplar(e.instruction, e.program) for e in ctx.exemplars)
            experience = tuple(ctx.experience)
        request = PlanRequest(instruction=instruction, scene=self._perceived(), skills=skills,
                              exemplars=exemplars, anomaly_experience=experience,
                              planner=self.planner_kind)
        return self.planner.plan(request)

    def run_episode(self, family: str, seed: int, *, inject: tuple[str, str] | None = None
                    ) -> EpisodeOutcome:
        t0 = time.monotonic()
        self.robot.set_estop(False)
        instance = self.world.reset(family, seed)
        self._fresh_executor()
        self._pipeline.reset()
        self.runner = self._runner_type(self.world, realtime_factor=self.options.realtime_factor,
                                        camera_rate=self.options.camera_rate, render=True)
        self.scene = self._source_type(self.runner, self._pipeline,
                                       rate_hz=self.options.perception_rate)
        try:
            with self.runner, self.scene:
                return self._episode(family, seed, instance, inject, t0)
        finally:
            self.scene = None
            self.runner = None

    def _episode(self, family: str, seed: int, instance: Any, inject: tuple[str, str] | None,
                 t0: float) -> EpisodeOutcome:
        from frankenbot.program import parse_program
        from frankenbot.program.tree import count_lines

        self.scene.wait_for_scene(timeout=SCENE_WAIT_S)
        planned = self._plan(instance.instruction)
        if not planned.ok:
            return EpisodeOutcome(family, seed, instance.instruction, False, False,
                                  planned.vlm_calls, time.monotonic() - t0,
                                  detail=f"planner: {planned.message}")
        if inject is not None:
            self.world.inject(inject[0], inject[1], {})
        outcome = self.executor.run(planned.program_text, task_id=f"{family}-{seed}",
                                    instruction=instance.instruction)
        self.robot.stop()
        verdict = self.world.evaluate()
        tiers = tuple(int(a.tier) for a in outcome.anomalies)
        if self.memory is not None:
            self._record(instance.instruction, planned, outcome, bool(verdict.success))
        return EpisodeOutcome(
            family=family, seed=seed, instruction=instance.instruction,
            success=bool(verdict.success), program_ok=outcome.success,
            vlm_calls=planned.vlm_calls + outcome.vlm_calls, wall_time=time.monotonic() - t0,
            program_lines=count_lines(parse_program(planned.program_text).program),
            anomalies=len(tiers),
            tiers=tiers, injected=inject[0] if inject else "",
            detail="" if verdict.success else f"{outcome.status.value}: {outcome.reason}; "
                                              f"oracle: {verdict.text}")

    def _record(self, instruction: str, planned: Any, outcome: Any, success: bool) -> None:
        from frankenbot.memory.records import EpisodeRecord

        assert self.memory is not None
        self.memory.record_episode(EpisodeRecord(
            instruction=instruction, program=outcome.final_program, success=success,
            outcome=outcome.status.value, vlm_calls=planned.vlm_calls + outcome.vlm_calls,
            repair_calls=planned.repair_calls, execution_time=outcome.duration))

    def __enter__(self) -> "InProcessBrain":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
        self.world.close()


def _vlm_client() -> Any:
    from frankenbot.planner.planner import PlannerConfig, make_client

    client = make_client(PlannerConfig())
    if client is None:
        raise FrankenbotError("--planner vlm needs OPENAI_API_KEY (and OPENAI_BASE_URL for a "
                              "local OpenAI-compatible server)")
    return client

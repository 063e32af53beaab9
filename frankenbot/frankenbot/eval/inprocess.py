"""The whole brain in one process over the MuJoCo sim: the task-suite benchmark's episode runner.

Same components as the ROS deployment, minus DDS: the sim stepped by a ``SimRunner`` thread with
rendering, perception (``SimSceneSource``) turning rendered frames into the scene the brain sees,
the SimRobot adapter, the JTC backend behind the safety envelope, the primitives, the executor
with its monitor thread and escalation tiers, the planner (offline or VLM) and, optionally, the
memory store. Success is the sim oracle's verdict; the brain never reads ground truth.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from frankenbot.errors import FrankenbotError
from frankenbot.eval.stack import IN_PROCESS_STALE_S
from frankenbot.eval.tables import EpisodeOutcome


@dataclass(frozen=True)
class BrainOptions:
    planner: str = "offline"  # offline | vlm
    realtime_factor: float = 2.0  # sim seconds per wall second (the physics thread's pace)
    camera_rate: float = 10.0  # Hz of sim time
    perception_rate: float = 10.0  # Hz of wall time
    memory_path: Path | str | None = None  # None: no memory; a file or a database URL
    memory_config: Any = None  # a MemoryConfig (robot_id, thresholds); None: the defaults
    episode_timeout: float = 240.0  # wall seconds of execution before the episode is cancelled
    noise: str = "none"  # sim camera sensor model: none | realistic | harsh
    # safety review of each plan and replan: auto | always | never (the planner node's default)
    review: str = "auto"
    review_config: Any = None  # planner.review.ReviewConfig (None: config/review.yaml)
    scene_stale_after_s: float = IN_PROCESS_STALE_S  # see eval/stack.py


class InProcessBrain:
    """Build once, then ``run_episode(family, seed)`` as often as needed; ``close()`` at the end."""

    def __init__(self, options: BrainOptions = BrainOptions()) -> None:
        from frankenbot.eval.stack import SimStack
        from frankenbot.planner.planner import Planner

        self.options = options
        self.stack = SimStack(scene="perceived", realtime_factor=options.realtime_factor,
                              camera_rate=options.camera_rate,
                              perception_rate=options.perception_rate, noise=options.noise,
                              stale_timeout=options.scene_stale_after_s)
        self.world, self.robot = self.stack.world, self.stack.robot
        self.planner = Planner(client=_vlm_client() if options.planner == "vlm" else None)
        self.planner_kind = options.planner
        self.memory = None
        if options.memory_path is not None:
            from frankenbot.memory.store import MemoryStore

            self.memory = MemoryStore.open(options.memory_path, options.memory_config)
        self.executor: Any = None
        from frankenbot.execution.episode import EpisodeRunner, store_context

        # Memory learns from the executor's report only (EpisodeRunner.finish); the oracle's
        # verdict below is the measurement and never reaches it.
        from frankenbot.planner.review import review_port

        review = review_port(options.review, options.review_config)
        self.runner = EpisodeRunner(
            self.planner, scene=self.stack.scene,
            context=store_context(self.memory) if self.memory is not None else None,
            record=self.memory.record_episode if self.memory is not None else None,
            review=review)

    def run_episode(self, family: str, seed: int, *, inject: tuple[str, str] | None = None,
                    record_to: Path | None = None, instruction: str | None = None,
                    scene: Any = None, names: Mapping[str, str] | None = None
                    ) -> EpisodeOutcome:
        """One episode; ``record_to`` writes its MCAP recording (ROS 2 encoding) there;
        ``instruction`` replaces the task's own words (same task, same oracle: how
        ``bench --phrasings`` runs a phrasing on a sampled scene). ``scene``: a scene given as
        data (``sim.scene_spec.SceneSpec``, an external suite's task) instead of the family's,
        ``family`` then only labels the outcome; ``names``: what its objects are called."""
        from dataclasses import replace

        t0 = time.monotonic()
        instance = self.stack.reset(family, seed, scene=scene, names=names)
        if instruction is not None:
            instance = replace(instance, instruction=instruction)
        recording = None
        if record_to is not None:
            from frankenbot.eval.episode_recording import EpisodeRecording

            recording = EpisodeRecording(record_to, task_id=f"{family}-{seed}",
                                         instruction=instance.instruction,
                                         scene=self.stack.scene, sim_time=self.robot.now)
        hooks = {} if recording is None else {"on_trace": recording.on_trace,
                                              "on_event": recording.on_event}
        # A new executor per episode over the new primitives: nothing (held object, drawer
        # facts, escalation budgets) leaks from one episode into the next.
        experience = None
        if self.memory is not None:
            from frankenbot.memory.experience import experience_prior

            experience = experience_prior(self.memory)
        from frankenbot.execution.executor import ExecutorParams

        params = ExecutorParams(scene_stale_after_s=self.options.scene_stale_after_s)
        # tier-3 replans go through the runner: reviewed like the first plan
        self.executor = self.stack.executor(self.runner, experience=experience, params=params,
                                            **hooks)
        try:
            with self.stack.running(
                    on_joint_state=recording.on_joint_state if recording else None,
                    on_frame=recording.on_frame if recording else None):
                if recording is not None:
                    recording.status(phase="planning")
                outcome = self._episode(family, seed, instance, inject, t0)
            if recording is not None:
                # the program's own end, as the planner node reports it; the oracle's
                # verdict goes in the summary
                recording.status(phase="done", done=True, success=outcome.program_ok,
                                 outcome="success" if outcome.program_ok else "failure",
                                 summary=f"oracle: {'success' if outcome.success else 'failure'}"
                                 + (f"; {outcome.detail.splitlines()[0]}" if outcome.detail
                                    else ""), vlm_calls=outcome.vlm_calls)
            return outcome
        finally:
            if recording is not None:
                recording.close()

    def _episode(self, family: str, seed: int, instance: Any, inject: tuple[str, str] | None,
                 t0: float) -> EpisodeOutcome:
        from frankenbot.execution.episode import report_of

        task_id = f"{family}-{seed}"
        library = ({s.name for s in self.memory.list_skills()} if self.memory is not None
                   else set())
        planned = self.runner.plan(instance.instruction, task_id=task_id,
                                   planner=self.planner_kind)
        calls = 1 + planned.repair_calls
        if not planned.ok:
            return EpisodeOutcome(family, seed, instance.instruction, False, False,
                                  planned.vlm_calls, time.monotonic() - t0,
                                  detail=f"planner: {planned.message}", planning_calls=calls)
        lines, tokens = written_size(planned.program_text, library)
        if inject is not None:
            self.world.inject(inject[0], inject[1], {})
        # The watchdog: an episode that outlives its wall-clock budget is cancelled (the arm
        # stops, status CANCELLED) so one stuck episode cannot stall the whole suite.
        timeout = self.options.episode_timeout
        watchdog = threading.Timer(timeout, self.executor.cancel,
                                   args=(f"episode timeout: over {timeout:g} s of wall time",))
        watchdog.daemon = True
        watchdog.start()
        try:
            outcome = self.executor.run(planned.program_text, task_id=task_id,
                                        instruction=instance.instruction)
        finally:
            watchdog.cancel()
        self.robot.stop()  # hold the arm before the oracle judges
        self.runner.finish(task_id, instance.instruction, planned, report_of(outcome))
        verdict = self.world.evaluate()
        tiers = tuple(int(a.tier) for a in outcome.anomalies)
        return EpisodeOutcome(
            family=family, seed=seed, instruction=instance.instruction,
            success=bool(verdict.success), program_ok=outcome.success,
            vlm_calls=planned.vlm_calls + outcome.vlm_calls, wall_time=time.monotonic() - t0,
            program_lines=lines, program_tokens=tokens, planning_calls=calls,
            anomalies=len(tiers),
            tiers=tiers, injected=inject[0] if inject else "",
            anomaly_classes=tuple(a.anomaly_class.value for a in outcome.anomalies),
            latencies=tuple(float(a.latency) for a in outcome.anomalies),
            anomaly_notes=tuple(
                f"{a.kind.value} at {a.node_path}: {a.detail[:160]} -> tier {int(a.tier)} "
                f"{a.action[:80]} ({a.outcome.value})" for a in outcome.anomalies),
            detail="" if verdict.success else f"{outcome.status.value}: {outcome.reason}; "
                                              f"oracle: {verdict.text}")

    def __enter__(self) -> "InProcessBrain":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
        self.stack.close()


def written_size(program_text: str, library: set[str]) -> tuple[int, int]:
    """(lines, estimated tokens) of what the planner wrote: the program less the definitions
    of library skills it carries along (a call of a memory skill is one line, as in the
    memory benchmark)."""
    from dataclasses import replace

    from frankenbot.memory.tokens import estimate_tokens
    from frankenbot.program import parse_program
    from frankenbot.program.printer import print_program
    from frankenbot.program.tree import count_lines

    program = parse_program(program_text).program
    written = replace(program, skills=tuple(s for s in program.skills if s.name not in library))
    return count_lines(written), estimate_tokens(print_program(written))


def _vlm_client() -> Any:
    from frankenbot.planner.planner import PlannerConfig, make_client

    client = make_client(PlannerConfig())
    if client is None:
        raise FrankenbotError("--planner vlm needs OPENAI_API_KEY (and OPENAI_BASE_URL for a "
                              "local OpenAI-compatible server)")
    return client

"""The one episode flow: memory's context -> one planning call -> the safety review ->
execution -> what memory learns.

The planner node (over ROS: memory services, the executor's action) and the in-process brain (the
benchmark's, over the sim stack) both run tasks through ``EpisodeRunner``; they differ only in the
ports they hand it. What memory learns is decided here, once: the executor's own outcome (its
program checks and exit status) and its anomaly log — what a robot can know. A simulator oracle's
verdict is measurement and never reaches memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Protocol

from frankenbot.errors import FrankenbotError
from frankenbot.memory.records import EpisodeAnomaly, EpisodeRecord
from frankenbot.planner.request import (
    Exemplar,
    FailureContext,
    PlanImage,
    PlanOutcome,
    PlanRequest,
)
from frankenbot.ports import CancelToken
from frankenbot.program.catalog import Signature
from frankenbot.state import Scene

# A plan that found no object fitting a phrase looks once more after this much scene time
# (stamps): a thing seen only in part in the first frames after the table was set (a mug by
# the arm's base read unknown for three frames) is named by the frames after. Never for a VLM
# plan (another call); at most LOOK_AGAIN_WALL_S of wall time waiting for those frames.
LOOK_AGAIN_S = 1.5
LOOK_AGAIN_WALL_S = 5.0


@dataclass(frozen=True)
class PlanningContext:
    """What memory offers the planner for one instruction."""

    skills: tuple[Signature, ...] = ()
    exemplars: tuple[Exemplar, ...] = ()
    experience: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExecutionReport:
    """How an execution ended, as the executor reports it (never an outside judge)."""

    success: bool
    outcome: str  # ExitStatus value, or "error" / "cancelled" when the executor was not reached
    reason: str = ""
    final_program: str = ""
    anomalies: tuple[EpisodeAnomaly, ...] = ()
    vlm_calls: int = 0  # tier-3 replanning calls during execution
    replans: int = 0  # tier-3 replans performed
    duration: float = 0.0
    trace_json: str = "[]"


class Planner(Protocol):
    def plan(self, request: PlanRequest) -> PlanOutcome: ...

    def replan(self, request: PlanRequest, failure: FailureContext) -> PlanOutcome: ...


def plan_request(instruction: str, scene: Scene, *, context: PlanningContext | None = None,
                 image: PlanImage | None = None, planner: str = "", task_id: str = ""
                 ) -> PlanRequest:
    """Everything the planner gets for one task: scene, image and memory's context."""
    ctx = context or PlanningContext()
    return PlanRequest(instruction, scene, image, ctx.skills, ctx.exemplars, ctx.experience,
                       planner=planner, task_id=task_id)


def episode_record(task_id: str, instruction: str, plan: PlanOutcome,
                   report: ExecutionReport) -> EpisodeRecord:
    """The episode as memory stores it: the executor's verdict, its anomalies, the costs."""
    return EpisodeRecord(
        instruction=instruction, program=report.final_program or plan.program_text,
        success=report.success, outcome=report.outcome, task_id=task_id,
        anomalies=report.anomalies, vlm_calls=plan.vlm_calls + report.vlm_calls,
        repair_calls=plan.repair_calls, planning_time=plan.latency,
        execution_time=report.duration, trace_json=report.trace_json)


def episode_anomalies(records: Iterable[Any]) -> tuple[EpisodeAnomaly, ...]:
    """The executor's anomaly log (``anomaly.records.AnomalyRecord``) as memory stores it."""
    out = []
    for r in records:
        latency = (r.recovery_commanded_at - r.detected_at
                   if r.recovery_commanded_at and r.detected_at else -1.0)
        out.append(EpisodeAnomaly(
            kind=_value(r.kind), tier=int(r.tier), action=r.action, outcome=_value(r.outcome),
            node_path=r.node_path, source=r.source, detail=r.detail,
            anomaly_class=_value(r.anomaly_class), latency=latency))
    return tuple(out)


def _value(x: Any) -> str:
    return str(getattr(x, "value", x))


class ExecutePort(Protocol):
    """Runs a validated (and reviewed) program; returns how the executor says it ended. It stops
    the arm and returns ``cancelled`` soon after ``cancel`` is set."""

    def __call__(self, plan: PlanOutcome, task_id: str, instruction: str,
                 cancel: CancelToken) -> ExecutionReport: ...


ReviewPort = Callable[[PlanOutcome, Scene], "tuple[PlanOutcome, Any]"]


@dataclass(frozen=True)
class Episode:
    """One task as the runner saw it: the plan (after the review), the review's verdict, the
    executor's report (None: nothing was executed) and why memory did not store it ('')."""

    task_id: str
    instruction: str
    plan: PlanOutcome
    review: Any = None  # planner.review.ReviewVerdict, None when no review is configured
    report: ExecutionReport | None = None
    memory_note: str = ""

    @property
    def executed(self) -> bool:
        return self.report is not None


class EpisodeRunner:
    """plan -> review -> execute -> record, over ports that the caller supplies.

    ``context(instruction)`` returns memory's PlanningContext (or None: no memory), ``scene()``
    the latest perceived scene, ``execute(plan, task_id, instruction, cancel)`` runs a program
    and returns an ExecutionReport, ``record(episode)`` stores it (None: no memory; a
    ``FrankenbotError`` it raises becomes the episode's ``memory_note``, never its outcome),
    ``review(plan, scene)`` is the safety review (``planner.review.review_port``; None: off).
    An offline plan that found nothing fitting a phrase is made once more from a scene
    ``look_again_s`` newer (LOOK_AGAIN_S), before the task is refused.
    The planner node fills the ports with ROS (memory services, the ExecuteProgram action); the
    in-process brain with the memory store and the sim stack, and drives ``plan``/``finish``
    around its own execution step (it injects anomalies between them).
    """

    def __init__(self, planner: Planner, *, scene: Callable[[], Scene],
                 context: Callable[[str], PlanningContext | None] | None = None,
                 execute: ExecutePort | None = None,
                 record: Callable[[EpisodeRecord], Any] | None = None,
                 review: ReviewPort | None = None, look_again_s: float = LOOK_AGAIN_S) -> None:
        self.planner = planner
        self.look_again_s = look_again_s  # 0: plan from the first scene only
        self.review = review  # replaceable at run time (the node's live ``review`` parameter)
        self.last_review: Any = None  # the verdict of the last plan or replan (single-threaded
        # callers; ``run`` hands each episode its own verdict)
        self._scene = scene
        self._context = context
        self._execute = execute
        self._record = record

    def request(self, instruction: str, *, task_id: str = "", image: PlanImage | None = None,
                planner: str = "") -> PlanRequest:
        """What the planner gets: the latest scene, the image and memory's context."""
        context = self._context(instruction) if self._context is not None else None
        return plan_request(instruction, self._scene(), context=context, image=image,
                            planner=planner, task_id=task_id)

    def plan(self, instruction: str, *, task_id: str = "", image: PlanImage | None = None,
             planner: str = "") -> PlanOutcome:
        """One planning call (+ repair) and the review of its program."""
        outcome, self.last_review = self._planned(instruction, task_id, image, planner)
        return outcome

    def replan(self, request: PlanRequest, failure: FailureContext) -> PlanOutcome:
        """Tier 3: a new program for ``request`` after ``failure``, reviewed like the first
        (a replanned program moves the same arm)."""
        outcome, self.last_review = self._reviewed(self.planner.replan(request, failure),
                                                   request.scene)
        return outcome

    def _planned(self, instruction: str, task_id: str, image: PlanImage | None,
                 planner: str) -> tuple[PlanOutcome, Any]:
        request = self.request(instruction, task_id=task_id, image=image, planner=planner)
        outcome = self.planner.plan(request)
        if not outcome.ok and outcome.not_seen and self.look_again_s > 0:
            scene = self._scene_after(request.scene.stamp + self.look_again_s)
            if scene is not None:
                request = replace(request, scene=scene)
                again = self.planner.plan(request)
                outcome = replace(again, latency=outcome.latency + again.latency,
                                  vlm_calls=outcome.vlm_calls + again.vlm_calls)
        return self._reviewed(outcome, request.scene)

    def _scene_after(self, stamp: float) -> Scene | None:
        """The first scene stamped ``stamp`` or later (None when none came in
        LOOK_AGAIN_WALL_S)."""
        deadline = time.monotonic() + LOOK_AGAIN_WALL_S
        while time.monotonic() < deadline:
            scene = self._scene()
            if scene.stamp >= stamp:
                return scene
            time.sleep(0.05)
        return None

    def _reviewed(self, outcome: PlanOutcome, scene: Scene) -> tuple[PlanOutcome, Any]:
        """The plan after the review and the review's verdict (None: no review ran)."""
        review = self.review
        if review is None or not outcome.ok:
            return outcome, None
        return review(outcome, scene)

    def finish(self, task_id: str, instruction: str, plan: PlanOutcome,
               report: ExecutionReport) -> str:
        """Tell memory what happened (when there is one): '' when stored, else why not.

        Memory is optional: its absence or failure (a full disk, a vanished node) never changes
        the task's outcome, but the note says so, so nobody assumes the episode was learnt from.
        """
        if self._record is None:
            return ""
        try:
            self._record(episode_record(task_id, instruction, plan, report))
        except FrankenbotError as e:
            return str(e)
        return ""

    def run(self, instruction: str, *, task_id: str = "", planner: str = "",
            image: PlanImage | None = None, cancel: CancelToken | None = None,
            dry_run: bool = False,
            on_planned: Callable[[PlanOutcome, Any], None] | None = None) -> Episode:
        """One whole episode. Nothing is executed when planning or the review fails, on a dry
        run, or when ``cancel`` was set before execution began. ``on_planned(plan, verdict)``
        is told the reviewed plan before anything moves."""
        cancel = cancel or CancelToken()
        try:  # the verdict travels with the plan: other threads may plan at the same time
            plan, verdict = self._planned(instruction, task_id, image, planner)
        except FrankenbotError as e:  # the planner could not run at all (bad config, ...)
            plan, verdict = PlanOutcome(False, "", None, str(e)), None
        self.last_review = verdict
        if on_planned is not None:
            on_planned(plan, verdict)
        if not plan.ok or dry_run or cancel.cancelled:
            return Episode(task_id, instruction, plan, verdict)
        if self._execute is None:
            raise ValueError("EpisodeRunner.run needs an execute port")
        report = self._execute(plan, task_id, instruction, cancel)
        note = self.finish(task_id, instruction, plan, report)
        return Episode(task_id, instruction, plan, verdict, report, note)


def report_of(outcome: Any) -> ExecutionReport:
    """An in-process ``ExecutionOutcome`` (execution.executor) as an ExecutionReport."""
    from frankenbot.program.trace import trace_to_json

    return ExecutionReport(
        success=outcome.success, outcome=_value(outcome.status), reason=outcome.reason,
        final_program=outcome.final_program, anomalies=episode_anomalies(outcome.anomalies),
        vlm_calls=outcome.vlm_calls, replans=outcome.replans, duration=outcome.duration,
        trace_json=trace_to_json(outcome.trace))


def store_context(store: Any) -> Callable[[str], PlanningContext]:
    """A ``context`` port over an in-process MemoryStore (the node asks the memory service)."""

    def context(instruction: str) -> PlanningContext:
        ctx = store.get_context(instruction)
        wanted = {s.name for s in ctx.skills}
        return PlanningContext(
            skills=tuple(s for s in store.catalog().skills if s.name in wanted),
            exemplars=tuple(Exemplar(e.instruction, e.program) for e in ctx.exemplars),
            experience=tuple(ctx.experience))

    return context

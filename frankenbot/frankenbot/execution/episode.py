"""The one episode flow: memory's context -> one planning call -> execution -> what memory learns.

The planner node (over ROS: memory services, the executor's action) and the in-process brain (the
benchmark's, over the sim stack) both run tasks through ``EpisodeRunner``; they differ only in the
ports they hand it. What memory learns is decided here, once: the executor's own outcome (its
program checks and exit status) and its anomaly log — what a robot can know. A simulator oracle's
verdict is measurement and never reaches memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol

from frankenbot.memory.records import EpisodeAnomaly, EpisodeRecord
from frankenbot.planner.request import Exemplar, PlanImage, PlanOutcome, PlanRequest
from frankenbot.program.catalog import Signature
from frankenbot.state import Scene


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
    duration: float = 0.0
    trace_json: str = "[]"


class Planner(Protocol):
    def plan(self, request: PlanRequest) -> PlanOutcome: ...


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


class EpisodeRunner:
    """plan -> execute -> record, over ports that the caller supplies.

    ``context(instruction)`` returns memory's PlanningContext (or None: no memory), ``scene()``
    the latest perceived scene, ``execute(plan, task_id, instruction)`` runs a validated program
    and returns an ExecutionReport, ``record(episode)`` stores it (None: no memory). A caller
    that drives execution itself (the ROS node, asynchronously over an action) uses ``plan`` and
    ``finish`` around its own execution step.
    """

    def __init__(self, planner: Planner, *, scene: Callable[[], Scene],
                 context: Callable[[str], PlanningContext | None] | None = None,
                 execute: Callable[[PlanOutcome, str, str], ExecutionReport] | None = None,
                 record: Callable[[EpisodeRecord], Any] | None = None,
                 review: Callable[[PlanOutcome, Scene], tuple[PlanOutcome, Any]] | None = None
                 ) -> None:
        self.planner = planner
        self._review = review  # planner.review.apply_review over a SafetyReview (None: off)
        self.last_review: Any = None  # the last plan's ReviewVerdict
        self._scene = scene
        self._context = context
        self._execute = execute
        self._record = record

    def plan(self, instruction: str, *, task_id: str = "", image: PlanImage | None = None,
             planner: str = "") -> PlanOutcome:
        context = self._context(instruction) if self._context is not None else None
        scene = self._scene()
        outcome = self.planner.plan(plan_request(instruction, scene, context=context,
                                                 image=image, planner=planner, task_id=task_id))
        self.last_review = None
        if self._review is not None and outcome.ok:
            outcome, self.last_review = self._review(outcome, scene)
        return outcome

    def finish(self, task_id: str, instruction: str, plan: PlanOutcome,
               report: ExecutionReport) -> EpisodeRecord:
        """Tell memory what happened (when there is one); returns the record."""
        episode = episode_record(task_id, instruction, plan, report)
        if self._record is not None:
            self._record(episode)
        return episode

    def run(self, instruction: str, *, task_id: str = "", planner: str = ""
            ) -> tuple[PlanOutcome, ExecutionReport | None]:
        """One whole episode; the report is None when planning failed (nothing moved)."""
        if self._execute is None:
            raise ValueError("EpisodeRunner.run needs an execute port")
        plan = self.plan(instruction, task_id=task_id, planner=planner)
        if not plan.ok:
            return plan, None
        report = self._execute(plan, task_id, instruction)
        self.finish(task_id, instruction, plan, report)
        return plan, report


def report_of(outcome: Any) -> ExecutionReport:
    """An in-process ``ExecutionOutcome`` (execution.executor) as an ExecutionReport."""
    from frankenbot.program.trace import trace_to_json

    return ExecutionReport(
        success=outcome.success, outcome=_value(outcome.status), reason=outcome.reason,
        final_program=outcome.final_program, anomalies=episode_anomalies(outcome.anomalies),
        vlm_calls=outcome.vlm_calls, duration=outcome.duration,
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

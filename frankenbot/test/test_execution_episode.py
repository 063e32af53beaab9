"""The one episode runner: memory's context reaches the planner; memory learns the executor's."""

from __future__ import annotations

from frankenbot.common import AnomalyClass, AnomalyKind, RecoveryOutcome, Tier
from frankenbot.execution.episode import (
    EpisodeRunner,
    ExecutionReport,
    PlanningContext,
    episode_anomalies,
)
from frankenbot.planner.request import Exemplar, PlanOutcome, PlanRequest
from frankenbot.state import Scene


class RecordingPlanner:
    def __init__(self, ok: bool = True) -> None:
        self.ok = ok
        self.requests: list[PlanRequest] = []

    def plan(self, request: PlanRequest) -> PlanOutcome:
        self.requests.append(request)
        return PlanOutcome(self.ok, "task \"t\" { main { exit success } }" if self.ok else "",
                           None, "" if self.ok else "refused", vlm_calls=1, latency=0.25)


def test_memory_context_reaches_the_plan_request() -> None:
    planner = RecordingPlanner()
    ctx = PlanningContext(exemplars=(Exemplar("put x in y", "task ..."),), experience=("e",))
    runner = EpisodeRunner(planner, scene=Scene, context=lambda _i: ctx)
    runner.plan("put the red block in the bowl", task_id="t1", planner="offline")
    req = planner.requests[0]
    assert req.exemplars == ctx.exemplars and req.anomaly_experience == ("e",)
    assert req.task_id == "t1" and req.planner == "offline"


def test_memory_records_the_executors_verdict_and_costs() -> None:
    recorded = []
    report = ExecutionReport(success=False, outcome="failure", reason="exit failure",
                             final_program="task \"t2\" { main { exit failure } }", vlm_calls=2,
                             duration=3.5)
    runner = EpisodeRunner(RecordingPlanner(), scene=Scene,
                           execute=lambda plan, tid, ins: report, record=recorded.append)
    plan, got = runner.run("stack the blocks", task_id="t2")
    assert got is report
    (ep,) = recorded
    assert ep.success is False and ep.outcome == "failure"  # the executor's, nothing else
    assert ep.program == report.final_program
    assert ep.vlm_calls == 3 and ep.planning_time == 0.25 and ep.execution_time == 3.5


def test_a_refused_plan_moves_nothing_and_records_nothing() -> None:
    executed, recorded = [], []
    runner = EpisodeRunner(RecordingPlanner(ok=False), scene=Scene,
                           execute=lambda *a: executed.append(a), record=recorded.append)
    plan, report = runner.run("fly to the moon")
    assert not plan.ok and report is None and executed == [] and recorded == []


def test_the_executor_anomaly_log_becomes_episode_anomalies() -> None:
    from frankenbot.anomaly.records import AnomalyRecord

    rec = AnomalyRecord("1", AnomalyKind.GRASP_LOST, AnomalyClass.PREDICTABLE, "builtin:grasp",
                        "main/1/place_in", "dropped", onset=1.0, detected_at=1.01,
                        tier=Tier.CODED, action="regrasp", recovery_commanded_at=1.03,
                        outcome=RecoveryOutcome.RECOVERED)
    (a,) = episode_anomalies([rec])
    assert (a.kind, a.tier, a.action, a.outcome) == ("grasp_lost", 1, "regrasp", "recovered")
    assert a.anomaly_class == "predictable" and abs(a.latency - 0.02) < 1e-9

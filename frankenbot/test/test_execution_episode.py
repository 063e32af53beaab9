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
                           execute=lambda plan, tid, ins, cancel: report, record=recorded.append)
    episode = runner.run("stack the blocks", task_id="t2")
    assert episode.report is report and episode.memory_note == ""
    (ep,) = recorded
    assert ep.success is False and ep.outcome == "failure"  # the executor's, nothing else
    assert ep.program == report.final_program
    assert ep.vlm_calls == 3 and ep.planning_time == 0.25 and ep.execution_time == 3.5


def test_a_refused_plan_moves_nothing_and_records_nothing() -> None:
    executed, recorded = [], []
    runner = EpisodeRunner(RecordingPlanner(ok=False), scene=Scene,
                           execute=lambda *a: executed.append(a), record=recorded.append)
    episode = runner.run("fly to the moon")
    assert not episode.plan.ok and episode.report is None and executed == [] and recorded == []


def test_the_executor_anomaly_log_becomes_episode_anomalies() -> None:
    from frankenbot.anomaly.records import AnomalyRecord

    rec = AnomalyRecord("1", AnomalyKind.GRASP_LOST, AnomalyClass.PREDICTABLE, "builtin:grasp",
                        "main/1/place_in", "dropped", onset=1.0, detected_at=1.01,
                        tier=Tier.CODED, action="regrasp", recovery_commanded_at=1.03,
                        outcome=RecoveryOutcome.RECOVERED)
    (a,) = episode_anomalies([rec])
    assert (a.kind, a.tier, a.action, a.outcome) == ("grasp_lost", 1, "regrasp", "recovered")
    assert a.anomaly_class == "predictable" and abs(a.latency - 0.02) < 1e-9


DROP = ('task "drop it in" { main { pick(obj=red_block) move_above(obj=green_bowl, height=0.3) '
        'open_gripper() exit success } }')


class FixedPlanner:
    """Plans (and replans) one fixed program, as a model that writes a risky one would."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _outcome(self) -> PlanOutcome:
        from frankenbot.program import parse_program

        return PlanOutcome(True, self.text, parse_program(self.text).program, "ok", vlm_calls=1)

    def plan(self, request: PlanRequest) -> PlanOutcome:
        return self._outcome()

    def replan(self, request: PlanRequest, failure) -> PlanOutcome:
        return self._outcome()


def _bowl_scene() -> Scene:
    from frankenbot.state import SceneObject

    return Scene.of([
        SceneObject("red_block", "red block", "block", "red", (0.5, 0.2, 0.02),
                    (0.04, 0.04, 0.04)),
        SceneObject("green_bowl", "green bowl", "bowl", "green", (0.5, -0.2, 0.025),
                    (0.15, 0.15, 0.05))])


def test_the_review_edits_what_is_executed_and_what_a_replan_returns() -> None:
    from frankenbot.planner.review import review_port

    executed = []

    def execute(plan, task_id, instruction, cancel):
        executed.append(plan.program_text)
        return ExecutionReport(True, "success")

    runner = EpisodeRunner(FixedPlanner(DROP), scene=_bowl_scene, execute=execute,
                           review=review_port("auto"))
    episode = runner.run("drop the red block into the green bowl from up high")
    assert episode.review.decision == "edit"
    assert executed and "open_gripper" not in executed[0] and "place_in" in executed[0]
    replanned = runner.replan(PlanRequest("x", _bowl_scene()), None)
    assert replanned.ok and "place_in" in replanned.program_text
    assert runner.last_review.decision == "edit"
    # review never: the risky program runs as written
    runner.review = review_port("never")
    assert runner.run("again").report is not None and "open_gripper" in executed[-1]


def test_a_refusal_by_the_review_moves_nothing() -> None:
    from frankenbot.planner.review import ReviewConfig, Zone, review_port

    zone = ReviewConfig(zones=(Zone("keepout", "forbidden", (0.4, 0.6), (-0.3, -0.1)),))
    put = ('task "t" { main { pick(obj=red_block) place_in(obj=red_block, '
           'container=green_bowl) exit success } }')
    executed = []
    runner = EpisodeRunner(FixedPlanner(put), scene=_bowl_scene,
                           execute=lambda *a: executed.append(a),
                           review=review_port("always", zone))
    episode = runner.run("put the red block in the green bowl")
    assert not episode.plan.ok and "keepout" in episode.plan.message
    assert episode.review.decision == "refuse" and executed == []


def test_a_memory_failure_is_a_note_never_the_outcome() -> None:
    from frankenbot.errors import MemoryStoreError

    def record(_episode):
        raise MemoryStoreError("disk full")

    runner = EpisodeRunner(RecordingPlanner(), scene=Scene,
                           execute=lambda *a: ExecutionReport(True, "success"), record=record)
    episode = runner.run("pick up the red block")
    assert episode.report.success and episode.memory_note == "disk full"


def test_a_cancel_before_execution_moves_nothing_and_a_dry_run_neither() -> None:
    from frankenbot.ports import CancelToken

    executed = []
    runner = EpisodeRunner(RecordingPlanner(), scene=Scene,
                           execute=lambda *a: executed.append(a))
    cancel = CancelToken()
    planned = []
    episode = runner.run("x", cancel=cancel,
                         on_planned=lambda plan, v: (planned.append(plan), cancel.cancel()))
    assert planned and episode.plan.ok and not episode.executed and executed == []
    assert not runner.run("x", dry_run=True).executed and executed == []


def test_a_plan_that_sees_no_such_object_looks_once_more_at_a_newer_scene() -> None:
    # a real offline planner: the mug read unknown in the first frames, a mug in later ones
    from frankenbot.planner.planner import Planner
    from frankenbot.state import SceneObject

    def scene_at(stamp: float, shape: str) -> Scene:
        mug = SceneObject("unknown_1", f"blue {shape}", shape, "blue", (0.45, 0.1, 0.05),
                          (0.09, 0.07, 0.1))
        plate = SceneObject("white_plate", "white plate", "plate", "white", (0.5, -0.1, 0.006),
                            (0.18, 0.18, 0.012))
        return Scene.of((mug, plate), stamp=stamp)

    clock = {"t": 0.0}

    def scene() -> Scene:  # the camera's scenes come in at 10 Hz of scene time
        clock["t"] += 0.1
        return scene_at(clock["t"], "unknown" if clock["t"] < 1.0 else "mug")

    instruction = "put the blue mug on the white plate"
    plan = EpisodeRunner(Planner(), scene=scene).plan(instruction, planner="offline")
    assert plan.ok, plan.message
    assert "unknown_1" in plan.program_text and clock["t"] >= 1.5
    clock["t"] = 0.0  # without another look the same start is refused, and says so
    refused = EpisodeRunner(Planner(), scene=scene, look_again_s=0.0).plan(
        instruction, planner="offline")
    assert not refused.ok and refused.not_seen and "blue mug" in refused.message
    assert clock["t"] < 0.2  # one scene read
    # an ambiguous phrase is asked back at once: looking again cannot settle it
    two = Scene.of((*scene_at(0.0, "mug").objects,
                    SceneObject("unknown_2", "blue mug", "mug", "blue", (0.6, 0.1, 0.05),
                                (0.09, 0.07, 0.1))), stamp=0.0)
    reads = []
    asked = EpisodeRunner(Planner(), scene=lambda: reads.append(1) or two).plan(
        instruction, planner="offline")
    assert not asked.ok and not asked.not_seen and len(reads) == 1

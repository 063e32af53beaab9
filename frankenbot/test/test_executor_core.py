"""The executor core with the real interpreter and monitor loop over a fake arm."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from executor_support import FakeArm, Script, block, bowl

from frankenbot.anomaly.candidates import Situation
from frankenbot.anomaly.escalation import Budgets, ReplanResult
from frankenbot.common import AnomalyKind, ExitStatus, FailureCode, RecoveryOutcome, Tier
from frankenbot.execution.executor import ExecutorParams, ProgramExecutor

PUT = """task "put the red block in the green bowl" {
  main {
    start:
    pick(obj=red_block)
    place_in(obj=red_block, container=green_bowl)
    exit success
  }
}"""


def arm() -> FakeArm:
    a = FakeArm()
    for o in (block("red_block", 0.4, 0.0), bowl("green_bowl", 0.5, 0.2),
              block("blue_block", 0.3, -0.2)):
        a.objects[o.object_id] = o
    return a


@dataclass
class Planner:
    program: str = ""
    calls: list[str] = field(default_factory=list)

    def replan(self, situation: Situation, failure_context: str) -> ReplanResult:
        self.calls.append(failure_context)
        if not self.program:
            return ReplanResult(False, "", "cannot plan without the red block", 1)
        return ReplanResult(True, self.program, "replanned", 1)


def executor(a: FakeArm, planner: Planner | None = None, **params) -> ProgramExecutor:
    return ProgramExecutor(a, a.snapshot, a.scene, stop_arm=a.stop,
                           params=ExecutorParams(**params),
                           replanner_for=(lambda *_: planner) if planner else None)


def test_clean_run_succeeds_without_anomalies():
    a = arm()
    out = executor(a).run(PUT, task_id="t1")
    assert out.status == ExitStatus.SUCCESS, out.reason
    assert out.anomalies == () and out.vlm_calls == 0 and out.replans == 0
    assert a.calls == ["pick", "place_in"]
    assert any(e.node.startswith("place_in") for e in out.trace)
    assert out.steps >= 3


@pytest.mark.wall_clock
def test_drop_in_transport_is_regrasped_by_tier1_with_no_vlm_call():
    a = arm()
    a.scripts.append(Script("place_in", 0.4, FakeArm.drop))
    planner = Planner()
    out = executor(a, planner).run(PUT)
    assert out.status == ExitStatus.SUCCESS, out.reason
    assert planner.calls == [] and out.vlm_calls == 0
    rec = out.anomalies[0]
    assert rec.kind == AnomalyKind.GRASP_LOST and rec.tier == Tier.CODED
    assert rec.action == "insert:pick(obj=red_block)"
    assert rec.outcome == RecoveryOutcome.RECOVERED
    assert 0.0 <= rec.latency < 0.5 and rec.recovery_commanded_at >= rec.detected_at
    assert a.calls == ["pick", "place_in", "pick", "place_in"]


def test_aborted_motion_is_retried_by_tier1():
    a = arm()
    a.fail_next["pick"] = FailureCode.ABORTED
    out = executor(a).run(PUT)
    assert out.status == ExitStatus.SUCCESS, out.reason
    rec = out.anomalies[0]
    assert rec.kind == AnomalyKind.MOTION_ABORTED and rec.tier == Tier.CODED
    assert rec.source == "primitive:pick" and rec.action.startswith("retry:pick")
    assert a.calls == ["pick", "pick", "place_in"]


def test_object_removed_reaches_tier3_and_the_new_program_runs():
    a = arm()
    a.scripts.append(Script("pick", 0.3, lambda arm: arm.remove("red_block")))
    planner = Planner('task "fallback" { main { pick(obj=blue_block) '
                      'place_in(obj=blue_block, container=green_bowl) exit success } }')
    out = executor(a, planner).run(PUT)
    assert out.status == ExitStatus.SUCCESS, out.reason
    assert out.replans == 1 and out.vlm_calls == 1 and len(planner.calls) == 1
    rec = out.anomalies[0]
    assert rec.kind == AnomalyKind.OBJECT_MISSING and rec.tier == Tier.VLM_REPLAN
    assert "blue_block" in out.final_program
    assert a.calls[-2:] == ["pick", "place_in"]


def test_unpredictable_without_a_plan_fails_cleanly():
    a = arm()
    a.scripts.append(Script("pick", 0.3, lambda arm: arm.remove("red_block")))
    out = executor(a, Planner()).run(PUT)
    assert out.status == ExitStatus.ESCALATED
    assert "cannot plan" in out.reason
    assert out.anomalies[0].tier == Tier.VLM_REPLAN
    assert out.anomalies[0].outcome == RecoveryOutcome.FAILED
    assert not a.moving


def test_replan_budget_bounds_tier3():
    a = arm()
    a.fail_next["pick"] = FailureCode.UNREACHABLE
    planner = Planner(PUT)  # the "new" plan fails the same way once more... then succeeds
    out = executor(a, planner, budgets=Budgets(replans=0)).run(PUT)
    assert out.status == ExitStatus.ESCALATED and "replan budget" in out.reason
    assert planner.calls == []


def test_program_handler_is_tier1_and_stamps_the_recovery():
    prog = PUT.replace("  }\n}", """  }
  monitor dropped when not holding(red_block) during place_in {
    pick(obj=red_block)
    then resume
  }
}""")
    a = arm()
    a.scripts.append(Script("place_in", 0.5, FakeArm.drop))
    out = executor(a).run(prog)
    assert out.status == ExitStatus.SUCCESS, out.reason
    srcs = [r.source for r in out.anomalies]
    assert srcs[0] in ("dropped", "builtin:grasp_lost")
    first = out.anomalies[0]
    assert first.tier == Tier.CODED and first.recovery_commanded_at > 0


def test_cancel_mid_motion_stops_the_arm():
    import threading

    a = arm()
    a.duration = 2.0
    ex = executor(a)
    threading.Timer(0.3, ex.cancel, args=("operator cancel",)).start()
    out = ex.run(PUT)
    assert out.status == ExitStatus.CANCELLED and out.reason == "operator cancel"
    assert a.stops >= 1 and not a.moving
    assert a.calls == ["pick"]
    assert out.duration < 1.5


def test_estop_mid_motion_stops_the_arm_and_ends_with_estop():
    import threading

    a = arm()
    a.duration = 2.0

    def press() -> None:
        with a.lock:
            a.estop = True

    threading.Timer(0.3, press).start()
    out = executor(a).run(PUT)
    assert out.status == ExitStatus.ESTOP
    assert a.stops >= 1 and not a.moving and a.calls == ["pick"]
    assert out.anomalies[0].kind == AnomalyKind.ESTOP


def test_invalid_program_moves_nothing():
    a = arm()
    out = executor(a).run('task "x" { main { fly(to=moon) } }')
    assert out.status == ExitStatus.ERROR and "invalid program" in out.reason
    assert a.calls == []


def test_only_one_program_at_a_time():
    import threading

    a = arm()
    a.duration = 0.5
    ex = executor(a)
    t = threading.Thread(target=ex.run, args=(PUT,))
    t.start()
    import time

    time.sleep(0.1)
    second = ex.run(PUT)
    t.join()
    assert second.status == ExitStatus.ERROR and "already running" in second.reason


@pytest.mark.parametrize("frozen_for", [0.6])
def test_camera_hiccup_is_waited_out_by_tier1(frozen_for):
    import threading

    a = arm()
    a.duration = 0.5

    def freeze(arm: FakeArm) -> None:
        arm.camera_frozen = True
        threading.Timer(frozen_for, lambda: setattr(arm, "camera_frozen", False)).start()

    a.scripts.append(Script("pick", 0.1, freeze))
    out = executor(a, Planner(), scene_stale_after_s=0.2).run(PUT)
    assert out.status == ExitStatus.SUCCESS, out.reason
    kinds = [(r.kind, r.tier, r.action) for r in out.anomalies]
    assert kinds[0] == (AnomalyKind.SCENE_STALE, Tier.CODED, "insert:wait(seconds=1)")
    assert out.vlm_calls == 0

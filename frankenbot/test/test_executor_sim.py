"""The executor against the MuJoCo sim and the real primitives, with the sim's injected anomalies.

Predictable anomalies must be recovered by tier 1 with no VLM call or replan; semi-predictable
ones must reach tier 2 or 3 and end cleanly; unpredictable ones must reach tier 3 and either
succeed or fail cleanly (a clear status, the arm held still); cancel and e-stop stop the arm.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from frankenbot.common import ExitStatus, RecoveryOutcome, Tier

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow

CLEAN_END = (ExitStatus.SUCCESS, ExitStatus.ESCALATED, ExitStatus.FAILURE,
             ExitStatus.BUDGET_EXCEEDED)
DRAWER = 'task "open the drawer" { main { open_drawer(drawer=drawer) exit success } }'


@pytest.fixture(scope="module")
def harness():
    from frankenbot.eval.executor_harness import SimHarness

    h = SimHarness(realtime_factor=2.0)
    yield h
    h.close()


def arm_still(h) -> bool:
    v = np.asarray(h.world.joint_velocities())
    return float(np.max(np.abs(v))) < 0.05


def arm_settles(h, seconds: float = 0.5) -> bool:
    """After the run (the sim's runner has stopped): let physics go on and check that the arm
    comes to rest where it was stopped instead of carrying on towards a goal."""
    q0 = np.asarray(h.world.joint_positions()).copy()
    h.world.advance(seconds)
    q1 = np.asarray(h.world.joint_positions())
    return arm_still(h) and float(np.max(np.abs(q1 - q0))) < 0.05


@pytest.mark.wall_clock
@pytest.mark.parametrize("kind", ["drop_in_transport", "nudge_before_grasp",
                                  "displace_before_pick", "abort_trajectory"])
def test_predictable_anomaly_is_recovered_by_tier1_without_vlm(harness, kind):
    run = harness.run("put_in_bowl", 2, inject=(kind, ""))
    out = run.outcome
    assert run.injected, f"the sim never fired {kind}"
    assert out.status == ExitStatus.SUCCESS, out.reason
    assert run.oracle_ok, run.oracle_text
    assert out.vlm_calls == 0 and out.replans == 0
    assert out.anomalies, "the anomaly was not detected"
    assert all(a.tier == Tier.CODED for a in out.anomalies), out.anomalies
    assert out.anomalies[-1].outcome == RecoveryOutcome.RECOVERED
    first = out.anomalies[0]
    assert 0.0 <= first.latency < 0.25  # detection -> recovery command


def test_target_occupied_goes_past_tier1_and_ends_cleanly(harness):
    run = harness.run("put_on_plate", 1, inject=("occupy_target", ""))
    out = run.outcome
    assert run.injected
    assert out.status in CLEAN_END, out.reason
    occupied = [a for a in out.anomalies if a.kind.value == "target_occupied"]
    assert occupied and occupied[0].tier in (Tier.LOCAL_EXPERT, Tier.VLM_REPLAN)
    assert out.replans <= 2  # the configured budget
    assert arm_settles(harness)


def test_stuck_drawer_goes_to_tier2_and_ends_cleanly(harness):
    run = harness.run("open_drawer", 1, inject=("drawer_stuck", "now"), program=DRAWER,
                      params={"duration": 100.0})
    out = run.outcome
    assert out.status in CLEAN_END, out.reason
    stuck = [a for a in out.anomalies if a.kind.value == "fixture_stuck"]
    assert stuck and stuck[0].tier == Tier.LOCAL_EXPERT
    assert stuck[0].action == "insert:wait(seconds=1)"
    assert arm_settles(harness)


@pytest.mark.parametrize("kind,phase,params", [
    ("remove_object", "", {}),
    ("move_container_away", "", {}),
    ("camera_freeze", "now", {"duration": 8.0}),
])
def test_unpredictable_anomaly_reaches_tier3_and_ends_cleanly(harness, kind, phase, params):
    run = harness.run("put_in_bowl", 2, inject=(kind, phase), params=params)
    out = run.outcome
    assert run.injected
    assert out.status in CLEAN_END, out.reason
    assert any(a.tier == Tier.VLM_REPLAN for a in out.anomalies), out.anomalies
    if out.status != ExitStatus.SUCCESS:
        assert out.reason and not run.oracle_ok
    assert arm_settles(harness)


def test_cancel_mid_motion_stops_the_arm(harness):
    seen_motion = threading.Event()

    def cancel_when_moving(h) -> None:
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline:
            if not arm_still(h):
                seen_motion.set()
                h.executor.cancel("operator cancel")
                return
            time.sleep(0.01)

    run = harness.run("put_in_bowl", 2, during=cancel_when_moving)
    assert seen_motion.is_set()
    assert run.outcome.status == ExitStatus.CANCELLED
    assert arm_settles(harness)


def test_estop_mid_motion_stops_the_arm(harness):
    def press_when_moving(h) -> None:
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline:
            if not arm_still(h):
                h.robot.set_estop(True)
                return
            time.sleep(0.01)

    try:
        run = harness.run("put_in_bowl", 2, during=press_when_moving)
    finally:
        still = arm_settles(harness)
        harness.robot.set_estop(False)
    assert run.outcome.status == ExitStatus.ESTOP
    assert any(a.kind.value == "estop" for a in run.outcome.anomalies)
    assert still

"""Executor building blocks: consistent snapshots with staleness, primitive tracking, records."""

from __future__ import annotations

from frankenbot.anomaly.records import AnomalyLog
from frankenbot.common import AnomalyClass, AnomalyKind, RecoveryOutcome, Tier
from frankenbot.execution.snapshot_source import SnapshotSource
from frankenbot.execution.tracked_primitives import TrackedPrimitives
from frankenbot.ports import CancelToken, PrimitiveResult
from frankenbot.state import RobotSnapshot, Scene, SceneObject

RED = SceneObject("red_block", "red block", "block", "red", (0.4, 0.0, 0.02), (0.04,) * 3)


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_scene_turns_stale_when_its_stamp_stops_moving():
    clock = Clock()
    stamp = [1.0]
    src = SnapshotSource(RobotSnapshot, lambda: Scene.of([RED], stamp=stamp[0]),
                         stale_after_s=0.5, clock=clock)
    assert not src().scene.stale
    clock.t += 0.4
    assert not src().scene.stale
    clock.t += 0.2
    snap = src()
    assert snap.scene.stale and snap.time == clock.t
    stamp[0] = 2.0
    assert not src().scene.stale


def test_snapshot_carries_facts_and_both_halves():
    src = SnapshotSource(lambda: RobotSnapshot(held_object="red_block"),
                         lambda: Scene.of([RED], stamp=1.0))
    src.set_fact("drawer_open:drawer", True)
    snap = src()
    assert snap.robot.held_object == "red_block" and snap.scene.ids() == ("red_block",)
    assert snap.facts == {"drawer_open:drawer": True}


class Inner:
    def __init__(self, tracked_ref) -> None:
        self.seen = None
        self.ref = tracked_ref

    def execute(self, name, args, cancel):
        self.seen = self.ref[0].context()
        return PrimitiveResult.success()


def test_tracking_exposes_the_running_primitive_and_object_poses_at_start():
    ref: list = [None]
    inner = Inner(ref)
    starts = []
    src = SnapshotSource(lambda: RobotSnapshot(held_object="blue_block"),
                         lambda: Scene.of([RED], stamp=1.0))
    tracked = TrackedPrimitives(inner, src, active_path=lambda: "main/3")
    tracked.add_start_listener(lambda n, a, p, t: starts.append((n, p)))
    ref[0] = tracked
    res = tracked.execute("pick", {"obj": "red_block"}, CancelToken())
    assert res.ok
    ctx = inner.seen
    assert ctx.primitive == "pick" and ctx.node_path == "main/3"
    assert ctx.reference == {"red_block": RED.position}
    assert ctx.held_at_start == "blue_block"
    assert tracked.context().primitive is None  # cleared when the primitive returns
    assert starts == [("pick", "main/3")]


def test_settle_marks_recovered_escalated_and_failed():
    log = AnomalyLog()
    a = log.open(AnomalyKind.GRASP_LOST, AnomalyClass.PREDICTABLE, "builtin:grasp_lost",
                 "main/2", "d", 1.0, 1.0)
    log.update(a.event_id, tier=Tier.CODED, action="insert:pick", recovery_commanded_at=1.01)
    b = log.open(AnomalyKind.GRASP_LOST, AnomalyClass.PREDICTABLE, "builtin:grasp_lost",
                 "main/2", "d", 2.0, 2.0)
    log.update(b.event_id, tier=Tier.LOCAL_EXPERT, action="retry", recovery_commanded_at=2.5)
    c = log.open(AnomalyKind.OBJECT_MISSING, AnomalyClass.UNPREDICTABLE, "x", "main/4", "d",
                 3.0, 3.0)
    recs = log.settle(success=True)
    assert [r.outcome for r in recs] == [RecoveryOutcome.ESCALATED, RecoveryOutcome.RECOVERED,
                                         RecoveryOutcome.FAILED]
    assert recs[0].latency == 1.01 - 1.0 and recs[2].latency == -1.0
    assert recs[1].to_json()["tier"] == 2 and c.event_id == "3"


def test_settle_after_a_failed_task_marks_pending_recoveries_failed():
    log = AnomalyLog()
    a = log.open(AnomalyKind.TIMEOUT, AnomalyClass.SEMI_PREDICTABLE, "s", "main/1", "d", 1, 1)
    log.update(a.event_id, recovery_commanded_at=1.2)
    assert log.settle(success=False)[0].outcome == RecoveryOutcome.FAILED

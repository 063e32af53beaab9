"""Built-in monitors: each fires on the situation it is for and stays quiet otherwise."""

from __future__ import annotations

from dataclasses import replace

import pytest

from frankenbot.anomaly.monitors import (
    EStopMonitor,
    GraspLostMonitor,
    MonitorContext,
    ObjectMissingMonitor,
    ObjectMovedMonitor,
    SceneStaleMonitor,
    StallMonitor,
    TargetOccupiedMonitor,
    TimeoutMonitor,
    class_of,
    default_monitors,
)
from frankenbot.common import AnomalyClass, AnomalyKind, FailureCode, kind_for_failure
from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot


def block(oid: str, x: float, y: float, z: float = 0.02) -> SceneObject:
    return SceneObject(oid, oid.replace("_", " "), "block", oid.split("_")[0], (x, y, z),
                       (0.04, 0.04, 0.04))


def world(*objs: SceneObject, t: float = 0.0, stale: bool = False,
          **robot: object) -> WorldSnapshot:
    return WorldSnapshot(robot=RobotSnapshot(**robot), scene=Scene.of(objs, stale=stale), time=t)


PICK_CTX = MonitorContext("pick", {"obj": "red_block"}, "main/0", 0.0,
                          {"red_block": (0.4, 0.0, 0.02)})


def test_estop_fires_only_when_engaged():
    m = EStopMonitor()
    assert m.check(world(estop=True), MonitorContext()) is not None
    assert m.check(world(estop=False), MonitorContext()) is None


def test_grasp_lost_when_fingers_close_on_nothing_while_holding():
    m = GraspLostMonitor()
    ctx = MonitorContext("place_in", {"obj": "red_block", "container": "green_bowl"})
    det = m.check(world(held_object="red_block", gripper_closed_cmd=True, gripper_width=0.001),
                  ctx)
    assert det is not None and det.kind == AnomalyKind.GRASP_LOST
    assert det.objects == ("red_block",)
    # a block between the fingers keeps them 4 cm apart: fine
    assert m.check(world(held_object="red_block", gripper_closed_cmd=True, gripper_width=0.039),
                   ctx) is None
    # not holding anything: nothing to lose
    assert m.check(world(gripper_closed_cmd=True, gripper_width=0.0), ctx) is None
    # during pick the fingers close on purpose
    assert m.check(world(held_object="red_block", gripper_closed_cmd=True, gripper_width=0.0),
                   PICK_CTX) is None


def _frame(snap: WorldSnapshot, stamp: float, **robot: object) -> WorldSnapshot:
    return replace(snap, scene=replace(snap.scene, stamp=stamp),
                   robot=replace(snap.robot, **robot))


def test_grasp_lost_when_camera_sees_held_object_far_from_gripper():
    m = GraspLostMonitor(max_offset=0.12)
    ctx = MonitorContext("place_in", {"obj": "red_block", "container": "green_bowl"})
    snap = world(block("red_block", 0.4, 0.0), held_object="red_block", gripper_closed_cmd=True,
                 gripper_width=0.04, tcp_position=(0.4, 0.2, 0.3))
    assert m.check(_frame(snap, 1.0), ctx) is None  # first frame at rest: may predate the stop
    assert m.check(_frame(snap, 1.1), ctx) is not None
    near = _frame(snap, 1.2, tcp_position=(0.4, 0.0, 0.05))
    assert m.check(near, ctx) is None


def test_grasp_lost_ignores_frames_taken_while_the_arm_moved():
    m = GraspLostMonitor(max_offset=0.12)
    ctx = MonitorContext("place_in", {"obj": "red_block", "container": "green_bowl"})
    snap = world(block("red_block", 0.4, 0.0), held_object="red_block", gripper_closed_cmd=True,
                 gripper_width=0.04, tcp_position=(0.4, 0.2, 0.3))
    assert m.check(_frame(snap, 1.0, moving=True), ctx) is None
    assert m.check(_frame(snap, 1.0), ctx) is None  # stopped, but the frame is from the move
    assert m.check(_frame(snap, 1.1), ctx) is None  # one frame since the stop
    assert m.check(_frame(snap, 1.2), ctx) is not None


def test_grasp_lost_waits_for_a_sighting_stamped_after_the_stop_when_frames_lag():
    """Under load the camera's frames arrive late: the frames that come after the arm stopped
    were taken while it moved (stamps before the stop), however many of them arrive."""
    m = GraspLostMonitor(max_offset=0.12)
    ctx = MonitorContext("place_in", {"obj": "red_block", "container": "green_bowl"})
    snap = world(block("red_block", 0.4, 0.0), held_object="red_block", gripper_closed_cmd=True,
                 gripper_width=0.04, tcp_position=(0.4, 0.2, 0.3))
    def at(scene_stamp: float, robot_stamp: float, moving: bool = False) -> WorldSnapshot:
        return replace(_frame(snap, scene_stamp, moving=moving),
                       robot=replace(snap.robot, moving=moving, stamp=robot_stamp))

    assert m.check(at(1.0, 1.5, moving=True), ctx) is None
    for i, stamp in enumerate((1.1, 1.2, 1.3, 1.4)):  # arriving at rest, taken in the move
        assert m.check(at(stamp, 1.6 + 0.1 * i), ctx) is None
    assert m.check(at(1.7, 2.0), ctx) is not None


def test_grasp_lost_judges_opened_fingers_against_the_gap_the_object_was_held_at():
    """A round 7 cm apple, partly hidden by the fingers, is perceived 5 cm wide: the fingers at
    the 71 mm they closed to are no drop; opened to 85 mm they are."""
    m = GraspLostMonitor()
    ctx = MonitorContext("place_in", {"obj": "red_apple", "container": "bottom_drawer"})
    apple = SceneObject("red_apple", "red apple", "apple", "red", (0.4, 0.0, 0.2),
                        (0.05, 0.05, 0.05))

    def at(width: float) -> WorldSnapshot:
        return world(apple, held_object="red_apple", gripper_closed_cmd=True,
                     gripper_width=width, tcp_position=(0.4, 0.0, 0.2), moving=True)

    assert m.check(at(0.071), ctx) is None
    assert m.check(at(0.072), ctx) is None
    hit = m.check(at(0.085), ctx)
    assert hit is not None and "opened" in hit.detail
    # let go, then grasped again narrower: the old grasp's gap no longer counts
    assert m.check(world(apple, moving=True), ctx) is None
    assert m.check(at(0.045), ctx) is None
    hit = m.check(at(0.075), ctx)
    assert hit is not None and "opened" in hit.detail


def test_grasp_lost_ignores_an_object_let_go_while_the_gripper_retreats():
    """A place opens the fingers and keeps the object held until the arm has retreated and the
    camera has seen it at its new place: the object far below the still gripper is no drop
    (with the fingers still closed on it, the same view is one)."""
    ctx = MonitorContext("place_in", {"obj": "red_block", "container": "green_bowl"})
    for closed in (False, True):
        m = GraspLostMonitor(max_offset=0.08)
        snap = world(block("red_block", 0.4, 0.0), held_object="red_block",
                     gripper_closed_cmd=closed, gripper_width=0.05,
                     tcp_position=(0.4, 0.0, 0.14))
        hits = [m.check(replace(_frame(snap, t), robot=replace(snap.robot, stamp=t)), ctx)
                for t in (1.0, 1.1, 1.2, 1.3)]
        assert any(hits) == closed, (closed, hits)


def test_object_moved_compares_with_pose_at_primitive_start():
    m = ObjectMovedMonitor(threshold=0.03)
    assert m.check(world(block("red_block", 0.41, 0.0)), PICK_CTX) is None
    det = m.check(world(block("red_block", 0.46, 0.0)), PICK_CTX)
    assert det is not None and det.kind == AnomalyKind.OBJECT_MOVED and "0.060" in det.detail
    # stale scenes say nothing about motion
    assert m.check(world(block("red_block", 0.46, 0.0), stale=True), PICK_CTX) is None


def test_object_moved_leaves_alone_the_object_a_push_moves():
    m = ObjectMovedMonitor(threshold=0.03)
    ctx = MonitorContext("push_in_front_of", {"obj": "red_block", "ref": "blue_block"},
                         "main/0", 0.0, {"red_block": (0.4, 0.0, 0.02),
                                         "blue_block": (0.6, 0.0, 0.02)})
    far = world(block("red_block", 0.52, 0.0), block("blue_block", 0.6, 0.0),
                tcp_position=(0.2, 0.3, 0.3))
    assert m.check(far, ctx) is None
    pick = MonitorContext("pick", {"obj": "red_block"}, "main/0", 0.0,
                          {"red_block": (0.4, 0.0, 0.02)})
    assert m.check(far, pick) is not None


def test_object_moved_tolerates_a_partly_hidden_container_but_not_a_real_move():
    m = ObjectMovedMonitor(threshold=0.03)
    ctx = MonitorContext("place_in", {"obj": "red_block", "container": "gray_bin"}, "main/1",
                         0.0, {"gray_bin": (0.47, 0.0, 0.05)}, held_at_start="red_block")

    def bin_at(x: float) -> SceneObject:
        return SceneObject("gray_bin", "gray bin", "bin", "gray", (x, 0.0, 0.05),
                           (0.20, 0.26, 0.10))

    # the arm over the bin shifts its perceived centre a few cm: no anomaly
    assert m.check(world(bin_at(0.51)), ctx) is None
    det = m.check(world(bin_at(0.57)), ctx)
    assert det is not None and det.objects == ("gray_bin",)
    # the gripper right over the bin hides more of it: a larger shift is still no move ...
    over = {"tcp_position": (0.55, 0.0, 0.2)}
    assert m.check(world(bin_at(0.55), **over), ctx) is None
    # ... but a bin carried away from under the gripper is
    assert m.check(world(bin_at(0.70), **over), ctx) is not None


def test_object_moved_takes_one_end_of_a_half_hidden_bottle_for_no_move():
    """The fingers around a lying bottle hide its middle: the camera sees one end, centred
    4-5 cm from where the bottle was. Inside its old footprint, that is no move; the same end
    seen off it (or the whole bottle rolled away) is."""
    m = ObjectMovedMonitor(threshold=0.03)

    def bottle(x: float, y: float, length: float) -> SceneObject:
        return SceneObject("purple_bottle", "wine bottle", "bottle", "purple", (x, y, 0.03),
                           (length, 0.06, 0.06), 0.0)

    whole = bottle(0.60, 0.0, 0.16)
    ctx = MonitorContext("pick", {"obj": "purple_bottle"}, "main/0", 0.0,
                         {"purple_bottle": whole.position},
                         reference_objects={"purple_bottle": whole})
    tcp = {"tcp_position": (0.60, 0.0, 0.03)}
    assert m.check(world(bottle(0.555, 0.0, 0.07), **tcp), ctx) is None  # its far end
    assert m.check(world(bottle(0.555, 0.07, 0.07), **tcp), ctx) is not None  # rolled off
    assert m.check(world(bottle(0.60, 0.08, 0.16), **tcp), ctx) is not None
    # without the pose at the start there is nothing to judge the piece against
    bare = replace(ctx, reference_objects={})
    assert m.check(world(bottle(0.555, 0.0, 0.07), **tcp), bare) is not None


def test_object_missing_only_for_fresh_scene_and_known_objects():
    m = ObjectMissingMonitor()
    assert m.check(world(), PICK_CTX) is not None
    assert m.check(world(stale=True), PICK_CTX) is None
    assert m.check(world(block("red_block", 0.4, 0.0)), PICK_CTX) is None
    detect_ctx = replace(PICK_CTX, primitive="detect")
    assert m.check(world(), detect_ctx) is None


def test_target_occupied_for_stacking_and_table_spots_but_not_bowls():
    m = TargetOccupiedMonitor()
    base = block("blue_block", 0.5, 0.1)
    intruder = block("green_block", 0.505, 0.1, 0.06)
    ctx = MonitorContext("place_on", {"obj": "red_block", "target": "blue_block"})
    det = m.check(world(base, intruder), ctx)
    assert det is not None and det.kind == AnomalyKind.TARGET_OCCUPIED
    assert m.check(world(base), ctx) is None
    spot = MonitorContext("place_at", {"obj": "red_block", "x": 0.3, "y": -0.1})
    assert m.check(world(block("green_block", 0.31, -0.1)), spot) is not None
    assert m.check(world(block("green_block", 0.5, -0.1)), spot) is None
    bowl = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.5, 0.1, 0.03),
                       (0.15, 0.15, 0.06))
    into = MonitorContext("place_in", {"obj": "red_block", "container": "green_bowl"})
    assert m.check(world(bowl, block("blue_block", 0.5, 0.1, 0.05)), into) is None
    # a fixture's top (the cabinet's): place_on finds a free spot beside what stands there
    cabinet = SceneObject("cabinet", "cabinet", "cabinet", "brown", (0.42, 0.52, 0.18),
                          (0.26, 0.3, 0.36), is_fixture=True)
    on_top = MonitorContext("place_on", {"obj": "red_block", "target": "cabinet"})
    assert m.check(world(cabinet, block("blue_block", 0.45, 0.55, 0.38)), on_top) is None


def test_the_held_block_tracked_again_on_the_target_does_not_occupy_it():
    """Lowered onto the blue block, the held red block is tracked again as red_block_2 at the
    gripper: that is the held block, not something on the target; a red block under the
    gripper while it is high, or one of another colour, still is."""
    m = TargetOccupiedMonitor()
    base = block("blue_block", 0.5, 0.1)
    held = block("red_block", 0.5, 0.1, 0.065)
    twin = block("red_block_2", 0.502, 0.1, 0.061)
    ctx = MonitorContext("place_on", {"obj": "red_block", "target": "blue_block"})
    low = {"held_object": "red_block", "tcp_position": (0.5, 0.1, 0.07)}
    assert m.check(world(base, held, twin, **low), ctx) is None
    high = {"held_object": "red_block", "tcp_position": (0.5, 0.1, 0.18)}
    assert m.check(world(base, held, twin, **high), ctx) is not None
    other = replace(twin, object_id="orange_block", colour="orange")
    assert m.check(world(base, held, other, **low), ctx) is not None


def test_stall_needs_motion_command_and_still_joints_for_stall_time():
    m = StallMonitor(stall_s=1.0)
    ctx = MonitorContext("move_above", {"obj": "red_block"})
    q = (0.1,) * 6
    assert m.check(world(t=0.0, moving=True, joint_positions=q), ctx) is None
    assert m.check(world(t=0.9, moving=True, joint_positions=q), ctx) is None
    det = m.check(world(t=1.2, moving=True, joint_positions=q), ctx)
    assert det is not None and det.kind == AnomalyKind.STALL
    m.reset()
    assert m.check(world(t=1.3, moving=True, joint_positions=q), ctx) is None
    # joints progressing: no stall
    m2 = StallMonitor(stall_s=1.0)
    for i in range(30):
        assert m2.check(world(t=i * 0.1, moving=True, joint_positions=(0.01 * i,) * 6), ctx) \
            is None


def test_scene_stale_and_timeout():
    ctx = MonitorContext("pick", {"obj": "red_block"}, started_at=0.0)
    assert SceneStaleMonitor().check(world(stale=True), ctx) is not None
    assert SceneStaleMonitor().check(world(stale=False), ctx) is None
    t = TimeoutMonitor(default_s=5.0)
    assert t.check(world(t=4.0), ctx) is None
    assert t.check(world(t=6.0), ctx) is not None
    wait_ctx = MonitorContext("wait", {"seconds": 10.0}, started_at=0.0)
    assert t.check(world(t=11.0), wait_ctx) is None
    assert t.check(world(t=12.5), wait_ctx) is not None


def test_motion_timeout_stretches_with_the_speed_slider():
    """A 60 s limit is 60 s at full speed: at a 20 % slider a pick may run 300 s (the scaled
    JTC stretches every motion 5x); a paused arm (0 %) still times out, after 1/0.05 x."""
    t = TimeoutMonitor(default_s=60.0)
    ctx = MonitorContext("pick", {"obj": "red_block"}, started_at=0.0)

    def at(seconds: float, scaling: float) -> WorldSnapshot:
        return replace(world(t=seconds), robot=RobotSnapshot(speed_scaling=scaling))

    assert t.check(at(100.0, 1.0), ctx) is not None
    assert t.check(at(100.0, 0.2), ctx) is None
    assert t.check(at(310.0, 0.2), ctx) is not None
    assert t.check(at(1190.0, 0.0), ctx) is None
    assert t.check(at(1210.0, 0.0), ctx) is not None
    detect = MonitorContext("detect", {"obj": "red_block"}, started_at=0.0)
    assert t.check(at(100.0, 0.2), detect) is not None  # not a motion: not stretched


@pytest.mark.parametrize("code,kind", [
    (FailureCode.ABORTED, AnomalyKind.MOTION_ABORTED),
    (FailureCode.REJECTED_BY_SAFETY, AnomalyKind.MOTION_REJECTED),
    (FailureCode.GRASP_FAILED, AnomalyKind.GRASP_FAILED),
    (FailureCode.NOT_FOUND, AnomalyKind.OBJECT_MISSING),
    (FailureCode.BLOCKED, AnomalyKind.TARGET_OCCUPIED),
    (FailureCode.NO_STATE, AnomalyKind.SCENE_STALE),
    (FailureCode.INVALID_ARGUMENT, AnomalyKind.PRIMITIVE_FAILED),
])
def test_failure_codes_map_to_anomaly_kinds(code, kind):
    assert kind_for_failure(code) == kind


def test_classes_follow_the_papers_split():
    assert class_of(AnomalyKind.GRASP_LOST) == AnomalyClass.PREDICTABLE
    assert class_of(AnomalyKind.TARGET_OCCUPIED) == AnomalyClass.SEMI_PREDICTABLE
    assert class_of(AnomalyKind.OBJECT_MISSING) == AnomalyClass.UNPREDICTABLE


def test_default_set_is_quiet_on_a_normal_pick():
    snap = world(block("red_block", 0.4, 0.0), t=0.5, moving=True)
    for m in default_monitors():
        assert m.check(snap, PICK_CTX) is None, m.name

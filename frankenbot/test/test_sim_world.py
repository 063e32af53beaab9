"""SimWorld core: scenes, controller semantics, gripper, camera, oracle (in-process, no ROS)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot import robotiq
from frankenbot.errors import SimError
from frankenbot.sim import layout
from frankenbot.sim.controller import TrajectoryPoint, TrajectoryState
from frankenbot.sim.kinematics import HOME, fk_tool0
from frankenbot.sim.world import SimWorld


@pytest.fixture(scope="module")
def world():
    w = SimWorld(task="put_in_bowl", seed=3, width=160, height=120)
    yield w
    w.close()


def test_same_seed_gives_identical_scene(world):
    a = world.reset("stack", seed=11)
    pos_a = {n: s.position for n, s in world.object_states().items()}
    b = world.reset("stack", seed=11)
    pos_b = {n: s.position for n, s in world.object_states().items()}
    assert a == b
    assert pos_a.keys() == pos_b.keys()
    for n in pos_a:
        assert np.allclose(pos_a[n], pos_b[n], atol=1e-9)
    world.reset("stack", seed=12)
    pos_c = {n: s.position for n, s in world.object_states().items()}
    assert any(not np.allclose(pos_a[n], pos_c.get(n, (9, 9, 9))) for n in pos_a)


def test_objects_rest_on_the_table_after_reset(world):
    world.reset("sort_by_colour", seed=2)
    for name, st in world.object_states().items():
        assert st.speed < 0.05, name
        bottom = st.position[2] - st.size[2] / 2
        assert abs(bottom - layout.TABLE_TOP_Z) < 0.01, (name, bottom)


def test_unknown_task_is_rejected_and_keeps_the_scene(world):
    world.reset("pick_up", seed=1)
    with pytest.raises(SimError, match="valid: .*put_in_bowl"):
        world.reset("juggle", seed=1)
    assert world.task.family == "pick_up"


def test_trajectory_moves_arm_to_target_within_tolerance(world):
    world.reset("pick_up", seed=1)
    target = HOME + np.array([0.3, 0.1, -0.2, 0.2, 0.1, -0.3])
    world.command_trajectory(world.JOINT_NAMES, [TrajectoryPoint(1.5, target.tolist())])
    assert world.trajectory_active()
    world.advance(0.75)
    mid = world.joint_positions()
    assert np.all(np.abs(mid - HOME) > 0.02) and np.all(np.abs(mid - target) > 0.02)
    world.advance(1.5)
    assert world.trajectory_status().state == TrajectoryState.SUCCEEDED
    assert np.max(np.abs(world.joint_positions() - target)) < 0.01


def test_joint_names_in_any_order_are_mapped(world):
    world.reset("pick_up", seed=1)
    target = HOME + 0.1
    names = list(reversed(world.JOINT_NAMES))
    world.command_trajectory(names, [TrajectoryPoint(0.5, list(reversed(target.tolist())))])
    world.advance(1.5)
    assert np.max(np.abs(world.joint_positions() - target)) < 0.01


def test_new_trajectory_replaces_old_and_a_hold_point_stops(world):
    world.reset("pick_up", seed=1)
    far = HOME + np.array([0.8, 0, 0, 0, 0, 0])
    world.command_trajectory(world.JOINT_NAMES, [TrajectoryPoint(2.0, far.tolist())])
    world.advance(0.5)
    with pytest.raises(SimError, match="Empty trajectory"):  # as the Jazzy JTC
        world.command_trajectory(world.JOINT_NAMES, [])
    assert world.trajectory_active()  # the rejected stop changed nothing
    q_now = world.joint_positions()
    world.command_trajectory(world.JOINT_NAMES, [TrajectoryPoint(0.05, q_now.tolist(),
                                                                 [0.0] * 6)])
    world.advance(0.2)
    q_stop = world.joint_positions()
    world.advance(1.0)
    assert np.max(np.abs(world.joint_positions() - q_stop)) < 0.01
    assert q_stop[0] < far[0] - 0.3
    back = HOME + np.array([-0.2, 0, 0, 0, 0, 0])
    world.command_trajectory(world.JOINT_NAMES, [TrajectoryPoint(1.0, back.tolist())])
    world.advance(2.0)
    assert abs(world.joint_positions()[0] - back[0]) < 0.01


@pytest.mark.parametrize("names, positions, times, message", [
    (["a", "b", "c", "d", "e", "f"], [0.0] * 6, [1.0], "unknown"),
    (list(SimWorld.JOINT_NAMES[:5]), [0.0] * 5, [1.0], "missing"),
    (list(SimWorld.JOINT_NAMES), [float("nan")] + [0.0] * 5, [1.0], "non-finite"),
    (list(SimWorld.JOINT_NAMES), [0.0, 0.0, 4.0, 0.0, 0.0, 0.0], [1.0], "beyond its limits"),
    (list(SimWorld.JOINT_NAMES), [0.0] * 6, [1.0, 1.0], "strictly increase"),
])
def test_bad_trajectories_are_rejected_and_nothing_moves(world, names, positions, times, message):
    world.reset("pick_up", seed=1)
    q0 = world.joint_positions()
    points = [TrajectoryPoint(t, positions) for t in times]
    with pytest.raises(SimError, match=message):
        world.command_trajectory(names, points)
    world.advance(0.5)
    assert not world.trajectory_active()
    assert np.max(np.abs(world.joint_positions() - q0)) < 1e-3


def test_collision_with_table_aborts_the_trajectory(world):
    world.reset("pick_up", seed=1)
    q = HOME.copy()
    q[1] += 0.9  # shoulder down through the table
    world.command_trajectory(world.JOINT_NAMES, [TrajectoryPoint(1.0, q.tolist())])
    world.advance(2.5)
    status = world.trajectory_status()
    assert status.state == TrajectoryState.ABORTED
    assert "tolerance" in status.reason


def test_gripper_closes_and_reports_width(world):
    world.reset("pick_up", seed=1)
    assert world.gripper_width() == pytest.approx(robotiq.STROKE, abs=1e-3)
    world.command_gripper(robotiq.CLOSED_POSITION)
    world.advance(1.0)
    assert world.gripper_width() < 0.002
    assert world.gripper_position() == pytest.approx(robotiq.CLOSED_POSITION, abs=0.03)
    world.command_gripper(0.4)
    world.advance(1.0)
    assert world.gripper_width() == pytest.approx(robotiq.position_to_width(0.4), abs=0.003)
    for bad in (-0.1, 0.9, float("nan")):
        with pytest.raises(SimError, match="gripper position"):
            world.command_gripper(bad)


def test_rgbd_frames_are_aligned_and_in_millimetres(world):
    world.reset("put_in_bowl", seed=3)
    rgb, depth = world.render_rgbd()
    assert rgb.shape == (120, 160, 3) and rgb.dtype == np.uint8
    assert depth.shape == (120, 160) and depth.dtype == np.uint16
    info = world.camera_info()
    T = world.camera_pose()
    # the zone is a flat patch on the table: its depth must match the projection exactly
    zx, zy = layout.ZONE.centre
    p = np.linalg.inv(T) @ np.array([zx, zy, layout.TABLE_TOP_Z + 0.001, 1.0])
    u = int(round(info.fx * p[0] / p[2] + info.cx))
    v = int(round(info.fy * p[1] / p[2] + info.cy))
    assert abs(int(depth[v, u]) - p[2] * 1000) < 8
    assert rgb[v, u, 2] > 150 and rgb[v, u, 0] < 100  # cyan patch at that pixel
    hfov = 2 * math.degrees(math.atan(info.width / 2 / info.fx))
    assert 66 < hfov < 72
    assert np.allclose(T[:3, :3] @ T[:3, :3].T, np.eye(3), atol=1e-6)


def test_tool0_kinematics_match_the_mujoco_model(world):
    world.reset("pick_up", seed=1)
    q = world.joint_positions()
    T = fk_tool0(q)
    tool0 = world.data.xpos[world.model.body("tool0").id]
    assert np.allclose(T[:3, 3], tool0, atol=2e-3)


def test_oracle_fails_before_and_reports_details(world):
    world.reset("put_in_bowl", seed=3)
    verdict = world.evaluate(0.2)
    assert not verdict.success
    assert verdict.details["family"] == "put_in_bowl"
    assert "NO" in verdict.text


def test_oracle_succeeds_when_predicate_holds(world):
    task = world.reset("put_in_bowl", seed=3)
    obj, bowl = task.params["object"], task.params["target"]
    bx, by, bz = world.object_states()[bowl].position
    world._set_pose(obj, (bx, by, bz), 0.0)
    verdict = world.evaluate(0.5)
    assert verdict.success, verdict.text
    assert verdict.details["held_for"] >= 0.5

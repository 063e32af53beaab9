"""Time parameterisation and straight-line Cartesian paths respect their limits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.motion.kinematics import UnreachableError, UR5eKinematics, top_down_pose
from frankenbot.motion.trajectory import (
    DiscontinuityError,
    MotionLimits,
    joint_move,
    linear_move,
    linear_waypoints,
    time_parameterize,
)

HOME = np.array([0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0])


def _max_rates(traj):
    t = traj.times()
    q = traj.positions()
    v = traj.velocities()
    fd = np.diff(q, axis=0) / np.diff(t)[:, None]
    acc = np.diff(v, axis=0) / np.diff(t)[:, None]
    return np.max(np.abs(fd), axis=0), np.max(np.abs(v), axis=0), np.max(np.abs(acc), axis=0)


def test_joint_move_starts_and_ends_at_rest_on_the_endpoints() -> None:
    limits = MotionLimits()
    goal = HOME + np.array([0.8, -0.3, 0.2, 0.1, 0.0, -1.0])
    traj = joint_move(HOME, goal, limits)
    assert np.allclose(traj.points[0].positions, HOME)
    assert np.allclose(traj.final_positions, goal)
    assert traj.points[0].velocities == (0.0,) * 6
    assert traj.points[-1].velocities == (0.0,) * 6
    assert np.all(np.diff(traj.times()) > 0)


@pytest.mark.parametrize("scale", [1.0, 0.3])
def test_joint_move_stays_within_scaled_velocity_and_acceleration(scale: float) -> None:
    limits = MotionLimits(velocity_scale=0.5, acceleration_scale=0.4)
    goal = HOME + np.array([3.0, -0.5, 0.7, 0.3, 1.0, -3.0])  # long enough to cruise
    traj = joint_move(HOME, goal, limits, speed_scaling=scale)
    fd, v, acc = _max_rates(traj)
    vmax = np.asarray(limits.max_joint_velocity) * 0.5 * scale
    amax = np.asarray(limits.max_joint_acceleration) * 0.4 * scale
    assert np.all(fd <= vmax * 1.001)
    assert np.all(v <= vmax * 1.001)
    assert np.all(acc <= amax * 1.001)
    # The slowest joint (largest move relative to its limit) actually reaches its limit.
    assert np.max(v / vmax) > 0.95


def test_a_sharp_corner_in_a_path_is_slowed_to_the_joint_acceleration_limit() -> None:
    """Waypoints whose direction turns sharply (a straight TCP line near a singularity) are
    timed so the turn, not only each segment, stays under the joint acceleration limit."""
    limits = MotionLimits()
    path = [HOME + np.array([0.05 * k, 0.0, 0.0, 0.0, 0.0, 0.0]) for k in range(10)]
    path += [path[-1] + np.array([0.0, 0.05 * k, 0.0, 0.0, 0.0, 0.0]) for k in range(1, 10)]
    traj = time_parameterize(path, limits)
    _, _, acc = _max_rates(traj)
    assert np.all(acc <= np.asarray(limits.max_joint_acceleration) * 1.001)
    assert np.allclose(traj.final_positions, path[-1])


def test_slower_speed_scaling_gives_a_longer_trajectory() -> None:
    goal = HOME + 0.5
    fast = joint_move(HOME, goal, MotionLimits(), 1.0)
    slow = joint_move(HOME, goal, MotionLimits(), 0.25)
    assert slow.duration > 2.0 * fast.duration


def test_joint_move_with_kinematics_caps_tcp_speed() -> None:
    kin = UR5eKinematics()
    limits = MotionLimits(velocity_scale=1.0, acceleration_scale=1.0, max_cartesian_speed=0.2)
    goal = HOME + np.array([1.5, 0, 0, 0, 0, 0])
    traj = joint_move(HOME, goal, limits, kin=kin)
    tcp = kin.link_points(traj.positions())[:, -1, :]
    speed = np.linalg.norm(np.diff(tcp, axis=0), axis=1) / np.diff(traj.times())
    assert np.max(speed) <= 0.2
    unlimited = joint_move(HOME, goal, limits)
    assert traj.duration > unlimited.duration


def test_zero_length_move_is_a_single_point() -> None:
    traj = joint_move(HOME, HOME, MotionLimits())
    assert len(traj.points) == 1 and traj.duration == 0.0


def test_time_parameterize_rejects_nan_and_bad_shapes() -> None:
    with pytest.raises(ValueError, match="NaN"):
        time_parameterize([HOME, HOME * math.nan], MotionLimits())
    with pytest.raises(ValueError, match="shape"):
        time_parameterize([[0.0, 1.0]], MotionLimits())
    with pytest.raises(ValueError, match="speed_scaling"):
        time_parameterize([HOME, HOME + 0.1], MotionLimits(), speed_scaling=0.0)


def test_motion_limits_validate() -> None:
    from frankenbot.errors import ConfigError

    with pytest.raises(ConfigError, match="velocity_scale"):
        MotionLimits(velocity_scale=1.5)
    with pytest.raises(ConfigError, match="6 finite values"):
        MotionLimits(max_joint_velocity=(1.0,) * 5)


def test_linear_move_keeps_the_tcp_on_the_line_and_orientation_fixed() -> None:
    kin = UR5eKinematics()
    start_pose = top_down_pose(0.5, 0.1, 0.20, 0.3)
    q0 = kin.ik(start_pose, HOME)
    goal = top_down_pose(0.5, 0.1, 0.05, 0.3)
    limits = MotionLimits()
    traj = linear_move(kin, q0, goal, limits)
    for q in traj.positions():
        pose = kin.fk(q)
        # samples between IK points (2 cm apart) are joint-interpolated: within 0.5 mm
        assert abs(pose[0, 3] - 0.5) < 5e-4 and abs(pose[1, 3] - 0.1) < 5e-4
        assert np.allclose(pose[:3, :3], goal[:3, :3], atol=1e-3)
    assert np.allclose(kin.fk(traj.final_positions), goal, atol=1e-8)
    tcp = kin.link_points(traj.positions())[:, -1, :]
    speed = np.linalg.norm(np.diff(tcp, axis=0), axis=1) / np.diff(traj.times())
    assert np.max(speed) <= limits.max_cartesian_speed * 1.01
    assert np.max(speed) > 0.5 * limits.max_cartesian_speed


def test_linear_move_interpolates_orientation() -> None:
    kin = UR5eKinematics()
    q0 = kin.ik(top_down_pose(0.45, 0.0, 0.15, 0.0), HOME)
    goal = top_down_pose(0.45, 0.0, 0.15, 0.6)
    qs, _ = linear_waypoints(kin, q0, goal, MotionLimits())
    assert len(qs) >= 12  # 0.6 rad in 0.05 rad steps
    assert np.allclose(kin.fk(qs[-1]), goal, atol=1e-8)


def test_linear_move_across_the_base_column_is_refused() -> None:
    kin = UR5eKinematics()
    # A straight line over the base axis needs a shoulder flip or leaves the reachable set.
    q0 = kin.ik(top_down_pose(0.30, 0.0, 0.35, 0.0), HOME)
    with pytest.raises((DiscontinuityError, UnreachableError)):
        linear_waypoints(kin, q0, top_down_pose(-0.30, 0.0, 0.35, 0.0), MotionLimits())


def test_a_joint_jump_between_line_samples_is_rejected() -> None:
    kin = UR5eKinematics()
    q0 = kin.ik(top_down_pose(0.45, 0.0, 0.25, 0.0), HOME)
    strict = MotionLimits(linear_max_joint_step=1e-4)
    with pytest.raises(DiscontinuityError, match="jump"):
        linear_waypoints(kin, q0, top_down_pose(0.45, 0.0, 0.10, 0.0), strict)
    qs, _ = linear_waypoints(kin, q0, top_down_pose(0.45, 0.0, 0.10, 0.0), MotionLimits())
    assert np.max(np.abs(np.diff(qs, axis=0))) < 0.1  # smooth: far below the jump limit

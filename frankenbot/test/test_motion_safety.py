"""The safety envelope rejects (never clips) targets and trajectories outside its limits."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from frankenbot import settings
from frankenbot.errors import ConfigError, SafetyViolation
from frankenbot.motion.config import arm_config_from_mapping, load_arm_config
from frankenbot.motion.kinematics import JOINT_NAMES, UR5eKinematics, top_down_pose
from frankenbot.motion.safety import SafetyConfig, SafetyEnvelope
from frankenbot.motion.trajectory import (
    JointTrajectory,
    MotionLimits,
    TrajectoryPoint,
    joint_move,
    linear_move,
)

HOME = np.array([0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0])


@pytest.fixture
def kin() -> UR5eKinematics:
    return UR5eKinematics()


@pytest.fixture
def envelope(kin: UR5eKinematics) -> SafetyEnvelope:
    return SafetyEnvelope(load_arm_config().safety, kin)


def test_shipped_config_loads_and_planning_stays_below_hard_limits() -> None:
    cfg = load_arm_config()
    assert cfg.kinematics.tcp_offset == pytest.approx(0.145)
    assert all(p <= h for p, h in zip(cfg.limits.max_joint_velocity,
                                      cfg.safety.max_joint_velocity, strict=True))
    assert cfg.limits.max_cartesian_speed <= cfg.safety.max_cartesian_speed


def test_planned_motions_pass_the_envelope(kin: UR5eKinematics,
                                           envelope: SafetyEnvelope) -> None:
    limits = MotionLimits()
    above = kin.ik(top_down_pose(0.5, 0.1, 0.15, 0.2), HOME)
    envelope.check_trajectory(joint_move(HOME, above, limits, kin=kin), HOME)
    envelope.check_trajectory(linear_move(kin, above, top_down_pose(0.5, 0.1, 0.03, 0.2),
                                          limits), above)


@pytest.mark.parametrize("position, reason", [
    ((1.2, 0.0, 0.2), "workspace box"),
    ((0.5, 0.0, 0.01), "table clearance"),
    ((0.05, 0.02, 0.3), "base axis"),
    ((math.nan, 0.0, 0.2), "finite"),
])
def test_targets_outside_the_envelope_are_rejected_with_a_reason(
        envelope: SafetyEnvelope, position: tuple[float, float, float], reason: str) -> None:
    with pytest.raises(SafetyViolation, match=reason):
        envelope.check_position(position)


def test_joint_target_beyond_limits_is_rejected(envelope: SafetyEnvelope) -> None:
    q = HOME.copy()
    q[2] = 3.3  # elbow limit is pi
    with pytest.raises(SafetyViolation, match="elbow_joint"):
        envelope.check_joints(q)


def _fast(traj: JointTrajectory, factor: float) -> JointTrajectory:
    """The same path played ``factor`` times faster."""
    pts = tuple(TrajectoryPoint(p.time_from_start / factor, p.positions,
                                tuple(v * factor for v in p.velocities or ()))
                for p in traj.points)
    return JointTrajectory(traj.joint_names, pts)


def test_too_fast_trajectory_is_rejected_not_clipped(kin: UR5eKinematics,
                                                     envelope: SafetyEnvelope) -> None:
    goal = HOME + np.array([1.0, 0.0, 0.0, 0.0, 0.0, 2.0])
    traj = joint_move(HOME, goal, MotionLimits())
    envelope.check_trajectory(traj, HOME)
    with pytest.raises(SafetyViolation, match="velocity|rad/s"):
        envelope.check_trajectory(_fast(traj, 4.0), HOME)


def test_too_hard_acceleration_is_rejected(envelope: SafetyEnvelope) -> None:
    goal = HOME + np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.3])
    limits = MotionLimits(velocity_scale=1.0, acceleration_scale=1.0)
    traj = joint_move(HOME, goal, limits)
    # 1.5x faster: velocity still under pi rad/s, acceleration 2.25 * 2.5 > 5 rad/s^2
    with pytest.raises(SafetyViolation, match="acceleration"):
        envelope.check_trajectory(_fast(traj, 1.5), HOME)


def test_cartesian_speed_limit(kin: UR5eKinematics) -> None:
    strict = SafetyEnvelope(dataclasses.replace(load_arm_config().safety, max_cartesian_speed=0.05),
                            kin)
    traj = joint_move(HOME, HOME + np.array([0.5, 0, 0, 0, 0, 0]), MotionLimits(), kin=kin)
    with pytest.raises(SafetyViolation, match="TCP speed"):
        strict.check_trajectory(traj, HOME)


def test_trajectory_into_the_table_is_rejected(kin: UR5eKinematics,
                                               envelope: SafetyEnvelope) -> None:
    above = kin.ik(top_down_pose(0.5, 0.0, 0.10, 0.0), HOME)
    below = kin.ik(top_down_pose(0.5, 0.0, -0.02, 0.0), above)
    traj = joint_move(above, below, MotionLimits())
    with pytest.raises(SafetyViolation, match="table"):
        envelope.check_trajectory(traj, above)


def test_structural_problems_are_rejected(envelope: SafetyEnvelope) -> None:
    good = joint_move(HOME, HOME + 0.1, MotionLimits())
    wrong_names = JointTrajectory(tuple(reversed(JOINT_NAMES)), good.points)
    with pytest.raises(SafetyViolation, match="joint names"):
        envelope.check_trajectory(wrong_names, HOME)
    with pytest.raises(SafetyViolation, match="no points"):
        envelope.check_trajectory(JointTrajectory(JOINT_NAMES, ()), HOME)
    nan_point = TrajectoryPoint(1.0, (math.nan,) * 6, None)
    with pytest.raises(SafetyViolation, match="NaN"):
        envelope.check_trajectory(JointTrajectory(JOINT_NAMES, (nan_point,)), HOME)
    backwards = JointTrajectory(JOINT_NAMES, (good.points[2], good.points[1]))
    with pytest.raises(SafetyViolation, match="increase"):
        envelope.check_trajectory(backwards, HOME)


def test_trajectory_must_start_at_the_current_state(envelope: SafetyEnvelope) -> None:
    traj = joint_move(HOME + 0.3, HOME + 0.4, MotionLimits())
    with pytest.raises(SafetyViolation, match="current state"):
        envelope.check_trajectory(traj, HOME)


def test_single_far_point_is_a_jump(envelope: SafetyEnvelope) -> None:
    jump = JointTrajectory(JOINT_NAMES, (TrajectoryPoint(0.1, tuple(HOME + 1.0), None),))
    with pytest.raises(SafetyViolation, match="rad/s"):
        envelope.check_trajectory(jump, HOME)


def test_config_errors_are_clear() -> None:
    with pytest.raises(ConfigError, match="unknown"):
        settings.build(SafetyConfig, {"bogus": 1})
    with pytest.raises(ConfigError, match="exceed the safety"):
        arm_config_from_mapping({"safety": {"max_cartesian_speed": 0.1},
                                 "motion": {"max_cartesian_speed": 0.3}})
    with pytest.raises(ConfigError, match="workspace"):
        SafetyConfig(workspace_min=(1, 0, 0), workspace_max=(0, 1, 1))
    with pytest.raises(ConfigError, match="cannot read"):
        load_arm_config("/nonexistent/safety.yaml")

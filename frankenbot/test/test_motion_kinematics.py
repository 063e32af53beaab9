"""UR5e kinematics in base_link: FK against the URDF chain, IK nearest-solution choice, grasps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.motion.kinematics import (
    KinematicsConfig,
    UnreachableError,
    UR5eKinematics,
    symmetric_yaws,
    top_down_pose,
)


def _rpy(r: float, p: float, y: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y),
                              math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _urdf_tool0(q: np.ndarray) -> np.ndarray:
    """tool0 in base_link by chaining the ur_description URDF joint origins (independent FK)."""
    def tf(xyz, rpy):
        m = np.eye(4)
        m[:3, :3] = _rpy(*rpy)
        m[:3, 3] = xyz
        return m

    def rz(a):
        m = np.eye(4)
        m[:3, :3] = _rpy(0, 0, a)
        return m

    origins = [((0, 0, 0.1625), (0, 0, 0)), ((0, 0, 0), (math.pi / 2, 0, 0)),
               ((-0.425, 0, 0), (0, 0, 0)), ((-0.3922, 0, 0.1333), (0, 0, 0)),
               ((0, -0.0997, 0), (math.pi / 2, 0, 0)),
               ((0, 0.0996, 0), (math.pi / 2, math.pi, math.pi))]
    m = tf((0, 0, 0), (0, 0, math.pi))  # base_link -> base_link_inertia
    for (xyz, rpy), qi in zip(origins, q, strict=True):
        m = m @ tf(xyz, rpy) @ rz(qi)
    return m @ tf((0, 0, 0), (0, -math.pi / 2, -math.pi / 2)) @ tf((0, 0, 0),
                                                                    (math.pi / 2, 0, math.pi / 2))


def test_fk_matches_the_urdf_chain_in_base_link() -> None:
    kin = UR5eKinematics(KinematicsConfig(tcp_offset=0.0))
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.uniform(-3.0, 3.0, 6)
        assert np.allclose(kin.fk_tool0(q), _urdf_tool0(q), atol=1e-8)


def test_tcp_offset_is_along_tool_z() -> None:
    kin = UR5eKinematics(KinematicsConfig(tcp_offset=0.145))
    q = np.array([0.3, -1.2, 1.4, -1.8, -1.57, 0.2])
    tool0 = kin.fk_tool0(q)
    assert np.allclose(kin.fk(q)[:3, 3], tool0[:3, 3] + 0.145 * tool0[:3, 2])


def test_vectorised_link_points_agree_with_fk() -> None:
    kin = UR5eKinematics()
    qs = np.random.default_rng(4).uniform(-3.0, 3.0, (15, 6))
    pts = kin.link_points(qs)
    for q, p in zip(qs, pts, strict=True):
        assert np.allclose(p[-1], kin.fk(q)[:3, 3], atol=1e-9)
        assert np.allclose(p[5], kin.fk_tool0(q)[:3, 3], atol=1e-9)


def test_ik_round_trip_returns_the_seed_configuration() -> None:
    kin = UR5eKinematics()
    rng = np.random.default_rng(5)
    for _ in range(50):
        q = rng.uniform(-2.5, 2.5, 6)
        sol = kin.ik(kin.fk(q), q)
        assert np.allclose(sol, q, atol=1e-8)


def test_ik_picks_the_solution_nearest_the_current_configuration() -> None:
    kin = UR5eKinematics()
    q = np.array([0.2, -1.3, 1.5, -1.8, -1.57, 0.4])
    pose = kin.fk(q)
    nearby = q + 0.05
    sol = kin.ik(pose, nearby)
    others = [s for s in kin.ik_all(pose)]
    assert len(others) >= 2
    assert np.allclose(sol, q, atol=1e-8)


def test_ik_unwraps_joints_by_two_pi_towards_the_seed() -> None:
    kin = UR5eKinematics()
    q = np.array([0.2, -1.3, 1.5, -1.8, -1.57, 5.5])  # wrist_3 beyond pi
    sol = kin.ik(kin.fk(q), q)
    assert sol[5] == pytest.approx(5.5, abs=1e-8)


def test_ik_respects_joint_limits() -> None:
    q = np.array([0.2, -1.3, 1.5, -1.8, -1.57, 0.4])
    narrow = KinematicsConfig(lower=(-0.1, -3, -3, -3, -3, -3), upper=(0.1, 3, 3, 3, 3, 3))
    kin = UR5eKinematics(narrow)
    with pytest.raises(UnreachableError, match="joint limits"):
        kin.ik(UR5eKinematics().fk(q), np.zeros(6))


def test_ik_out_of_reach_is_unreachable() -> None:
    kin = UR5eKinematics()
    with pytest.raises(UnreachableError):
        kin.ik(top_down_pose(1.5, 0.0, 0.2, 0.0), np.zeros(6))


def test_ik_rejects_nan_pose_and_bad_seed() -> None:
    kin = UR5eKinematics()
    pose = top_down_pose(0.5, 0.0, 0.2, 0.0)
    pose[0, 3] = math.nan
    with pytest.raises(ValueError, match="finite"):
        kin.ik(pose, np.zeros(6))
    with pytest.raises(ValueError, match="6 joint"):
        kin.ik(top_down_pose(0.5, 0.0, 0.2, 0.0), np.zeros(5))


def test_top_down_pose_points_the_tool_down_with_the_given_yaw() -> None:
    pose = top_down_pose(0.4, -0.1, 0.2, 0.5)
    assert np.allclose(pose[:3, 2], [0, 0, -1])
    assert np.allclose(pose[:3, 0], [math.cos(0.5), math.sin(0.5), 0])
    assert np.allclose(pose[:3, :3] @ pose[:3, :3].T, np.eye(3))
    assert np.linalg.det(pose[:3, :3]) == pytest.approx(1.0)


def test_block_symmetry_gives_four_yaws() -> None:
    yaws = symmetric_yaws(0.3, math.pi / 2)
    assert len(yaws) == 4
    assert all(-math.pi < y <= math.pi for y in yaws)
    assert any(abs(y - 0.3) < 1e-12 for y in yaws)
    with pytest.raises(ValueError):
        symmetric_yaws(0.0, 0.0)


def test_front_pose_points_horizontally_with_vertical_fingers() -> None:
    from frankenbot.motion.kinematics import front_pose

    pose = front_pose((0.6, 0.3, 0.07), (1.0, 0.0, 0.0))
    assert np.allclose(pose[:3, 2], [1, 0, 0]) and np.allclose(pose[:3, 1], [0, 0, 1])
    assert np.linalg.det(pose[:3, :3]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="horizontal"):
        front_pose((0.6, 0.3, 0.07), (0.0, 0.0, 1.0))

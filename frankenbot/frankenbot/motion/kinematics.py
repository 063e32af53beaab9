"""UR5e kinematics in the URDF's ``base_link`` frame, with the gripper's tool-centre point (TCP).

``ur_analytic_ik`` solves the UR5e in the DH ``base`` frame (the UR controller's frame), for the
``tool0`` flange frame. ``ur_description`` puts ``base`` at 180 degrees about z from ``base_link``,
and the whole brain works in ``base_link``, so every pose crosses that rotation here and nowhere
else. The TCP sits ``tcp_offset`` metres along tool0's z axis (between the fingertips).

IK picks, among all analytic solutions and their 2*pi-shifted copies inside the joint limits,
the one nearest the current configuration, so consecutive targets never flip the wrist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from ur_analytic_ik import ur5e

from frankenbot import settings
from frankenbot.errors import ConfigError, MotionError
from frankenbot.settings import setting

# joint or Cartesian values as callers hold them: a list, a tuple or a numpy array
Vector = Sequence[float] | np.ndarray

JOINT_NAMES: tuple[str, ...] = (
    "shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
    "wrist_1_joint", "wrist_2_joint", "wrist_3_joint",
)
# ur_description limits: +-2pi everywhere except the elbow (+-pi).
DEFAULT_LOWER: tuple[float, ...] = (-2 * math.pi, -2 * math.pi, -math.pi,
                                    -2 * math.pi, -2 * math.pi, -2 * math.pi)
DEFAULT_UPPER: tuple[float, ...] = tuple(-v for v in DEFAULT_LOWER)
# Home / preferred posture: TCP above the table, elbow up, tool pointing down.
HOME_JOINTS: tuple[float, ...] = (0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2,
                                  0.0)

# UR5e DH parameters (m, rad); used for the vectorised FK of all link origins.
_DH_D = np.array([0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996])
_DH_A = np.array([0.0, -0.425, -0.3922, 0.0, 0.0, 0.0])
_DH_ALPHA = np.array([math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0])

# base_link <- base: 180 degrees about z.
_BASE_LINK_FROM_BASE = np.diag([-1.0, -1.0, 1.0, 1.0])


class UnreachableError(MotionError):
    """No IK solution within the joint limits for the requested pose."""


def rot_z(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def make_pose(position: Vector, rotation: np.ndarray) -> np.ndarray:
    """A 4x4 homogeneous transform from a position and a 3x3 rotation."""
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = np.asarray(position, dtype=float)
    return pose


def top_down_pose(x: float, y: float, z: float, yaw: float) -> np.ndarray:
    """TCP pose with the approach axis (tool z) pointing straight down, rotated ``yaw`` about z.

    The tool x axis is (cos yaw, sin yaw, 0); tool y is then (sin yaw, -cos yaw, 0).
    """
    rotation = rot_z(yaw) @ np.diag([1.0, -1.0, -1.0])
    return make_pose((x, y, z), rotation)


def front_pose(position: Vector, into: Vector,
               pitch: float = 0.0) -> np.ndarray:
    """TCP pose pointing horizontally along ``into`` with the fingers closing vertically;
    ``pitch`` (rad) tips it down by that much (the fingers' axis tips with it).

    Used for drawer handles: they sit under the cabinet's overhanging top, where a top-down
    gripper does not fit; from the front the pads straddle the bar above and below it. Tipped
    down, the wrist stays higher above what stands on the table in front of a low handle.
    """
    h = np.array([float(into[0]), float(into[1]), 0.0])  # horizontal part of ``into``
    norm = float(np.linalg.norm(h))
    if not norm > 1e-9:
        raise ValueError(f"front_pose needs a horizontal approach direction, got {into}")
    h /= norm
    c, s = math.cos(pitch), math.sin(pitch)
    z_t = c * h + np.array([0.0, 0.0, -s])
    y_t = s * h + np.array([0.0, 0.0, c])
    x_t = np.cross(y_t, z_t)
    return make_pose(position, np.column_stack([x_t, y_t, z_t]))


def wrap_angle(angle: float) -> float:
    """Angle in (-pi, pi]."""
    return math.atan2(math.sin(angle), math.cos(angle))


def symmetric_yaws(yaw: float, symmetry: float) -> tuple[float, ...]:
    """All yaws equivalent to ``yaw`` under a rotational symmetry of ``symmetry`` radians,
    folded into (-pi, pi]; a parallel gripper adds its own 180-degree symmetry on top."""
    if symmetry <= 0.0:
        raise ValueError(f"symmetry must be positive, got {symmetry}")
    count = max(1, int(round(2 * math.pi / symmetry)))
    return tuple(wrap_angle(yaw + k * symmetry) for k in range(count))


@dataclass(frozen=True)
class KinematicsConfig:
    """Geometry the kinematics needs: TCP length and joint limits."""

    tcp_offset: float = setting(0.15, "along tool0 z from the flange to the fingertip centre",
                                unit="m", low=0.0, high=0.5)
    lower: tuple[float, ...] = setting(DEFAULT_LOWER, "lower joint limits, 6 values",
                                       unit="rad")
    upper: tuple[float, ...] = setting(DEFAULT_UPPER, "upper joint limits, 6 values",
                                       unit="rad")

    def __post_init__(self) -> None:
        settings.validate(self, "kinematics")
        if len(self.lower) != 6 or len(self.upper) != 6:
            raise ConfigError(f"joint limits need 6 values, got {len(self.lower)}/"
                              f"{len(self.upper)}")
        if any(lo >= hi for lo, hi in zip(self.lower, self.upper, strict=True)):
            raise ConfigError(f"each lower limit must be below its upper limit: {self}")


class UR5eKinematics:
    """Forward and inverse kinematics of the UR5e TCP in ``base_link``."""

    def __init__(self, config: KinematicsConfig | None = None) -> None:
        self.config = config or KinematicsConfig()
        self._lower = np.array(self.config.lower)
        self._upper = np.array(self.config.upper)
        self._tool0_from_tcp = np.eye(4)
        self._tool0_from_tcp[2, 3] = self.config.tcp_offset
        self._tcp_from_tool0 = np.linalg.inv(self._tool0_from_tcp)

    @property
    def lower(self) -> np.ndarray:
        return self._lower.copy()

    @property
    def upper(self) -> np.ndarray:
        return self._upper.copy()

    def within_limits(self, q: Vector) -> bool:
        arr = np.asarray(q, dtype=float)
        return bool(np.all(arr >= self._lower - 1e-9) and np.all(arr <= self._upper + 1e-9))

    def fk_tool0(self, q: Vector) -> np.ndarray:
        """tool0 pose in base_link."""
        _check_joints(q)
        return _BASE_LINK_FROM_BASE @ ur5e.forward_kinematics(*(float(v) for v in q))

    def fk(self, q: Vector) -> np.ndarray:
        """TCP pose in base_link."""
        return self.fk_tool0(q) @ self._tool0_from_tcp

    def tcp_position(self, q: Vector) -> tuple[float, float, float]:
        p = self.fk(q)[:3, 3]
        return (float(p[0]), float(p[1]), float(p[2]))

    def ik_all(self, tcp_pose: np.ndarray) -> np.ndarray:
        """All analytic solutions (principal angles) for a TCP pose: shape (k, 6), k may be 0."""
        pose = np.asarray(tcp_pose, dtype=float)
        if pose.shape != (4, 4) or not np.isfinite(pose).all():
            raise ValueError(f"expected a finite 4x4 pose, got shape {pose.shape}")
        tool0_in_base = _BASE_LINK_FROM_BASE @ pose @ self._tcp_from_tool0
        sols = ur5e.inverse_kinematics(tool0_in_base)
        if not sols:
            return np.zeros((0, 6))
        arr = np.array(sols)
        return arr[np.isfinite(arr).all(axis=1)]

    def ik_candidates(self, tcp_pose: np.ndarray, q_near: Vector) -> list[np.ndarray]:
        """All solutions within the joint limits, nearest to ``q_near`` first.

        Each analytic solution is shifted joint by joint by multiples of 2*pi towards ``q_near``
        (staying inside the limits). Vectorised: this runs for every sample of a Cartesian line.
        """
        near = np.asarray(q_near, dtype=float)
        if near.shape != (6,) or not np.isfinite(near).all():
            raise ValueError(f"expected 6 joint values, all finite, got {near.tolist()}")
        cand = self.ik_all(tcp_pose)
        if not len(cand):
            return []
        two_pi = 2 * math.pi
        lo, hi = self._lower - 1e-9, self._upper + 1e-9
        cand = cand + np.round((near - cand) / two_pi) * two_pi
        cand = np.where(cand < lo, cand + two_pi, cand)
        cand = np.where(cand > hi, cand - two_pi, cand)
        cand = cand[((cand >= lo) & (cand <= hi)).all(axis=1)]
        order = np.argsort(((cand - near) ** 2).sum(axis=1), kind="stable")
        return [cand[i] for i in order]

    def ik(self, tcp_pose: np.ndarray, q_near: Vector) -> np.ndarray:
        """The solution nearest ``q_near`` within the joint limits; raises UnreachableError."""
        cands = self.ik_candidates(tcp_pose, q_near)
        if cands:
            return cands[0]
        p = np.asarray(tcp_pose)[:3, 3]
        raise UnreachableError(
            f"no IK solution within joint limits for TCP at ({p[0]:.3f}, {p[1]:.3f}, "
            f"{p[2]:.3f}) m")

    def link_frames(self, qs: np.ndarray) -> np.ndarray:
        """Poses in base_link of the DH frames 1..6 (6 is tool0) plus the TCP for N
        configurations: shape (N, 7, 4, 4), or (7, 4, 4) for one configuration.

        Vectorised so the safety envelope can check every link of every trajectory sample
        against the table and the workspace box in one pass; the live view draws them.
        """
        arr = np.asarray(qs, dtype=float)
        single = arr.ndim == 1
        qs = np.atleast_2d(arr)
        n = qs.shape[0]
        frames = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
        out = np.empty((n, 7, 4, 4))
        for i in range(6):
            ct, st = np.cos(qs[:, i]), np.sin(qs[:, i])
            ca, sa = math.cos(_DH_ALPHA[i]), math.sin(_DH_ALPHA[i])
            step = np.zeros((n, 4, 4))
            step[:, 0, 0] = ct
            step[:, 0, 1] = -st * ca
            step[:, 0, 2] = st * sa
            step[:, 0, 3] = _DH_A[i] * ct
            step[:, 1, 0] = st
            step[:, 1, 1] = ct * ca
            step[:, 1, 2] = -ct * sa
            step[:, 1, 3] = _DH_A[i] * st
            step[:, 2, 1] = sa
            step[:, 2, 2] = ca
            step[:, 2, 3] = _DH_D[i]
            step[:, 3, 3] = 1.0
            frames = frames @ step
            out[:, i] = frames
        out[:, 6] = frames @ self._tool0_from_tcp
        out = _BASE_LINK_FROM_BASE @ out  # base -> base_link
        return out[0] if single else out

    def link_points(self, qs: np.ndarray) -> np.ndarray:
        """Origins of the DH frames 1..6 plus the TCP for N configurations: shape (N, 7, 3)."""
        return self.link_frames(np.atleast_2d(np.asarray(qs, dtype=float)))[:, :, :3, 3]


def _check_joints(q: Vector) -> None:
    arr = np.asarray(q, dtype=float)
    if arr.shape != (6,):
        raise ValueError(f"expected 6 joint values, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"joint values must be finite, got {arr.tolist()}")

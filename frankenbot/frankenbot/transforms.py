"""Rotations, once: quaternions with their component order in their type, and the conversions.

Two orders meet in this code base: MuJoCo (and Eigen, MoveIt's C++ side) store a quaternion as
(w, x, y, z); ROS messages, scipy, Foxglove and ``config/camera.yaml`` as (x, y, z, w). Passing
four bare floats between them is how the old conversions came to disagree. ``QuatWXYZ`` and
``QuatXYZW`` are tuples in their own order (so they still unpack and index as before), convert
into each other by name, and every matrix, yaw and axis conversion of the package lives here,
with one sign convention: the scalar part is made non-negative (q and -q are one rotation).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from frankenbot.errors import ConfigError


class QuatWXYZ(NamedTuple):
    """A rotation as (w, x, y, z): MuJoCo's order."""

    w: float
    x: float
    y: float
    z: float

    def xyzw(self) -> "QuatXYZW":
        return QuatXYZW(self.x, self.y, self.z, self.w)

    def matrix(self) -> np.ndarray:
        return matrix_from_quat(self)

    def yaw(self) -> float:
        return yaw_of(self)


class QuatXYZW(NamedTuple):
    """A rotation as (x, y, z, w): the order of ROS messages, scipy and camera.yaml."""

    x: float
    y: float
    z: float
    w: float

    def wxyz(self) -> QuatWXYZ:
        return QuatWXYZ(self.w, self.x, self.y, self.z)

    def matrix(self) -> np.ndarray:
        return matrix_from_quat(self.wxyz())

    def yaw(self) -> float:
        return yaw_of(self.wxyz())


def _canonical(w: float, x: float, y: float, z: float) -> QuatWXYZ:
    """Unit length, scalar part >= 0."""
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if not n > 1e-12 or not math.isfinite(n):
        raise ConfigError(f"quaternion ({w}, {x}, {y}, {z}) has no direction")
    s = 1.0 / n if w >= 0 else -1.0 / n
    return QuatWXYZ(w * s, x * s, y * s, z * s)


def quat_wxyz(w: float, x: float, y: float, z: float) -> QuatWXYZ:
    """A normalised (w, x, y, z) quaternion from its components."""
    return _canonical(float(w), float(x), float(y), float(z))


def quat_xyzw(x: float, y: float, z: float, w: float) -> QuatXYZW:
    """A normalised (x, y, z, w) quaternion from its components."""
    return _canonical(float(w), float(x), float(y), float(z)).xyzw()


def quat_from_matrix(r: np.ndarray | Sequence[Sequence[float]]) -> QuatWXYZ:
    """The quaternion of a rotation matrix (Shepperd's method: stable for every rotation)."""
    m = np.asarray(r, dtype=float)[:3, :3]
    tr = float(np.trace(m))
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        return _canonical(0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s,
                          (m[1, 0] - m[0, 1]) / s)
    i = int(np.argmax(np.diag(m)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * math.sqrt(max(1.0 + m[i, i] - m[j, j] - m[k, k], 0.0))
    v = [0.0, 0.0, 0.0]
    v[i] = 0.25 * s
    v[j] = (m[j, i] + m[i, j]) / s
    v[k] = (m[k, i] + m[i, k]) / s
    return _canonical((m[k, j] - m[j, k]) / s, v[0], v[1], v[2])


def matrix_from_quat(q: QuatWXYZ) -> np.ndarray:
    """The 3x3 rotation matrix of ``q`` (normalised first)."""
    w, x, y, z = _canonical(*q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def quat_from_yaw(yaw: float) -> QuatWXYZ:
    """A rotation by ``yaw`` about z."""
    return _canonical(math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0))


def yaw_of(q: QuatWXYZ) -> float:
    """Rotation about z (radians) of ``q``; roll and pitch are ignored."""
    w, x, y, z = q
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))

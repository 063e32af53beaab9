"""Pinhole camera model: intrinsics plus the camera's pose in ``base_link``.

The pipeline needs exactly two things about the camera: how a pixel with depth becomes a 3-D point
(intrinsics) and where the optical frame sits in the robot base frame (``T_base_optical``; optical
axes x right, y down, z forward, as RealSense and ROS publish them). Both come from
``config/camera.yaml`` in the sim, or from camera_info plus TF on a robot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from frankenbot.errors import ConfigError, PerceptionError
from frankenbot.transforms import QuatXYZW


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole intrinsics of the colour image (depth is aligned to it)."""

    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int

    def __post_init__(self) -> None:
        values = (self.fx, self.fy, self.cx, self.cy)
        if not all(math.isfinite(v) for v in values) or self.fx <= 0 or self.fy <= 0:
            raise PerceptionError(f"invalid intrinsics fx={self.fx} fy={self.fy} "
                                  f"cx={self.cx} cy={self.cy}: expected finite, fx and fy > 0")
        if self.width <= 0 or self.height <= 0:
            raise PerceptionError(f"invalid image size {self.width}x{self.height}")

    @classmethod
    def from_k(cls, k: Any, width: int, height: int) -> "Intrinsics":
        """From a row-major 3x3 K (camera_info's ``k``)."""
        arr = np.asarray(k, dtype=float).reshape(-1)
        if arr.size != 9:
            raise PerceptionError(f"camera matrix K must have 9 entries, got {arr.size}")
        return cls(fx=float(arr[0]), fy=float(arr[4]), cx=float(arr[2]), cy=float(arr[5]),
                   width=int(width), height=int(height))


@dataclass(frozen=True)
class CameraModel:
    """Intrinsics plus ``T_base_optical`` (4x4, maps optical-frame points into base_link)."""

    intrinsics: Intrinsics
    T_base_optical: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        t = np.asarray(self.T_base_optical, dtype=float)
        if t.shape != (4, 4) or not np.all(np.isfinite(t)):
            raise PerceptionError(
                f"T_base_optical must be a finite 4x4 matrix, got shape {t.shape}")
        rot = t[:3, :3]
        if not np.allclose(rot @ rot.T, np.eye(3), atol=1e-4):
            raise PerceptionError("T_base_optical rotation part is not orthonormal")

    @classmethod
    def from_matrix(cls, intrinsics: Intrinsics, matrix: Any) -> "CameraModel":
        t = np.asarray(matrix, dtype=float)
        return cls(intrinsics, tuple(tuple(float(v) for v in row) for row in t))

    @property
    def matrix(self) -> np.ndarray:
        return np.asarray(self.T_base_optical, dtype=float)

    @property
    def position(self) -> np.ndarray:
        return self.matrix[:3, 3].copy()

    def with_intrinsics(self, intrinsics: Intrinsics) -> "CameraModel":
        return CameraModel(intrinsics, self.T_base_optical)

    def project(self, points_base: np.ndarray) -> np.ndarray:
        """Base-frame points (N, 3) -> pixel coordinates (N, 2); NaN behind the camera."""
        pts = np.atleast_2d(np.asarray(points_base, dtype=float))
        t = self.matrix
        cam = (pts - t[:3, 3]) @ t[:3, :3]  # R^T (p - t)
        k = self.intrinsics
        with np.errstate(divide="ignore", invalid="ignore"):
            u = k.fx * cam[:, 0] / cam[:, 2] + k.cx
            v = k.fy * cam[:, 1] / cam[:, 2] + k.cy
        behind = cam[:, 2] <= 1e-6
        u[behind] = np.nan
        v[behind] = np.nan
        return np.stack([u, v], axis=1)


def look_at(eye: Any, target: Any, up: Any = (0.0, 0.0, 1.0)) -> np.ndarray:
    """T_base_optical of a camera at ``eye`` looking at ``target`` (optical z forward, y down)."""
    eye_v = np.asarray(eye, dtype=float)
    z = np.asarray(target, dtype=float) - eye_v
    z /= np.linalg.norm(z)
    x = np.cross(z, np.asarray(up, dtype=float))
    if np.linalg.norm(x) < 1e-9:
        raise PerceptionError("look_at: viewing direction is parallel to 'up'")
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    t = np.eye(4)
    t[:3, 0], t[:3, 1], t[:3, 2], t[:3, 3] = x, y, z, eye_v
    return t


POSE_KEYS = ("translation", "quaternion")  # the one key set of camera.yaml (see below)
STALE_POSE_KEYS = ("T_base_optical", "t_base_optical", "matrix", "rotation", "position",
                   "orientation", "pose")


def _pose_from_mapping(data: Mapping[str, Any]) -> np.ndarray:
    """``translation`` [x, y, z] (m) + ``quaternion`` [x, y, z, w] of the optical frame in base.

    That is what `frankenbot calibrate camera` and `frankenbot sim write-config` write. Other pose
    keys (a 4x4 ``T_base_optical``, ``rotation``, ``pose``) are refused with a clear error rather
    than read: a second key set once silently overrode the values a user had edited.
    """
    stale = [k for k in STALE_POSE_KEYS if k in data]
    if stale:
        raise ConfigError(f"camera config has stale pose key(s) {stale}: write the optical "
                          f"frame's pose in base_link only as translation [x, y, z] and "
                          f"quaternion [x, y, z, w]")
    pos, quat = data.get("translation"), data.get("quaternion")
    if pos is None or quat is None:
        raise ConfigError("camera config needs translation [x, y, z] and quaternion "
                          "[x, y, z, w] (the optical frame in base_link)")
    if len(pos) != 3 or len(quat) != 4:
        raise ConfigError(f"camera translation needs 3 numbers and quaternion 4, got "
                          f"{len(pos)} and {len(quat)}")
    t = np.eye(4)
    try:
        t[:3, :3] = QuatXYZW(*(float(v) for v in quat)).matrix()
    except (TypeError, ValueError) as e:
        raise ConfigError(f"camera quaternion must be 4 numbers [x, y, z, w], got {quat!r}"
                          ) from e
    t[:3, 3] = np.asarray(pos, dtype=float)
    if not np.all(np.isfinite(t)):
        raise ConfigError("camera translation and quaternion must be finite")
    return t


def camera_pose_from_mapping(data: Mapping[str, Any]) -> tuple[str, str, list[float],
                                                                list[float]]:
    """(parent, frame, translation, quaternion xyzw) of a camera config, checked: what a
    static transform publisher needs (real_ur5e.launch.py)."""
    if "camera" in data and isinstance(data["camera"], Mapping):
        data = data["camera"]
    t = _pose_from_mapping(data)
    quat = [float(v) for v in data["quaternion"]]
    n = math.sqrt(sum(v * v for v in quat))
    return (str(data.get("parent", "base_link")), str(data.get("frame",
                                                               "camera_color_optical_frame")),
            [float(v) for v in t[:3, 3]], [v / n for v in quat])


def camera_from_mapping(data: Mapping[str, Any]) -> CameraModel:
    """Build a CameraModel from a parsed camera YAML (section ``camera`` optional)."""
    if "camera" in data and isinstance(data["camera"], Mapping):
        data = data["camera"]
    intr = data.get("intrinsics", data)
    try:
        if "k" in intr or "K" in intr:
            k = intr.get("k", intr.get("K"))
            intrinsics = Intrinsics.from_k(k, intr["width"], intr["height"])
        else:
            intrinsics = Intrinsics(fx=float(intr["fx"]), fy=float(intr["fy"]),
                                    cx=float(intr["cx"]), cy=float(intr["cy"]),
                                    width=int(intr["width"]), height=int(intr["height"]))
    except KeyError as e:
        raise ConfigError(f"camera config lacks intrinsics field {e}") from e
    try:
        return CameraModel.from_matrix(intrinsics, _pose_from_mapping(data))
    except PerceptionError as e:
        raise ConfigError(f"camera config: {e}") from e


def load_camera(path: str | Path) -> CameraModel:
    """Load ``config/camera.yaml``."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"camera config not found: {p}")
    data = yaml.safe_load(p.read_text()) or {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"camera config {p} must be a mapping")
    return camera_from_mapping(data)

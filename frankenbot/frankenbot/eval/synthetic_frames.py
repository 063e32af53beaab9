"""Analytic RGB-D frames of a table with boxes and open containers, for tests and benchmarks.

Ray casting against boxes is exact, so the pipeline can be measured against known geometry
without the simulator (and before it exists). Containers are five thin boxes (floor and walls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frankenbot.perception.camera import CameraModel, Intrinsics, look_at


@dataclass(frozen=True)
class Box:
    """A yawed box: centre (base_link), full size (x, y, z), yaw, colour (uint8 RGB)."""

    centre: tuple[float, float, float]
    size: tuple[float, float, float]
    colour: tuple[int, int, int]
    yaw: float = 0.0


def container(centre_xy: tuple[float, float], size: tuple[float, float, float],
              colour: tuple[int, int, int], yaw: float = 0.0, wall: float = 0.006,
              table_z: float = 0.0) -> list[Box]:
    """An open box-shaped container (bin) standing on the table: floor plus four walls."""
    sx, sy, sz = size
    c, s = math.cos(yaw), math.sin(yaw)

    def at(dx: float, dy: float, z: float, size_: tuple[float, float, float]) -> Box:
        return Box((centre_xy[0] + c * dx - s * dy, centre_xy[1] + s * dx + c * dy, z), size_,
                   colour, yaw)

    zc = table_z + sz / 2
    return [
        at(0, 0, table_z + wall / 2, (sx, sy, wall)),
        at(sx / 2 - wall / 2, 0, zc, (wall, sy, sz)),
        at(-sx / 2 + wall / 2, 0, zc, (wall, sy, sz)),
        at(0, sy / 2 - wall / 2, zc, (sx, wall, sz)),
        at(0, -sy / 2 + wall / 2, zc, (sx, wall, sz)),
    ]


def default_camera(width: int = 640, height: int = 480) -> CameraModel:
    """A D435-like camera 0.75 m above the table, in front of the workspace, looking down."""
    intr = Intrinsics(fx=615.0 * width / 640, fy=615.0 * height / 480, cx=width / 2 - 0.5,
                      cy=height / 2 - 0.5, width=width, height=height)
    return CameraModel.from_matrix(intr, look_at((1.05, 0.0, 0.75), (0.45, 0.0, 0.0)))


def render(camera: CameraModel, boxes: list[Box], table_z: float = 0.0,
           table_colour: tuple[int, int, int] = (150, 120, 90),
           table_half: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    """Ray-cast ``boxes`` on a table plane: (rgb uint8 HxWx3, depth uint16 mm, 0 = no hit)."""
    k = camera.intrinsics
    v, u = np.mgrid[0:k.height, 0:k.width].astype(np.float64)
    dirs_cam = np.stack([(u - k.cx) / k.fx, (v - k.cy) / k.fy, np.ones_like(u)], axis=-1)
    dirs_cam = dirs_cam.reshape(-1, 3)
    t_mat = camera.matrix
    dirs = dirs_cam @ t_mat[:3, :3].T  # base frame, length such that camera z = 1
    origin = t_mat[:3, 3]
    n = dirs.shape[0]
    best = np.full(n, np.inf)
    colour = np.zeros((n, 3))
    light = np.array([0.3, 0.2, 1.0]) / np.linalg.norm([0.3, 0.2, 1.0])
    # Table plane.
    with np.errstate(divide="ignore", invalid="ignore"):
        tz = (table_z - origin[2]) / dirs[:, 2]
    hit = (tz > 0) & np.isfinite(tz)
    xy = origin[:2] + dirs[:, :2] * tz[:, None]
    hit &= np.all(np.abs(xy - np.array([0.4, 0.0])) < table_half, axis=1)
    best[hit] = tz[hit]
    colour[hit] = np.asarray(table_colour, dtype=float)
    for box in boxes:
        c, s = math.cos(box.yaw), math.sin(box.yaw)
        rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        o = (origin - np.asarray(box.centre)) @ rot
        d = dirs @ rot
        half = np.asarray(box.size) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = (-half - o) / d
            t2 = (half - o) / d
        tmin = np.minimum(t1, t2)
        tmax = np.maximum(t1, t2)
        t_near = np.max(tmin, axis=1)
        t_far = np.min(tmax, axis=1)
        face = np.argmax(tmin, axis=1)
        ok = (t_near <= t_far) & (t_near > 0) & (t_near < best)
        best[ok] = t_near[ok]
        normals_local = np.zeros((n, 3))
        normals_local[np.arange(n), face] = 1.0
        normal = normals_local @ rot.T
        shade = 0.55 + 0.45 * np.abs(normal @ light)
        colour[ok] = np.asarray(box.colour, dtype=float) * shade[ok, None]
    depth_m = best * 1.0  # dirs have unit camera-z, so t is the optical z (depth)
    depth = np.where(np.isfinite(depth_m), np.round(depth_m * 1000.0), 0).astype(np.uint16)
    rgb = np.clip(colour, 0, 255).astype(np.uint8)
    return rgb.reshape(k.height, k.width, 3), depth.reshape(k.height, k.width)

"""Pixel -> 3-D point: back-projects a set-of-mark pixel with the depth image and camera model.

``DepthPixelResolver`` implements the ``PixelResolver`` port the pixel primitives use. Whoever
has the camera's frames feeds it (``feed``): the sim stack from its render thread, a ROS node
from its depth subscription. It keeps a short history of depth frames with the joint angles
they were taken at, because when a pixel primitive runs the arm is usually holding the object
above the table and its links or the held block may cover the very pixel the planner pointed
at (on the image it saw before the arm moved). A pixel whose newest depth lies on the arm's
skeleton (``self_filter``) is read from the newest frame where it does not; how old that frame
is goes into the result.

Depth at a pixel is the median over a small window of valid readings (a single missing or noisy
pixel does not decide). A window with too few valid readings is "depth missing".
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from frankenbot.errors import PerceptionError
from frankenbot.perception.camera import CameraModel
from frankenbot.perception.self_filter import arm_segments, distance_to_segments
from frankenbot.ports import PixelTarget

WINDOW = 2  # half-size of the median window (5x5 pixels)
MIN_VALID = 5  # valid depth readings the window needs
ARM_RADIUS = 0.09  # m around the arm's skeleton (links, gripper, a held block) = occluded
ARM_PIXELS = 40.0  # a depth hole this close to the arm's projected skeleton is the arm's
HISTORY = 48  # depth frames kept
HISTORY_PERIOD = 0.4  # s of frame stamps between kept frames (~20 s of history)
MAX_AGE = 30.0  # s: older frames are not used


@dataclass(frozen=True)
class _DepthFrame:
    stamp: float
    depth: np.ndarray  # HxW as fed (uint16 mm or float m), converted only when a pixel is asked
    joints: tuple[float, ...] | None

    @cached_property
    def depth_m(self) -> np.ndarray:
        """HxW float32 metres, NaN invalid (a few ms a frame: done for the frames asked)."""
        return _to_metres(self.depth)


def _to_metres(depth: np.ndarray) -> np.ndarray:
    d = np.asarray(depth)
    if d.dtype == np.uint16:
        out = d.astype(np.float32) / 1000.0
        out[d == 0] = np.nan
        return out
    out = d.astype(np.float32, copy=True)
    out[~np.isfinite(out) | (out <= 0)] = np.nan
    return out


class DepthPixelResolver:
    """Back-projects image pixels with the latest usable depth. Thread-safe."""

    def __init__(self, camera: CameraModel, *, history: int = HISTORY,
                 history_period: float = HISTORY_PERIOD) -> None:
        self.camera = camera
        self._lock = threading.Lock()
        self._frames: deque[_DepthFrame] = deque(maxlen=max(2, int(history)))
        self._period = float(history_period)

    # ------------------------------------------------------------------ feeding
    def feed(self, depth: np.ndarray, stamp: float,
             joints: Sequence[float] | None = None) -> None:
        """One depth frame (uint16 mm or float m, aligned to the colour image) at ``stamp``
        with the arm's joint angles then (None: unknown, no occlusion test)."""
        k = self.camera.intrinsics
        if getattr(depth, "shape", None) != (k.height, k.width):
            raise PerceptionError(f"depth is {getattr(depth, 'shape', None)} but the camera "
                                  f"intrinsics are for {k.height}x{k.width}")
        frame = _DepthFrame(float(stamp), np.array(depth, copy=True),  # the caller may reuse it
                            tuple(float(v) for v in joints) if joints is not None else None)
        with self._lock:
            if self._frames and stamp < self._frames[-1].stamp:
                self._frames.clear()  # time went back: a new episode
            if len(self._frames) >= 2 and stamp - self._frames[-2].stamp < self._period:
                self._frames[-1] = frame  # keep the newest; thin the history
            else:
                self._frames.append(frame)

    def reset(self) -> None:
        with self._lock:
            self._frames.clear()

    # ------------------------------------------------------------------ PixelResolver
    def image_size(self) -> tuple[int, int]:
        k = self.camera.intrinsics
        return k.width, k.height

    def resolve(self, u: float, v: float) -> PixelTarget:
        """The base-frame surface point the pixel (u, v) sees. Raises PerceptionError for a
        pixel outside the image, no depth frame yet, or depth missing around the pixel."""
        w, h = self.image_size()
        if not (math.isfinite(u) and math.isfinite(v)) or not (0 <= u < w and 0 <= v < h):
            raise PerceptionError(f"pixel ({u:g}, {v:g}) is outside the {w}x{h} image")
        with self._lock:
            frames = list(self._frames)
        if not frames:
            raise PerceptionError("no depth frame has arrived: cannot back-project a pixel")
        newest = frames[-1].stamp
        hole = False
        for frame in reversed(frames):
            if newest - frame.stamp > MAX_AGE:
                break
            z = self._depth_at(frame.depth_m, u, v)
            if z is None:
                hole = True
                if not self._arm_near_pixel(frame, u, v):
                    break  # a real hole (not the arm's doing): refuse, do not guess
                continue
            point = self._point(u, v, z)
            if frame.joints is not None:
                gap = float(distance_to_segments(point[None, :], arm_segments(frame.joints))[0])
                if gap < ARM_RADIUS:
                    continue  # the arm (or what it holds) covers the pixel in this frame
            return PixelTarget((float(point[0]), float(point[1]), float(point[2])),
                               float(u), float(v), float(z), frame.stamp, newest - frame.stamp)
        if hole:
            raise PerceptionError(f"depth is missing at pixel ({u:g}, {v:g}) (no valid "
                                  f"reading in the {2 * WINDOW + 1}x{2 * WINDOW + 1} window)")
        raise PerceptionError(f"pixel ({u:g}, {v:g}) is covered by the arm in every recent "
                              f"depth frame")

    # ------------------------------------------------------------------ geometry
    @staticmethod
    def _depth_at(depth_m: np.ndarray, u: float, v: float) -> float | None:
        c, r = int(round(u)), int(round(v))
        h, w = depth_m.shape
        win = depth_m[max(0, r - WINDOW):min(h, r + WINDOW + 1),
                      max(0, c - WINDOW):min(w, c + WINDOW + 1)]
        valid = win[np.isfinite(win)]
        if valid.size < MIN_VALID:
            return None
        return float(np.median(valid))

    def _arm_near_pixel(self, frame: _DepthFrame, u: float, v: float) -> bool:
        """The arm's skeleton in ``frame`` projects within ARM_PIXELS of the pixel."""
        if frame.joints is None:
            return False
        seg = arm_segments(frame.joints)
        t = np.linspace(0.0, 1.0, 8)[None, :, None]
        pts = (seg[:, None, 0, :] * (1 - t) + seg[:, None, 1, :] * t).reshape(-1, 3)
        uv = self.camera.project(pts)
        d = np.hypot(uv[:, 0] - u, uv[:, 1] - v)
        return bool(np.nanmin(d) < ARM_PIXELS) if np.isfinite(d).any() else False

    def _point(self, u: float, v: float, z: float) -> np.ndarray:
        k = self.camera.intrinsics
        cam = np.array([(u - k.cx) * z / k.fx, (v - k.cy) * z / k.fy, z, 1.0])
        return (self.camera.matrix @ cam)[:3]

    def pixel_of(self, point: Sequence[float]) -> tuple[float, float]:
        """The pixel a base-frame point projects to (for tests, prompts and the review)."""
        uv = self.camera.project(np.asarray(point, dtype=float)[None, :])[0]
        return float(uv[0]), float(uv[1])

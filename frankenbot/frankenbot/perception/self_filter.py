"""Robot self filter: recognise the arm and gripper among the camera's clusters.

The camera sees the UR5e as gray and dark blobs above the table, which must never become scene
objects. Given the joint positions, the arm's skeleton (UR5e DH frames plus the physical link
offsets along the joint axes, and the gripper along tool0's z) is known; an achromatic cluster
whose points lie mostly within ``radius`` of that skeleton is the robot. Coloured clusters are
never removed, so a block held between the fingers stays in the scene.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

# UR5e DH parameters (m, rad) and the lateral link offsets along joint axes (shoulder and elbow
# housings stick out of the DH line).
_D = (0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996)
_A = (0.0, -0.425, -0.3922, 0.0, 0.0, 0.0)
_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
_SHOULDER_OFFSET = 0.138
_ELBOW_OFFSET = 0.131
GRIPPER_LENGTH = 0.17  # tool0 to fingertips


def dh_frames(q: Sequence[float]) -> list[np.ndarray]:
    """World (base_link) transforms of DH frames 0..6 for joint angles ``q``."""
    if len(q) != 6 or not all(math.isfinite(float(v)) for v in q):
        raise ValueError(f"expected 6 finite joint angles, got {list(q)}")
    # base_link of the UR description is rotated pi about z relative to the DH base frame.
    t = np.diag([-1.0, -1.0, 1.0, 1.0])
    frames = [t.copy()]
    for i in range(6):
        ct, st = math.cos(q[i]), math.sin(q[i])
        ca, sa = math.cos(_ALPHA[i]), math.sin(_ALPHA[i])
        a = np.array([[ct, -st * ca, st * sa, _A[i] * ct],
                      [st, ct * ca, -ct * sa, _A[i] * st],
                      [0.0, sa, ca, _D[i]],
                      [0.0, 0.0, 0.0, 1.0]])
        t = t @ a
        frames.append(t.copy())
    return frames


def arm_segments(q: Sequence[float]) -> np.ndarray:
    """Segments (K, 2, 3) covering the arm and gripper in base_link."""
    f = dh_frames(q)
    p = [fr[:3, 3] for fr in f]
    z1 = f[1][:3, 2]  # shoulder-lift axis (parallel to elbow and wrist-1 axes)
    shoulder = p[1] + z1 * _SHOULDER_OFFSET
    elbow = p[2] + z1 * _SHOULDER_OFFSET
    elbow_in = elbow - z1 * _ELBOW_OFFSET
    wrist1 = p[3] + z1 * (_SHOULDER_OFFSET - _ELBOW_OFFSET)
    tool_z = f[6][:3, 2]
    tip = p[6] + tool_z * GRIPPER_LENGTH
    segs = [
        (p[0], p[1]),  # base column
        (p[1], shoulder),
        (shoulder, elbow),  # upper arm
        (elbow, elbow_in),
        (elbow_in, wrist1),  # forearm
        (wrist1, p[4]),
        (p[4], p[5]),
        (p[5], p[6]),
        (p[6], tip),  # gripper
    ]
    return np.array([[a, b] for a, b in segs], dtype=float)


def distance_to_segments(points: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Distance of each point (N, 3) to the nearest segment (K, 2, 3)."""
    pts = np.asarray(points, dtype=float)
    best = np.full(pts.shape[0], np.inf)
    for a, b in segments:
        ab = b - a
        denom = float(ab @ ab)
        t = np.zeros(pts.shape[0]) if denom < 1e-12 else np.clip((pts - a) @ ab / denom, 0, 1)
        d = np.linalg.norm(pts - (a + t[:, None] * ab), axis=1)
        np.minimum(best, d, out=best)
    return best


def is_robot(points: np.ndarray, segments: np.ndarray, radius: float,
             majority: float = 0.5) -> bool:
    """Are most of a cluster's points within ``radius`` of the robot skeleton?"""
    if points.shape[0] == 0:
        return False
    near = distance_to_segments(points, segments) < radius
    return bool(np.count_nonzero(near) >= majority * points.shape[0])


class JointHistory:
    """The arm's recent joint states, looked up at an image's stamp.

    A frame shows the arm where it was when the image was taken; by the time it is processed the
    arm has moved on (tens of milliseconds of rendering, transport and queueing), and a self
    filter fed the newest joint state masks the arm where it is now, leaving the arm as it was
    in the image to be taken for objects. ``at(stamp)`` interpolates between the samples around
    the stamp (the newest one when the stamp is newer, None when older than every sample).
    """

    def __init__(self, horizon_s: float = 2.0) -> None:
        self.horizon_s = float(horizon_s)
        self._samples: list[tuple[float, tuple[float, ...]]] = []

    def add(self, stamp: float, positions: Sequence[float]) -> None:
        if self._samples and stamp < self._samples[-1][0]:
            self._samples.clear()  # the clock went back (a sim reset): start again
        self._samples.append((float(stamp), tuple(float(v) for v in positions)))
        cut = stamp - self.horizon_s
        while len(self._samples) > 2 and self._samples[1][0] < cut:
            self._samples.pop(0)

    def clear(self) -> None:
        self._samples.clear()

    def latest(self) -> tuple[float, ...] | None:
        return self._samples[-1][1] if self._samples else None

    def at(self, stamp: float) -> tuple[float, ...] | None:
        s = self._samples
        if not s or stamp < s[0][0] - 1e-6:
            return None
        if stamp >= s[-1][0]:
            return s[-1][1]
        lo, hi = 0, len(s) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if s[mid][0] <= stamp:
                lo = mid
            else:
                hi = mid
        (t0, q0), (t1, q1) = s[lo], s[hi]
        w = 0.0 if t1 <= t0 else (stamp - t0) / (t1 - t0)
        return tuple(a + w * (b - a) for a, b in zip(q0, q1, strict=True))

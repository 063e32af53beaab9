"""A control's angle from the depth image: which end of a rocker switch is down, how far a
knob's grip bar is turned. ``fixture_state.FixtureObserver`` measures them with the drawers and
doors; the toggle and turn primitives need them (``primitives/control_primitives.py``): toggle
presses the raised end, turn aims its fingers across the grip bar and turns by the difference
to the angle asked.

Both are read from the samples standing over the control's footprint (the map gives its pose,
size, axis and travel), against the surface around it rather than against absolute heights:
the D435's correlated noise and what is left of a calibration error lift or tilt a few
centimetres of surface by millimetres together, as much as a rocker's ends differ.

* switch: the rocker's top is a plane tilted about the rocker's axis; its slope along the
  rocker (the ends and sides left out: their faces seen from the side and the edges' flying
  pixels), less the slope of the panel around it (level, so any slope there is the sensor's),
  is the tangent of its angle. The sign (which end is down) is what toggle needs; a tilt too
  small to tell from noise is no measurement (a rocker at its detent is tilted by its whole
  travel, so this only refuses frames that are too noisy or a rocker caught mid-flip).
* knob: the grip bar stands above the knob's body; the samples within a few millimetres of the
  highest ones are the bar's top, and their principal axis is the bar's direction. A bar is the
  same turned by half a turn, so the direction gives the angle modulo pi: the angle is the one
  of those in the knob's travel; where the travel holds two (a knob that turns more than half a
  turn), the one nearest the last measured angle; with no last angle, none (never a guess).

A control with something over it or between it and the camera (the gripper), too few
samples, or a measurement that fits no angle of its travel, gives None: the observer then keeps
the last measured angle (a control never measured has none).
"""

from __future__ import annotations

import math

import numpy as np

from frankenbot.fixture_map import FixturePart
from frankenbot.perception.camera import CameraModel
from frankenbot.perception.segmentation import strided_depth

RING_IN = 0.008  # m: the surface around a control starts this far outside its footprint ...
RING_OUT = 0.03  # ... and ends this far out
RING_BAND = 0.006  # m: ring samples this close to their median are the surface (not the table)
MIN_RING_SAMPLES = 12
OVER_CLEAR = 0.02  # m above a control's top: samples there are something over it (the gripper)
MAX_OVER_SAMPLES = 3
# switch
SWITCH_END_CLEAR = 0.006  # m of each end of the rocker left out
SWITCH_SIDE_CLEAR = 0.004  # m of each side left out
SWITCH_LOW = 0.3  # of the rocker's height over the panel: lower samples are not its top
MIN_SWITCH_HALF = 4  # samples needed on each half of the rocker
SWITCH_CERTAIN = 0.35  # of the travel: a smaller measured tilt does not tell the sign
# knob
KNOB_GRIP_BAND = 0.005  # m below the highest samples: the grip bar's top face
KNOB_GRIP_TOP = 90  # percentile of the samples over the knob taken as the bar's top
KNOB_MARGIN = 0.004  # m round the knob's footprint
MIN_GRIP_SAMPLES = 8
GRIP_ELONGATION = 2.0  # variance along the bar over across it, at least
KNOB_SLACK = 0.35  # rad beyond either end of the travel still read as that end


def local_cloud(part: FixturePart, depth_mm: np.ndarray, camera: CameraModel,
                reach: float = RING_OUT + 0.01) -> np.ndarray:
    """Every pixel's point (base frame) in the image window that shows ``part`` and ``reach``
    around it: a control spans a few dozen pixels, so the pipeline's strided cloud has too few
    samples on it; pixels with no depth, or with a depth between a nearer and a farther
    neighbour across a step (flying pixels), are left out."""
    hx, hy, hz = (v / 2 for v in part.size)
    c, s = math.cos(part.yaw), math.sin(part.yaw)
    corners = np.array([[sx * (hx + reach), sy * (hy + reach), sz * (hz + OVER_CLEAR)]
                        for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    world = np.asarray(part.position, float) + np.c_[c * corners[:, 0] - s * corners[:, 1],
                                                     s * corners[:, 0] + c * corners[:, 1],
                                                     corners[:, 2]]
    pix = camera.project(world)
    if not np.all(np.isfinite(pix)):
        return np.zeros((0, 3))
    hgt, wid = depth_mm.shape
    u0, v0 = (max(int(math.floor(float(pix[:, i].min()))) - 1, 0) for i in (0, 1))
    u1 = min(int(math.ceil(float(pix[:, 0].max()))) + 2, wid)
    v1 = min(int(math.ceil(float(pix[:, 1].max()))) + 2, hgt)
    if u1 - u0 < 3 or v1 - v0 < 3:
        return np.zeros((0, 3))
    d = strided_depth(depth_mm[v0:v1, u0:u1], 1, True).astype(np.float64) / 1000.0
    vv, uu = np.nonzero(d > 0)
    z = d[vv, uu]
    k = camera.intrinsics
    cam = np.c_[(uu + u0 - k.cx) / k.fx * z, (vv + v0 - k.cy) / k.fy * z, z]
    t = camera.matrix
    return cam @ t[:3, :3].T + t[:3, 3]


def _local(part: FixturePart, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The samples in the part's frame: along its x (yaw), along its y, height over its centre."""
    c, s = math.cos(part.yaw), math.sin(part.yaw)
    rel = points - np.asarray(part.position, float)
    return c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1], rel[:, 2]


def _surface_around(lx: np.ndarray, ly: np.ndarray, z: np.ndarray, hx: float, hy: float
                    ) -> np.ndarray | None:
    """Plane ``z = a + b*lx + c*ly`` (part frame) of the surface the control stands on, from
    the ring of samples around its footprint (half extents ``hx``, ``hy``)."""
    outside = (np.abs(lx) > hx + RING_IN) | (np.abs(ly) > hy + RING_IN)
    ring = outside & (np.abs(lx) <= hx + RING_OUT) & (np.abs(ly) <= hy + RING_OUT)
    if np.count_nonzero(ring) < MIN_RING_SAMPLES:
        return None
    zr = z[ring]
    inl = np.abs(zr - float(np.median(zr))) <= RING_BAND
    if np.count_nonzero(inl) < MIN_RING_SAMPLES:
        return None
    a = np.c_[np.ones(int(inl.sum())), lx[ring][inl], ly[ring][inl]]
    coef, *_ = np.linalg.lstsq(a, zr[inl], rcond=None)
    return np.asarray(coef, float)


def _hidden(part: FixturePart, points: np.ndarray, eye: np.ndarray) -> bool:
    """Something over the control or between it and the camera (the gripper): samples
    higher than its top by OVER_CLEAR over its footprint, or whose line of sight would have
    reached its top inside the footprint had they not been there."""
    hx, hy, hz = (v / 2 for v in part.size)
    top = float(part.position[2]) + hz
    high = points[points[:, 2] > top + OVER_CLEAR]
    if high.shape[0] == 0:
        return False
    t = (top - eye[2]) / np.minimum(high[:, 2] - eye[2], -1e-9)  # eye above the control
    crossing = eye + (high - eye) * t[:, None]
    over, through = (_footprint(part, q, hx, hy) for q in (high, crossing))
    return int(np.count_nonzero(over | through)) > MAX_OVER_SAMPLES


def _footprint(part: FixturePart, points: np.ndarray, hx: float, hy: float) -> np.ndarray:
    lx, ly, _ = _local(part, points)
    return (np.abs(lx) <= hx) & (np.abs(ly) <= hy)


def switch_angle(part: FixturePart, points: np.ndarray, eye: np.ndarray) -> float | None:
    """A rocker switch's angle about its axis (rad, the sign of the joint's: positive turns its
    +x end down for the sim's y axis), or None when not measurable in this frame."""
    lx, ly, z = _local(part, points)
    hx, hy, hz = (v / 2 for v in part.size)
    if _hidden(part, points, eye):
        return None
    plane = _surface_around(lx, ly, z, hx, hy)
    if plane is None:
        return None
    dz = z - (plane[0] + plane[1] * lx + plane[2] * ly)  # over the panel around it
    sel = ((np.abs(lx) <= hx - SWITCH_END_CLEAR) & (np.abs(ly) <= hy - SWITCH_SIDE_CLEAR)
           & (dz >= SWITCH_LOW * 2 * hz) & (dz <= 2 * hz + OVER_CLEAR))
    s, h = lx[sel], dz[sel]
    if min(np.count_nonzero(s < 0), np.count_nonzero(s > 0)) < MIN_SWITCH_HALF:
        return None
    a = np.c_[np.ones(s.size), s, ly[sel]]
    coef, *_ = np.linalg.lstsq(a, h, rcond=None)
    resid = h - a @ coef  # once more without the outliers (flying pixels, a finger's edge)
    mad = 1.4826 * float(np.median(np.abs(resid - np.median(resid))))
    keep = np.abs(resid) <= max(2.5 * mad, 0.002)
    if min(np.count_nonzero(s[keep] < 0), np.count_nonzero(s[keep] > 0)) < MIN_SWITCH_HALF:
        return None
    coef, *_ = np.linalg.lstsq(a[keep], h[keep], rcond=None)
    slope = float(coef[1])  # dz per m along the part's x
    # turning by +angle about the axis moves the part's x by (axis x x) * sin(angle) in z
    ux = np.array([math.cos(part.yaw), math.sin(part.yaw), 0.0])
    down = float(np.cross(np.asarray(part.axis, float), ux)[2])
    if abs(down) < 0.5:  # the rocker does not tilt along its x: not a rocker we can read
        return None
    angle = math.atan(slope / down)
    if abs(angle) < SWITCH_CERTAIN * part.travel:
        return None
    return float(min(max(angle, -part.travel), part.travel))


def knob_angle(part: FixturePart, points: np.ndarray, eye: np.ndarray,
               last: float | None = None) -> float | None:
    """A knob's angle (rad, 0..travel, counter-clockwise about its axis) from its grip bar, or
    None when not measurable in this frame (or ambiguous with no ``last`` angle)."""
    lx, ly, z = _local(part, points)
    hx, hy, hz = (v / 2 for v in part.size)
    if _hidden(part, points, eye):
        return None
    radius = min(hx, hy) + KNOB_MARGIN
    disc = (np.hypot(lx, ly) <= radius) & (z >= -hz) & (z <= hz + OVER_CLEAR)
    if np.count_nonzero(disc) < MIN_GRIP_SAMPLES:
        return None
    top = float(np.percentile(z[disc], KNOB_GRIP_TOP))
    grip = disc & (z >= top - KNOB_GRIP_BAND)
    if np.count_nonzero(grip) < MIN_GRIP_SAMPLES:
        return None
    # where each sample's line of sight meets the bar's top plane: a depth error moves a
    # sample along that line (by over a millimetre sideways at this range, and not evenly:
    # part of the noise is a smooth field), the pixel's direction has no such error
    eye = np.asarray(eye, float)
    pts = points[grip]
    plane = float(np.median(pts[:, 2]))
    t = (plane - eye[2]) / np.minimum(pts[:, 2] - eye[2], -1e-9)
    gx, gy, _ = _local(part, eye + (pts - eye) * t[:, None])
    xy = np.c_[gx, gy]
    xy = xy - xy.mean(axis=0)
    w, v = np.linalg.eigh(xy.T @ xy / xy.shape[0])
    if w[1] < GRIP_ELONGATION * max(float(w[0]), 1e-12):
        return None  # no direction stands out: not the bar (hidden, or seen end on)
    turn = 1.0 if part.axis[2] >= 0 else -1.0  # counter-clockwise about the axis
    bar = (turn * math.atan2(float(v[1, 1]), float(v[0, 1]))) % math.pi
    return knob_branch(bar, part.travel, last)


def knob_branch(bar: float, travel: float, last: float | None) -> float | None:
    """The knob angle in [0, travel] whose bar direction is ``bar`` (mod pi): the one the
    travel holds; of two or more, the one nearest ``last`` (None without it); a direction a
    little outside the travel reads as the end it is near, one far outside as nothing."""
    candidates = (bar + k * math.pi for k in range(-1, int(travel // math.pi) + 2))
    values: list[float] = []
    for v in candidates:
        if -KNOB_SLACK <= v <= travel + KNOB_SLACK:
            v = min(max(v, 0.0), travel)
            if all(abs(v - u) > 1e-6 for u in values):
                values.append(v)
    if len(values) == 1:
        return values[0]
    if not values or last is None:
        return None
    return min(values, key=lambda v: abs(v - last))

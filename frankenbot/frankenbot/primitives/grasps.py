"""Top-down antipodal grasp synthesis for any shape, from the object's points.

The gripper comes straight down, fingers open, and closes horizontally. A candidate grasp is a
TCP position and a wrist yaw; it is kept when

* the object's section between the pads (the points in the pads' slab that reach the pads'
  height band) is no wider than the open gripper minus a clearance on each side, and at least
  a few millimetres wide (something to hold);
* the fingers, on their way down, and the palm above them touch nothing: not another part of
  the object (a mug's handle, a bottle's body under its neck), not a neighbour, not a fixture,
  not the table;
* the TCP sits at the middle of the section, so both pads touch at once and neither pushes the
  object before the other arrives.

Among those, the ones whose section keeps its width when the slab slides a little along the
pads (the contact normals then oppose each other: a cylinder through its axis, a box anywhere
but its ends) come first, then those near the object's centre (no torque in the fingers) and
near its middle height; a box's or carton's fingers close along its fitted rectangle's axes
(``AXIS_COST``). Round things are taken at their widest section (a ball at its equator,
a lying bottle at its axis: ``shape_models.widest_height``); long tools across their middle;
bowls by their rim, because nothing else fits. The caller checks the reach (IK) in this order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from frankenbot.common import FailureCode
from frankenbot.errors import FrankenbotError
from frankenbot.primitives import shape_models
from frankenbot.spatial import FLAT_HEIGHT
from frankenbot.state import SceneObject

YAW_STEPS = 12  # candidate wrist yaws over half a turn (the gripper is symmetric)
DEPTHS = (0.01, 0.015, 0.02, 0.03, 0.045, 0.06, 0.08, 0.10, 0.12)  # TCP below the object's top, m
MIN_CONTACT = 0.008  # m of height over which the pads must touch each side of the section
EDGE = 0.003  # m: points this close to a section's end are where the pads touch
CLIPPED = 0.02  # m past the open fingers' reach where a section that goes on is seen
MAX_LEAN = 0.6  # tan of the largest lean of a contact face from the pads (inside friction)
SLOPE_STEP = 0.008  # m the slab slides along the pads to judge the contact normals
NEIGHBOUR_REACH = 0.14  # m beyond the object's footprint radius where neighbours matter
# Boxes' faces are their fitted rectangle's sides: fingers closing along one of its axes press
# two faces head on; turned by an angle, they press edges and the box twists out while lifting.
# A sparse view (60 points of a 3 cm box) leaves the sliding-slab lean too noisy to see that,
# so a turn away from the axes costs AXIS_COST at 45 degrees (|sin 2x|).
FLAT_FACED = frozenset({"box", "carton"})
AXIS_COST = 0.5


@dataclass(frozen=True)
class GripperModel:
    """The parallel gripper as boxes around its TCP (tool frame: y along the closing axis, z
    up from the pads' centre). The defaults are the Robotiq 2F-85 of the sim."""

    max_open: float = 0.085  # m between the pads, fully open
    side_clearance: float = 0.005  # m at least between an open pad and the object
    open_margin: float = 0.015  # m per side: the fingers open this much wider than the section
    pad_half_height: float = 0.0225  # pads reach this far below (and above) the TCP
    pad_half_depth: float = 0.011  # along tool x
    finger_thickness: float = 0.02  # a finger across the closing axis (pad and its link)
    palm_bottom: float = 0.045  # the palm's lowest point above the TCP
    palm_half_along: float = 0.055  # palm half extent along the closing axis
    palm_half_across: float = 0.038  # ... across it (its round top is wider than its box)
    min_width: float = 0.006  # a section narrower than this is nothing to hold
    margin: float = 0.004  # m added around the fingers and palm against obstacles


@dataclass(frozen=True)
class Grasp:
    """A top-down grasp: TCP position (m, base_link), wrist yaw (rad; ``top_down_pose``), the
    section width the fingers will close on and the width to open to before descending."""

    x: float
    y: float
    z: float
    yaw: float
    width: float
    open_width: float
    cost: float


class NoGrasp(FrankenbotError):
    """No grasp of the object exists; ``code`` says why (too wide, blocked); ``blockers``:
    what the grasps would hit, most often hit first."""

    def __init__(self, code: FailureCode, detail: str, blockers: tuple[str, ...] = ()) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.blockers = blockers


@dataclass(frozen=True)
class _Obstacle:
    object_id: str
    points: np.ndarray  # (M, 3) column tops


def _obstacles(obj: SceneObject, others: Iterable[SceneObject]) -> list[_Obstacle]:
    """Neighbours near enough to matter, as column points (category models: a neighbouring
    bowl's inside is free, its rim is not). What the object stands on is below the pads."""
    reach = 0.5 * math.hypot(obj.size[0], obj.size[1]) + NEIGHBOUR_REACH
    bottom = obj.position[2] - obj.size[2] / 2
    out = []
    for o in others:
        if o.object_id == obj.object_id or o.size[2] < FLAT_HEIGHT:
            continue
        if not all(math.isfinite(v) for v in o.position + o.size + (o.yaw,)):
            continue
        r = 0.5 * math.hypot(o.size[0], o.size[1])
        if math.hypot(o.position[0] - obj.position[0], o.position[1] - obj.position[1]) > reach + r:
            continue
        if o.top_z <= bottom + 0.003:
            continue  # a support under it
        out.append(_Obstacle(o.object_id, shape_models.model_points(o)))
    return out


def _centres(obj: SceneObject) -> np.ndarray:
    """Candidate grasp centres: a grid over the object's footprint (object frame -> base)."""
    sx, sy = obj.size[0], obj.size[1]
    step = max(0.008, max(sx, sy) / 16)
    nx, ny = int(sx / 2 / step), int(sy / 2 / step)
    lx, ly = np.meshgrid(np.arange(-nx, nx + 1) * step, np.arange(-ny, ny + 1) * step)
    lx, ly = lx.ravel(), ly.ravel()
    c, s = math.cos(obj.yaw), math.sin(obj.yaw)
    return np.column_stack([obj.position[0] + c * lx - s * ly, obj.position[1] + s * lx + c * ly])


def _heights(obj: SceneObject, g: GripperModel, min_tcp_z: float, table_z: float) -> list[float]:
    top = obj.top_z
    bottom = obj.position[2] - obj.size[2] / 2
    # the pads keep the same clearance above whatever the object stands on as above the table
    low = max(min_tcp_z, bottom + (min_tcp_z - table_z))
    widest = shape_models.widest_height(obj)
    wanted = [widest] if widest is not None else [top - d for d in DEPTHS]
    out: list[float] = []
    for z in wanted:
        z = max(z, low)
        if z - g.pad_half_height > top - MIN_CONTACT:
            continue
        if all(abs(z - o) > 0.004 for o in out):
            out.append(z)
    return out


def _extent(inside: np.ndarray, ds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo = np.where(inside, ds, np.inf).min(axis=1)
    hi = np.where(inside, ds, -np.inf).max(axis=1)
    return lo, hi


def _middle(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The middle of each section (0 where a candidate has none)."""
    has = np.isfinite(lo)
    return np.where(has, (np.where(has, lo, 0.0) + np.where(has, hi, 0.0)) / 2, 0.0)


def _hits(pts: np.ndarray, cx: np.ndarray, cy: np.ndarray, ax: np.ndarray, uy: np.ndarray,
          z: float, open_w: np.ndarray, g: GripperModel, margin: float,
          gap_too: bool) -> np.ndarray:
    """Per candidate: does any column of ``pts`` meet a finger on its way down or the palm (or,
    ``gap_too``, stand between the open fingers)? Candidates: centre (cx, cy), tool x ``ax``."""
    if len(pts) == 0:
        return np.zeros(len(cx), dtype=bool)
    dx = pts[None, :, 0] - cx[:, None]
    dy = pts[None, :, 1] - cy[:, None]
    a = dx * ax[0] + dy * ax[1]
    s = dx * uy[0] + dy * uy[1]
    pz = pts[None, :, 2]
    half = open_w[:, None] / 2
    slab = np.abs(a) <= g.pad_half_depth + margin
    low = pz >= z - g.pad_half_height - margin
    finger = (np.abs(s) >= half - (margin if gap_too else 0.0)) & (
        np.abs(s) <= half + g.finger_thickness + margin)
    hit = slab & low & finger
    if gap_too:
        hit |= slab & low & (np.abs(s) < half)
    palm = ((np.abs(a) <= g.palm_half_across + margin) & (np.abs(s) <= g.palm_half_along + margin)
            & (pz >= z + g.palm_bottom - margin))
    return np.any(hit | palm, axis=1)


def synthesize(obj: SceneObject, others: Sequence[SceneObject], *,
               gripper: GripperModel = GripperModel(), min_tcp_z: float = 0.027,
               table_z: float = 0.0, off_centre: float = 0.0) -> list[Grasp]:
    """Every collision-free top-down grasp of ``obj`` among ``others`` (perceived objects and
    fixtures), best first (see the module docstring). ``off_centre``: only grasps at least this
    far (m) from the object's centre, the nearest to it first (a long object taken near one
    end, so that its other end reaches farther from the palm). Raises NoGrasp with
    GRASP_FAILED when the object has no section the gripper can span, BLOCKED when every such
    grasp would hit something (named in the detail)."""
    g = gripper
    widest = shape_models.widest_height(obj)  # round sides: touched along their waist
    # A round side's far half is hidden from the camera: its seen points span a section short
    # of the diameter and centred towards the camera, and fingers aimed at that section's
    # middle strike the side they cannot see. Round things are taken by their model (the
    # fitted pose and size) and the fingers open as wide as they go before coming down past
    # the widest section.
    pts = shape_models.model_points(obj) if widest is not None else \
        shape_models.surface_points(obj)
    if len(pts) == 0:
        raise NoGrasp(FailureCode.GRASP_FAILED, f"{obj.object_id}: no surface to grasp")
    obstacles = _obstacles(obj, others)
    centres = _centres(obj)
    heights = _heights(obj, g, min_tcp_z, table_z)
    if not heights:
        raise NoGrasp(FailureCode.GRASP_FAILED, f"{obj.object_id} is too low to grasp")
    widest_span = g.max_open - 2 * g.side_clearance
    com_z = obj.position[2]
    found: list[Grasp] = []
    narrowest = math.inf
    blockers: dict[str, int] = {}
    self_blocked = 0
    base = obj.yaw
    for k in range(YAW_STEPS):
        yaw = base + k * math.pi / YAW_STEPS
        ax = np.array([math.cos(yaw), math.sin(yaw)])  # tool x
        uy = np.array([math.sin(yaw), -math.cos(yaw)])  # tool y: the closing axis
        dx = pts[None, :, 0] - centres[:, 0, None]
        dy = pts[None, :, 1] - centres[:, 1, None]
        a = dx * ax[0] + dy * ax[1]
        ds0 = dx * uy[0] + dy * uy[1]
        for z in heights:
            active = pts[:, 2] >= z - g.pad_half_height  # columns reaching the pads' band
            in_reach = active[None, :] & (np.abs(ds0) < g.max_open / 2)
            inside = in_reach & (np.abs(a) <= g.pad_half_depth)
            lo, hi = _extent(inside, ds0)
            has = np.isfinite(lo)
            mid = _middle(lo, hi)
            # re-centred on the section's middle, twice: a section the first window cut short
            # (a centre far off a cylinder's axis) has its middle off by the part cut away
            for again in (True, False):
                ds = ds0 - mid[:, None]
                inside = active[None, :] & (np.abs(a) <= g.pad_half_depth) & (
                    np.abs(ds) < g.max_open / 2)
                lo, hi = _extent(inside, ds)
                if again:
                    mid = mid + _middle(lo, hi)
            width = np.where(np.isfinite(lo), hi - lo, 0.0)
            # a section that goes on past the open fingers' reach is wider than they open
            reach = np.abs(ds) - g.max_open / 2
            beyond = np.any(active[None, :] & (np.abs(a) <= g.pad_half_depth) & (reach >= 0)
                            & (reach < CLIPPED), axis=1)
            width = np.where(beyond, np.inf, width)
            ok = has & (width >= g.min_width)
            if widest is None:  # flat sides: the pads must cover some height of them
                ok &= _touches(inside, ds, lo, hi, pts[:, 2], z - g.pad_half_height,
                               z + g.pad_half_height)
            slope = np.full(len(width), np.inf)
            ok &= np.isfinite(width)
            if np.any(ok):  # the contact faces' lean: beyond the friction cone the object slips
                i_ok = np.nonzero(ok)[0]
                slope[i_ok] = _slope(pts, active, a[i_ok], ds[i_ok], lo[i_ok], hi[i_ok], g)
                ok &= slope <= MAX_LEAN
            if np.any(ok):
                narrowest = min(narrowest, float(width[ok].min()))
            elif np.any(has):
                narrowest = min(narrowest, g.max_open)
            ok &= width <= widest_span
            if not np.any(ok):
                continue
            open_w = np.minimum(g.max_open, width + 2 * g.open_margin)
            if widest is not None:
                open_w = np.full(len(width), g.max_open)
            # the object's own other parts (outside the section) against fingers and palm
            cx = centres[:, 0] + uy[0] * mid
            cy = centres[:, 1] + uy[1] * mid
            idx = np.nonzero(ok)[0]
            if off_centre > 0.0:
                idx = idx[np.hypot(cx[idx] - obj.position[0], cy[idx] - obj.position[1])
                          >= off_centre]
                if len(idx) == 0:
                    continue
            own = _hits(pts, cx[idx], cy[idx], ax, uy, z, open_w[idx], g, 0.0, False)
            self_blocked += int(own.sum())
            idx = idx[~own]
            if len(idx) == 0:
                continue
            clear = np.ones(len(idx), dtype=bool)
            for ob in obstacles:
                hit = _hits(ob.points, cx[idx], cy[idx], ax, uy, z, open_w[idx], g, g.margin,
                            True)
                if np.any(hit & clear):
                    blockers[ob.object_id] = blockers.get(ob.object_id, 0) + int(
                        (hit & clear).sum())
                clear &= ~hit
            idx = idx[clear]
            if len(idx) == 0:
                continue
            twist = _twist(inside[idx], a[idx], ds[idx], lo[idx], hi[idx])
            off = np.hypot(cx[idx] - obj.position[0], cy[idx] - obj.position[1])
            cost = slope[idx] + 10.0 * twist + 8.0 * (off - off_centre) + 2.0 * abs(z - com_z)
            if obj.shape in FLAT_FACED:
                cost = cost + AXIS_COST * abs(math.sin(2.0 * (yaw - base)))
            for j, i in enumerate(idx):
                found.append(Grasp(float(cx[i]), float(cy[i]), float(z), float(yaw),
                                   float(width[i]), float(open_w[i]), float(cost[j])))
    if found:
        found.sort(key=lambda gr: gr.cost)
        return found
    if off_centre > 0.0:
        raise NoGrasp(FailureCode.GRASP_FAILED,
                      f"no grasp of {obj.object_id} lies {off_centre * 1000:.0f} mm or more off "
                      "its centre")
    if not math.isfinite(narrowest) or narrowest > widest_span:
        what = (f"its narrowest section is {narrowest * 1000:.0f} mm" if math.isfinite(narrowest)
                else "no section of it is wide enough to hold")
        raise NoGrasp(FailureCode.GRASP_FAILED,
                      f"{obj.object_id} is too wide to grasp: {what}, the gripper spans at most "
                      f"{widest_span * 1000:.0f} mm with room on each side")
    if blockers:
        named = tuple(sorted(blockers, key=lambda n: -blockers[n])[:3])
        raise NoGrasp(FailureCode.BLOCKED, f"every grasp of {obj.object_id} would hit "
                                           f"{', '.join(named)}: move it away first", named)
    raise NoGrasp(FailureCode.GRASP_FAILED,
                  f"every grasp of {obj.object_id} would hit another part of it "
                  f"({self_blocked} candidates)")


def _touches(inside: np.ndarray, ds: np.ndarray, lo: np.ndarray, hi: np.ndarray,
             tops: np.ndarray, pad_bottom: float, pad_top: float) -> np.ndarray:
    """Both pads touch the section over at least MIN_CONTACT of height (not just its upper
    edge: a bottle's shoulder at the bottom of the pads is no grip)."""
    out = np.ones(len(lo), dtype=bool)
    reach = np.minimum(tops, pad_top)[None, :]  # how high each column meets the pads
    for end in (lo, hi):
        near = inside & (np.abs(ds - np.where(np.isfinite(end), end, 0.0)[:, None]) <= EDGE)
        top = np.where(near, reach, -np.inf).max(axis=1)
        out &= top - pad_bottom >= MIN_CONTACT
    return out


def _twist(inside: np.ndarray, a: np.ndarray, ds: np.ndarray, lo: np.ndarray,
           hi: np.ndarray) -> np.ndarray:
    """How far apart along the pads the two contacts are (m): pads squeezing a lemon or a box
    askew touch it off the line between them, and it turns in the fingers."""
    mean = []
    for end in (lo, hi):
        near = inside & (np.abs(ds - end[:, None]) <= EDGE)
        count = np.maximum(near.sum(axis=1), 1)
        mean.append(np.where(near, a, 0.0).sum(axis=1) / count)
    return np.abs(mean[1] - mean[0])


def _slope(pts: np.ndarray, active: np.ndarray, a: np.ndarray, ds: np.ndarray,
           lo: np.ndarray, hi: np.ndarray, g: GripperModel) -> np.ndarray:
    """How far each contact face leans from the pads' plane: how much the section's two ends
    move when the slab slides SLOPE_STEP either way along the pads (0: both faces parallel to
    the pads, the grasp is antipodal; a box held askew or a cylinder off its axis is not)."""
    out = np.zeros(len(lo))
    for step in (SLOPE_STEP, -SLOPE_STEP):
        inside = active[None, :] & (np.abs(a - step) <= g.pad_half_depth) & (
            np.abs(ds) < g.max_open / 2)
        lo2, hi2 = _extent(inside, ds)
        gone = ~np.isfinite(lo2)  # past the object's end: as bad as it gets
        moved = np.maximum(np.abs(np.where(gone, 0.0, lo2) - lo),
                           np.abs(np.where(gone, 0.0, hi2) - hi)) / SLOPE_STEP
        out = np.maximum(out, np.where(gone, 2.0, moved))
    return out

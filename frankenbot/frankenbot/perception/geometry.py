"""Cluster geometry: footprint rectangle, size, yaw, centre and a shape class.

The camera sees an object's top and the sides facing it. Seen from above, those sides fall on
the object's outline, so the minimum-area rectangle of the top-down footprint gives the true
centre, size and yaw even though the back is hidden. The shape class comes from size, height and
whether the footprint's middle is lower than its rim (a container).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from frankenbot.perception.colour import name_colour, top_brightness
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.containers import fit_outline_circle
from frankenbot.perception.segmentation import Cluster
from frankenbot.perception.signature import Signature, measure_signature


@dataclass(frozen=True)
class ShapeRules:
    """Size thresholds (metres) of the shape classes on a tabletop."""

    block_max_footprint: float = 0.075  # longest side of a block
    flat_height: float = 0.028  # flatter than this and wide: plate
    plate_min_footprint: float = 0.09
    bin_min_footprint: float = 0.17  # containers longer than this: bin
    round_fill: float = 0.88  # hull area / rectangle area below this: round (bowl, plate)
    # Narrower "bowls" are arcs of one cut by the arm in front: measured, they were 3-5 cm off
    # and the tracker moved the bowl's id onto them or named them as new bowls.
    bowl_min_width: float = 0.09
    # A "block" narrower than this is a sliver of a partly hidden one (a held block seen
    # between the fingers), never a tower of cubes that narrow: split_stack leaves it whole.
    stack_min_edge: float = 0.025


@dataclass(frozen=True)
class Detection:
    """One object measured in one frame (no id yet; the tracker assigns ids)."""

    shape: str
    colour: str
    position: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float
    confidence: float
    n_points: int
    name: str = ""  # detector label (open vocabulary, e.g. "mug"); "" = named by shape
    signature: Signature | None = field(default=None, compare=False)  # shape signature
    # a sample of the segmented points (base_link), what grasp synthesis works from
    points: np.ndarray | None = field(default=None, compare=False, repr=False)
    sigma: float = 0.0  # depth noise (m, RMS) at its range: how loosely to match its signature
    as_part: bool = False  # the catalogue named it only as a part of what it is (seen in part)


SUNK_RING_MAX = 0.05  # m: the most of a container's wall depth noise hides

def _convex_hull(xy: np.ndarray) -> tuple[np.ndarray, float]:
    """(hull vertices, hull area) of 2-D points; (the points, 0.0) when they have no hull."""
    pts = np.asarray(xy, dtype=float)
    try:
        h = ConvexHull(pts)
    except (QhullError, ValueError):
        return pts, 0.0
    return pts[h.vertices], float(h.volume)


def min_area_rect(xy: np.ndarray, hull: np.ndarray | None = None
                  ) -> tuple[np.ndarray, float, float, float]:
    """Minimum-area enclosing rectangle: (centre xy, length, width, yaw of the length axis).
    ``hull``: the points' convex hull vertices when already known (``_convex_hull``)."""
    if hull is None:
        hull, _ = _convex_hull(xy)
    edges = np.diff(np.vstack([hull, hull[:1]]), axis=0)
    angles = np.unique(np.mod(np.arctan2(edges[:, 1], edges[:, 0]), math.pi / 2))
    if angles.size == 0:
        angles = np.array([0.0])
    best: tuple[float, np.ndarray, float, float, float] | None = None
    for a in angles:
        c, s = math.cos(a), math.sin(a)
        rot = hull @ np.array([[c, -s], [s, c]])  # coords along the rotated axes
        lo, hi = rot.min(axis=0), rot.max(axis=0)
        ext = hi - lo
        area = float(ext[0] * ext[1])
        if best is None or area < best[0]:
            mid = (lo + hi) / 2.0
            centre = np.array([mid[0] * c - mid[1] * s, mid[0] * s + mid[1] * c])
            best = (area, centre, float(ext[0]), float(ext[1]), float(a))
    assert best is not None
    _, centre, e0, e1, a = best
    if e1 > e0:  # report the long side as the object's x axis
        e0, e1, a = e1, e0, a + math.pi / 2
    yaw = (a + math.pi / 2) % math.pi - math.pi / 2  # rectangles are symmetric under pi
    return centre, e0, e1, yaw


ROUND_MIN_DIAMETER = 0.09  # m: footprints this long or longer may be completed to a circle
ROUND_COMPLETION = 0.006  # m: ... when the circle is this much wider than the rectangle
ROUND_MAX_GROWTH = 1.25  # ... and never more than this times the visible length
TOP_COLOUR_BAND = 0.006  # m under the top: the top face's pixels (white or gray)
OUTLINE_SLACK = 0.006  # m beyond the 1st/99th percentile an outline point may still lie


def _far_edge_shift(centre: np.ndarray, top_z: float, eye: tuple[float, float, float],
                    sample_angle: float) -> np.ndarray:
    """Half the far edge's expected shortfall (a quarter of the sample spacing on the top
    face along the view direction), pointing away from the camera."""
    d = centre - np.asarray(eye[:2], dtype=float)
    horiz = float(np.linalg.norm(d))
    drop = float(eye[2]) - top_z
    if horiz < 1e-6 or drop <= 0.05:
        return np.zeros(2)
    rng = math.hypot(horiz, drop)
    spacing = sample_angle * rng / (drop / rng)  # along the table, in the view direction
    return d / horiz * (0.25 * spacing)


def _robust_rect(xy: np.ndarray, yaw: float) -> tuple[np.ndarray, float, float]:
    """Centre, length and width of the rectangle at ``yaw`` (the long axis) spanned by the
    points, ignoring stragglers more than ``OUTLINE_SLACK`` outside the 1st-99th percentile
    span: flying pixels and noise beyond an object's outline no longer move its centre the way
    they moved a minimum-area rectangle's, while a clean outline keeps its full extent."""
    c, s = math.cos(yaw), math.sin(yaw)
    u = xy @ np.array([c, s])
    v = xy @ np.array([-s, c])

    def span(w: np.ndarray) -> tuple[float, float]:
        p1, p99 = np.percentile(w, [1, 99])
        return max(float(w.min()), p1 - OUTLINE_SLACK), min(float(w.max()), p99 + OUTLINE_SLACK)

    (u0, u1), (v0, v1) = span(u), span(v)
    mu, mv = (u0 + u1) / 2, (v0 + v1) / 2
    centre = np.array([mu * c - mv * s, mu * s + mv * c])
    length, width = float(u1 - u0), float(v1 - v0)
    if width > length:
        length, width = width, length
    return centre, length, width


def hull_area(xy: np.ndarray) -> float:
    try:
        return float(ConvexHull(xy).volume)
    except (QhullError, ValueError):
        return 0.0


def _concave(cluster: Cluster, centre: np.ndarray, width: float, top: float, height: float) -> bool:
    """Is the middle of the footprint lower than the rim (or hidden by something inside)?"""
    d = np.linalg.norm(cluster.points[:, :2] - centre, axis=1)
    mid = d < 0.25 * width
    if np.count_nonzero(mid) < 5:
        return True
    return bool(np.median(cluster.heights[mid]) < top - 0.5 * height)


def measure(cluster: Cluster, rules: ShapeRules = ShapeRules(),
            viewpoint: tuple[float, float] | None = None,
            eye: tuple[float, float, float] | None = None,
            sample_angle: float = 0.0, support: float | None = None,
            complete_blocks: bool = True, table_value: float | None = None,
            circle_config: PerceptionConfig | None = None) -> Detection:
    """Turn one cluster into a Detection (shape, colour, centre, size, yaw, confidence) with
    its shape signature (``perception/signature.py``).

    ``support``: the height over the table of the surface the object stands on (the table,
    a fixture's top, a drawer's floor), when known; the object's height is its top over it.
    None: the object may be lifted or stand in something; its lowest seen point decides.
    ``complete_blocks``: finish a block seen by one face only (below); off when a catalogue
    names the object afterwards (a lemon is not a block seen edge-on). ``table_value``: the
    table's brightness in the cluster's colour space, to tell a white top from a gray one.
    ``circle_config``: complete a round footprint seen in part (its outline's circle).

    ``viewpoint`` (camera x, y in base) lets a block seen only by one face be completed: its
    hidden depth lies away from the camera. ``eye`` (camera position) and ``sample_angle``
    (radians between neighbouring depth samples: stride / fx) correct the far outline: seen
    from above at an angle, the last sample on a top face lies on average half a sample
    spacing short of its far edge (the near edge is exact: a vertical face ends there), which
    put every object a few millimetres towards the camera.
    """
    xy = cluster.points[:, :2]
    hull, area = _convex_hull(xy)  # once: the rectangle and the fill test both need it
    centre, length, width, yaw = min_area_rect(xy, hull)
    rect_area = max(length * width, 1e-9)  # the outline's own rectangle (fill test below)
    sigma = float(getattr(cluster, "sigma", 0.0))
    if xy.shape[0] >= 50:
        centre, length, width = _robust_rect(xy, yaw)
    if circle_config is not None and length >= ROUND_MIN_DIAMETER:
        # a round footprint partly hidden (an object in front, the arm) measures short across
        # it; the circle its visible outline lies on gives its true centre and diameter
        circle = fit_outline_circle(xy, circle_config)
        if circle is not None and 2 * circle.radius > width + ROUND_COMPLETION:
            d = min(2 * circle.radius, ROUND_MAX_GROWTH * length)
            centre, length, width = np.asarray(circle.centre, float), max(length, d), d
    h = cluster.heights
    top = float(np.percentile(h, 98))
    if sigma > 0:
        # Noisy depth: the 98th percentile sits ~2 sigma above the top face; the median of the
        # band from there down to 4 sigma below is the face itself.
        band = h[h >= top - 4.0 * sigma - 0.002]
        if band.size >= 5:
            top = float(np.median(band))
    bottom_visible = float(np.percentile(h, 2))
    plane_z = float(np.median(cluster.points[:, 2] - h))  # table z under the object
    if support is not None:
        rest = support
    else:
        rest = bottom_visible if bottom_visible > 0.015 else 0.0  # lifted / on something
    height = max(top - rest, 0.005)
    fill = area / rect_area
    concave = _concave(cluster, centre, width, top, height) if length > 0.05 else False
    # the signature's top: where few samples lie on a small top face (far away, or partly
    # hidden by the gripper) the band's median sinks towards the sides; the 99th percentile
    # less its noise does not
    sig_top = max(top, float(np.percentile(h, 99)) - 2.0 * sigma) if sigma > 0 else top
    signature = measure_signature(cluster.points, h, centre, yaw, length, width, sig_top, rest,
                                  area, sigma)
    if (concave and 0.0 < rest <= SUNK_RING_MAX and length >= rules.plate_min_footprint
            and support is None):
        # A wide ring whose lower part is missing is a container standing on the table whose
        # floor and lower walls sank into strong depth noise, not a flat thing held up: a
        # lifted plate is filled, its middle as high as its rim. Noise hides a few
        # centimetres, not the height of a cabinet a bowl stands on at the gripper.
        rest, height = 0.0, max(top, 0.005)
    if length <= rules.block_max_footprint and not concave:
        shape = "block"
        # A block whose lower part is hidden (inside a bowl) is taken to be as tall as it is long.
        if rest > 0.0 and top - rest < 0.8 * length and support is None:
            height = min(length, top)
        if viewpoint is not None and complete_blocks:
            centre, width = complete_block(centre, length, width, yaw, viewpoint)
    elif height < rules.flat_height and length >= rules.plate_min_footprint:
        shape = "plate"
    elif concave and length >= rules.bin_min_footprint:
        shape = "bin"
    elif concave and fill < rules.round_fill:
        # A bowl's footprint is round; a narrow arc is what the arm left visible of one.
        shape = "bowl" if width >= rules.bowl_min_width else "unknown"
    elif concave:
        shape = "bin"
    else:
        shape = "unknown"
    z = plane_z + top - height / 2.0
    if eye is not None and sample_angle > 0:
        centre = centre + _far_edge_shift(centre, plane_z + top, eye, sample_angle)
    top_ratio = None
    if table_value is not None and table_value > 0:
        band = h >= top - max(TOP_COLOUR_BAND, 2.0 * sigma)
        if np.count_nonzero(band) >= 5:
            top_ratio = top_brightness(cluster.hsv[band, 2], cluster.hsv[:, 2], table_value)
    colour = name_colour(*cluster.colour_pixels(), top_ratio=top_ratio)
    n = cluster.points.shape[0]
    confidence = float(min(1.0, 0.5 + n / 400.0)) * (1.0 if shape != "unknown" else 0.5)
    return Detection(shape=shape, colour=colour,
                     position=(float(centre[0]), float(centre[1]), z),
                     size=(length, width, height), yaw=yaw, confidence=confidence, n_points=n,
                     signature=signature, sigma=sigma)


def complete_block(centre: np.ndarray, length: float, width: float, yaw: float,
                   viewpoint: tuple[float, float]) -> tuple[np.ndarray, float]:
    """A block seen by one face edge-on (narrower than 0.6 of its length) is square: its
    centre lies behind that face, away from the camera. Returns (centre, width)."""
    if width >= 0.6 * length:
        return centre, width
    return centre + _across_away(centre, yaw, viewpoint) * (length - width) / 2.0, length


def _across_away(centre: np.ndarray, yaw: float, viewpoint: tuple[float, float]) -> np.ndarray:
    """The unit vector across a footprint at ``yaw`` pointing away from the camera (where
    the side it cannot see lies)."""
    normal = np.array([-math.sin(yaw), math.cos(yaw)])
    away = centre - np.asarray(viewpoint, dtype=float)
    return normal if float(normal @ away) >= 0 else -normal


def complete_lying_round(centre: np.ndarray, length: float, width: float, height: float,
                         yaw: float, viewpoint: tuple[float, float]) -> tuple[np.ndarray, float]:
    """A round thing lying on its side (a bottle) is as wide as it is high, but the camera
    sees only the half of it turned its way: measured across, it falls short of its diameter
    and its centre lies towards the camera. The height (its top over what it stands on) is
    the diameter; the part missing across lies on the side away from the camera. Returns
    (centre, width)."""
    if height <= width or height >= 0.8 * length:
        return centre, width
    return centre + _across_away(centre, yaw, viewpoint) * (height - width) / 2.0, height


def split_stack(det: Detection, ratio: float = 1.6,
                min_edge: float = ShapeRules.stack_min_edge) -> list[Detection]:
    """A same-colour tower looks like one tall block: split it into cube-sized blocks.

    Blocks in this cell are cubes, so a "block" much taller than its footprint is a stack; each
    level gets its own detection (bottom first) so each can be named and picked. A footprint
    under ``min_edge`` is a sliver: split, it became four "blocks" in the gripper and the
    tracker handed the held block's id to one of them.
    """
    length, width, height = det.size
    if det.shape != "block" or det.name or height < ratio * length or width < 0.8 * length:
        return [det]
    if length < min_edge:
        return [det]
    n = max(2, round(height / length))
    edge = height / n
    bottom = det.position[2] - height / 2
    sig = None if det.signature is None else replace(det.signature, height=edge)
    return [replace(det, position=(det.position[0], det.position[1], bottom + edge * (k + 0.5)),
                    size=(length, width, edge), n_points=det.n_points // n, signature=sig,
                    points=None if det.points is None else det.points[
                        np.abs(det.points[:, 2] - (bottom + edge * (k + 0.5))) <= edge / 2])
            for k in range(n)]

"""Which clusters the camera sees only in part: something nearer (another object, the arm)
or the image's edge borders them in the image.

A partly hidden object measures shorter and narrower than it is, and its footprint's ends
look cut: the catalogue then takes those features as lower bounds (``catalogue.match`` with
``partial``). Judged in the depth image itself: around a cluster's outline in the image
(holes filled: a bowl's floor the camera sees past is still inside its outline), the pixels
whose depth is clearly nearer than the cluster's next to them are its occluders; their share
of the outline is its occluded share. A long thing (a spatula, a marker, a lying bottle) hidden
at one end loses little of its outline but much of its length: its ends are judged on their
own (``Occlusion.end``); the hidden end may be a standing thing's top (a tall bottle whose neck
the arm hides: its height, not its length, is what measures short; ``Occlusion.top``). A
standing thing whose hidden border lies beside its upper part only has its top hidden
(``Occlusion.top_only``: the gripper over a bottle, its fingers down the sides); one whose
lowest seen points are hidden has its foot hidden (``Occlusion.foot``: a bottle behind another
is not lifted for being seen only from high up).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
from scipy import ndimage

from frankenbot.perception.segmentation import Cluster

NEARER = 30  # mm: a neighbour this much nearer than the cluster hides part of it
LONG_ASPECT = 2.5  # an outline this many times longer than wide has ends worth judging alone
END_CAP = 1.5  # grid pixels: border pixels this close to an end's extreme along the axis cap it
END_MIN_PIXELS = 3  # border pixels an end needs to be judged
END_SLICE = 0.2  # of a long outline's length: its points this near an end are that end's
# the hidden end stands this share of the cluster's height above the other end: it is the top
TOP_RISE = 0.5
# A standing thing (taller than its footprint is wide) is hidden at its top only when of the
# border beside its highest points (within TOP_SLICE of its height of its top) TOP_HIDDEN or
# more is hidden by nearer things, that border is at most TOP_PART_MAX of its outline (its top
# is no rim all round), and beside the rest of it, under its upper UPPER_SLICE, at most
# TOP_ELSEWHERE is hidden, TOP_CONCENTRATION times less than beside its upper part
TOP_SLICE = 0.15
TOP_HIDDEN = 0.1
TOP_PART_MAX = 0.5
UPPER_SLICE = 0.4
TOP_ELSEWHERE = 0.1
TOP_CONCENTRATION = 4.0
FOOT_SLICE = 0.15  # of its height: its points this near its lowest seen one are its foot ...
FOOT_HIDDEN = 0.3  # ... and this share of the border beside them hidden: its foot is hidden
_SQUARE = np.ones((3, 3), dtype=bool)


class Occlusion(NamedTuple):
    """How much of a cluster's outline in the image nearer things (or the image's edge) take."""

    outline: float  # share of the pixels just outside its outline
    end: float  # the same share at its more hidden end when it is long, else 0
    top: bool  # that end is the top of a standing thing (high over the other end)
    top_only: bool = False  # nearer things border it only beside its highest points
    foot: bool = False  # nearer things hide where it meets what it stands on


def occluded_shares(clusters: Sequence[Cluster], depth_mm: np.ndarray, stride: int
                    ) -> list[Occlusion]:
    """Per cluster, its ``Occlusion`` judged on the ``stride`` grid of ``depth_mm``."""
    d = np.asarray(depth_mm[::stride, ::stride], dtype=np.int32)
    h, w = d.shape
    out = []
    for c in clusters:
        rows = np.clip(c.pixels[:, 0] // stride, 0, h - 1)
        cols = np.clip(c.pixels[:, 1] // stride, 0, w - 1)
        r0, r1 = max(int(rows.min()) - 2, 0), min(int(rows.max()) + 3, h)
        c0, c1 = max(int(cols.min()) - 2, 0), min(int(cols.max()) + 3, w)
        mask = np.zeros((r1 - r0, c1 - c0), dtype=bool)
        mask[rows - r0, cols - c0] = True
        mask = ndimage.binary_fill_holes(ndimage.binary_closing(mask, _SQUARE))
        ring = ndimage.binary_dilation(mask, _SQUARE) & ~mask
        own = np.where(mask, d[r0:r1, c0:c1], 0)
        own = ndimage.maximum_filter(own, size=3)  # the cluster's depth beside each ring pixel
        ring_d = d[r0:r1, c0:c1]
        near = ring & (ring_d > 0) & (own > 0) & (ring_d < own - NEARER)
        edge = mask & _at_image_edge(mask.shape, (r0, r1, c0, c1), (h, w))
        total = int(np.count_nonzero(ring)) + int(np.count_nonzero(edge))
        share = ((int(np.count_nonzero(near)) + int(np.count_nonzero(edge))) / total
                 if total else 0.0)
        # at an end, no depth return beside it (the arm's or another object's IR shadow)
        # hides where it ends as well as something nearer does
        blind = ring & (ring_d == 0)
        end, side = _end_share(mask, ring | edge, near | edge | blind)
        own_t = (np.stack([rows - r0, cols - c0], axis=1).astype(float) - side[0]) @ side[1]
        # what nearer things border lies beside its highest points and its upper part only
        # (the arm over it, its fingers down its sides): its top is hidden
        top_only = foot = False
        if c.heights.shape[0] >= 3:
            top = float(np.percentile(c.heights, 98))
            at_top, _rest, top_part = _border_beside(
                c.heights >= (1.0 - TOP_SLICE) * top, rows - r0, cols - c0, mask.shape,
                ring | edge, near | edge)
            upper, lower, _part = _border_beside(
                c.heights >= (1.0 - UPPER_SLICE) * top, rows - r0, cols - c0, mask.shape,
                ring | edge, near | edge)
            top_only = (at_top >= TOP_HIDDEN and top_part <= TOP_PART_MAX
                        and lower <= TOP_ELSEWHERE and upper >= TOP_CONCENTRATION * lower
                        and top >= _narrow_side(c.points))
            # ... and what borders its lowest seen points hides its foot (its lowest seen point
            # over the table is no sign that it is lifted)
            foot = _border_beside(c.heights <= float(np.percentile(c.heights, 2)) + FOOT_SLICE
                                  * top, rows - r0, cols - c0, mask.shape, ring | edge,
                                  near | edge)[0] >= FOOT_HIDDEN
        out.append(Occlusion(share, end, end > 0 and _top_end(c.heights, own_t), top_only, foot))
    return out


def _end_share(mask: np.ndarray, border: np.ndarray, hidden: np.ndarray
               ) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    """The hidden share of the border pixels capping the more hidden end of a long outline
    (its image extent along its main axis at least ``LONG_ASPECT`` times across), else 0;
    and (the outline's centre, its main axis pointing to that end) on the crop's grid."""
    pts = np.argwhere(mask).astype(float)
    none = (0.0, (np.zeros(2), np.zeros(2)))
    if pts.shape[0] < 3:
        return none
    centre = pts.mean(axis=0)
    evals, evecs = np.linalg.eigh(np.cov((pts - centre).T))
    if evals[0] <= 0 or evals[1] < LONG_ASPECT ** 2 * evals[0]:
        return none
    axis = evecs[:, 1]
    t_in = (pts - centre) @ axis
    lo, hi = float(t_in.min()), float(t_in.max())
    t = (np.argwhere(border).astype(float) - centre) @ axis
    hid = hidden[border]
    shares = []
    for cap in (t <= lo + END_CAP, t >= hi - END_CAP):
        n = int(np.count_nonzero(cap))
        shares.append(float(np.count_nonzero(hid[cap])) / n if n >= END_MIN_PIXELS else 0.0)
    return max(shares), (centre, axis if shares[1] >= shares[0] else -axis)


def _top_end(heights: np.ndarray, t: np.ndarray) -> bool:
    """Whether the points at the far end along ``t`` (positions along the outline's axis,
    pointing to the hidden end) stand well above those at the near end: the outline runs up
    a standing thing (an oblique camera sees a bottle's side from its foot to its neck)."""
    if heights.shape[0] < 3:
        return False
    lo, hi = float(t.min()), float(t.max())
    cut = END_SLICE * (hi - lo)
    far, near = heights[t >= hi - cut], heights[t <= lo + cut]
    if far.size == 0 or near.size == 0:
        return False
    rise = float(np.median(far)) - float(np.median(near))
    return rise >= TOP_RISE * float(np.percentile(heights, 98))


def _border_beside(sel: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                   shape: tuple[int, int], border: np.ndarray, hidden: np.ndarray
                   ) -> tuple[float, float, float]:
    """Of a cluster's border pixels (``border`` on its crop, ``rows``/``cols`` its points'
    pixels there): the hidden share of those beside its points ``sel``, the hidden share of
    the others, and the first's share of the border."""
    some = np.zeros(shape, dtype=bool)
    some[rows[sel], cols[sel]] = True
    beside = ndimage.binary_dilation(some, _SQUARE, iterations=2) & border
    rest = border & ~beside
    n_in, n_rest = int(np.count_nonzero(beside)), int(np.count_nonzero(rest))
    if n_in == 0 or n_rest == 0:
        return 0.0, 0.0, 1.0
    return (float(np.count_nonzero(hidden[beside])) / n_in,
            float(np.count_nonzero(hidden[rest])) / n_rest, n_in / (n_in + n_rest))


def _narrow_side(points: np.ndarray) -> float:
    """The narrower side of a footprint's top-down extent (from its spread: a uniform strip
    of width w spreads w / sqrt(12))."""
    if points.shape[0] < 3:
        return 0.0
    return float(np.sqrt(12.0 * max(np.linalg.eigvalsh(np.cov(points[:, :2].T))[0], 0.0)))


def _at_image_edge(shape: tuple[int, int], crop: tuple[int, int, int, int],
                   image: tuple[int, int]) -> np.ndarray:
    """Pixels of a crop that lie on the image's own border (the frame cuts what is there)."""
    r0, r1, c0, c1 = crop
    h, w = image
    edge = np.zeros(shape, dtype=bool)
    if r0 == 0:
        edge[0, :] = True
    if r1 == h:
        edge[-1, :] = True
    if c0 == 0:
        edge[:, 0] = True
    if c1 == w:
        edge[:, -1] = True
    return edge

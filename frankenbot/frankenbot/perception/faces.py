"""Pieces of one object put back together after segmentation.

Segmentation cuts clusters per colour group and where the depth leaves gaps; some objects
come out in pieces: a lit face whose clipped hue fell into the neighbouring group (an orange
block's yellow top, a lying marker's yellow ridge), or a container's rim broken into a near
and a far arc under strong depth noise. These functions join such pieces (``joined``), before
the clusters are measured.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from frankenbot.perception.colour import SEG_NAMES, hue_adjacent
from frankenbot.perception.config import PerceptionConfig

if TYPE_CHECKING:
    from frankenbot.perception.segmentation import Cluster

LIT_FACE_UNION = 1.3  # merged faces span at most this times the smaller one's footprint
LIT_FACE_HEIGHT_MARGIN = 0.008  # m beyond the other's height band a face may lie
FACE_HOST_MAX = 0.09  # m: a piece within the footprint of one at most this long is its face


def hue_neighbours(a: int, b: int) -> bool:
    """Two chromatic segmentation groups next to each other on the hue circle."""
    names = len(SEG_NAMES)
    return 0 <= a < names and 0 <= b < names and hue_adjacent(SEG_NAMES[a], SEG_NAMES[b])


def merge_lit_faces(clusters: list[Cluster], config: PerceptionConfig) -> list[Cluster]:
    """Put an object back together whose faces fell into neighbouring hue groups.

    Where a colour channel clips (a lit top face, a bright exposure; also after a white-balance
    gain below one on a clipped channel), the hue moves away from that channel's primary: the
    top of an orange block reads yellow, that of a purple one pink, while its shaded sides keep
    their hue. Segmentation by hue then cuts one block into two clusters, a phantom and a
    miscoloured block. Two clusters of neighbouring hues are one object when they touch, their
    union spans no more than ``LIT_FACE_UNION`` times the smaller one's footprint (a block in
    a bowl, on a plate or beside another block spans far more) or one lies within the footprint
    of the other, itself no bigger than an object, and one lies within the other's height band
    (a block stacked on another does not). A long thin thing lit along its
    ridge (a marker lying) falls apart lengthwise instead: a piece lying along such a strip,
    within its length and width, is one of its faces whatever the spans. The darker cluster
    names the colour (a lit face's hue is the one that moved), the bigger where a piece only
    lay within the other's footprint (a shaded underside).
    """
    pairs = [(i, j) for i in range(len(clusters)) for j in range(i + 1, len(clusters))
             if hue_neighbours(clusters[i].group, clusters[j].group)]
    if not pairs:
        return clusters
    lo = [c.points[:, :2].min(axis=0) for c in clusters]
    hi = [c.points[:, :2].max(axis=0) for c in clusters]
    stats: dict[int, tuple[np.ndarray, float]] = {}

    def band_mid(k: int) -> tuple[np.ndarray, float]:  # height band (p5, p99) and median
        if k not in stats:  # (p99: a tall object's lit top lies at the top of its sides)
            p5, p50, p99 = np.percentile(clusters[k].heights, (5, 50, 99))
            stats[k] = (np.array([p5, p99]), float(p50))
        return stats[k]
    parent = list(range(len(clusters)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def within(i: int, j: int) -> bool:
        band, mid = band_mid(j)[0], band_mid(i)[1]
        return band[0] - LIT_FACE_HEIGHT_MARGIN <= mid <= band[1] + LIT_FACE_HEIGHT_MARGIN

    touch = 2 * config.grid_cell
    lit_joined: set[int] = set()
    for i, j in pairs:
        if np.any(lo[i] > hi[j] + touch) or np.any(lo[j] > hi[i] + touch):
            continue
        span = float(np.max(np.maximum(hi[i], hi[j]) - np.minimum(lo[i], lo[j])))
        smaller = min(float(np.max(hi[i] - lo[i])), float(np.max(hi[j] - lo[j])))
        strip = (_along_strip(clusters[i], clusters[j], touch)
                 or _along_strip(clusters[j], clusters[i], touch))
        # one within the other's footprint, that no bigger than an object (not a bowl a
        # block lies in): a lemon's shaded underside read orange under its yellow top
        inner = span <= FACE_HOST_MAX and (
            bool(np.all(lo[i] >= lo[j] - touch) and np.all(hi[i] <= hi[j] + touch))
            or bool(np.all(lo[j] >= lo[i] - touch) and np.all(hi[j] <= hi[i] + touch)))
        lit = span <= LIT_FACE_UNION * smaller + touch or strip
        if not (lit or inner) or not (within(i, j) or within(j, i)):
            continue
        parent[root(j)] = root(i)
        if lit:
            lit_joined.update((i, j))
    members: dict[int, list[int]] = {}
    for i in range(len(clusters)):
        members.setdefault(root(i), []).append(i)
    out = []
    for idx in members.values():
        if len(idx) == 1:
            out.append(clusters[idx[0]])
            continue
        # a lit face's hue moved: the darker names the colour; a shaded underside within a
        # footprint is a small piece of it: the bigger names the colour
        namer = (min(idx, key=lambda k: float(np.median(clusters[k].hsv[:, 2])))
                 if lit_joined & set(idx) else max(idx, key=lambda k: clusters[k].points.shape[0]))
        parts = [replace(clusters[k], group=clusters[namer].group,
                         colour_mask=np.full(clusters[k].points.shape[0], k == namer))
                 for k in idx]
        out.append(functools.reduce(joined, parts))
    return out


STRIP_WIDTH = 0.03  # m: a cluster at most this wide ...
STRIP_ASPECT = 3.0  # ... and this many times as long is a strip (a marker's lit ridge)
STRIP_INSIDE = 0.95  # share of a piece's samples that must lie along a strip to be its face


def _along_strip(strip: Cluster, piece: Cluster, margin: float) -> bool:
    """Is ``strip`` long and thin, and does ``piece`` lie along it (within its length and
    width about its main axis, plus ``margin``)?"""
    xy = strip.points[:, :2]
    if xy.shape[0] < 3:
        return False
    major, along, across = _axes(xy)
    if across > STRIP_WIDTH or along < STRIP_ASPECT * max(across, 0.005):
        return False
    minor = np.array([-major[1], major[0]])
    t, s = xy @ major, xy @ minor
    pt, ps = piece.points[:, :2] @ major, piece.points[:, :2] @ minor
    inside = ((pt >= t.min() - margin) & (pt <= t.max() + margin)
              & (ps >= s.min() - margin) & (ps <= s.max() + margin))
    return float(np.mean(inside)) >= STRIP_INSIDE


RIM_PIECE_ASPECT = 0.65  # minor / major spread below which a piece is an arc of a rim
RIM_ROUND = 0.3  # the arcs' union spans across within this share of their length (round)
RIM_HEIGHT_DIFF = 0.015  # m: arcs of one rim stand about as high


def _axes(xy: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Major axis (unit xy) and the extents along it and across it."""
    centred = xy - xy.mean(axis=0)
    w, v = np.linalg.eigh(np.cov(centred.T) if xy.shape[0] > 2 else np.eye(2))
    major = v[:, int(np.argmax(w))]
    minor = np.array([-major[1], major[0]])
    return major, float(np.ptp(centred @ major)), float(np.ptp(centred @ minor))


def join_rim_pieces(clusters: list[Cluster]) -> list[Cluster]:
    """Join the arcs a container's rim broke into.

    Under strong depth noise a bowl's floor sinks below the noise floor and the rim's thin
    sides, seen nearly edge-on, drop out (holes at depth edges), so the rim falls apart into a
    near and a far arc: two flat, elongated clusters of one colour that measured as two plates
    (with much of the floor left on each side, two half discs: half as wide as long).
    Two such pieces of one colour group, lying side by side (parallel, offset across their
    long axes, together about as wide as they are long: ``RIM_ROUND``) and about as high,
    are one container. Two blocks are not elongated; a row of things lies along its axis."""
    groups = [c.group for c in clusters]
    shared = {g for g in groups if groups.count(g) > 1}
    if not shared:
        return clusters
    none = (np.zeros(2), 0.0, 1.0)  # not a candidate: never an arc
    shape = [_axes(c.points[:, :2]) if c.group in shared else none for c in clusters]
    arc = [minor < RIM_PIECE_ASPECT * major for _, major, minor in shape]
    mid = [float(np.median(c.heights)) if a else 0.0 for c, a in zip(clusters, arc, strict=True)]
    centre = [c.points[:, :2].mean(axis=0) for c in clusters]
    used: set[int] = set()
    out = []
    for i, a in enumerate(clusters):
        if i in used:
            continue
        for j in range(i + 1, len(clusters)):
            b = clusters[j]
            if j in used or not (arc[i] and arc[j]) or a.group != b.group:
                continue
            (ai, li, wi), (aj, lj, wj) = shape[i], shape[j]
            offset = centre[j] - centre[i]
            across = abs(float(offset @ np.array([-ai[1], ai[0]])))
            along = abs(float(offset @ ai))
            length = max(li, lj)
            if (abs(float(ai @ aj)) < 0.85 or along > 0.3 * length
                    or abs(across + (wi + wj) / 2 - length) > RIM_ROUND * length
                    or abs(mid[i] - mid[j]) > RIM_HEIGHT_DIFF):
                continue
            a = joined(a, b)
            used.add(j)
            break
        out.append(a)
    return out


def _cat(arrays: list[np.ndarray | None]) -> np.ndarray | None:
    """Per-point flags of merged clusters, None when any part has none."""
    present = [a for a in arrays if a is not None]
    return np.concatenate(present) if len(present) == len(arrays) else None


def joined(a: Cluster, b: Cluster) -> Cluster:
    """One cluster of the points of ``a`` and ``b`` (``a``'s colour group, the noisier one's
    noise level)."""
    def mask(c: Cluster) -> np.ndarray:
        return np.ones(c.points.shape[0], bool) if c.colour_mask is None else c.colour_mask

    return replace(a, points=np.concatenate([a.points, b.points]),
                   heights=np.concatenate([a.heights, b.heights]),
                   hsv=np.concatenate([a.hsv, b.hsv]), pixels=np.concatenate([a.pixels, b.pixels]),
                   colour_mask=None if a.colour_mask is None and b.colour_mask is None
                   else np.concatenate([mask(a), mask(b)]), clipped=_cat([a.clipped, b.clipped]),
                   flat=_cat([a.flat, b.flat]), sigma=max(a.sigma, b.sigma))


__all__ = ["hue_neighbours", "join_rim_pieces", "joined", "merge_lit_faces"]

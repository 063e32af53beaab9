"""Name what a measured cluster is: its category from the object catalogue, or ``unknown``.

The catalogue (``perception/catalogue.py``) matches the cluster's shape signature and colour.
Two things need more than one lookup: a tower of same-coloured blocks is one cluster that no
category matches, so a cluster much taller than wide is also tried as a stack of equal
cubes (``geometry.split_stack``), kept only when every piece matches a block and the
cluster is seen whole (a partly hidden one may be narrower than it is); and a block
seen by one face edge-on is completed to a square once it is known to be a block (before
that, a lemon or a marker must not be squared); likewise a bottle lying on its side, seen
only on the half turned to the camera, is completed to as wide as it is high. Without a
catalogue the size rules of ``geometry.measure`` name the first waves' shapes, as before.

Pieces: an unknown cluster that touches a recognised object is a piece of it (the arm or a
neighbour cut it), not an object; two unknown clusters of one colour (or of neighbouring hues:
a lit face) next to each other whose union the catalogue knows are that object.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from frankenbot import shapes
from frankenbot.perception.catalogue import LENGTH_END, TOP_END, ObjectCatalogue
from frankenbot.perception.colour import HUE_CENTRES, hue_adjacent
from frankenbot.perception.faces import hue_neighbours, joined
from frankenbot.perception.geometry import (
    Detection,
    ShapeRules,
    complete_block,
    complete_lying_round,
    split_stack,
)
from frankenbot.perception.segmentation import Cluster
from frankenbot.shapes import UNKNOWN

PART = "part"  # seen in part: something nearer borders it, or it stands on or in another
END = "end"  # a long thing whose end only is hidden
TOP = "top"  # a standing thing whose top only is hidden (a tall bottle's neck under the arm)
# grazed: a little of its outline bounded by nearer things: read whole, and as seen in part
# only where nothing matches it whole (a bowl whose neighbour cuts a chord off its outline)
GRAZED = "grazed"
# ... so it shows this much of the footprint of what it is named a part of (a block grazed by
# a neighbour, blocks held out, had fitted a third of a box of its colour)
GRAZED_MIN_SHARE = 0.6
IN_PART = (PART, END, TOP)
SMALL_OBJECT = 0.07  # m: the longest side of a "small" unknown object ...
LARGE_OBJECT = 0.16  # ... and from here on "large"


def recognise(det: Detection, catalogue: ObjectCatalogue | None, rules: ShapeRules,
              viewpoint: tuple[float, float] | None, partial: str = "") -> list[Detection]:
    """``det`` named by the catalogue (one detection, or the blocks of a tower); ``partial``:
    how the camera sees it in part (``perception/occlusion.py``): ``PART`` (bordered by
    nearer things), ``END`` (a long thing hidden at an end only), ``TOP`` (a standing
    thing hidden at its top only), ``GRAZED`` (a little
    bordered) or "" (whole)."""
    if catalogue is None or det.name:
        return split_stack(det, min_edge=rules.stack_min_edge)
    m = catalogue.match(det.signature, det.colour, partial in IN_PART, det.sigma,
                        sample_spacing(det),
                        end={END: LENGTH_END, TOP: TOP_END}.get(partial, ""))
    if m.category == UNKNOWN and partial == GRAZED:  # little hidden: most of it is seen
        m = catalogue.match(det.signature, det.colour, True, det.sigma, sample_spacing(det),
                            min_share=GRAZED_MIN_SHARE)
    if m.category != UNKNOWN:
        named = replace(det, shape=m.category, as_part=m.as_part)
        if m.category == "block" and viewpoint is not None:
            centre, width = complete_block(np.asarray(det.position[:2]), det.size[0],
                                           det.size[1], det.yaw, viewpoint)
            named = replace(named, position=(float(centre[0]), float(centre[1]),
                                             det.position[2]),
                            size=(det.size[0], width, det.size[2]))
        elif m.category in shapes.LIES_ROUND and viewpoint is not None:
            centre, width = complete_lying_round(np.asarray(det.position[:2]), det.size[0],
                                                 det.size[1], det.size[2], det.yaw, viewpoint)
            named = replace(named, position=(float(centre[0]), float(centre[1]),
                                             det.position[2]),
                            size=(det.size[0], width, det.size[2]))
        return [named]
    # a tower only when seen whole: a thing partly hidden behind another measures narrower
    # than it is, and a hidden bottle's thin visible strip is no tower of small cubes
    pieces = [] if partial in IN_PART else split_stack(replace(det, shape="block"),
                                            min_edge=rules.stack_min_edge)
    if len(pieces) > 1 and all(catalogue.match(p.signature, p.colour, sigma=p.sigma).category
                               == "block" for p in pieces):
        return pieces
    return [replace(det, shape=UNKNOWN, confidence=min(det.confidence, 0.5))]


def sample_spacing(det: Detection) -> float:
    """The mean distance (m) between neighbouring depth samples on ``det``'s footprint: its
    outline's area over its points."""
    sig = det.signature
    if sig is None or det.n_points <= 0:
        return 0.0
    return math.sqrt(max(sig.fill * sig.length * sig.width, 0.0) / det.n_points)


def size_word(size: tuple[float, float, float]) -> str:
    """small / medium / large by the longest side (an unknown object's label)."""
    longest = max(size)
    return "small" if longest < SMALL_OBJECT else "large" if longest >= LARGE_OBJECT else (
        "medium")


def unknown_label(colour: str, size: tuple[float, float, float]) -> str:
    """"small gray object": what a person can point to when nothing names it."""
    return " ".join(w for w in (size_word(size), colour, "object") if w)


PIECE_GAP = 0.02  # m between the footprints of two pieces of one object
HIDDEN_PIECE_GAP = 0.06  # ... and between two parts of one category something nearer hides
FRAGMENT_MARGIN = 0.01  # m: an unknown piece this close to a known object is a piece of it
HOLLOW_MID_DROP = 0.5  # an unknown object whose middle lies this far under its top is hollow


def is_hollow(det: Detection) -> bool:
    """An open container (the camera sees down into it: its rim, not its top centre, tells
    whether it is still there), known or not."""
    if det.shape in shapes.HOLLOW:
        return True
    return (det.shape == shapes.UNKNOWN and det.signature is not None
            and det.signature.mid_drop > HOLLOW_MID_DROP)


def overlaps(a: Detection, b: Detection, margin: float) -> bool:
    """Do ``a`` and ``b`` touch: their point samples (top-down) within ``margin`` of each
    other, or, without samples, their footprint rectangles (separating axes)?"""
    if a.points is not None and b.points is not None and len(a.points) and len(b.points):
        pa, pb = a.points[:, :2], b.points[:, :2]
        lo, hi = np.maximum(pa.min(axis=0), pb.min(axis=0)), np.minimum(pa.max(axis=0),
                                                                        pb.max(axis=0))
        if np.any(lo > hi + margin):
            return False
        d2 = ((pa[:, None, :] - pb[None, :, :]) ** 2).sum(axis=2)
        return bool(d2.min() <= margin * margin)
    def corners(d: Detection) -> np.ndarray:
        c, s = math.cos(d.yaw), math.sin(d.yaw)
        hx, hy = d.size[0] / 2 + margin / 2, d.size[1] / 2 + margin / 2
        local = np.array([(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)])
        return local @ np.array([[c, s], [-s, c]]) + np.asarray(d.position[:2])

    ca, cb = corners(a), corners(b)
    for d in (a, b):
        for ang in (d.yaw, d.yaw + math.pi / 2):
            axis = np.array([math.cos(ang), math.sin(ang)])
            pa, pb = ca @ axis, cb @ axis
            if pa.max() < pb.min() or pb.max() < pa.min():
                return False
    return True


def join_pieces(kept: list[tuple[Cluster, str]], supports: list[float | None],
                 hidden: list[str], per_cluster: list[list[Detection]], named: Any
                 ) -> list[list[Detection]]:
    """Two unknown clusters of one colour, next to each other, whose union the catalogue
    knows are one object: a mug's thin rim drops out at its sides under depth noise and its
    near and far walls fall apart into two arcs that match nothing alone. A piece named only
    as a part of something joins too (a bright orange marker's lit half reads yellow: the
    orange half alone is part of a marker, the two are the marker; a far plate broke in two
    in the noise band, each half part of a plate). Two parts of one category, each bordered
    by nearer things, join across a wider gap (``HIDDEN_PIECE_GAP``): what lies across the
    middle hides more of it."""
    unknown = [i for i, ds in enumerate(per_cluster)
               if len(ds) == 1 and (ds[0].shape == shapes.UNKNOWN or ds[0].as_part)
               and not ds[0].name]
    if len(unknown) < 2:
        return per_cluster
    lo = {i: kept[i][0].points[:, :2].min(axis=0) for i in unknown}
    hi = {i: kept[i][0].points[:, :2].max(axis=0) for i in unknown}
    out = list(per_cluster)
    used: set[int] = set()
    for a in unknown:
        for b in unknown:
            if b <= a or a in used or b in used:
                continue
            ca, cb = kept[a][0], kept[b][0]
            same = ca.group == cb.group and per_cluster[a][0].colour == per_cluster[b][0].colour
            if not (same or hue_neighbours(ca.group, cb.group)):
                continue  # (a lit face that clipped into the next hue is one of its faces)
            da, db = per_cluster[a][0], per_cluster[b][0]
            # two parts of one category, each bordered by nearer things: what lies across
            # the middle hides more of it (a spatula whose middle a nearer thing hid: 4 cm)
            reach = (HIDDEN_PIECE_GAP if da.as_part and db.as_part and da.shape == db.shape
                     and hidden[a] in IN_PART and hidden[b] in IN_PART else PIECE_GAP)
            if np.any(lo[a] > hi[b] + reach) or np.any(lo[b] > hi[a] + reach):
                continue
            sup = supports[a] if supports[a] == supports[b] else None
            if not same:  # the bigger piece (the body, not its lit face) names the colour
                big_a = ca.points.shape[0] >= cb.points.shape[0]
                ca = replace(ca, colour_mask=np.full(ca.points.shape[0], big_a))
                cb = replace(cb, group=ca.group, colour_mask=np.full(cb.points.shape[0],
                                                                     not big_a))
            union = named(joined(ca, cb), kept[a][1], sup,
                          PART if hidden[a] in IN_PART or hidden[b] in IN_PART else "")
            if len(union) == 1 and union[0].shape != shapes.UNKNOWN and (
                    not union[0].as_part or {per_cluster[a][0].shape, per_cluster[b][0].shape}
                    & {shapes.UNKNOWN, union[0].shape}):
                out[a], out[b] = union, []
                used |= {a, b}
    return out


HUE_TWIN_DISTANCE = 0.03  # m between the centres of one object's two hue readings


def hue_twins(a: Detection, b: Detection) -> bool:
    """One object read in two neighbouring hues (a clipped orange reads yellow): the same
    category, centres within ``HUE_TWIN_DISTANCE``."""
    return (a.shape == b.shape and hue_adjacent(a.colour, b.colour)
            and math.dist(a.position, b.position) <= HUE_TWIN_DISTANCE)


def washed_out(a: Detection, b: Detection) -> bool:
    """``a`` is ``b``'s lit part read white: the same category at one place (centres within
    ``HUE_TWIN_DISTANCE``), ``a`` white and ``b`` of a hue (a pale pink plate's highlights lose
    their colour and made a white plate lying in the pink one; a white thing's light does not
    turn pink)."""
    return (a.shape == b.shape and a.colour == "white" and b.colour in HUE_CENTRES
            and math.dist(a.position, b.position) <= HUE_TWIN_DISTANCE)


def without_fragments(dets: list[Detection]) -> list[Detection]:
    """Unknown detections touching a recognised one in the same frame are pieces of it; of
    two of one category in neighbouring hues at one place (a mug's lit side read yellow, the
    rest orange, each matching a mug), the one of fewer samples is a face of the other, and
    of a white one and one of a hue there, the white one (``washed_out``); and
    one named only as a part whose centre lies within a whole one of its colour and category
    is a piece of that one (a plate's edge fell apart from it in the noise band)."""
    known = [d for d in dets if d.shape != shapes.UNKNOWN]

    def face(d: Detection) -> bool:
        return any(k is not d and (
            (hue_twins(k, d) and k.n_points > d.n_points) or washed_out(d, k)
            or (k.shape == d.shape and d.as_part and not k.as_part and k.colour == d.colour
                and math.dist(k.position[:2], d.position[:2]) <= max(k.size[:2]) / 2))
            for k in known)
    return [d for d in dets if d.name or (
        not face(d) if d.shape != shapes.UNKNOWN
        else not any(overlaps(d, k, FRAGMENT_MARGIN) for k in known))]

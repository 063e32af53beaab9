"""Name what a measured cluster is: its category from the object catalogue, or ``unknown``.

The catalogue (``perception/catalogue.py``) matches the cluster's shape signature and colour.
Two things need more than one lookup: a tower of same-coloured blocks is one cluster that no
category matches, so a cluster much taller than wide is also tried as a stack of equal
cubes (``geometry.split_stack``), kept only when every piece matches a block; and a block
seen by one face edge-on is completed to a square once it is known to be a block (before
that, a lemon or a marker must not be squared). Without a catalogue the size rules of
``geometry.measure`` name the first waves' shapes, as before.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from frankenbot.perception.catalogue import ObjectCatalogue
from frankenbot.perception.geometry import Detection, ShapeRules, complete_block, split_stack
from frankenbot.shapes import UNKNOWN

SMALL_OBJECT = 0.07  # m: the longest side of a "small" unknown object ...
LARGE_OBJECT = 0.16  # ... and from here on "large"


def recognise(det: Detection, catalogue: ObjectCatalogue | None, rules: ShapeRules,
              viewpoint: tuple[float, float] | None, partial: bool = False) -> list[Detection]:
    """``det`` named by the catalogue (one detection, or the blocks of a tower); ``partial``:
    the camera sees it only in part (``perception/occlusion.py``)."""
    if catalogue is None or det.name:
        return split_stack(det, min_edge=rules.stack_min_edge)
    m = catalogue.match(det.signature, det.colour, partial)
    if m.category != UNKNOWN:
        named = replace(det, shape=m.category)
        if m.category == "block" and viewpoint is not None:
            centre, width = complete_block(np.asarray(det.position[:2]), det.size[0],
                                           det.size[1], det.yaw, viewpoint)
            named = replace(named, position=(float(centre[0]), float(centre[1]),
                                             det.position[2]),
                            size=(det.size[0], width, det.size[2]))
        return [named]
    pieces = split_stack(replace(det, shape="block"), min_edge=rules.stack_min_edge)
    if len(pieces) > 1 and all(catalogue.match(p.signature, p.colour).category == "block"
                               for p in pieces):
        return pieces
    return [replace(det, shape=UNKNOWN, confidence=min(det.confidence, 0.5))]


def size_word(size: tuple[float, float, float]) -> str:
    """small / medium / large by the longest side (an unknown object's label)."""
    longest = max(size)
    return "small" if longest < SMALL_OBJECT else "large" if longest >= LARGE_OBJECT else (
        "medium")


def unknown_label(colour: str, size: tuple[float, float, float]) -> str:
    """"small gray object": what a person can point to when nothing names it."""
    return " ".join(w for w in (size_word(size), colour, "object") if w)

"""An object's shape signature: the handful of numbers a depth camera measures of it that tell
one category from another.

Seen from one oblique camera, only an object's top and near sides show. What still tells a
mug from a can, a bottle from a carton or a basket from a tray is measured from the top-down
footprint of those points and their heights over the surface the object stands on:

* ``length``, ``width``: the footprint's robust rectangle (long side first), metres;
* ``height``: top face over the support (the table, a fixture's top, a drawer's floor);
* ``fill``: footprint hull area over the rectangle's: 1 for a box, about 0.8 for a disc,
  lower for a mug's body with its handle;
* ``top_share``: the share of the footprint that reaches the top (a flat top: most of it; a
  dome: a cap; a bottle: its neck; a container: its rim);
* ``mid_drop``: how far the middle of the footprint lies below the top, over the height (0
  for a solid, near 1 for a container seen into, or one whose middle is not seen at all);
* ``end_ratio``: the narrower end of the footprint over the wider one, along its length (1
  for a box or a can, low for a mug seen with its handle, a lying bottle's neck).

Each is a plain float so the catalogue (``perception/catalogue.py``) can store the mean and
spread measured at enrolment and match against them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Mapping

import numpy as np

GRID = 0.005  # m: top-down cells of the height map
END_SLAB = 0.2  # share of the length at each end for end_ratio ...
END_MIN = 0.012  # m: ... or this, whichever is more
MID_SHARE = 0.15  # the middle: within this share of the length and width of the centre ...
MID_MIN = 0.008  # m: ... or this, whichever is more
TOP_BAND = 0.12  # of the height: cells this close to the top reach it
MIN_BAND = 0.004  # m: ... but never a band thinner than this (or 3 noise sigma)


@dataclass(frozen=True)
class Signature:
    """One view's measured signature (see the module docstring)."""

    length: float
    width: float
    height: float
    fill: float
    top_share: float
    mid_drop: float
    end_ratio: float

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def values(self) -> tuple[float, ...]:
        return tuple(float(getattr(self, n)) for n in self.names())

    def as_dict(self) -> dict[str, float]:
        return {n: round(float(getattr(self, n)), 5) for n in self.names()}

    @classmethod
    def from_mapping(cls, data: Mapping[str, float]) -> "Signature":
        return cls(**{n: float(data[n]) for n in cls.names()})


def measure_signature(points: np.ndarray, heights: np.ndarray, centre: np.ndarray,
                      yaw: float, length: float, width: float, top: float, support: float,
                      hull_area: float, sigma: float = 0.0) -> Signature:
    """The signature of one cluster: ``points`` (base xyz) with ``heights`` over the table;
    ``centre``, ``yaw``, ``length``, ``width`` its footprint rectangle; ``top`` its top face's
    height over the table, ``support`` that of the surface it stands on; ``hull_area`` its
    footprint's convex hull area; ``sigma`` the depth noise at its range."""
    height = max(top - support, 0.003)
    c, s = math.cos(yaw), math.sin(yaw)
    rel = points[:, :2] - centre
    u = rel @ np.array([c, s])  # along the length
    v = rel @ np.array([-s, c])  # across
    fill = float(min(hull_area / max(length * width, 1e-9), 1.0))
    # height map: the highest sample in each top-down cell
    iu = np.floor(u / GRID).astype(np.int64)
    iv = np.floor(v / GRID).astype(np.int64)
    key = (iu - iu.min()) * 100_003 + (iv - iv.min())
    order = np.argsort(key, kind="stable")
    k_sorted = key[order]
    starts = np.flatnonzero(np.r_[True, k_sorted[1:] != k_sorted[:-1]])
    cell_max = np.maximum.reduceat(heights[order], starts)
    cell_u = u[order][starts]
    cell_v = v[order][starts]
    band = max(TOP_BAND * height, MIN_BAND, 3.0 * sigma)
    top_share = float(np.mean(cell_max >= top - band)) if cell_max.size else 0.0
    mid = ((np.abs(cell_u) <= max(MID_SHARE * length, MID_MIN))
           & (np.abs(cell_v) <= max(MID_SHARE * width, MID_MIN)))
    if np.any(mid):
        # a middle seen in only a cell or two (a far or half-hidden top sampled ~7 mm apart)
        # is still seen: calling it unseen made a block's top a container seen into
        mid_drop = float(np.clip((top - float(np.median(cell_max[mid]))) / height, 0.0, 1.0))
    else:
        mid_drop = 1.0  # the middle is not seen at all: the camera looks into it
    slab = max(END_SLAB * length, END_MIN)
    ends = []
    for lo, hi in ((-length / 2, -length / 2 + slab), (length / 2 - slab, length / 2)):
        sel = (u >= lo) & (u <= hi)
        if np.count_nonzero(sel) >= 3:
            p5, p95 = np.percentile(v[sel], (5, 95))
            ends.append(float(p95 - p5))
    # an end with too few samples to measure says nothing about a handle (a small object)
    end_ratio = float(min(ends) / max(max(ends), 1e-9)) if len(ends) == 2 else 1.0
    return Signature(length=float(length), width=float(width), height=float(height),
                     fill=fill, top_share=top_share, mid_drop=mid_drop, end_ratio=end_ratio)

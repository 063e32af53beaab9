"""Which clusters the camera sees only in part (`perception.occlusion`), on synthetic depth."""

from __future__ import annotations

import numpy as np
import pytest

from frankenbot.perception.occlusion import occluded_shares
from frankenbot.perception.segmentation import Cluster

H, W = 120, 160
TABLE, OBJECT, NEARER = 1000, 980, 900  # mm


def _cluster(rows: slice, cols: slice) -> Cluster:
    rr, cc = np.mgrid[rows, cols]
    pixels = np.stack([rr.ravel(), cc.ravel()], axis=1)
    n = pixels.shape[0]
    return Cluster(np.zeros((n, 3)), np.full(n, 0.02), np.zeros((n, 3)), pixels, 0)


def _scene(rows: slice, cols: slice) -> np.ndarray:
    depth = np.full((H, W), TABLE, dtype=np.uint16)
    depth[rows, cols] = OBJECT
    return depth


def test_a_long_thing_hidden_at_one_end_has_a_hidden_end_not_a_hidden_outline() -> None:
    bar = (slice(55, 63), slice(30, 110))  # 80 x 8 pixels
    depth = _scene(*bar)
    depth[50:70, 104:125] = NEARER  # a bowl over its right end
    seen = _cluster(bar[0], slice(30, 104))  # the part the camera sees
    (share, end, _top), = occluded_shares([seen], depth, 1)
    assert share < 0.1 and end > 0.6


def test_a_long_thing_in_the_open_and_a_square_bordered_on_one_side() -> None:
    bar = (slice(55, 63), slice(30, 110))
    (share, end, _top), = occluded_shares([_cluster(*bar)], _scene(*bar), 1)
    assert share == 0.0 and end == 0.0
    square = (slice(40, 70), slice(60, 90))
    depth = _scene(*square)
    depth[40:70, 90:100] = NEARER  # something nearer along its right side
    (share, end, _top), = occluded_shares([_cluster(*square)], depth, 1)
    assert share == pytest.approx(0.25, abs=0.05) and end == 0.0  # not long: no ends


def test_no_depth_return_beyond_an_end_hides_where_it_ends() -> None:
    """The arm's IR shadow beside a spatula's end: no return there, so its end is not seen."""
    bar = (slice(55, 63), slice(30, 110))
    depth = _scene(*bar)
    depth[50:70, 110:125] = 0
    (share, end, _top), = occluded_shares([_cluster(*bar)], depth, 1)
    assert share < 0.1 and end > 0.6


def test_a_hidden_end_high_over_the_other_is_a_standing_things_top() -> None:
    """An oblique camera sees a standing bottle's side run up the image from its foot to its
    neck: the arm over the neck hides its top, not a lying thing's end."""
    bar = (slice(30, 110), slice(60, 68))  # 8 x 80 pixels, its foot at the image bottom
    depth = _scene(*bar)
    depth[20:36, 50:80] = NEARER  # the arm over its upper end
    rows = slice(36, 110)
    seen = _cluster(rows, bar[1])
    rr = np.mgrid[rows, bar[1]][0].ravel()
    standing = Cluster(seen.points, (110 - rr) * 0.0025, seen.hsv, seen.pixels, 0)
    (_share, end, top), = occluded_shares([standing], depth, 1)
    assert end > 0.6 and top
    (_share, end, top), = occluded_shares([seen], depth, 1)  # lying: one height along it
    assert end > 0.6 and not top

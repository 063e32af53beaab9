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
    occ, = occluded_shares([seen], depth, 1)
    share, end = occ.outline, occ.end
    assert share < 0.1 and end > 0.6


def test_a_long_thing_in_the_open_and_a_square_bordered_on_one_side() -> None:
    bar = (slice(55, 63), slice(30, 110))
    occ, = occluded_shares([_cluster(*bar)], _scene(*bar), 1)
    share, end = occ.outline, occ.end
    assert share == 0.0 and end == 0.0
    square = (slice(40, 70), slice(60, 90))
    depth = _scene(*square)
    depth[40:70, 90:100] = NEARER  # something nearer along its right side
    occ, = occluded_shares([_cluster(*square)], depth, 1)
    share, end = occ.outline, occ.end
    assert share == pytest.approx(0.25, abs=0.05) and end == 0.0  # not long: no ends


def test_no_depth_return_beyond_an_end_hides_where_it_ends() -> None:
    """The arm's IR shadow beside a spatula's end: no return there, so its end is not seen."""
    bar = (slice(55, 63), slice(30, 110))
    depth = _scene(*bar)
    depth[50:70, 110:125] = 0
    occ, = occluded_shares([_cluster(*bar)], depth, 1)
    share, end = occ.outline, occ.end
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
    occ, = occluded_shares([standing], depth, 1)
    end, top = occ.end, occ.top
    assert end > 0.6 and top
    occ, = occluded_shares([seen], depth, 1)  # lying: one height along it
    end, top = occ.end, occ.top
    assert end > 0.6 and not top


def _standing(rows: slice, cols: slice, foot: int) -> Cluster:
    """A standing thing seen obliquely: its points higher the further up the image they lie."""
    flat = _cluster(rows, cols)
    rr = flat.pixels[:, 0]
    xy = flat.pixels[:, ::-1] * 0.002  # its footprint: 2 mm a pixel
    return Cluster(np.c_[xy, np.zeros(len(rr))], (foot - rr) * 0.004, flat.hsv, flat.pixels, 0)


def test_a_thing_bordered_only_beside_its_highest_points_is_hidden_at_its_top() -> None:
    """A bottle under the gripper, its outline in the image not long: what is nearer borders
    only its top, so its height, not its footprint, is what measures short."""
    body = (slice(50, 90), slice(60, 85))  # 40 x 25 pixels: not a long outline
    depth = _scene(*body)
    depth[40:50, 66:79] = NEARER  # the gripper just over its highest points
    occ, = occluded_shares([_standing(*body, foot=90)], depth, 1)
    assert occ.top_only and occ.end == 0.0
    side = _scene(*body)
    side[50:90, 85:92] = NEARER  # something nearer along its side instead
    occ, = occluded_shares([_standing(*body, foot=90)], side, 1)
    assert not occ.top_only and occ.outline > 0.1
    both = depth.copy()
    both[50:90, 85:92] = NEARER  # at its top and along its side: seen in part
    occ, = occluded_shares([_standing(*body, foot=90)], both, 1)
    assert not occ.top_only
    occ, = occluded_shares([_standing(*body, foot=90)], _scene(*body), 1)  # in the open
    assert not occ.top_only and occ.outline == 0.0
    low = _standing(*body, foot=90)  # as low as a plate: its highest points are no top
    low = Cluster(low.points, low.heights * 0.1, low.hsv, low.pixels, 0)
    occ, = occluded_shares([low], depth, 1)
    assert not occ.top_only


def test_a_rim_all_round_is_no_top_apart_from_the_rest() -> None:
    """A bowl's highest points are its rim, all of its outline: a neighbour grazing it hides
    no top of it."""
    bowl = (slice(40, 80), slice(50, 100))
    depth = _scene(*bowl)
    depth[76:84, 60:90] = NEARER
    cluster = _cluster(*bowl)
    rr, cc = cluster.pixels[:, 0], cluster.pixels[:, 1]
    rim = (rr < 44) | (rr > 75) | (cc < 54) | (cc > 95)
    bowl_c = Cluster(cluster.points, np.where(rim, 0.05, 0.01), cluster.hsv, cluster.pixels, 0)
    occ, = occluded_shares([bowl_c], depth, 1)
    assert not occ.top_only and occ.outline > 0.0


def test_a_thing_whose_lowest_seen_points_something_nearer_borders_has_its_foot_hidden() -> None:
    """A bottle behind another: the nearer one hides its foot (not its top)."""
    body = (slice(30, 90), slice(60, 80))
    depth = _scene(*body)
    depth[90:110, 55:85] = NEARER  # the bottle in front, over its lower end in the image
    seen = _standing(slice(30, 90), body[1], foot=110)  # its foot (rows 90-110) unseen
    occ, = occluded_shares([seen], depth, 1)
    assert occ.foot and not occ.top_only
    top = _scene(*body)
    top[20:30, 62:78] = NEARER  # the gripper over its top instead
    occ, = occluded_shares([seen], top, 1)
    assert not occ.foot and occ.top_only

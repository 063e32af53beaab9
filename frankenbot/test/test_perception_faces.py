"""Segmentation under clipping and strong depth noise: an object's lit face cut off by its hue,
a bowl's rim broken into two arcs, a bowl whose floor sank into the noise (synthetic clusters
and pixels; the sensor-level behaviour is scored by ``frankenbot perception eval``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from frankenbot.perception.colour import (
    SEG_NAMES,
    name_colour,
    rgb_to_hsv,
    top_brightness,
    unclip_red_hue,
)
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.faces import join_rim_pieces, merge_lit_faces
from frankenbot.perception.geometry import measure
from frankenbot.perception.segmentation import ACHROMATIC_GROUP, Cluster
from frankenbot.perception.segmentation import _cluster as cluster_points

CONFIG = PerceptionConfig()
GROUP = {n: i for i, n in enumerate(SEG_NAMES)}
rng = np.random.default_rng(0)


def _cluster(xy_lo, xy_hi, h_lo, h_hi, colour, hue, value, n=120, ring=None) -> Cluster:
    """Points uniform in a box (or, with ``ring=(cx, cy, r_in, r_out)``, in an annulus) with one
    HSV colour."""
    if ring is None:
        xy = rng.uniform(xy_lo, xy_hi, (n, 2))
    else:
        cx, cy, r_in, r_out = ring
        a = rng.uniform(*xy_lo, n)  # xy_lo: the arc's angle span (radians)
        r = rng.uniform(r_in, r_out, n)
        xy = np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], axis=1)
    h = rng.uniform(h_lo, h_hi, n)
    pts = np.column_stack([xy, 0.75 + h])
    hsv = np.tile(np.array([hue, 0.9, value], np.float32), (n, 1))
    return Cluster(pts, h, hsv, np.zeros((n, 2), int), GROUP[colour],
                   clipped=np.full(n, value > 0.85))


def _names(clusters):
    return sorted(name_colour(*c.colour_pixels()) for c in clusters)


def test_a_lit_top_cut_off_by_its_hue_joins_its_block_and_the_sides_name_it():
    sides = _cluster((0.40, 0.00), (0.44, 0.04), 0.002, 0.036, "orange", 28.0, 0.6)
    top = _cluster((0.401, 0.001), (0.439, 0.039), 0.036, 0.040, "yellow", 48.0, 0.9)
    out = merge_lit_faces([sides, top], CONFIG)
    assert len(out) == 1 and _names(out) == ["orange"]
    assert out[0].points.shape[0] == sides.points.shape[0] + top.points.shape[0]


def test_neighbouring_hues_that_are_separate_objects_stay_apart():
    orange = _cluster((0.40, 0.00), (0.44, 0.04), 0.0, 0.040, "orange", 28.0, 0.6)
    beside = _cluster((0.441, 0.00), (0.481, 0.04), 0.0, 0.040, "yellow", 53.0, 0.8)
    on_top = _cluster((0.40, 0.00), (0.44, 0.04), 0.041, 0.080, "yellow", 53.0, 0.8)
    bowl = _cluster((0.35, -0.05), (0.50, 0.10), 0.0, 0.05, "red", 2.0, 0.5, n=400)
    for pair in ([orange, beside], [orange, on_top], [bowl, orange]):
        assert len(merge_lit_faces(pair, CONFIG)) == 2
    assert _names(merge_lit_faces([orange, beside], CONFIG)) == ["orange", "yellow"]


def test_a_shaded_underside_within_a_lemons_footprint_joins_it_and_the_top_names_it():
    """A yellow lemon's shaded lower side read orange, a small piece within its footprint
    (their union too wide for a lit face): one yellow lemon, not a yellow thing standing on an
    orange one. A block lying in a bowl of a neighbouring hue is no face of the bowl."""
    top = _cluster((0.346, 0.098), (0.407, 0.162), 0.027, 0.061, "yellow", 50.0, 0.8, n=86)
    under = _cluster((0.364, 0.096), (0.403, 0.137), 0.017, 0.040, "orange", 30.0, 0.55, n=21)
    out = merge_lit_faces([top, under], CONFIG)
    assert len(out) == 1 and _names(out) == ["yellow"]
    bowl = _cluster((0.35, -0.05), (0.50, 0.10), 0.0, 0.05, "pink", 340.0, 0.7, n=400)
    block = _cluster((0.40, 0.00), (0.44, 0.04), 0.008, 0.048, "red", 2.0, 0.6)
    assert len(merge_lit_faces([bowl, block], CONFIG)) == 2


def test_the_two_arcs_of_a_broken_rim_are_one_container_and_two_blocks_are_not():
    ring = (0.5, 0.1, 0.062, 0.075)
    near = _cluster((np.pi / 2 + 0.4, 3 * np.pi / 2 - 0.4), None, 0.02, 0.05, "green", 125.0,
                    0.6, ring=ring)
    far = _cluster((-np.pi / 2 + 0.4, np.pi / 2 - 0.4), None, 0.02, 0.05, "green", 125.0, 0.6,
                   ring=ring)
    joined = join_rim_pieces([near, far])
    assert len(joined) == 1
    bowl = measure(joined[0])
    assert bowl.shape == "bowl", bowl
    assert np.hypot(bowl.position[0] - 0.5, bowl.position[1] - 0.1) < 0.01
    assert measure(near).shape != "bowl"  # an arc alone is not the bowl
    a = _cluster((0.40, 0.00), (0.44, 0.04), 0.0, 0.04, "green", 125.0, 0.6)
    b = _cluster((0.40, 0.06), (0.44, 0.10), 0.0, 0.04, "green", 125.0, 0.6)
    assert len(join_rim_pieces([a, b])) == 2


def test_a_bowl_split_into_two_thick_halves_is_one_bowl():
    """Under realistic noise a bowl's sides, seen edge-on, can drop out while much of its floor
    stays: the two pieces are half discs, half as wide as long (a red bowl in full view had
    been lost this way: two 14 x 7 cm pieces, each measured as an unknown)."""
    ring = (0.4, 0.15, 0.0, 0.075)
    near = _cluster((np.pi / 2 + 0.15, 3 * np.pi / 2 - 0.15), None, 0.01, 0.05, "red", 2.0,
                    0.6, n=300, ring=ring)
    far = _cluster((-np.pi / 2 + 0.15, np.pi / 2 - 0.15), None, 0.01, 0.05, "red", 2.0, 0.6,
                   n=300, ring=ring)
    joined = join_rim_pieces([near, far])
    assert len(joined) == 1
    assert np.hypot(*(joined[0].points[:, :2].mean(axis=0) - (0.4, 0.15))) < 0.01


def test_a_ring_whose_lower_walls_sank_into_noise_is_a_bowl_not_a_raised_plate():
    ring = _cluster((0.0, 2 * np.pi), None, 0.025, 0.05, "blue", 225.0, 0.6, n=600,
                    ring=(0.5, 0.1, 0.062, 0.075))
    d = measure(ring)
    assert d.shape == "bowl" and d.size[2] > 0.04, d


def test_clipped_pixels_do_not_name_an_object_that_shows_unclipped_ones():
    shaded = rgb_to_hsv(np.array([[200, 100, 10]] * 30, np.uint8))  # orange, 28 degrees
    lit = rgb_to_hsv(np.array([[255, 240, 10]] * 90, np.uint8))  # red clipped: reads 56
    px = np.concatenate([shaded, lit])
    clipped = np.r_[np.zeros(30, bool), np.ones(90, bool)]
    assert name_colour(px) == "yellow"  # the clipped majority alone says yellow
    assert name_colour(px, clipped) == "orange"


def test_a_clipped_yellow_is_not_turned_orange():
    raw = np.array([[255, 228, 30]] * 10, np.uint8)  # a lit yellow: red clipped, 54 degrees
    hsv = rgb_to_hsv(raw)
    unclip_red_hue(hsv, raw)
    assert name_colour(hsv) == "yellow"


def test_a_thin_white_rim_over_darker_walls_is_white_and_a_gray_bins_lit_rim_is_not():
    """Brightness over the table's (0.8), as measured under the D435-like model: a white
    mug's top band is its lit rim (a fifth of it) and the walls just under it; a gray bin's
    band reaches as bright at its lit edge, but most of the bin is dark."""
    table = 0.8
    mug_band = np.r_[np.full(80, 0.66), np.full(20, 0.96)]
    mug_all = np.r_[mug_band, np.full(200, 0.62)]
    assert float(np.percentile(mug_band, 75)) / table < 0.96  # the plain top reading: gray
    ratio = top_brightness(mug_band, mug_all, table)
    assert ratio >= 1.0
    assert name_colour(np.c_[np.zeros(300), np.zeros(300), mug_all], top_ratio=ratio) == "white"
    bin_band = np.r_[np.full(85, 0.68), np.full(15, 0.81)]
    bin_all = np.r_[bin_band, np.full(300, 0.34)]
    ratio = top_brightness(bin_band, bin_all, table)
    assert ratio < 0.96
    assert name_colour(np.c_[np.zeros(400), np.zeros(400), bin_all], top_ratio=ratio) == "gray"


def _plate_foreground(band_height: float):
    """A white plate's depth fragment (12 mm, 40 samples that cleared the noise) and 400
    noise-band samples of its colour around it at ``band_height`` on average."""
    from frankenbot.perception.segmentation import Foreground

    n_frag, n_band = 40, 400
    frag_xy = rng.uniform((0.50, 0.05), (0.53, 0.08), (n_frag, 2))
    a, r = rng.uniform(0, 2 * np.pi, n_band), 0.09 * np.sqrt(rng.uniform(0, 1, n_band))
    band_xy = np.stack([0.5 + r * np.cos(a), 0.1 + r * np.sin(a)], axis=1)
    xy = np.vstack([frag_xy, band_xy])
    h = np.r_[rng.normal(0.017, 0.002, n_frag), rng.normal(band_height, 0.004, n_band)]
    n = xy.shape[0]
    hsv = np.tile(np.array([0.0, 0.02, 0.95], np.float32), (n, 1))
    return Foreground(np.column_stack([xy, 0.75 + h]), h, hsv, np.zeros((n, 2), int),
                      np.full(n, GROUP["achromatic"]), np.full(n, 1.1), 0.005, -1,
                      np.zeros(n, bool), np.r_[np.zeros(n_frag, bool), np.ones(n_band, bool)])


def test_a_plate_fragment_grows_with_its_colour_in_the_noise_band_a_patch_does_not():
    from frankenbot.perception.segmentation import _grow_flat

    for band_height, grows in ((0.009, True), (0.0, False)):
        fg = _plate_foreground(band_height)
        seed = Cluster(fg.points[:40], fg.heights[:40], fg.hsv[:40], fg.pixels[:40],
                       GROUP["achromatic"])
        (out,) = _grow_flat([seed], fg, np.flatnonzero(fg.flat), CONFIG)
        assert (out.points.shape[0] > 300) is grows, (band_height, out.points.shape)
        if grows:
            d = measure(out)
            assert d.shape == "plate", d
            assert np.hypot(d.position[0] - 0.5, d.position[1] - 0.1) < 0.015, d.position


def test_low_fingertips_beside_a_plate_do_not_join_it_through_the_arm_above():
    """The arm above a white plate shares one top-down component with the plate and with the
    gripper's dark fingertips (achromatic too) lowered beside it; cut by height, each band is
    cut again into what it connects on its own, so the plate keeps its own outline (the plate
    had grown 15 cm towards the gripper, and a block placed "next to" it landed too far)."""
    n_plate, n_arm, n_tip = 900, 900, 60
    a = rng.uniform(0, 2 * np.pi, n_plate)
    r = 0.09 * np.sqrt(rng.uniform(0, 1, n_plate))
    plate = np.column_stack([0.48 + r * np.cos(a), -0.05 + r * np.sin(a),
                             rng.uniform(0.008, 0.013, n_plate)])
    # the forearm from above the plate to above the gripper, 25 cm up
    t = rng.uniform(0, 1, n_arm)
    arm = np.column_stack([0.48 + 0.12 * t + rng.uniform(-0.03, 0.03, n_arm),
                           -0.02 + 0.2 * t + rng.uniform(-0.03, 0.03, n_arm),
                           rng.uniform(0.22, 0.28, n_arm)])
    tip = np.column_stack([rng.uniform(0.59, 0.61, n_tip), rng.uniform(0.16, 0.19, n_tip),
                           rng.uniform(0.01, 0.04, n_tip)])
    pts = np.vstack([plate, arm, tip])
    heights = pts[:, 2].copy()
    hsv = np.vstack([np.tile([0.0, 0.0, 1.0], (n_plate + n_arm, 1)),
                     np.tile([120.0, 0.1, 0.2], (n_tip, 1))]).astype(np.float32)
    groups = np.full(len(pts), ACHROMATIC_GROUP)
    clusters = cluster_points(pts, heights, hsv, np.zeros((len(pts), 2), int), groups, CONFIG)
    low = [c for c in clusters if np.median(c.heights) < 0.05]
    spans = sorted(float(np.ptp(c.points[:, 1])) for c in low)
    assert spans[-1] < 0.19  # the plate alone (18 cm), not plate + fingertips (24 cm)
    assert not any((c.points[:, 1] > 0.1).any() and (c.points[:, 1] < 0.0).any() for c in low)
    assert any(float(np.median(c.heights)) > 0.2 for c in clusters)  # the arm, its own


def test_a_lying_bottle_seen_on_its_near_half_is_completed_away_from_the_camera():
    from frankenbot.perception.geometry import complete_lying_round

    # lying along x at y = 0, 6 cm across; the camera (at -y) measured 4.5 cm of it
    centre, width = complete_lying_round(np.array([0.6, -0.0075]), 0.16, 0.045, 0.06, 0.0,
                                         (0.6, -1.0))
    assert width == 0.06 and np.allclose(centre, [0.6, 0.0])
    # seen from the other side, completed the other way
    centre, _ = complete_lying_round(np.array([0.6, 0.0075]), 0.16, 0.045, 0.06, 0.0,
                                     (0.6, 1.0))
    assert np.allclose(centre, [0.6, 0.0])
    # an upright thing (as high as long) or one measured as wide as high is left alone
    assert complete_lying_round(np.array([0.6, 0.0]), 0.06, 0.05, 0.16, 0.0, (0.6, -1.0))[1] \
        == 0.05
    assert complete_lying_round(np.array([0.6, 0.0]), 0.16, 0.06, 0.06, 0.0, (0.6, -1.0))[1] \
        == 0.06


def test_a_lying_markers_lit_ridge_and_its_sides_are_one_marker_a_block_beside_it_is_not():
    """A lying orange marker lit along its ridge: the ridge reads yellow the whole length, its
    sides orange in pieces; pieces lying along the ridge strip are its faces (joined, named
    orange), a block of the neighbouring hue beside the marker stays its own object."""
    u, v = np.array([0.5 ** 0.5, 0.5 ** 0.5]), np.array([-0.5 ** 0.5, 0.5 ** 0.5])

    def strip(t0, t1, s0, s1, colour, hue, value, h=(0.014, 0.02), n=60) -> Cluster:
        t, s = rng.uniform(t0, t1, n), rng.uniform(s0, s1, n)
        xy = np.array([0.4, 0.0]) + t[:, None] * u + s[:, None] * v
        heights = rng.uniform(*h, n)
        return Cluster(np.column_stack([xy, 0.75 + heights]), heights,
                       np.tile(np.array([hue, 0.9, value], np.float32), (n, 1)),
                       np.zeros((n, 2), int), GROUP[colour], clipped=np.full(n, value > 0.85),
                       sigma=0.003)

    ridge = strip(0.0, 0.13, -0.004, 0.004, "yellow", 50.0, 0.95)
    near_end = strip(0.0, 0.05, 0.004, 0.009, "orange", 28.0, 0.7)
    far_end = strip(0.08, 0.13, -0.009, -0.004, "orange", 28.0, 0.7)
    out = merge_lit_faces([ridge, near_end, far_end], CONFIG)
    assert len(out) == 1 and _names(out) == ["orange"]
    assert out[0].sigma == 0.003
    block = strip(0.04, 0.08, 0.012, 0.052, "orange", 28.0, 0.7, h=(0.0, 0.04))
    assert len(merge_lit_faces([ridge, block], CONFIG)) == 2


def test_one_mug_read_in_two_hues_in_one_frame_is_one_mug():
    """A mug whose lit side reads yellow and the rest orange, each piece matching a mug, at
    one place: the one of fewer samples is a face of the other. Two mugs of neighbouring hues
    side by side, or a yellow block in an orange bowl, stay two."""
    from frankenbot.perception.geometry import Detection
    from frankenbot.perception.recognition import without_fragments

    def det(shape, colour, pos, n, size=(0.08, 0.06, 0.08)):
        return Detection(shape, colour, pos, size, 0.0, 0.9, n)

    body = det("mug", "yellow", (0.605, 0.035, 0.041), 300)
    side = det("mug", "orange", (0.603, 0.033, 0.037), 120)
    assert without_fragments([side, body]) == [body]
    other = det("mug", "orange", (0.52, 0.035, 0.041), 120)
    assert without_fragments([other, body]) == [other, body]
    bowl = det("bowl", "orange", (0.60, 0.03, 0.025), 500, (0.15, 0.15, 0.05))
    block = det("block", "yellow", (0.60, 0.03, 0.02), 80, (0.04, 0.04, 0.04))
    assert without_fragments([bowl, block]) == [bowl, block]
    # a plate's edge named only as a part of a plate, its centre within the whole plate of
    # its colour in the same frame, is a piece of it; a plate beside it is not
    plate = det("plate", "pink", (0.53, -0.074, 0.006), 400, (0.154, 0.152, 0.012))
    edge = replace(det("plate", "pink", (0.53, -0.105, 0.006), 150, (0.156, 0.097, 0.012)),
                   as_part=True)
    assert without_fragments([edge, plate]) == [plate]
    beside = replace(edge, position=(0.53, 0.10, 0.006))
    assert without_fragments([beside, plate]) == [beside, plate]
    # a pale pink plate whose highlights lost their colour also read as a white plate lying
    # in it: the white one is its lit part; a white plate beside it, or a white block on it
    # (another category), is kept
    white = det("plate", "white", (0.532, -0.062, 0.006), 500, (0.15, 0.15, 0.012))
    assert without_fragments([white, plate]) == [plate]
    assert without_fragments([replace(white, position=(0.53, 0.10, 0.006)), plate]) == [
        replace(white, position=(0.53, 0.10, 0.006)), plate]
    cube = det("block", "white", (0.53, -0.074, 0.032), 80, (0.04, 0.04, 0.04))
    assert without_fragments([cube, plate]) == [cube, plate]
    assert without_fragments([plate, white]) == [plate]  # whichever comes first

"""The object catalogue, shape signatures and fixture geometry, without a simulator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.errors import ConfigError
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.catalogue import (
    LENGTH_END,
    TOP_END,
    ObjectCatalogue,
    Prototype,
    enrol,
)
from frankenbot.perception.fixture_geometry import fixture_mask, map_shapes, support_height
from frankenbot.perception.recognition import GRAZED_MIN_SHARE, unknown_label
from frankenbot.perception.signature import Signature, measure_signature


def _sig(length=0.04, width=0.04, height=0.04, fill=0.9, top=0.9, mid=0.0, ends=0.9):
    return Signature(length, width, height, fill, top, mid, ends)


def _noisy(sig: Signature, rng: np.random.Generator, n: int = 12) -> list[Signature]:
    base = np.asarray(sig.values())
    scale = np.array([0.002, 0.002, 0.002, 0.02, 0.03, 0.02, 0.05])
    return [Signature(*(base + rng.normal(0, scale))) for _ in range(n)]


@pytest.fixture()
def catalogue() -> ObjectCatalogue:
    rng = np.random.default_rng(0)
    block = enrol("block", "red_block", "red", _noisy(_sig(), rng))
    can = enrol("can", "red_can", "red", _noisy(_sig(0.065, 0.061, 0.1, 0.8), rng))
    apple = enrol("apple", "red_apple", "red", _noisy(_sig(0.062, 0.047, 0.065, 0.78, 0.66),
                                                      rng))
    return ObjectCatalogue((block, can, apple), {"apple": ("red", "green")})


def test_an_object_is_named_by_the_nearest_prototype_that_accepts_it(catalogue):
    assert catalogue.match(_sig(0.041, 0.039, 0.04), "blue").category == "block"
    assert catalogue.match(_sig(0.066, 0.06, 0.099, 0.8), "green").category == "can"


def test_an_object_no_prototype_accepts_is_unknown_not_the_nearest(catalogue):
    m = catalogue.match(_sig(0.066, 0.06, 0.16, 0.8), "red")  # a can half as tall again
    assert m.category == "unknown" and m.nearest == "red_can"
    assert catalogue.without(["can"]).match(_sig(0.065, 0.061, 0.1, 0.8), "red").category == (
        "unknown")


def test_a_category_that_restricts_colours_refuses_others(catalogue):
    apple = _sig(0.062, 0.047, 0.065, 0.78, 0.66)
    assert catalogue.match(apple, "green").category == "apple"
    assert catalogue.match(apple, "blue").category == "unknown"


def test_the_catalogue_survives_a_round_trip_through_its_file(catalogue, tmp_path):
    path = tmp_path / "objects.yaml"
    catalogue.save(path)
    back = ObjectCatalogue.load(path)
    assert back.categories() == catalogue.categories()
    assert back.colours == catalogue.colours
    sig = _sig(0.041, 0.039, 0.04)
    assert back.match(sig).prototype == catalogue.match(sig).prototype


def test_enrolling_replaces_a_prototype_of_the_same_name(catalogue):
    rng = np.random.default_rng(1)
    bigger = enrol("block", "red_block", "red", _noisy(_sig(0.06, 0.06, 0.06), rng))
    cat = catalogue.with_prototype(bigger)
    assert len(cat.prototypes) == len(catalogue.prototypes)
    assert cat.match(_sig(0.06, 0.06, 0.06)).category == "block"


def test_bad_names_views_and_files_are_refused(tmp_path):
    with pytest.raises(ConfigError):
        enrol("Mug!", "x", "red", [_sig()] * 3)
    with pytest.raises(ConfigError):
        enrol("mug", "unknown", "red", [_sig()] * 3)
    with pytest.raises(ConfigError, match="at least 3"):
        enrol("mug", "red_mug", "red", [_sig()] * 2)
    bad = tmp_path / "objects.yaml"
    bad.write_text("prototypes:\n  - {category: mug, name: red_mug}\n")
    with pytest.raises(ConfigError, match="red_mug"):
        ObjectCatalogue.load(bad)
    with pytest.raises(ConfigError, match="not found"):
        ObjectCatalogue.load(tmp_path / "missing.yaml")


def test_an_unknown_object_is_labelled_by_size_and_colour():
    assert unknown_label("gray", (0.05, 0.04, 0.03)) == "small gray object"
    assert unknown_label("red", (0.09, 0.06, 0.08)) == "medium red object"
    assert unknown_label("", (0.3, 0.2, 0.1)) == "large object"


def _box_points(length: float, width: float, height: float, step: float = 0.003,
                hollow: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Samples of a box's top (or, hollow, its rim and floor) seen from above."""
    xs = np.arange(-length / 2, length / 2 + 1e-9, step)
    ys = np.arange(-width / 2, width / 2 + 1e-9, step)
    gx, gy = np.meshgrid(xs, ys)
    gx, gy = gx.ravel(), gy.ravel()
    h = np.full(gx.size, height)
    if hollow:
        inner = (np.abs(gx) < length / 2 - 0.01) & (np.abs(gy) < width / 2 - 0.01)
        h[inner] = 0.008
    pts = np.column_stack([gx + 0.5, gy, h])
    return pts, h


def test_a_solid_and_a_hollow_box_differ_in_their_signature():
    for hollow in (False, True):
        pts, h = _box_points(0.2, 0.15, 0.08, hollow=hollow)
        sig = measure_signature(pts, h, np.array([0.5, 0.0]), 0.0, 0.2, 0.15, 0.08, 0.0,
                                0.2 * 0.15)
        assert math.isclose(sig.height, 0.08, abs_tol=1e-6)
        assert sig.fill > 0.95 and sig.end_ratio > 0.9
        if hollow:
            assert sig.mid_drop > 0.8 and sig.top_share < 0.4
        else:
            assert sig.mid_drop < 0.05 and sig.top_share > 0.95


CABINET = {"fixtures": {"cabinet": {
    "shape": "cabinet", "colour": "brown", "position": [0.4, 0.5, 0.18],
    "size": [0.26, 0.3, 0.36], "yaw": 0.0, "top": True,
    "parts": {"top_drawer": {
        "kind": "drawer", "position": [0.4, 0.5, 0.3], "size": [0.24, 0.27, 0.1],
        "handle": [0.22, 0.5, 0.3], "bar": "horizontal", "axis": [-1, 0, 0], "travel": 0.16,
        "cavity_centre": [0.405, 0.5, 0.3], "cavity_size": [0.22, 0.25, 0.09]}}}}}


def test_fixture_points_are_masked_but_what_lies_in_an_open_drawer_or_on_top_is_not():
    fmap = FixtureMap.from_data(CABINET)
    closed = map_shapes(fmap, {})
    opened = map_shapes(fmap, {"top_drawer": 0.16})
    on_top = [0.4, 0.5, 0.39]  # 3 cm over the top
    top_face = [0.4, 0.5, 0.36]
    handle = [0.22, 0.5, 0.3]
    pulled_handle = [0.06, 0.5, 0.3]
    in_drawer = [0.3, 0.5, 0.3]  # over the floor of the pulled-out drawer
    pts = np.array([on_top, top_face, handle, pulled_handle, in_drawer])
    assert fixture_mask(closed, pts).tolist() == [False, True, True, False, True]
    assert fixture_mask(opened, pts).tolist() == [False, True, False, True, False]
    floor = 0.3 - 0.045
    assert math.isclose(support_height(opened, 0.3, 0.5, floor + 0.001), floor)
    assert math.isclose(support_height(closed, 0.4, 0.5, 0.361), 0.36)
    assert support_height(closed, 0.8, 0.0, 0.0) == 0.0


def test_what_stands_on_a_plate_raised_on_a_fixture_top_stands_on_the_plate():
    """A bowl on the stove's burner stands on the burner, a few millimetres over the stove's
    top; beside the burner on the top itself."""
    from frankenbot.sim import families
    from frankenbot.sim.tasks import FixturePlacement

    fmap = families.fixture_map((FixturePlacement("stove", 0.62, -0.33, 0.0),))
    shapes = map_shapes(fmap, {})
    stove = fmap.fixture("stove")
    burner = fmap.part("stove_burner")
    top = stove.position[2] + stove.size[2] / 2
    burner_top = burner.position[2] + burner.size[2] / 2
    assert burner_top > top + 0.002
    assert math.isclose(support_height(shapes, burner.position[0], burner.position[1],
                                       burner_top + 0.01), burner_top, abs_tol=1e-6)
    # the bowl's lowest seen point may lie under the burner's top (its wall curves in)
    assert math.isclose(support_height(shapes, burner.position[0], burner.position[1],
                                       top + 0.003), burner_top, abs_tol=1e-6)
    corner = (stove.position[0] - stove.size[0] / 2 + 0.01,
              stove.position[1] + stove.size[1] / 2 - 0.01)
    assert math.isclose(support_height(shapes, *corner, top + 0.01), top, abs_tol=1e-6)


def test_views_in_two_clear_modes_make_two_prototypes_of_one_object():
    """A lying bottle whose body hides its neck from some sides measures 4 cm shorter then."""
    from frankenbot.perception.catalogue import enrol_views

    rng = np.random.default_rng(2)
    whole = _noisy(_sig(0.162, 0.053, 0.056, 0.84, 0.7, 0.0, 0.45), rng, 16)
    short = _noisy(_sig(0.123, 0.057, 0.057, 0.85, 0.8, 0.0, 0.9), rng, 7)
    protos = enrol_views("bottle", "purple_bottle", "purple", whole + short)
    assert [p.name for p in protos] == ["purple_bottle", "purple_bottle_view2"]
    assert [p.views for p in protos] == [16, 7]
    cat = ObjectCatalogue().with_object(protos)
    assert cat.match(_sig(0.125, 0.056, 0.057, 0.85, 0.8, 0.0, 0.9)).category == "bottle"
    # enrolled again as one mode, the stale second prototype goes
    one = enrol_views("bottle", "purple_bottle", "purple", whole)
    assert [p.name for p in cat.with_object(one).prototypes] == ["purple_bottle"]


def test_a_partly_hidden_object_may_measure_short_but_never_long(catalogue):
    short_can = _sig(0.066, 0.040, 0.1, 0.8)  # its far half hidden
    assert catalogue.match(short_can).category == "unknown"
    assert catalogue.match(short_can, partial=True).category == "can"
    assert catalogue.match(short_can, partial=True).as_part  # named as a part of a can
    whole = catalogue.match(_sig(0.066, 0.066, 0.1, 0.8), partial=True)
    assert whole.category == "can" and not whole.as_part
    long_can = _sig(0.066, 0.090, 0.1, 0.8)
    assert catalogue.match(long_can, partial=True).category == "unknown"



def test_a_part_is_named_only_after_an_enrolled_thing_of_its_own_colour() -> None:
    """Half a brown box measures like a cube: seen in part, it is the brown box (an enrolled
    thing of its colour), not a block of no enrolled colour; a red cube partly seen with the
    blocks left out of the catalogue is unknown, not part of a box it shares no colour with."""
    rng = np.random.default_rng(2)
    block = enrol("block", "red_block", "red", _noisy(_sig(), rng))
    box = enrol("box", "brown_box", "brown", _noisy(_sig(0.09, 0.055, 0.04, 0.93, 0.96), rng))
    cat = ObjectCatalogue((block, box))
    cube = _sig(0.045, 0.045, 0.04)
    assert cat.match(cube, "brown").category == "block"  # seen whole: its shape names it
    red = cat.match(cube, "red", partial=True)
    assert red.category == "block" and not red.as_part
    brown = cat.match(cube, "brown", partial=True)
    assert brown.category == "box" and brown.as_part
    assert cat.without(["block"]).match(cube, "red", partial=True).category == "unknown"
    assert cat.without(["block"]).match(cube, "brown", partial=True).category == "box"
    assert cat.without(["block"]).match(cube, "", partial=True).category == "box"
    sliver = _sig(0.03, 0.03, 0.04)  # under a quarter of a box's footprint: no part of one
    assert cat.without(["block"]).match(sliver, "brown", partial=True).category == "unknown"
    # little of it hidden (a neighbour grazes it), a part must show most of what it is a
    # part of: a cube is no grazed box
    assert cat.without(["block"]).match(cube, "brown", partial=True,
                                        min_share=GRAZED_MIN_SHARE).category == "unknown"
    # ... and its height, which a part measures whole, must fit closely
    tol = box.tolerances()[Signature.names().index("height")]
    high = _sig(0.045, 0.045, box.mean.height + 0.9 * tol)
    assert cat.match(high, "brown").category == "unknown"
    assert cat.without(["block"]).match(high, "brown", partial=True).category == "unknown"
    most = _sig(0.075, 0.05, 0.04, 0.8)
    assert cat.without(["block"]).match(most, "brown", partial=True,
                                        min_share=GRAZED_MIN_SHARE).category == "box"


def test_seen_in_part_a_whole_match_must_show_most_of_the_footprint() -> None:
    """Scene 12826: a 4.5 x 1.8 cm sliver of a purple bottle lying half hidden fitted a ball's
    loose width tolerance whole. Seen whole it is still a ball (its measure is its own); seen
    in part it shows under 60% of a ball's footprint, and no purple thing is enrolled that it
    could be a part of: unknown."""
    # the enrolled ball's mean and spread as the package's catalogue has them
    ball = Prototype("ball", "blue_ball", "blue", _sig(0.0509, 0.0398, 0.0537, 0.797, 0.705,
                                                       0.0, 0.899),
                     _sig(0.0037, 0.0046, 0.0013, 0.03, 0.06, 0.0, 0.08), views=24)
    cat = ObjectCatalogue((ball,))
    sliver = _sig(0.0446, 0.0176, 0.0545, 0.7, 0.72, 0.0, 0.7)
    assert cat.match(sliver, "purple", spacing=0.0046).category == "ball"
    assert cat.match(sliver, "purple", partial=True, spacing=0.0046).category == "unknown"
    # most of a ball's footprint, in part, is a ball whole
    most = _sig(0.048, 0.034, 0.0545, 0.75, 0.72, 0.0, 0.85)
    m = cat.match(most, "purple", partial=True, spacing=0.0046)
    assert m.category == "ball" and not m.as_part


def test_a_long_thing_hidden_at_an_end_may_measure_short_but_not_narrow() -> None:
    """Its sides are seen: a marker hidden at one end is no part of a wider spatula."""
    rng = np.random.default_rng(1)
    spatula = enrol("spatula", "green_spatula", "green",
                    _noisy(_sig(0.24, 0.04, 0.015, 0.93, 1.0), rng))
    cat = ObjectCatalogue((spatula,))
    short = _sig(0.20, 0.04, 0.015, 0.93, 1.0)  # its far end under the arm
    assert cat.match(short).category == "unknown"
    assert cat.match(short, partial=True, end=LENGTH_END).category == "spatula"
    marker = _sig(0.14, 0.02, 0.016, 0.93, 1.0)
    assert cat.match(marker, partial=True).category == "spatula"  # bordered all round
    assert cat.match(marker, partial=True, end=LENGTH_END).category == "unknown"


def test_a_standing_thing_hidden_at_its_top_may_measure_low_but_not_short_or_narrow() -> None:
    """A tall bottle whose neck the arm hides: its footprint is seen whole, only its height
    is a lower bound (and only at the top, not at a long thing's end)."""
    rng = np.random.default_rng(2)
    bottle = enrol("bottle", "green_bottle", "green",
                   _noisy(_sig(0.064, 0.062, 0.21, 0.8, 0.1, 0.0, 0.95), rng))
    cat = ObjectCatalogue((bottle,))
    low = _sig(0.064, 0.062, 0.18, 0.8, 0.1, 0.0, 0.95)
    assert cat.match(low).category == "unknown"
    assert cat.match(low, partial=True, end=LENGTH_END).category == "unknown"
    assert cat.match(low, partial=True, end=TOP_END).category == "bottle"
    narrow = _sig(0.064, 0.045, 0.18, 0.8, 0.1, 0.0, 0.95)
    assert cat.match(narrow, partial=True, end=TOP_END).category == "unknown"
    # bordered all round, a height is never a lower bound (anything low would be a bottle)
    assert cat.match(low, partial=True).category == "unknown"


def test_a_top_hidden_says_nothing_of_the_top_but_half_the_height_must_show() -> None:
    """With its neck under the arm, the bottle's highest seen points are a cut through its
    body (a wide flat "top"); a short thing under the arm is no bottle's foot."""
    rng = np.random.default_rng(3)
    bottle = enrol("bottle", "green_bottle", "green",
                   _noisy(_sig(0.064, 0.062, 0.21, 0.8, 0.2, 0.0, 0.95), rng))
    cat = ObjectCatalogue((bottle,))
    cut = _sig(0.064, 0.062, 0.14, 0.8, 0.6, 0.9, 0.5)  # its shoulder cut; far end narrow
    assert cat.match(cut, partial=True).category == "unknown"
    assert cat.match(cut, partial=True, end=TOP_END).category == "bottle"
    stub = _sig(0.064, 0.062, 0.09, 0.8, 0.6, 0.0, 0.95)  # less than half its height
    assert cat.match(stub, partial=True, end=TOP_END).category == "unknown"


def test_sparse_samples_may_measure_an_extent_short_by_one_spacing_but_not_long(catalogue):
    """An extent ends at the last depth sample on the object: up to half a sample spacing
    short at each end. A can sampled 1.2 cm apart may measure 1.2 cm short; never long, and
    no shorter than that."""
    short = _sig(0.066, 0.047, 0.1, 0.8)  # 1.4 cm narrow: beyond the tolerance
    assert catalogue.match(short, "red").category == "unknown"
    assert catalogue.match(short, "red", spacing=0.012).category == "can"
    assert catalogue.match(_sig(0.066, 0.035, 0.1, 0.8), "red",
                           spacing=0.012).category == "unknown"
    long = _sig(0.066, 0.075, 0.1, 0.8)
    assert catalogue.match(long, "red").category == "unknown"
    assert catalogue.match(long, "red", spacing=0.012).category == "unknown"

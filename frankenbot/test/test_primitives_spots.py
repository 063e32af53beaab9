"""Release spots of the new world: on flat tops beside what is there, in open drawers clear of
the cabinet's face and of the handles above (placement.py), no robot involved."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.fixture_map import FixtureMap
from frankenbot.primitives.placement import (
    NoSpot,
    Palm,
    spot_in_container,
    spot_in_drawer,
    spot_on_support,
)
from frankenbot.state import SceneObject

PALM = Palm(0.055, 0.038, 0.0)


def cabinet() -> FixtureMap:
    config = pytest.importorskip("frankenbot.sim.config_files")
    from frankenbot.sim.families import SLOTS
    from frankenbot.sim.tasks import FixturePlacement

    return FixtureMap.from_data(config.fixtures_config(
        [FixturePlacement("cabinet", *SLOTS["cabinet"])]))


def test_a_plate_takes_the_object_at_its_centre_or_beside_what_is_on_it():
    plate = SceneObject("pink_plate", "pink plate", "plate", "pink", (0.5, 0.0, 0.006),
                        (0.16, 0.16, 0.012))
    empty = spot_on_support(plate, (0.05, 0.05, 0.04), [])
    assert (empty.x, empty.y) == pytest.approx((0.5, 0.0)) and empty.support_z == plate.top_z
    apple = SceneObject("red_apple", "red apple", "apple", "red", (0.5, 0.0, 0.048),
                        (0.072, 0.072, 0.072))
    beside = spot_on_support(plate, (0.03, 0.03, 0.03), [apple])
    assert math.hypot(beside.x - 0.5, beside.y) > 0.02
    assert math.hypot(beside.x - 0.5, beside.y) <= 0.08 - 0.015  # on the plate's disc


def test_a_basket_keeps_the_palm_inside_its_rim_across_its_short_side():
    basket = SceneObject("brown_basket", "brown basket", "basket", "brown", (0.5, 0.1, 0.045),
                         (0.24, 0.18, 0.09), yaw=0.4)
    s = spot_in_container(basket, 0.008, (0.05, 0.05, 0.04), [], Palm(0.055, 0.038, 0.02))
    lx, ly = basket.local_xy(s.x, s.y)
    assert abs(lx) <= 0.12 - 0.02 - 0.038 + 1e-9 and abs(ly) <= 0.09 - 0.02 - 0.055 + 1e-9
    short = np.array([-math.sin(0.4), math.cos(0.4)])
    assert abs(float(np.array([math.cos(s.finger_axis), math.sin(s.finger_axis)]) @ short)
               ) == pytest.approx(1.0)


def test_an_open_drawer_takes_it_in_front_of_the_handles_above_and_inside_its_walls():
    fmap = cabinet()
    bottom = fmap.part("bottom_drawer")
    out = np.array(bottom.axis[:2])
    middle_handle = np.array(fmap.part("middle_drawer").handle[:2]) + out * 0.007
    spot = spot_in_drawer(bottom, 0.16, tuple(middle_handle), (0.04, 0.04), [], PALM,
                          palm_below_rim=True)
    t = float((np.array([spot.x, spot.y]) - middle_handle) @ out)
    assert t >= 0.038  # the palm's round top clears the handle above
    centre = np.array(bottom.cavity_at(0.16)[:2])
    assert float((np.array([spot.x, spot.y]) - centre) @ out) + 0.038 <= 0.112 + 1e-9
    assert spot.support_z == pytest.approx(bottom.cavity_centre[2] - bottom.cavity_size[2] / 2)


def test_a_drawer_barely_open_or_an_object_too_long_for_it_is_refused():
    fmap = cabinet()
    top = fmap.part("top_drawer")
    face = np.array(fmap.fixture("cabinet").position[:2]) + np.array(top.axis[:2]) * 0.13
    with pytest.raises(NoSpot, match="not open far enough"):
        spot_in_drawer(top, 0.03, tuple(face), (0.04, 0.04), [], PALM)
    long_tool = spot_in_drawer(top, 0.16, tuple(face), (0.14, 0.02), [], PALM)
    # a 14 cm tool fits the top drawer lengthwise: the fingers across the drawer
    assert abs(math.cos(long_tool.finger_axis - math.atan2(top.axis[1], top.axis[0]))
               ) == pytest.approx(0.0, abs=1e-9)
    # under the top drawer's handle (5 cm out) the middle one's open part is too short for it
    middle = fmap.part("middle_drawer")
    handle = np.array(top.handle[:2]) + np.array(top.axis[:2]) * 0.007
    with pytest.raises(NoSpot):
        spot_in_drawer(middle, 0.16, tuple(handle), (0.14, 0.02), [], PALM, palm_below_rim=True)
    # ... unless the palm stays over the walls (the primitive then lets a low object go from
    # over the rim): the tool lies across the drawer, the palm clear of that handle
    over = spot_in_drawer(middle, 0.16, tuple(handle), (0.14, 0.02), [], PALM)
    out = np.array(middle.axis[:2])
    assert float((np.array([over.x, over.y]) - handle) @ out) >= PALM.along
    assert abs(math.cos(over.finger_axis - math.atan2(out[1], out[0]))) == pytest.approx(1.0)


def test_an_object_held_off_its_middle_reaches_in_with_its_longer_part():
    fmap = cabinet()
    middle = fmap.part("middle_drawer")
    top = fmap.part("top_drawer")
    out = np.array(middle.axis[:2])
    handle = np.array(top.handle[:2]) + out * 0.007
    box = (0.088, 0.054)  # held across its short side, its length along the gripper's x axis
    with pytest.raises(NoSpot) as refused:
        spot_in_drawer(middle, 0.155, tuple(handle), box, [], PALM, palm_below_rim=True)
    needed = refused.value.off_centre
    assert 0.0 < needed < 0.02  # it lacks millimetres: held that far off its middle it fits
    with pytest.raises(NoSpot):
        spot_in_drawer(middle, 0.155, tuple(handle), box, [], PALM, held_offset=needed * 0.5,
                       palm_below_rim=True)
    for offset in (needed + 0.002, -(needed + 0.002)):
        spot = spot_in_drawer(middle, 0.155, tuple(handle), box, [], PALM, held_offset=offset,
                              palm_below_rim=True)
        assert spot.tool_x is not None
        tool_x = np.array([math.cos(spot.tool_x), math.sin(spot.tool_x)])
        tcp = np.array([spot.x, spot.y])
        centre = tcp + offset * tool_x  # where the object's centre will be
        assert float((tcp - handle) @ out) >= PALM.across  # the palm clear of the handle above
        cavity = np.array(middle.cavity_at(0.155)[:2])
        # the object inside the drawer's box, its centre deeper in than the TCP
        assert float((centre - cavity) @ out) + box[0] / 2 <= middle.cavity_size[0] / 2 + 1e-9
        assert float((centre - tcp) @ out) == pytest.approx(-abs(offset))
    # a drawer barely open: no grasp would do
    with pytest.raises(NoSpot) as shut:
        spot_in_drawer(middle, 0.03, tuple(handle), box, [], PALM, palm_below_rim=True)
    assert shut.value.off_centre == 0.0

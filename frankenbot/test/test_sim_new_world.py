"""The fixtures-and-everyday-objects world: fixtures stand where the scene puts them, their parts
move and their state is what the oracle reads, controls switch lights, the new families sample
deterministic scenes whose oracles fail at reset and hold once the goal is reached, and the new
anomaly kinds act on the world."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.fixture_map import FixtureMap
from frankenbot.sim import families, layout
from frankenbot.sim import fixtures as fx
from frankenbot.sim.tasks import FIRST_WAVE_FAMILIES, TASK_FAMILIES, sample_task
from frankenbot.sim.world import SimWorld

NEW = tuple(f for f in TASK_FAMILIES if f not in FIRST_WAVE_FAMILIES)


@pytest.fixture(scope="module")
def world():
    with SimWorld(seed=0, task="open_cabinet_drawer") as w:
        yield w


def test_every_new_family_samples_the_same_scene_for_a_seed():
    assert set(NEW) == set(families.FAMILIES)
    for family in NEW:
        a, b = sample_task(family, 7), sample_task(family, 7)
        assert a == b
        assert a.task.instruction
        assert {p.name for p in a.placements} <= set(layout.OBJECT_BY_NAME)


def test_objects_stand_clear_of_fixtures_and_what_they_sweep():
    for family in NEW:
        for seed in range(4):
            s = sample_task(family, seed)
            fmap = families.fixture_map(s.fixtures)
            for p in s.placements:
                for f in fmap.fixtures:
                    if f.kind == "zone":
                        continue
                    assert not f.footprint_contains(p.x, p.y, margin=0.0), (family, seed, p.name,
                                                                            f.fixture_id)


@pytest.mark.parametrize("family", NEW)
def test_new_family_oracle_fails_at_reset(world, family):
    world.reset(family, 3)
    assert not world.evaluate(stability_window=0.1).success


def test_fixtures_stand_at_their_slot_and_the_rest_are_parked(world):
    world.reset("open_cabinet_drawer", 0)
    assert [p.fid for p in world.fixture_placements()] == ["cabinet"]
    x, y, _ = families.SLOTS["cabinet"]
    pos = world.data.xpos[world.model.body("cabinet").id]
    assert math.hypot(pos[0] - x, pos[1] - y) < 1e-6 and abs(pos[2]) < 1e-6
    world.advance(0.5)  # pinned: contacts and gravity do not move it
    pos = world.data.xpos[world.model.body("cabinet").id]
    assert math.hypot(pos[0] - x, pos[1] - y) < 1e-6
    assert world.data.xpos[world.model.body("microwave").id][2] < layout.FLOOR_Z
    assert set(world.fixture_states()) == {"top_drawer", "middle_drawer", "bottom_drawer"}


def test_chosen_drawer_open_holds_for_open_goal_only(world):
    world.reset("open_cabinet_drawer", 0)
    target = world.task.params["target"]
    world.set_fixture_state(str(target), fx.CAB_STROKE)
    assert world.evaluate(stability_window=0.2).success
    other = next(d for d in ("top_drawer", "middle_drawer", "bottom_drawer") if d != target)
    world.set_fixture_state(str(target), 0.0)
    world.set_fixture_state(other, fx.CAB_STROKE)
    assert not world.evaluate(stability_window=0.1).success


def test_object_in_an_open_drawer_counts_as_inside(world):
    world.reset("put_in_cabinet_drawer", 1)
    p = world.task.params
    drawer, obj = str(p["target"]), str(p["object"])
    world.set_fixture_state(drawer, fx.CAB_STROKE)
    part = FixtureMap.from_data(world.fixture_map_data()).part(drawer)
    cx, cy, cz = part.cavity_at(fx.CAB_STROKE)
    # drop the object in the part of the drawer that is out of the cabinet
    out = np.array(part.axis) * 0.05
    spec = layout.OBJECT_BY_NAME[obj]
    floor = cz - part.cavity_size[2] / 2
    with world._lock:
        world._set_pose(obj, (cx + out[0], cy + out[1], floor + spec.size[2] / 2 + 0.003), 0.0)
    world.advance(0.5)
    assert world.evaluate(stability_window=0.3).success


def test_door_goal_follows_the_hinge_and_the_slide(world):
    for seed in range(6):
        world.reset("open_door", seed)
        door = str(world.task.params["target"])
        travel = fx.KINDS[str(world.task.params["fixture"])].parts[0].travel
        assert not world.evaluate(stability_window=0.1).success
        world.set_fixture_state(door, travel * 0.95)
        assert world.evaluate(stability_window=0.2).success, door


def test_switch_turns_the_light_on_and_the_button_toggles_it(world):
    world.reset("switch_light", 0)
    assert world.fixture_states()["light"] == 0.0
    world.set_fixture_state("switch", fx.SWITCH_TRAVEL)
    world.advance(0.1)
    assert world.fixture_states()["light"] == 1.0
    # a press of the button toggles it off; releasing keeps it off; a second press on again
    dof = world._fixtures.parts["button"].dof
    for want in (0.0, 1.0):
        world.data.qfrc_applied[dof] = 6.0  # a finger pushes it down (its spring: 400 N/m)
        world.advance(0.1)
        assert world.fixture_states()["button"] > 0.6 * fx.BUTTON_TRAVEL
        world.data.qfrc_applied[dof] = 0.0
        world.advance(0.1)
        assert world.fixture_states()["button"] < 0.2 * fx.BUTTON_TRAVEL
        assert world.fixture_states()["light"] == want


def test_switch_is_bistable(world):
    world.reset("switch_light", 0)
    world.set_fixture_state("switch", 0.02)  # just past the middle: it snaps to the on side
    world.advance(0.3)
    assert world.fixture_states()["switch"] > 0.8 * fx.SWITCH_TRAVEL


def test_knob_lights_the_burner_and_the_image_shows_it(world):
    world.reset("switch_stove", 2)
    assert world.task.params["goal"] == "on"
    rgb_off, _ = world.render_clean()
    world.set_fixture_state("stove_knob", 1.0)
    world.advance(0.05)
    assert world.fixture_states()["stove_burner"] == 1.0
    assert world.evaluate(stability_window=0.1).success
    rgb_on, _ = world.render_clean()
    # the burner glows orange: many more strongly red pixels than before
    def glowing(rgb):
        r, g, b = (rgb[..., i].astype(int) for i in range(3))
        return int(np.count_nonzero((r > 235) & (g < 190) & (b < 70)))
    assert glowing(rgb_on) > glowing(rgb_off) + 500


def test_door_swings_back_anomaly(world):
    world.reset("open_door", 1)
    door = str(world.task.params["target"])
    part = FixtureMap.from_data(world.fixture_map_data()).part(door)
    world.set_fixture_state(door, part.travel * 0.9)
    world.inject("door_swings_back", "after_open")
    world.advance(0.1)
    assert world.fixture_states()[door] < 0.25 * part.travel
    assert any(a.event == "fired" for a in world.anomaly_log() if a.kind == "door_swings_back")


def test_drawer_sticks_anomaly_freezes_the_drawer(world):
    world.reset("open_cabinet_drawer", 0)
    drawer = str(world.task.params["target"])
    world.set_fixture_state(drawer, 0.06)
    world.inject("drawer_sticks_half", "now", {"target": drawer, "duration": 1.0})
    j = world._fixtures.parts[drawer]
    world.data.qfrc_applied[j.dof] = 30.0  # pulled hard
    world.advance(0.5)
    assert abs(world.fixture_states()[drawer] - 0.06) < 0.003
    world.advance(0.7)  # free again: the pull moves it
    assert world.fixture_states()[drawer] > 0.08
    world.data.qfrc_applied[j.dof] = 0.0


def test_object_rolls_anomaly_moves_a_ball_and_refuses_a_box(world):
    world.reset("everyday_in", 0)
    with world._lock:  # an empty table but for the ball
        for name in list(world._active):
            world._park(name)
        world.add_object("blue_ball", (0.45, 0.0, 0.031))
    world.advance(0.3)
    start = world.object_states()["blue_ball"].position
    world.inject("object_rolls", "now", {"object": "blue_ball"})
    world.advance(2.5)
    end = world.object_states()["blue_ball"].position
    assert 0.05 < math.hypot(end[0] - start[0], end[1] - start[1]) < 0.5
    with world._lock:
        world.add_object("blue_box", (0.35, 0.2, 0.018))
    with pytest.raises(Exception, match="does not roll"):
        world.inject("object_rolls", "now", {"object": "blue_box"})

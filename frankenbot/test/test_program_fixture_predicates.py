"""open(x), closed(x), on_state(x) and in(x, c) for the fixtures of the new world, judged from
the measured state (SceneObject.opening/on) with each part's travel from the fixture map."""

from __future__ import annotations

import pytest

from frankenbot.fixture_map import FixtureMap, with_state
from frankenbot.program import Ident, Pred
from frankenbot.program.predicates import evaluate_predicate
from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot

sim = pytest.importorskip("frankenbot.sim.config_files")


def fixture_map(*fids: str) -> FixtureMap:
    from frankenbot.sim.families import SLOTS
    from frankenbot.sim.tasks import FixturePlacement

    return FixtureMap.from_data(sim.fixtures_config(
        [FixturePlacement(f, *SLOTS[f]) for f in fids]))


CABINET = fixture_map("cabinet", "microwave", "light_panel", "stove")


def P(name: str, *args: str) -> Pred:
    return Pred(name, tuple(Ident(a) for a in args))


def scene(fmap: FixtureMap, states: dict[str, float | bool], *objects: SceneObject
          ) -> list[SceneObject]:
    out = []
    for o in fmap.scene_objects():
        v = states.get(o.object_id)
        if isinstance(v, bool):
            o = with_state(o, on=v)
        elif v is not None:
            o = with_state(o, opening=float(v))
        out.append(o)
    return [*out, *objects]


def snap(objs, facts=None, fmap=CABINET) -> WorldSnapshot:
    return WorldSnapshot(RobotSnapshot(), Scene.of(objs, stamp=1.0), facts or {}, 1.0, fmap)


def test_open_and_closed_follow_the_measured_opening_against_the_travel():
    s = snap(scene(CABINET, {"top_drawer": 0.15, "middle_drawer": 0.0, "bottom_drawer": 0.04,
                             "microwave_door": 1.3}))
    assert evaluate_predicate(P("open", "top_drawer"), s)
    assert not evaluate_predicate(P("closed", "top_drawer"), s)
    assert evaluate_predicate(P("closed", "middle_drawer"), s)
    # ajar (4 cm of 16): neither open nor closed
    assert not evaluate_predicate(P("open", "bottom_drawer"), s)
    assert not evaluate_predicate(P("closed", "bottom_drawer"), s)
    # a fixture stands for its only door; drawer_open is open for drawers
    assert evaluate_predicate(P("open", "microwave"), s)
    assert evaluate_predicate(P("open", "microwave_door"), s)
    assert evaluate_predicate(P("drawer_open", "top_drawer"), s)
    assert not evaluate_predicate(P("drawer_open", "middle_drawer"), s)
    # not measured, nothing known: neither
    unknown = snap(scene(CABINET, {}))
    assert not evaluate_predicate(P("open", "top_drawer"), unknown)
    assert not evaluate_predicate(P("closed", "top_drawer"), unknown)


def test_how_the_primitives_left_a_part_counts_before_the_camera():
    measured_shut = scene(CABINET, {"top_drawer": 0.0})
    assert evaluate_predicate(P("open", "top_drawer"),
                              snap(measured_shut, facts={"open:top_drawer": True}))
    assert evaluate_predicate(P("closed", "top_drawer"),
                              snap(scene(CABINET, {"top_drawer": 0.15}),
                                   facts={"open:top_drawer": False}))


def test_on_state_reads_the_lamp_or_burner_of_a_fixture():
    lit = snap(scene(CABINET, {"light": True, "stove_burner": False}))
    assert evaluate_predicate(P("on_state", "light"), lit)
    assert evaluate_predicate(P("on_state", "light_panel"), lit)
    assert not evaluate_predicate(P("on_state", "stove"), lit)
    assert not evaluate_predicate(P("on_state", "stove_burner"), lit)
    dark = snap(scene(CABINET, {"light": False, "stove_burner": True}))
    assert not evaluate_predicate(P("on_state", "light_panel"), dark)
    assert evaluate_predicate(P("on_state", "stove"), dark)


def _block(x: float, y: float, z: float) -> SceneObject:
    return SceneObject("red_block", "red block", "block", "red", (x, y, z), (0.04, 0.04, 0.04))


def test_in_a_cabinet_drawer_follows_the_drawer_where_it_is():
    top = CABINET.part("top_drawer")
    floor = top.cavity_centre[2] - top.cavity_size[2] / 2
    out_x, out_y, _ = top.cavity_at(0.16)
    released = _block(out_x, out_y - 0.03, floor + 0.02)  # in the pulled-out part
    open_scene = scene(CABINET, {"top_drawer": 0.16}, released)
    assert evaluate_predicate(P("in", "red_block", "top_drawer"), snap(open_scene))
    assert evaluate_predicate(P("in", "red_block", "cabinet"), snap(open_scene))
    assert not evaluate_predicate(P("in", "red_block", "middle_drawer"), snap(open_scene))
    # closed with the block inside: the block went in with it
    cx, cy, _ = top.cavity_at(0.0)
    inside = _block(cx, cy - 0.03, floor + 0.02)
    assert evaluate_predicate(P("in", "red_block", "top_drawer"),
                              snap(scene(CABINET, {"top_drawer": 0.0}, inside)))
    # on the table in front of the open drawer: not in it
    below = _block(out_x, out_y - 0.03, 0.02)
    assert not evaluate_predicate(P("in", "red_block", "top_drawer"),
                                  snap(scene(CABINET, {"top_drawer": 0.16}, below)))


def test_in_the_microwave_is_its_cavity_and_in_a_bowl_its_disc():
    mw = CABINET.fixture("microwave")
    cx, cy, cz = mw.cavity_centre
    in_mw = _block(cx, cy, cz - mw.cavity_size[2] / 2 + 0.02)
    assert evaluate_predicate(P("in", "red_block", "microwave"),
                              snap(scene(CABINET, {}, in_mw)))
    bowl = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.5, 0.2, 0.025),
                       (0.15, 0.15, 0.05))
    corner = _block(0.5 + 0.06, 0.2 + 0.06, 0.02)  # in its square footprint, off its disc
    centre = _block(0.5, 0.2, 0.026)
    assert not evaluate_predicate(P("in", "red_block", "green_bowl"), snap([bowl, corner]))
    assert evaluate_predicate(P("in", "red_block", "green_bowl"), snap([bowl, centre]))

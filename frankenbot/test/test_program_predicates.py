"""Predicates judged on the brain's state, with their documented tolerances."""

from __future__ import annotations

import math

import pytest

from frankenbot.program import Ident, Not, Pred, parse_program
from frankenbot.program.predicates import (
    IN_ABOVE_RIM_MARGIN,
    MonitorProbe,
    PredicateError,
    compile_condition,
    evaluate_predicate,
)
from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot


def obj(oid, pos, size=(0.04, 0.04, 0.04), yaw=0.0, last_seen=0.0):
    shape = oid.split("_")[-1]
    return SceneObject(oid, oid.replace("_", " "), shape, oid.split("_")[0], pos, size, yaw,
                       last_seen=last_seen)


BOWL = obj("green_bowl", (0.5, 0.2, 0.03), (0.16, 0.16, 0.06))


def snap(*objects, held=None, width=0.085, facts=None, stale=False, stamp=0.0):
    return WorldSnapshot(RobotSnapshot(gripper_width=width, held_object=held),
                         Scene.of(objects, stamp=stamp, stale=stale), facts or {})


def P(name, *args):  # reads like the language
    return Pred(name, tuple(Ident(a) if isinstance(a, str) else float(a) for a in args))


@pytest.mark.parametrize("held, width, expected", [
    ("red_block", 0.04, True),
    ("red_block", 0.085, False),  # fully open: cannot hold anything
    ("red_block", 0.001, False),  # closed on nothing
    ("blue_block", 0.04, False),
    (None, 0.04, False),
])
def test_holding_needs_the_belief_and_a_plausible_finger_gap(held, width, expected):
    assert evaluate_predicate(P("holding", "red_block"), snap(held=held, width=width)) is expected


def test_a_place_letting_go_still_holds_until_it_has_seen_the_object_placed():
    # a mug's release opens the fingers fully: not a drop while the place retreats
    releasing = WorldSnapshot(RobotSnapshot(gripper_width=0.085, held_object="red_block",
                                            releasing=True), Scene.of(()), {})
    assert evaluate_predicate(P("holding", "red_block"), releasing) is True
    assert evaluate_predicate(P("holding", "blue_block"), releasing) is False
    monitor = parse_program('task "t" { main { home() } monitor d when not holding(red_block) '
                            'during place_left_of(obj=red_block) { home() } }').program.monitors[0]
    assert MonitorProbe.of(monitor).holds(releasing) is False


def test_in_checks_footprint_and_height_band():
    inside = obj("red_block", (0.52, 0.21, 0.025))
    assert evaluate_predicate(P("in", "red_block", "green_bowl"), snap(inside, BOWL))
    beside = obj("red_block", (0.5, 0.35, 0.02))
    assert not evaluate_predicate(P("in", "red_block", "green_bowl"), snap(beside, BOWL))
    above = obj("red_block", (0.5, 0.2, 0.06 + IN_ABOVE_RIM_MARGIN + 0.05))
    assert not evaluate_predicate(P("in", "red_block", "green_bowl"), snap(above, BOWL))
    assert not evaluate_predicate(P("in", "red_block", "green_bowl"), snap(BOWL))


def test_an_object_in_the_closed_fingers_is_in_and_on_nothing():
    """A block carried just above the bowl (or a block) is not in it, so a program cannot end in
    success with the block still in the hand; once the fingers open it is judged again."""
    low = obj("red_block", (0.5, 0.2, 0.05))  # its bottom 3 cm above the bowl's floor
    base = obj("blue_block", (0.3, 0.0, 0.02))
    on_top = obj("red_block", (0.3, 0.0, 0.06))

    def world(o, closed, other):
        return WorldSnapshot(RobotSnapshot(gripper_width=0.04, held_object="red_block",
                                           gripper_closed_cmd=closed),
                             Scene.of((o, other)))

    for closed in (True, False):
        assert evaluate_predicate(P("in", "red_block", "green_bowl"),
                                  world(low, closed, BOWL)) is not closed
        assert evaluate_predicate(P("on", "red_block", "blue_block"),
                                  world(on_top, closed, base)) is not closed


def test_in_respects_the_container_yaw():
    tray = obj("gray_bin", (0.0, 0.0, 0.02), (0.30, 0.06, 0.04), yaw=math.pi / 2)
    along_rotated_long_axis = obj("red_block", (0.0, 0.12, 0.02))
    assert evaluate_predicate(P("in", "red_block", "gray_bin"), snap(along_rotated_long_axis, tray))
    along_x = obj("red_block", (0.12, 0.0, 0.02))
    assert not evaluate_predicate(P("in", "red_block", "gray_bin"), snap(along_x, tray))


def test_on_needs_contact_height_and_overlap():
    base = obj("blue_block", (0.4, 0.0, 0.02))
    top = obj("red_block", (0.405, 0.0, 0.06))
    assert evaluate_predicate(P("on", "red_block", "blue_block"), snap(base, top))
    assert not evaluate_predicate(P("on", "blue_block", "red_block"), snap(base, top))
    shifted = obj("red_block", (0.5, 0.0, 0.06))
    assert not evaluate_predicate(P("on", "red_block", "blue_block"), snap(base, shifted))


def test_near_uses_horizontal_distance():
    a, b = obj("red_block", (0.4, 0.0, 0.02)), obj("blue_block", (0.43, 0.04, 0.10))
    assert evaluate_predicate(P("near", "red_block", "blue_block", 0.05), snap(a, b))
    assert not evaluate_predicate(P("near", "red_block", "blue_block", 0.049), snap(a, b))


def test_visible_means_in_a_fresh_scene_and_seen_recently():
    o = obj("red_block", (0.4, 0.0, 0.02), last_seen=10.0)
    assert evaluate_predicate(P("visible", "red_block"), snap(o, stamp=10.5))
    assert not evaluate_predicate(P("visible", "red_block"), snap(o, stamp=12.0))
    assert not evaluate_predicate(P("visible", "red_block"), snap(o, stamp=10.0, stale=True))
    assert not evaluate_predicate(P("visible", "blue_block"), snap(o))


def test_gripper_open_and_drawer_open_from_fact_or_handle_geometry():
    assert evaluate_predicate(P("gripper_open"), snap(width=0.085))
    assert not evaluate_predicate(P("gripper_open"), snap(width=0.03))
    drawer = obj("drawer", (0.6, -0.3, 0.05), (0.20, 0.25, 0.10))
    closed_handle = obj("drawer_handle", (0.48, -0.3, 0.05), (0.02, 0.10, 0.02))
    open_handle = obj("drawer_handle", (0.40, -0.3, 0.05), (0.02, 0.10, 0.02))
    assert not evaluate_predicate(P("drawer_open", "drawer"), snap(drawer, closed_handle))
    assert evaluate_predicate(P("drawer_open", "drawer"), snap(drawer, open_handle))
    facts = {"drawer_open:drawer": True}
    assert evaluate_predicate(P("drawer_open", "drawer"), snap(drawer, closed_handle, facts=facts))
    assert not evaluate_predicate(P("drawer_open", "drawer"),
                                  snap(drawer, open_handle, facts={"drawer_open:drawer": False}))


def test_in_open_drawer_follows_the_drawer_out_towards_its_handle():
    drawer = obj("drawer", (0.72, 0.38, 0.06), (0.20, 0.26, 0.12))
    open_handle = obj("drawer_handle", (0.46, 0.38, 0.07), (0.02, 0.10, 0.02))
    released = obj("orange_block", (0.56, 0.38, 0.042))  # in the pulled-out drawer
    is_open = {"drawer_open:drawer": True}
    assert evaluate_predicate(P("in", "orange_block", "drawer"),
                              snap(drawer, open_handle, released, facts=is_open))
    # closed: only the drawer's own footprint counts, so a block in front of it is not in it
    closed = {"drawer_open:drawer": False}
    assert not evaluate_predicate(P("in", "orange_block", "drawer"),
                                  snap(drawer, open_handle, released, facts=closed))
    pushed_in = obj("orange_block", (0.68, 0.38, 0.042))
    assert evaluate_predicate(P("in", "orange_block", "drawer"),
                              snap(drawer, open_handle, pushed_in, facts=closed))
    # in front of the handle, or beside the drawer, is never in it
    for x, y in ((0.40, 0.38), (0.56, 0.60)):
        out = obj("orange_block", (x, y, 0.042))
        assert not evaluate_predicate(P("in", "orange_block", "drawer"),
                                      snap(drawer, open_handle, out, facts=is_open))


def test_empty_is_true_only_when_nothing_is_inside():
    inside = obj("red_block", (0.5, 0.2, 0.025))
    assert evaluate_predicate(P("empty", "green_bowl"), snap(BOWL))
    assert not evaluate_predicate(P("empty", "green_bowl"), snap(BOWL, inside))


def test_conditions_combine_and_bindings_map_skill_parameters():
    cond = parse_program('task "t" { main { if holding(x) and not in(x, c) or gripper_open '
                         '{ home() } } }').program.main.body[0].cond
    s = snap(BOWL, obj("red_block", (0.0, 0.0, 0.1)), held="red_block", width=0.04)
    assert evaluate_predicate(cond, s, {"x": "red_block", "c": "green_bowl"})
    assert not evaluate_predicate(cond, s, {"x": "blue_block", "c": "green_bowl"})
    assert compile_condition(cond, {"x": "red_block", "c": "green_bowl"})(s)


def test_unknown_predicate_or_wrong_arity_is_an_error():
    with pytest.raises(PredicateError):
        evaluate_predicate(P("levitating", "red_block"), snap())
    with pytest.raises(PredicateError):
        evaluate_predicate(P("in", "red_block"), snap())


def test_monitor_probe_exposes_name_and_holds():
    program = parse_program('task "t" { main { home() } monitor lost when not holding(red_block) '
                            '{ then escalate } }').program
    probe = MonitorProbe.of(program.monitors[0])
    assert probe.name == "lost"
    assert probe.holds(snap(held=None)) and not probe.holds(snap(held="red_block", width=0.04))
    assert Not(P("holding", "red_block")) == program.monitors[0].when


def test_a_block_resting_on_a_plate_is_both_in_and_on_it_but_only_in_a_bowl():
    """The prompt promises: on a flat plate `in` and `on` both hold; in a bowl only `in`."""
    from frankenbot.program.predicates import inside, on
    from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot

    plate = SceneObject("white_plate", "white plate", "plate", "white", (0.5, 0.1, 0.006),
                        (0.18, 0.18, 0.012))
    bowl = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.5, -0.2, 0.03),
                       (0.16, 0.16, 0.06))
    on_plate = SceneObject("red_block", "red block", "block", "red", (0.51, 0.1, 0.032),
                           (0.04, 0.04, 0.04))
    in_bowl = SceneObject("blue_block", "blue block", "block", "blue", (0.5, -0.2, 0.025),
                          (0.04, 0.04, 0.04))
    objs = {o.object_id: o for o in (plate, bowl, on_plate, in_bowl)}
    snap = WorldSnapshot(RobotSnapshot(), Scene.of(objs.values()))
    assert inside(snap, objs, "red_block", "white_plate")
    assert on(snap, objs, "red_block", "white_plate")
    assert inside(snap, objs, "blue_block", "green_bowl")
    assert not on(snap, objs, "blue_block", "green_bowl")

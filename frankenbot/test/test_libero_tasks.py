"""LIBERO's task definitions read from the installed package, mapped onto our table, and judged
by the sim's goal expressions: every BDDL file parses; the mapping sets up at least 110 of 130
with a reason for each one it does not; sampled scenes are deterministic and start unsolved;
goals hold on hand-placed sim states that satisfy them, and not before."""

from __future__ import annotations

import math

import pytest

from frankenbot.errors import SimError
from frankenbot.eval.libero import bddl
from frankenbot.eval.libero.mapping import map_task, map_tasks
from frankenbot.eval.libero.scenes import goal_holds_at_start, sample_scene
from frankenbot.sim import families
from frankenbot.sim.scene_spec import SceneSpec, parse_goal
from frankenbot.sim.tasks import FixturePlacement, Placement

TASKS = bddl.load_tasks()
BY_NAME = {t.name: t for t in TASKS}


def test_every_bddl_file_of_the_installed_package_parses():
    assert len(TASKS) == 130
    counts = {s: sum(t.suite == s for t in TASKS) for s in bddl.SUITES}
    assert counts == {"libero-spatial": 10, "libero-object": 10, "libero-goal": 10,
                      "libero-10": 10, "libero-90": 90}
    for t in TASKS:
        assert t.language and t.objects and t.goal, t.task_id
        assert {p.name for p in t.goal} <= {"on", "in", "open", "close", "turnon", "turnoff"}
        known = set(t.objects) | set(t.fixtures) | {r.full_name for r in t.regions}
        for p in (*t.init, *t.goal):
            assert set(p.args) <= known, (t.task_id, p)
        used = {a for p in (*t.init, *t.goal) for a in p.args}
        for r in t.regions:  # (a few files define regions on things they never place)
            if r.full_name in used:
                assert r.target in t.fixtures or r.target in t.objects, (t.task_id, r)
            for box in r.ranges:
                assert box[0] <= box[2] and box[1] <= box[3], (t.task_id, r)
    # the language LIBERO's benchmark gives a policy: the file name's words, scene prefix off
    t = BY_NAME["KITCHEN_SCENE10_close_the_top_drawer_of_the_cabinet"]
    assert t.benchmark_language == "close the top drawer of the cabinet"
    assert bddl.package_licence() == "MIT"


def test_reader_names_what_is_wrong():
    with pytest.raises(bddl.BddlError, match="never closed"):
        bddl.read_sexp("(define (problem x)")
    with pytest.raises(bddl.BddlError, match="without a matching"):
        bddl.read_sexp("(a))")
    with pytest.raises(bddl.BddlError, match="no :language"):
        bddl.parse_bddl("(define (problem p) (:objects a - b) (:goal (And (On a b))))")
    with pytest.raises(bddl.BddlError, match="have no type"):
        bddl.parse_bddl("(define (problem p) (:language x) (:objects a b) (:goal (On a b)))")


def test_at_least_110_of_130_are_set_up_and_each_other_says_why():
    done, skipped = map_tasks(TASKS)
    assert len(done) + len(skipped) == 130
    assert len(done) >= 110
    assert all(why for _, why in skipped)
    # what cannot be represented is named: the caddy's compartments, the wine rack, shelf layers
    reasons = " ".join(why for _, why in skipped)
    assert "compartments" in reasons and "wine rack" in reasons and "shelf layers" in reasons
    for m in done:
        for atom in parse_goal(m.goal):  # every goal is one of ours
            assert atom.predicate


def test_the_mapping_keeps_libero_words_and_directions():
    m = map_task(BY_NAME["LIVING_ROOM_SCENE5_put_the_red_mug_on_the_left_plate"])
    assert m.goal == "on(red_mug, white_plate)"
    assert m.names["red_mug"] == "red mug" and m.names["white_plate"] == "plate"
    spec = sample_scene(m, 3)
    pos = {p.name: (p.x, p.y) for p in spec.placements}
    # LIBERO's left plate (plate_1) stands on our left (+y, seen from behind the robot)
    assert pos["white_plate"][1] > pos["white_plate_2"][1]
    m = map_task(BY_NAME["KITCHEN_SCENE2_put_the_black_bowl_at_the_front_on_the_plate"])
    spec = sample_scene(m, 3)
    x = {p.name: p.x for p in spec.placements}
    # LIBERO's front bowl (bowl_1) is the one nearest our robot, the back one the farthest
    assert x["black_bowl"] < x["black_bowl_2"] < x["black_bowl_3"]
    goal = map_task(BY_NAME["KITCHEN_SCENE10_put_the_butter_at_the_back_in_the_top_drawer_of_"
                            "the_cabinet_and_close_it"]).goal
    assert goal == "in(yellow_box_2, top_drawer) and closed(top_drawer)"


def test_layouts_keep_the_landmarks_libero_names_a_look_alike_by():
    """"between the plate and the ramekin", "from table center": in every layout the bowl
    meant is still the one nearest the middle of the two, and of everything on the table."""
    from frankenbot.eval.libero.scenes import _span_centre

    for name, middle_of in (
            ("pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate",
             ("white_plate", "white_bowl")),
            ("pick_up_the_black_bowl_from_table_center_and_place_it_on_the_plate", None)):
        m = map_task(BY_NAME[name])
        for seed in range(6):
            spec = sample_scene(m, seed)
            pos = {p.name: (p.x, p.y) for p in spec.placements}
            if middle_of is None:
                point = _span_centre(list(spec.placements), families.fixture_map(spec.fixtures))
            else:
                a, b = (pos[n] for n in middle_of)
                point = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
            assert math.dist(pos["black_bowl"], point) < math.dist(pos["black_bowl_2"], point), (
                name, seed)


@pytest.mark.parametrize("name", [
    "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate",
    "pick_up_the_black_bowl_in_the_top_drawer_of_the_wooden_cabinet_and_place_it_on_the_plate",
    "pick_up_the_ketchup_and_place_it_in_the_basket",
    "KITCHEN_SCENE8_put_both_moka_pots_on_the_stove",
])
def test_scenes_sample_deterministically_and_start_unsolved(name):
    m = map_task(BY_NAME[name])
    a, b, c = sample_scene(m, 10000), sample_scene(m, 10000), sample_scene(m, 10001)
    assert a == b and a.placements != c.placements
    assert not goal_holds_at_start(a)
    assert {p.name for p in a.placements} == set(m.objects.values())
    fmap = families.fixture_map(a.fixtures)
    for p in a.placements:  # on the table in reach, or on/in something
        if p.z is None:
            assert 0.28 <= p.x <= 0.74 and -0.37 <= p.y <= 0.24, p
            assert not any(f.body_contains(p.x, p.y) for f in fmap.fixtures), p


def test_an_object_in_an_open_drawer_starts_in_the_part_pulled_out():
    """The camera looks into an open drawer only where it is out of the cabinet: the bowl
    LIBERO puts in the top drawer starts there, on the drawer's floor, on every seed."""
    m = map_task(BY_NAME[
        "pick_up_the_black_bowl_in_the_top_drawer_of_the_wooden_cabinet_and_place_it_on_the_plate"])
    for seed in range(6):
        spec = sample_scene(m, seed)
        fmap = families.fixture_map(spec.fixtures)
        cabinet = next(f for f in fmap.fixtures if f.kind == "cabinet")
        drawer = fmap.part("top_drawer")
        bowl = next(p for p in spec.placements if p.name == "black_bowl")
        assert not cabinet.body_contains(bowl.x, bowl.y), (seed, bowl)
        assert bowl.z is not None and bowl.z < drawer.position[2], seed


def test_goal_expressions_refuse_what_they_cannot_judge():
    with pytest.raises(SimError, match="unknown predicate"):
        parse_goal("near(a, b)")
    with pytest.raises(SimError, match="takes 2"):
        parse_goal("in(a)")
    with pytest.raises(SimError, match="cannot read"):
        parse_goal("in(a, b) or open(c)")
    spec = SceneSpec("bad", "x", (Placement("red_can", 0.45, 0.0),), "in(red_can, top_drawer)")
    with pytest.raises(SimError, match="not in the scene"):
        spec.validate()


# ------------------------------------------------------------------------- judged in the sim
@pytest.fixture(scope="module")
def world():
    from frankenbot.sim.world import SimWorld

    with SimWorld(task=None, seed=0, width=64, height=48) as w:
        yield w


def _put(world, name: str, xyz, settle: float = 0.4) -> None:
    world._set_pose(name, xyz, 0.0)
    world.advance(settle)


def test_basket_goal_holds_once_the_can_is_in_it(world):
    spec = sample_scene(map_task(BY_NAME["pick_up_the_alphabet_soup_and_place_it_in_the_"
                                         "basket"]), 10000)
    world.reset_scene(spec)
    assert not world.evaluate(0.1).success
    basket = world.object_states()["brown_basket"].position
    _put(world, "red_can", (basket[0], basket[1], 0.065))
    verdict = world.evaluate(0.2)
    assert verdict.success, verdict.text
    # the wrong object in the basket is not the goal
    world.reset_scene(spec)
    _put(world, "green_can", (basket[0], basket[1], 0.065))
    assert not world.evaluate(0.1).success


def test_drawer_goal_needs_the_object_inside_and_the_drawer_closed(world):
    m = map_task(BY_NAME["KITCHEN_SCENE10_put_the_butter_at_the_front_in_the_top_drawer_of_the_"
                         "cabinet_and_close_it"])
    spec = sample_scene(m, 10000)
    world.reset_scene(spec)
    assert world.fixture_states()["top_drawer"] > 0.1  # LIBERO's init opens it
    fmap = families.fixture_map(spec.fixtures)
    part = fmap.part("top_drawer")
    opening = world.fixture_states()["top_drawer"]
    cx, cy, cz = part.cavity_at(opening)
    floor = cz - part.cavity_size[2] / 2
    _put(world, "yellow_box", (cx, cy, floor + 0.02))
    verdict = world.evaluate(0.1)
    assert not verdict.success and "want closed" in verdict.text  # in, but still open
    world.reset_scene(spec)
    world.set_fixture_state("top_drawer", 0.0)
    cx, cy, cz = part.cavity_at(0.0)
    _put(world, "yellow_box", (cx, cy, floor + 0.02))
    verdict = world.evaluate(0.2)
    assert verdict.success, verdict.text


def test_stove_goal_needs_the_burner_lit_and_both_pots_on_it(world):
    spec = sample_scene(map_task(BY_NAME["KITCHEN_SCENE8_put_both_moka_pots_on_the_stove"]),
                        10000)
    world.reset_scene(spec)
    assert world.fixture_states()["stove_burner"] == 1.0  # LIBERO's init turns it on
    burner = families.fixture_map(spec.fixtures).part("stove_burner")
    bx, by, bz = burner.position
    top = bz + burner.size[2] / 2
    _put(world, "red_can", (bx - 0.035, by, top + 0.051))
    assert not world.evaluate(0.1).success  # one pot only
    _put(world, "red_can_2", (bx + 0.04, by, top + 0.051))
    verdict = world.evaluate(0.2)
    assert verdict.success, verdict.text
    world.set_fixture_state("stove_knob", 0.0)
    world.advance(0.1)
    assert not world.evaluate(0.1).success  # turned off: the goal wants it on


def test_relation_and_stacking_goals(world):
    spec = sample_scene(map_task(BY_NAME["LIVING_ROOM_SCENE6_put_the_chocolate_pudding_to_the_"
                                         "right_of_the_plate"]), 10000)
    world.reset_scene(spec)
    assert not world.evaluate(0.1).success
    plate = world.object_states()["white_plate"].position
    # right of the plate seen from behind the robot: -y, beside it
    _put(world, "brown_box", (plate[0], plate[1] - 0.15, 0.021))
    verdict = world.evaluate(0.2)
    assert verdict.success, verdict.text
    _put(world, "brown_box", (plate[0], plate[1] + 0.15, 0.021))
    assert not world.evaluate(0.1).success  # left of it
    spec = sample_scene(map_task(BY_NAME["LIVING_ROOM_SCENE4_stack_the_left_bowl_on_the_right_"
                                         "bowl_and_place_them_in_the_tray"]), 10000)
    world.reset_scene(spec)
    tray = world.object_states()["gray_tray"].position
    _put(world, "black_bowl_2", (tray[0], tray[1], 0.03))
    assert not world.evaluate(0.1).success  # in the tray, not stacked yet
    _put(world, "black_bowl", (tray[0], tray[1], 0.085), settle=0.6)
    verdict = world.evaluate(0.2)
    assert verdict.success, verdict.text


def test_fixture_relation_goal_in_front_of_the_stove(world):
    spec = sample_scene(map_task(BY_NAME["push_the_plate_to_the_front_of_the_stove"]), 10000)
    world.reset_scene(spec)
    assert not world.evaluate(0.1).success
    x, y, _ = families.SLOTS["stove"]
    # in front = towards the robot (-x) of the stove's front face (depth 0.26)
    _put(world, "white_plate", (x - 0.13 - 0.10, y, 0.007))
    verdict = world.evaluate(0.2)
    assert verdict.success, verdict.text
    assert math.isclose(world.object_states()["white_plate"].position[1], y, abs_tol=0.01)


def test_a_bad_scene_is_refused_and_the_world_is_unchanged(world):
    spec = sample_scene(map_task(BY_NAME["pick_up_the_milk_and_place_it_in_the_basket"]), 10000)
    world.reset_scene(spec)
    before = world.task
    bad = SceneSpec("bad", "x", (Placement("white_carton", 0.4, 0.0),),
                    "in(white_carton, microwave)", (FixturePlacement("cabinet", 0.42, 0.52),))
    with pytest.raises(SimError, match="not in the scene"):
        world.reset_scene(bad)
    assert world.task == before


@pytest.mark.slow
def test_a_scripted_program_solves_a_libero_task_in_the_sim():
    """The whole path below the planner: a LIBERO scene built from data, the executor running a
    program on the arm (ground-truth scene: perception is measured elsewhere), the BDDL goal
    judged by the oracle; the taught names reach the scene the brain sees."""
    from frankenbot.eval.stack import SimStack
    from frankenbot.planner.planner import Planner

    m = map_task(BY_NAME["LIVING_ROOM_SCENE6_put_the_chocolate_pudding_to_the_right_of_the_"
                         "plate"])
    spec = sample_scene(m, 0)
    with SimStack(scene="ground_truth", realtime_factor=3.0) as stack:
        instance = stack.reset(m.task.task_id, 0, scene=spec, names=m.names)
        assert instance.instruction == "put the chocolate pudding to the right of the plate"
        with stack.running():
            labels = {o.object_id: o.label for o in stack.scene().objects}
            assert labels["brown_box"] == "chocolate pudding" and labels["red_mug"] == "red mug"
            result = stack.executor(Planner()).run(
                'task "t" { main { pick(obj=brown_box)\n'
                'place_right_of(obj=brown_box, ref=white_plate)\nexit success } }',
                task_id="t", instruction=instance.instruction)
            stack.robot.stop()
        verdict = stack.world.evaluate()
    assert result.success and verdict.success, (result.reason, verdict.text)

"""The offline tier-3 recovery planner: plans from the current perceived scene and the failure."""

from __future__ import annotations

import math

import pytest

from frankenbot.anomaly.candidates import Call, Situation
from frankenbot.anomaly.escalation import failure_context_text
from frankenbot.common import AnomalyClass, AnomalyKind
from frankenbot.planner.planner import Planner, PlannerConfig
from frankenbot.planner.recovery import (
    FREE_CLEARANCE,
    RecoveryImpossible,
    failure_of,
    free_spot,
    plan_recovery,
)
from frankenbot.planner.request import FailureContext, PlanRequest
from frankenbot.program.catalog import default_catalog
from frankenbot.program.check import check_text
from frankenbot.state import Scene, SceneObject


def _block(name: str, x: float, y: float, z: float = 0.02) -> SceneObject:
    colour = name.split("_")[0]
    return SceneObject(name, name.replace("_", " "), "block", colour, (x, y, z), (0.04,) * 3)


def _scene(*objs: SceneObject, stale: bool = False) -> Scene:
    fixtures = (SceneObject("drawer", "drawer", "drawer", "", (0.72, 0.38, 0.06),
                            (0.2, 0.26, 0.12), is_fixture=True),)
    return Scene.of((*objs, *fixtures), stamp=1.0, stale=stale)


PLATE = SceneObject("white_plate", "white plate", "plate", "white", (0.5, 0.0, 0.006),
                    (0.18, 0.18, 0.012))
BOWL = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.45, 0.1, 0.025),
                   (0.15, 0.15, 0.05))


def _ctx(kind: AnomalyKind, call: Call | None, objects=(), held=None) -> FailureContext:
    s = Situation(kind, AnomalyClass.SEMI_PREDICTABLE, "detail", task="t", failed_call=call,
                  node_path="main/2", held_object=held, visible=(), objects=tuple(objects))
    return FailureContext("task \"t\" { main { exit success } }", failure_context_text(s),
                          "main/2")


def test_structured_fields_are_parsed_back_from_the_text_the_ros_node_sends():
    ctx = _ctx(AnomalyKind.TARGET_OCCUPIED, Call("place_in", {"obj": "red_block",
                                                              "container": "white_plate"}),
               ("white_plate", "orange_block"), "red_block")
    f = failure_of(ctx)
    assert f.kind == "target_occupied" and f.objects == ("white_plate", "orange_block")
    assert f.held_object == "red_block" and f.failed_call.startswith("place_in(obj=red_block")


def test_occupied_target_is_cleared_first_and_the_held_block_put_down():
    scene = _scene(_block("red_block", 0.5, 0.0, 0.15), _block("orange_block", 0.5, 0.0, 0.032),
                   PLATE)
    ctx = _ctx(AnomalyKind.TARGET_OCCUPIED, Call("place_in", {"obj": "red_block",
                                                              "container": "white_plate"}),
               ("white_plate", "orange_block"), "red_block")
    text, what = plan_recovery("put the red block on the white plate", scene, ctx)
    assert "orange_block" in what
    lines = [ln.strip() for ln in text.splitlines()]
    first = lines.index("main {") + 1
    assert lines[first].startswith("place_at(obj=red_block")
    assert lines[first + 1] == "pick(obj=orange_block)"
    assert lines[first + 2].startswith("place_at(obj=orange_block")
    assert "place_in(obj=red_block, container=white_plate)" in text
    assert check_text(text, default_catalog(), scene.ids()).ok


def test_a_pick_every_grasp_of_which_is_blocked_moves_the_blocker_first():
    # a marker lying against the one to pick: the pick names (object, what is in the way)
    orange = SceneObject("orange_marker", "orange marker", "marker", "orange",
                         (0.55, -0.08, 0.008), (0.134, 0.017, 0.016))
    brown = SceneObject("brown_marker", "brown marker", "marker", "brown",
                        (0.55, -0.06, 0.008), (0.134, 0.017, 0.016))
    scene = _scene(orange, brown, BOWL)
    ctx = _ctx(AnomalyKind.TARGET_OCCUPIED, Call("pick", {"obj": "orange_marker"}),
               ("orange_marker", "brown_marker"))
    text, what = plan_recovery("put the orange marker in the green bowl", scene, ctx)
    assert "brown_marker" in what
    lines = [ln.strip() for ln in text.splitlines()]
    first = lines.index("main {") + 1
    assert lines[first] == "pick(obj=brown_marker)"
    assert lines[first + 1].startswith("place_at(obj=brown_marker")
    assert "pick(obj=orange_marker)" in lines[first + 2:]
    assert check_text(text, default_catalog(), scene.ids()).ok
    # the same neighbour named by a full place target is not what the table clears
    ctx = _ctx(AnomalyKind.TARGET_OCCUPIED, Call("place_in", {"obj": "orange_marker",
                                                              "container": "green_bowl"}),
               ("green_bowl", "brown_marker"))
    text, what = plan_recovery("put the orange marker in the green bowl", scene, ctx)
    assert "pick(obj=brown_marker)" not in text


def test_unreachable_container_stops_with_the_reason():
    far = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.93, -0.55, 0.025),
                      (0.15, 0.15, 0.05))
    scene = _scene(_block("red_block", 0.4, 0.0), far)
    ctx = _ctx(AnomalyKind.MOTION_REJECTED, Call("place_in", {"obj": "red_block",
                                                              "container": "green_bowl"}))
    with pytest.raises(RecoveryImpossible, match="green bowl is no longer reachable"):
        plan_recovery("put the red block in the green bowl", scene, ctx)


def test_missing_object_and_dead_camera_stop_with_the_reason():
    ctx = _ctx(AnomalyKind.OBJECT_MISSING, Call("pick", {"obj": "red_block"}), ("red_block",))
    with pytest.raises(RecoveryImpossible, match="red block is no longer on the table"):
        plan_recovery("put the red block in the green bowl", _scene(BOWL), ctx)
    with pytest.raises(RecoveryImpossible, match="camera has stopped"):
        plan_recovery("put the red block in the green bowl",
                      _scene(_block("red_block", 0.4, 0.0), BOWL, stale=True), ctx)


def test_moved_container_is_planned_to_where_it_is_seen_now():
    scene = _scene(_block("red_block", 0.4, 0.0), BOWL)
    ctx = _ctx(AnomalyKind.OBJECT_MOVED, Call("place_in", {"obj": "red_block",
                                                           "container": "green_bowl"}),
               ("green_bowl",), None)
    text, what = plan_recovery("put the red block in the green bowl", scene, ctx)
    assert "re-planned" in what and "place_in(obj=red_block, container=green_bowl)" in text


def test_a_held_block_the_new_plan_does_not_start_with_is_put_down_first():
    scene = _scene(_block("red_block", 0.4, 0.0), _block("blue_block", 0.5, 0.1, 0.15), BOWL)
    ctx = _ctx(AnomalyKind.SCENE_STALE, Call("pick", {"obj": "red_block"}), (), "blue_block")
    text, _ = plan_recovery("put the red block in the green bowl", scene, ctx)
    body = [ln.strip() for ln in text.splitlines()]
    assert body[body.index("main {") + 1].startswith("place_at(obj=blue_block")


def test_free_spot_keeps_clear_of_every_object():
    objs = [_block(f"b{i}_block", 0.3 + 0.05 * i, 0.0) for i in range(6)]
    x, y = free_spot(_scene(*objs), [])
    assert all(((x - o.position[0]) ** 2 + (y - o.position[1]) ** 2) ** 0.5 > FREE_CLEARANCE
               for o in objs)


def test_planner_replan_refuses_an_impossible_task_with_zero_calls():
    ctx = _ctx(AnomalyKind.OBJECT_MISSING, Call("pick", {"obj": "red_block"}), ("red_block",))
    out = Planner(PlannerConfig(), None).replan(
        PlanRequest(instruction="put the red block in the green bowl", scene=_scene(BOWL)), ctx)
    assert not out.ok and out.vlm_calls == 0 and "no longer on the table" in out.message


def test_a_missing_referent_is_not_replaced_by_another_object():
    """'the block nearest to you' meant the block that was nearest when it was said: once it is
    gone the re-plan would take the next nearest one, which is not what was asked; a block like
    the missing one may stand in, and a plan that only leaves the missing one out stands."""
    old = ('task "t" { main { pick(obj=green_block)\n'
           '  place_in(obj=green_block, container=green_bowl)\n  exit success } }')
    s = Situation(AnomalyKind.OBJECT_MISSING, AnomalyClass.UNPREDICTABLE, "gone", task="t",
                  failed_call=Call("pick", {"obj": "green_block"}), node_path="main/1",
                  objects=("green_block",))
    ctx = FailureContext(old, failure_context_text(s), "main/1")
    purple_only = _scene(_block("purple_block", 0.35, 0.05), BOWL)
    with pytest.raises(RecoveryImpossible, match="green block is no longer on the table.*meant"):
        plan_recovery("put the block nearest to you into the green bowl", purple_only, ctx)
    # one like it (another green block) may stand in
    like_it = _scene(_block("green_block_2", 0.35, 0.05), BOWL)
    text, _ = plan_recovery("put the block nearest to you into the green bowl", like_it, ctx)
    assert "green_block_2" in text
    # clearing what is still there is still the task
    clear_old = ('task "t" { main { pick(obj=green_block)\n  place_in(obj=green_block, '
                 'container=green_bowl)\n  pick(obj=red_block)\n  place_in(obj=red_block, '
                 'container=green_bowl)\n  exit success } }')
    rest = _scene(_block("red_block", 0.35, 0.05), BOWL)
    text, _ = plan_recovery("put all the blocks in the green bowl", rest,
                            FailureContext(clear_old, failure_context_text(s), "main/1"))
    assert "red_block" in text and "green_block" not in text


def test_a_push_with_no_way_round_clears_what_stands_in_its_way_out_of_its_lane():
    """The push primitive names what blocks a push it cannot route round; the re-plan moves
    that thing first, to a free spot away from the push's lane and the spot it aims at."""
    from frankenbot import spatial

    plate = SceneObject("white_plate", "white plate", "plate", "white", (0.40, 0.12, 0.006),
                        (0.16, 0.16, 0.012))
    bowl = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.62, -0.2, 0.025),
                       (0.15, 0.15, 0.05))
    box = SceneObject("blue_box", "blue box", "box", "blue", (0.42, -0.08, 0.017),
                      (0.09, 0.05, 0.035))
    scene = _scene(plate, bowl, box)
    spot = spatial.spot_beside("in_front_of", bowl, plate.size, scene.objects,
                               held_id="white_plate")
    assert spatial.push_blockers(plate, (spot.x, spot.y), scene.objects) == ["blue_box"]
    call = Call("push_in_front_of", {"obj": "white_plate", "ref": "green_bowl"})
    ctx = _ctx(AnomalyKind.TARGET_OCCUPIED, call, ("green_bowl", "blue_box"))
    text, what = plan_recovery("push the white plate in front of the green bowl", scene, ctx)
    lines = [ln.strip() for ln in text.splitlines()]
    first = lines.index("main {") + 1
    assert lines[first] == "pick(obj=blue_box)" and "blue_box" in what
    x, y = (float(v.split("=")[1]) for v in lines[first + 1][:-1].split(", ")[1:])
    moved = SceneObject("blue_box", "blue box", "box", "blue", (x, y, 0.017), box.size)
    assert spatial.push_blockers(plate, (spot.x, spot.y), [plate, bowl, moved]) == []
    assert math.dist((x, y), (spot.x, spot.y)) > 0.12
    assert "push_in_front_of(obj=white_plate, ref=green_bowl)" in text
    # a failure of another kind names no lane: a box is not cleared off a place target
    place = _ctx(AnomalyKind.TARGET_OCCUPIED, Call("place_in", {"obj": "red_block",
                                                                "container": "white_plate"}),
                 ("white_plate", "blue_box"))
    text, _ = plan_recovery("push the white plate in front of the green bowl", scene, place)
    assert "pick(obj=blue_box)" not in text


def test_a_place_beside_with_every_spot_taken_moves_what_stands_on_the_first_choice():
    """everyday_relative 10151: a marker lay right of the plate where the mug was to go, and
    every spot within the relation's reach touched it. The place names it (spatial's
    NoFreeSpot.blockers), and the re-plan puts the held mug down, moves the marker away and
    plans the instruction again."""
    from frankenbot import spatial

    plate = SceneObject("pink_plate", "pink plate", "plate", "pink", (0.48, -0.01, 0.006),
                        (0.157, 0.154, 0.012))
    marker = SceneObject("orange_marker", "orange marker", "marker", "orange",
                         (0.517, -0.2, 0.008), (0.134, 0.02, 0.016))
    mug = SceneObject("yellow_mug", "yellow mug", "mug", "yellow", (0.5, 0.2, 0.15),
                      (0.085, 0.062, 0.081))
    scene = _scene(plate, marker, mug)
    with pytest.raises(spatial.NoFreeSpot) as caught:
        spatial.spot_beside("right_of", plate, mug.size, scene.objects, held_id="yellow_mug")
    assert caught.value.blockers == ("orange_marker",)
    call = Call("place_right_of", {"obj": "yellow_mug", "ref": "pink_plate"})
    ctx = _ctx(AnomalyKind.TARGET_OCCUPIED, call, ("pink_plate", *caught.value.blockers),
               held="yellow_mug")
    text, what = plan_recovery("put the yellow mug to the right of the pink plate", scene, ctx)
    assert "orange_marker" in what
    lines = [ln.strip() for ln in text.splitlines()]
    first = lines.index("main {") + 1
    assert lines[first].startswith("place_at(obj=yellow_mug")
    assert lines[first + 1] == "pick(obj=orange_marker)"
    x, y = (float(v.split("=")[1]) for v in lines[first + 2][:-1].split(", ")[1:])
    moved = SceneObject("orange_marker", "orange marker", "marker", "orange", (x, y, 0.008),
                        marker.size)
    spot = spatial.spot_beside("right_of", plate, mug.size, [plate, moved], held_id="yellow_mug")
    assert spatial.relation_holds("right_of", (spot.x, spot.y), plate.position[:2])
    assert "place_right_of(obj=yellow_mug, ref=pink_plate)" in text
    assert check_text(text, default_catalog(), scene.ids()).ok

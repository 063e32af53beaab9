"""Build and check frames: readings the scene decides between, carried objects, one block on
each block, and every frame a known task with every role bound (build.py, check.py)."""

from __future__ import annotations

import pytest
from understanding_scenes import block, red_in_green_bowl, with_objects

from frankenbot.eval.taskset import standard_scene
from frankenbot.planner.frames import (
    Frame,
    InstructionNotUnderstood,
    ObjectNotResolved,
    render_frames,
)
from frankenbot.planner.understanding import understand
from frankenbot.planner.understanding.check import check_frames
from frankenbot.planner.understanding.resolve import Binding
from frankenbot.state import SceneObject


def frames(text: str, scene=None) -> str:
    return render_frames(understand(text, scene or standard_scene()).frames)


def test_the_scene_decides_between_readings_of_one_clause():
    # nothing sits on anything: "yellow on blue on red" can only be a column
    assert frames("stack the yellow block on the blue block on the red block") == (
        "tower(a=red_block, b=blue_block, c=yellow_block)")
    # "the block in the green bowl | on the plate" or "the block | in the green bowl on the
    # plate": only the first holds where the red block lies in the green bowl
    assert frames("put the block in the green bowl on the white plate", red_in_green_bowl()) == (
        "put_in(obj=red_block, target=white_plate)")
    # both readings hold when the blue block already sits on the red one, and both end in
    # the same column: one reading, the one that moves least (a replan mid-tower reads so)
    stacked = with_objects(block("blue_block", 0.45, 0.10, 0.062))
    assert frames("stack the yellow block on the blue block on the red block", stacked) == (
        "stack(obj=yellow_block, target=blue_block)")


def test_readings_that_end_differently_are_asked_about():
    # the green bowl stands on the plate with the yellow block in it: "the yellow block | in
    # the green bowl on the plate" and "the yellow block in the green bowl | on the plate"
    # both bind and end in different places
    bowl = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.30, 0.0, 0.052),
                       (0.15, 0.15, 0.08))  # a deep bowl: the block in it is not on the plate
    scene = with_objects(bowl, block("yellow_block", 0.30, 0.0, 0.07))
    with pytest.raises(ObjectNotResolved, match="can be read as") as e:
        understand("put the yellow block in the green bowl on the white plate", scene)
    assert e.value.kind == "ambiguous"


def test_readings_the_scene_cannot_tell_apart_are_asked_about():
    with pytest.raises(ObjectNotResolved) as e:
        understand("block blue bowl", standard_scene())
    assert e.value.kind == "ambiguous"


def test_a_carried_object_with_nowhere_to_go_is_asked_about():
    with pytest.raises(ObjectNotResolved, match="where should the red block go"):
        understand("carry the red block over", standard_scene())
    assert frames("pick up the red block, carry it over and set it on the blue block") == (
        "stack(obj=red_block, target=blue_block)")


def test_two_blocks_on_one_block_is_asked_about():
    with pytest.raises(ObjectNotResolved, match="only one block fits"):
        understand("put the red block and the blue block on the yellow block", standard_scene())


def test_restated_clauses_and_a_pick_before_a_placing_are_one_step():
    assert frames("carefully, clear the table, putting all the blocks in the bin") == (
        "clear_table(target=gray_bin)")
    assert frames("grasp and raise the red block") == "pick_up(obj=red_block)"


def test_frames_the_planner_gets_are_known_tasks_with_every_role_bound():
    ctx = Binding(standard_scene())
    with pytest.raises(InstructionNotUnderstood, match="no task"):
        check_frames([Frame("juggle", (("obj", "red_block"),))], ctx, "juggle")
    with pytest.raises(InstructionNotUnderstood, match="unbound"):
        check_frames([Frame("put_in", (("obj", "red_block"),))], ctx, "put it")
    with pytest.raises(InstructionNotUnderstood, match="unbound"):
        check_frames([Frame("pick_up", (("obj", "purple_block"),))], ctx, "pick")

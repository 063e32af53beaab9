"""An open container that left the camera's view is forgotten (its rim is seen through), and one
that stands where it was remembered is never taken for gone: rendered MuJoCo frames."""

from __future__ import annotations

import math

import pytest

from frankenbot import resources
from frankenbot.eval.perception_eval import camera_of_world
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.pipeline import PerceptionPipeline

sim_world = pytest.importorskip("frankenbot.sim.world")


@pytest.fixture(scope="module")
def world():
    w = sim_world.SimWorld(seed=0)
    yield w
    w.close()


def _pipeline(world) -> PerceptionPipeline:
    return PerceptionPipeline(camera_of_world(world),
                              FixtureMap.load(resources.fixtures_path()))


def _frame(world, pipeline):
    rgb, depth = world.render_rgbd()
    scene = pipeline.process(rgb, depth, world.time, world.joint_positions())
    return scene, depth


@pytest.mark.parametrize("family,seed,hollow", [
    ("put_in_bowl", 0, "bowl"), ("sort_by_colour", 1, "bowl"), ("put_in_bowl", 7, "bowl"),
    ("clear_table", 0, "bin"), ("clear_table", 3, "bin"), ("put_on_plate", 3, "plate")])
def test_nothing_standing_where_it_was_seen_is_taken_for_gone(world, family, seed,
                                                              hollow) -> None:
    world.reset(family, seed)
    pipeline = _pipeline(world)
    scene, depth = _frame(world, pipeline)
    shapes = {t.detection.shape for t in pipeline.tracker.tracks}
    assert hollow in shapes, shapes  # the rim test (or, for the plate, the top test) is used
    # every track judged as if unseen, frame after frame: none may be "seen through"
    for _ in range(pipeline.config.rim_gone_frames + 1):
        assert pipeline._seen_through(pipeline.tracker.tracks, depth) == set()


def test_a_bowl_moved_out_of_view_is_forgotten_not_remembered_where_it_stood(world) -> None:
    task = world.reset("put_in_bowl", 0)
    bowl = task.params["target"]
    pipeline = _pipeline(world)
    for _ in range(2):  # seen in two frames: a confirmed track
        scene, _ = _frame(world, pipeline)
        assert scene.get(bowl) is not None
        world.advance(0.1)
    z = world.object_states()[bowl].position[2]
    world._set_pose(bowl, (0.93, -0.55, z + 0.002), 0.0)  # off the image (under the camera)
    world.advance(0.1)
    frames = pipeline.config.rim_gone_frames
    for _ in range(frames - 1):  # one look through the rim is not enough ...
        scene, _ = _frame(world, pipeline)
        assert scene.get(bowl) is not None
        world.advance(0.1)
    scene, _ = _frame(world, pipeline)  # ... the third in a row is
    assert scene.get(bowl) is None, scene.ids()
    assert scene.get(task.params["object"]) is not None  # the rest stays


def test_a_bowl_moved_out_of_reach_stays_in_view_and_is_followed(world) -> None:
    """move_container_away puts it where the camera sees it and the arm cannot reach it, so a
    brain can say why the task cannot be done."""
    from frankenbot.sim import layout

    task = world.reset("put_in_bowl", 0)
    bowl = task.params["target"]
    pipeline = _pipeline(world)
    _frame(world, pipeline)
    world.inject("move_container_away", "now", {})
    world.advance(0.1)
    assert any(r.event == "fired" for r in world.anomaly_log())
    for _ in range(pipeline.config.rim_gone_frames + 2):
        scene, _ = _frame(world, pipeline)
        world.advance(0.1)
    seen = scene.get(bowl)
    assert seen is not None and math.dist(seen.position[:2], layout.OUT_OF_REACH) < 0.02


def test_a_rim_mostly_hidden_by_the_arm_is_no_evidence_that_the_bowl_is_gone(world) -> None:
    # natural mix #121: the arm hid most of the red bowl's rim from the camera; the few rim
    # samples in view looked past it and the bowl was forgotten mid-task
    world.reset("put_in_bowl", 0)
    pipeline = _pipeline(world)
    _scene, depth = _frame(world, pipeline)
    n = pipeline.config.rim_samples
    bowls = [t for t in pipeline.tracker.tracks if t.detection.shape == "bowl"]
    assert bowls
    pipeline._depth_against = lambda points, depth: (n // 3, 0)  # the rest hidden
    for _ in range(pipeline.config.rim_gone_frames + 1):
        assert pipeline._seen_through(bowls, depth) == set()
    pipeline._depth_against = lambda points, depth: (n - 2, 2)  # in view and seen through
    gone = set()
    for _ in range(pipeline.config.rim_gone_frames):
        gone = pipeline._seen_through(bowls, depth)
    assert gone == {t.object_id for t in bowls}


def test_a_block_last_seen_at_the_arm_is_not_judged_gone_by_its_old_place(world) -> None:
    """Carried while the camera stopped: when frames resume, the block's old place is empty
    but it moved with the gripper, so it stays (occluded) for memory_s; one last seen away
    from the arm is judged gone at once."""
    import numpy as np

    task = world.reset("put_in_bowl", 0)
    block = task.params["object"]
    other = next(o for o in world.object_states() if o != block and o.endswith("block"))
    pipeline = _pipeline(world)
    _frame(world, pipeline)  # seen twice: confirmed tracks
    world.advance(0.05)
    scene, _ = _frame(world, pipeline)
    assert scene.get(block) is not None and scene.get(other) is not None
    tracks = pipeline.tracker.tracks
    p = np.array(next(t for t in tracks if t.object_id == block).detection.position)
    arm = np.array([[p + (0, 0, 0.02), p + (0, 0, 0.3)]])  # the gripper down at the block
    pipeline._note_at_arm(tracks, arm, world.time)
    for k, name in enumerate((block, other)):  # both leave their places, out of sight
        world._set_pose(name, (0.5 + 0.1 * k, 0.0, -0.4), 0.0)  # under the table
    world.advance(0.05)
    scene, _ = _frame(world, pipeline)
    assert scene.get(other) is None  # seen through: gone
    assert scene.get(block) is not None  # with the gripper, as far as anyone can tell
    world.advance(pipeline.config.memory_s + 0.5)
    scene, _ = _frame(world, pipeline)
    assert scene.get(block) is None  # memory_s later its old place still shows it is not there

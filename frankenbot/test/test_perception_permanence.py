"""Object permanence and temporal fusion in the tracker; a built tower stays in the scene."""

from __future__ import annotations

import numpy as np
import pytest

from frankenbot.perception.geometry import Detection
from frankenbot.perception.tracker import FUSE_JUMP, PERMANENT_HITS, Tracker
from frankenbot.program.predicates import on, visible
from frankenbot.state import Scene, WorldSnapshot


def det(pos, colour="blue", shape="block", size=(0.04, 0.04, 0.04)):
    return Detection(shape, colour, tuple(pos), size, 0.0, 0.9, 400)


def _objects(tr: Tracker, now: float):
    return {o.object_id: o for o in tr.scene_objects(now)}


def test_an_established_hidden_object_outlives_memory_and_is_marked_occluded():
    tr = Tracker(memory_s=2.0)
    for k in range(PERMANENT_HITS):
        tr.update([det((0.4, 0.0, 0.02))], 0.1 * k)
    tr.update([], 60.0)  # a minute hidden (a block stacked on it)
    obj = _objects(tr, 60.0)["blue_block"]
    assert obj.occluded and obj.position == pytest.approx((0.4, 0.0, 0.02))
    snap = WorldSnapshot(scene=Scene.of([obj], stamp=60.0))
    assert not visible(snap, {obj.object_id: obj}, "blue_block")
    # seen again: no longer occluded, same id
    tr.update([det((0.401, 0.0, 0.02))], 60.1)
    assert not _objects(tr, 60.1)["blue_block"].occluded


def test_evidence_of_absence_ends_it_and_a_one_frame_phantom_is_not_kept():
    tr = Tracker(memory_s=2.0)
    for k in range(PERMANENT_HITS):
        tr.update([det((0.4, 0.0, 0.02))], 0.1 * k)
    tr.update([det((0.6, 0.2, 0.01), colour="red", shape="plate")], 0.5)  # one noisy frame
    tr.update([], 30.0)
    assert set(_objects(tr, 30.0)) == {"blue_block"}
    tr.update([], 30.1, vacated={"blue_block"})  # the camera sees the table where it stood
    assert _objects(tr, 30.1) == {}


def test_a_track_is_reported_once_seen_in_two_frames_except_in_the_very_first():
    tr = Tracker(memory_s=2.0)
    tr.update([det((0.4, 0.0, 0.02))], 0.0)
    assert set(_objects(tr, 0.0)) == {"blue_block"}  # a single image is taken as it is
    tr.update([], 0.05)  # one frame that missed it does not take the first scene's block away
    assert set(_objects(tr, 0.05)) == {"blue_block"}
    # a fragment in one noisy frame is not reported; the block seen again is
    tr.update([det((0.4, 0.0, 0.02)), det((0.6, 0.2, 0.01), colour="red", shape="plate")], 0.1)
    assert set(_objects(tr, 0.1)) == {"blue_block"}
    tr.update([det((0.4, 0.0, 0.02)), det((0.6, 0.2, 0.01), colour="red", shape="plate")], 0.2)
    assert set(_objects(tr, 0.2)) == {"blue_block", "red_plate"}  # seen twice: real
    tr.reset()
    tr.update([det((0.5, 0.1, 0.02), colour="green")], 5.0)
    assert set(_objects(tr, 5.0)) == {"green_block"}  # after a reset, a first frame again


def test_a_piece_of_a_known_container_is_not_a_second_one():
    tr = Tracker(memory_s=2.0)
    plate = dict(colour="white", shape="plate", size=(0.18, 0.18, 0.012))
    for k in range(2):
        tr.update([det((0.43, 0.0, 0.006), **plate)], 0.1 * k)
    # the arm over the middle: two arcs; one keeps the plate's track, the other is no new plate
    arc = dict(plate, size=(0.15, 0.05, 0.012))
    arcs = [det((0.41, -0.04, 0.006), **arc), det((0.47, 0.04, 0.006), **arc)]
    for k in range(2, 5):
        tr.update(arcs, 0.1 * k)
    assert set(_objects(tr, 0.4)) == {"white_plate"}
    assert _objects(tr, 0.4)["white_plate"].position == pytest.approx((0.43, 0.0, 0.006))
    # a plate of that colour elsewhere is a new one
    for k in range(5, 7):
        tr.update([det((0.43, 0.0, 0.006), **plate), det((0.8, -0.3, 0.006), **plate)], 0.1 * k)
    assert set(_objects(tr, 0.6)) == {"white_plate", "white_plate_2"}


def test_a_static_object_is_averaged_and_a_move_restarts_the_mean():
    rng = np.random.default_rng(0)
    tr = Tracker()
    truth = np.array([0.5, -0.1, 0.02])
    singles = []
    for k in range(12):
        noisy = truth + rng.normal(0.0, 0.002, 3)
        singles.append(np.linalg.norm(noisy - truth))
        tr.update([det(noisy)], 0.1 * k)
    fused = np.array(_objects(tr, 1.2)["blue_block"].position)
    assert np.linalg.norm(fused - truth) < 0.5 * np.mean(singles)
    moved = truth + np.array([2 * FUSE_JUMP, 0.0, 0.0])
    tr.update([det(moved)], 1.3)
    assert np.allclose(_objects(tr, 1.3)["blue_block"].position, moved)


def test_confidence_grows_with_support():
    tr = Tracker()
    tr.update([det((0.4, 0.0, 0.02))], 0.0)
    first = _objects(tr, 0.0)["blue_block"].confidence
    for k in range(1, PERMANENT_HITS):
        tr.update([det((0.4, 0.0, 0.02))], 0.1 * k)
    assert _objects(tr, 0.3)["blue_block"].confidence > 2 * first


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["none", "realistic"])
def test_a_built_tower_keeps_all_three_blocks_with_on_for_100_frames(noise):
    from frankenbot import resources
    from frankenbot.eval.perception_eval import camera_of_world
    from frankenbot.fixture_map import FixtureMap
    from frankenbot.perception.calibration import calibrate_camera
    from frankenbot.perception.pipeline import PerceptionPipeline
    from frankenbot.sim import layout
    from frankenbot.sim.scripted import ScriptedArm
    from frankenbot.sim.sensor import SensorModel, sensor_params
    from frankenbot.sim.world import SimWorld

    fixtures = FixtureMap.load(resources.fixtures_path())
    with SimWorld(seed=3, task="tower", sensor=SensorModel(sensor_params(noise), 3)) as world:
        world.reset("tower", 3)
        camera = camera_of_world(world)
        if noise != "none":  # the brain calibrates its camera first, as on the robot
            shots = [world.render_rgbd() for _ in range(4)]
            camera = calibrate_camera(shots, camera, fixtures).camera
        pipeline = PerceptionPipeline(camera, fixtures)

        def look(n: int) -> Scene:
            scene = Scene()
            for _ in range(n):
                rgb, depth = world.render_rgbd()
                scene = pipeline.process(rgb, depth, world.time, world.joint_positions())
                world.advance(0.1)
            return scene

        look(5)
        bottom, middle, top = world.task.params["order"]
        arm = ScriptedArm(world)
        for block, base in ((middle, bottom), (top, middle)):
            arm.pick(block)
            look(2)
            x, y, z = world.object_states()[base].position
            arm.place_at(x, y, z + layout.BLOCK_SIZE + 0.005)
            look(3)
        truth = world.object_states()
        assert truth[middle].position[2] > truth[bottom].position[2] + 0.03  # a real tower
        assert truth[top].position[2] > truth[middle].position[2] + 0.03
        good = 0
        for _ in range(100):
            objs = {o.object_id: o for o in look(1).objects}
            snap = WorldSnapshot(scene=Scene.of(objs.values()))
            good += all(b in objs for b in (bottom, middle, top)) and on(
                snap, objs, middle, bottom) and on(snap, objs, top, middle)
        assert good == 100

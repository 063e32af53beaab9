"""Perception under D435-like noise: colour normalisation and the noise-aware thresholds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from frankenbot import resources
from frankenbot.eval.perception_eval import camera_of_world
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.calibration import calibrate_camera
from frankenbot.perception.colour import name_colour, rgb_to_hsv, unclip_red_hue
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.pipeline import PerceptionPipeline
from frankenbot.perception.segmentation import foreground
from frankenbot.sim.sensor import SensorModel, sensor_params
from frankenbot.sim.world import SimWorld


def test_a_clipped_orange_reads_orange_and_yellow_stays_yellow():
    raw = np.array([[255, 205, 25]] * 20 + [[255, 250, 60]] * 5, np.uint8)
    hsv = rgb_to_hsv(raw)
    assert name_colour(hsv[:20]) == "yellow"  # what the clipped pixels said before
    unclip_red_hue(hsv, raw)
    assert name_colour(hsv[:20]) == "orange"
    assert name_colour(hsv[20:]) == "yellow"  # green clipped too: left alone


@pytest.fixture(scope="module")
def world():
    w = SimWorld(seed=0, sensor=SensorModel(sensor_params("realistic"), 4))
    yield w
    w.close()


def test_table_noise_is_measured_and_sets_the_foreground_floor(world):
    world.reset("stack", 5)
    rgb, depth = world.render_rgbd()
    camera = camera_of_world(world)
    _, fg = foreground(rgb, depth, camera, PerceptionConfig())
    # realistic: 2.5 mm at 1 m; the table's robust estimate lands near it
    assert 0.0015 < fg.noise_a < 0.004
    clean_world = SimWorld(seed=0)
    try:
        clean_world.reset("stack", 5)
        _, clean = foreground(*clean_world.render_rgbd(), camera, PerceptionConfig())
    finally:
        clean_world.close()
    assert clean.noise_a < 0.0005


def test_noisy_frames_give_no_phantoms_and_right_colours(world):
    fixtures = FixtureMap.load(resources.fixtures_path())
    world.reset("sort_by_colour", 6)
    shots = []
    for _ in range(4):
        shots.append(world.render_rgbd())
        world.advance(0.1)
    calib = calibrate_camera(shots, camera_of_world(world), fixtures)
    config = PerceptionConfig(table_rgb=calib.table_rgb)
    pipeline = PerceptionPipeline(calib.camera, fixtures, config)
    for _ in range(3):
        rgb, depth = world.render_rgbd()
        scene = pipeline.process(rgb, depth, world.time, world.joint_positions())
        world.advance(0.1)
    seen = sorted((o.colour, o.shape) for o in scene.objects if not o.is_fixture)
    truth = sorted((s.colour, s.shape) for s in world.object_states().values()
                   if s.position[2] > -0.2)
    assert seen == truth


def test_the_point_count_a_cluster_needs_falls_with_the_square_of_its_range():
    from frankenbot.perception.config import PerceptionConfig
    from frankenbot.perception.segmentation import Cluster, _enough_points

    cam = _camera_for_range_test()
    eye = cam.matrix[:3, 3]
    config = PerceptionConfig()

    def cluster_at(distance: float, n: int) -> Cluster:
        direction = np.array([-0.6, 0.5, -0.6])
        centre = eye + direction / np.linalg.norm(direction) * distance
        pts = np.repeat(centre[None, :], n, axis=0)
        return Cluster(pts, np.full(n, 0.02), np.zeros((n, 3)), np.zeros((n, 2), int), 0)

    # 16 samples: enough at 1.4 m (needs ~13), too few at 0.8 m (needs ~39)
    kept = _enough_points([cluster_at(1.4, 16), cluster_at(0.8, 16)], cam, config)
    assert [round(float(np.linalg.norm(c.points[0] - eye)), 1) for c in kept] == [1.4]
    # never below the floor, however far
    assert _enough_points([cluster_at(5.0, config.min_points_floor - 1)], cam, config) == []


def _camera_for_range_test():
    from frankenbot.perception.camera import CameraModel, Intrinsics

    pose = np.eye(4)
    pose[:3, 3] = (1.15, -0.62, 0.78)
    return CameraModel(Intrinsics(600.0, 600.0, 320.0, 240.0, 640, 480),
                       tuple(tuple(float(v) for v in row) for row in pose))


def test_a_white_or_pale_pink_plate_in_the_noise_band_stands_out_where_lifted_table_does_not():
    """A 12 mm plate sits about three noise sigmas above a far table, where a patch of table
    lifted by correlated noise can reach too. The beige table's own colour must clear the full
    evidence; a white cluster (no saturation, no darker than the table: not a shadow) is no
    table and counts at the vivid colours' lower bar, as does a pale pink one (a hue far from
    the table's); a grey one (a shadow) and a pale orange one (the table's hue) do not."""
    from frankenbot.perception.colour import ACHROMATIC_GROUP, SEG_NAMES
    from frankenbot.perception.segmentation import Cluster, _stand_out

    cam = _camera_for_range_test()
    config = PerceptionConfig(table_rgb=(183.0, 157.0, 124.0))
    table_value = 0.9
    noise_a = 0.004
    t = cam.matrix
    centre = t[:3, 3] + np.array([-0.6, 0.5, -0.6]) / np.linalg.norm([-0.6, 0.5, -0.6]) * 1.2
    sigma = noise_a * float((centre - t[:3, 3]) @ t[:3, 2]) ** 2
    height = 2.5 * sigma  # between the vivid bar (2) and the full one (3)
    n = max(300, config.min_points)  # no small-cluster penalty

    def cluster(hsv: tuple[float, float, float], group: int) -> Cluster:
        return Cluster(np.repeat(centre[None, :], n, axis=0), np.full(n, height),
                       np.tile(np.array(hsv, np.float32), (n, 1)), np.zeros((n, 2), int), group)

    white = cluster((0.0, 0.0, 1.0), ACHROMATIC_GROUP)
    grey = cluster((0.0, 0.0, 0.5), ACHROMATIC_GROUP)
    table = cluster((34.0, 0.32, 0.9), SEG_NAMES.index("brown"))
    pink = cluster((330.0, 0.48, 1.0), SEG_NAMES.index("pink"))
    orange = cluster((30.0, 0.48, 0.9), SEG_NAMES.index("orange"))
    kept = _stand_out([white, grey, table, pink, orange], noise_a, cam, config,
                      SEG_NAMES.index("brown"), table_value)
    assert [float(c.hsv[0, 0]) for c in kept] == [0.0, 330.0]  # white and pink only
    assert float(kept[0].hsv[0, 2]) == 1.0
    # where the table itself reads achromatic, a white plate shares its colour group: a
    # 12 mm cluster of that group must reach 15 mm unless it is much brighter than the table
    plate = cluster((40.0, 0.16, 0.97), ACHROMATIC_GROUP)
    patch = cluster((40.0, 0.28, 0.78), ACHROMATIC_GROUP)
    plate, patch = (replace(c, heights=np.full(n, 0.0125)) for c in (plate, patch))
    kept = _stand_out([plate, patch], noise_a * 0.5, cam, config, ACHROMATIC_GROUP, 0.75)
    assert [round(float(c.hsv[0, 2]), 2) for c in kept] == [0.97]
    # a tray of the table's gray: its floor hugs the table (median 11 mm) but its rim, a fifth
    # of its samples, stands 3 cm; lifted table noise of that median reaches nowhere near
    floor = np.full(n, 0.011)
    floor[: n // 5] = 0.03
    tray = replace(patch, heights=floor)
    lifted = replace(patch, heights=np.full(n, 0.009) + np.linspace(0.0, 0.008, n))
    kept = _stand_out([tray, lifted], noise_a * 0.5, cam, config, ACHROMATIC_GROUP, 0.75)
    assert [float(np.max(c.heights)) for c in kept] == [0.03]
    assert config.noise_cluster_sigmas * sigma > height > 2.0 * sigma

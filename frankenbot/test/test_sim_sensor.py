"""The sim's D435-like sensor model: what it does to frames, seeded, on both render paths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.errors import ConfigError
from frankenbot.eval.perception_eval import pose_error
from frankenbot.sim.render_process import RenderProcess
from frankenbot.sim.sensor import SensorModel, parse_overrides, sensor_params
from frankenbot.sim.world import SimWorld


@pytest.fixture(scope="module")
def world():
    w = SimWorld(seed=2, task="stack")
    yield w
    w.close()


def _sense(world, profile: str, sensor_seed: int = 1, episode: int = 2, **over):
    world.set_sensor(SensorModel(sensor_params(profile, over), sensor_seed))
    world.reset("stack", episode)
    stamp, qpos = world.render_state()
    clean = world.render_qpos(qpos)
    return clean, world.sense(*clean, stamp)


def test_none_is_the_clean_render(world):
    (rgb0, d0), (rgb, d) = _sense(world, "none")
    assert np.array_equal(rgb0, rgb) and np.array_equal(d0, d)
    assert np.allclose(world.true_camera_pose(), world.camera_pose())


def test_depth_noise_grows_with_the_square_of_range(world):
    (_, d0), (_, d) = _sense(world, "realistic", flying_pixel_rate=0.0, edge_hole_rate=0.0,
                             ir_shadow=False, speckle_rate=0.0, pose_error_m=0.0,
                             pose_error_deg=0.0, light_intensity_sigma=0.0,
                             light_direction_deg=0.0)
    assert d.dtype == np.uint16  # 1 mm units, like the RealSense default
    ok = (d0 > 0) & (d > 0)
    z = d0[ok] / 1000.0
    r = (d[ok].astype(float) - d0[ok]) / 1000.0
    near, far = (z > 0.75) & (z < 0.95), (z > 1.35) & (z < 1.6)
    s_near, s_far = r[near].std(), r[far].std()
    expected = (np.median(z[far]) / np.median(z[near])) ** 2
    assert 0.7 * expected < s_far / s_near < 1.4 * expected
    assert 0.6 < s_near / (0.0025 * np.median(z[near]) ** 2) < 1.5


def test_edges_get_holes_and_flying_pixels(world):
    (_, d0), (_, d) = _sense(world, "realistic", depth_sigma_1m=0.0, speckle_rate=0.0)
    z0 = d0.astype(float)
    step = np.zeros_like(z0, dtype=bool)
    step[:, 1:] |= np.abs(np.diff(z0, axis=1)) > 40
    step[:, :-1] |= np.abs(np.diff(z0, axis=1)) > 40
    valid = d0 > 0
    hole_edge = np.mean(d[step & valid] == 0)
    hole_flat = np.mean(d[~step & valid] == 0)
    assert hole_edge > 0.2 and hole_flat < 0.02
    # flying pixels: depths well away from both sides of the step
    lo = np.minimum(z0, np.roll(z0, 1, axis=1))
    hi = np.maximum(z0, np.roll(z0, 1, axis=1))
    between = step & (d > lo + 10) & (d < hi - 10)
    assert np.count_nonzero(between) > 50


def test_same_seeds_same_frames_and_other_episode_other_noise(world):
    _, (rgb1, d1) = _sense(world, "realistic", sensor_seed=4, episode=5)
    _, (rgb2, d2) = _sense(world, "realistic", sensor_seed=4, episode=5)
    _, (rgb3, d3) = _sense(world, "realistic", sensor_seed=4, episode=6)
    assert np.array_equal(rgb1, rgb2) and np.array_equal(d1, d2)
    assert not np.array_equal(d1, d3)


def test_exposure_and_white_balance_drift_over_time():
    s = SensorModel(sensor_params("realistic"), 3)
    s.reset_episode(1)
    img = np.full((8, 8, 3), 128, np.uint8)
    depth = np.full((8, 8), 1000, np.uint16)
    gains = []
    for t in np.arange(0.0, 120.0, 0.1):  # a 10 Hz camera for two minutes
        s.apply(img, depth, float(t), 460.0)
        gains.append(s.colour_gains.copy())
    g = np.array(gains)
    assert g[:, 1].std() > 0.02  # exposure wanders
    assert (g[:, 0] / g[:, 1]).std() > 0.01  # so does the red/green balance
    assert np.diff(g[:, 1]).std() < 0.25 * g[:, 1].std()  # slowly, not frame to frame


def test_pose_error_moves_the_true_camera_not_the_given_one(world):
    nominal = world.camera_pose()
    world.set_sensor(SensorModel(sensor_params("realistic"), 7))
    assert np.allclose(world.camera_pose(), nominal)
    dt, dang = pose_error(world.true_camera_pose(), nominal)
    assert math.isclose(dt, 0.005, rel_tol=1e-6) and math.isclose(dang, 0.5, rel_tol=1e-6)


def test_render_process_draws_the_perturbed_camera_and_lights(world):
    world.set_sensor(SensorModel(sensor_params("realistic"), 7))
    world.reset("stack", 3)
    rgb, depth = world.render_clean()
    _, qpos = world.render_state()
    with RenderProcess(world.model_xml, world.width, world.height) as proc:
        rgb2, depth2 = proc.render(qpos, world.render_settings())
        rgb_nominal, _ = proc.render(qpos, nominal_settings(world))
    assert np.mean(np.abs(rgb.astype(int) - rgb2)) < 1.0
    assert np.mean(np.abs(depth.astype(int) - depth2)) < 1.0
    assert np.mean(np.abs(rgb.astype(int) - rgb_nominal)) > 1.0  # the settings matter


def test_render_process_applies_the_sensor_model_as_the_world_would(world):
    """The ROS sim senses in its render process: the same frames as SimWorld.sense, noise
    streams and drift included, and a new episode (reset) reaches the child."""
    world.set_sensor(SensorModel(sensor_params("realistic"), 7))
    stamps = (1.0, 1.1, 1.25)
    with RenderProcess(world.model_xml, world.width, world.height) as proc:
        for seed in (3, 4):
            world.reset("stack", seed)
            _, qpos = world.render_state()
            settings = world.render_settings()
            spec = world.sensor_spec()
            in_child = [proc.render(qpos, settings, spec, t) for t in stamps]
            world.reset("stack", seed)  # the same episode again: the world's streams restart
            assert world.sensor_spec().episode == spec.episode + 1
            in_world = [world.sense(*proc.render(qpos, settings), t) for t in stamps]
            for (rgb_c, depth_c), (rgb_w, depth_w) in zip(in_child, in_world, strict=True):
                assert np.array_equal(rgb_c, rgb_w) and np.array_equal(depth_c, depth_w)
            assert not np.array_equal(in_child[0][1], in_child[1][1])  # fresh noise per frame


def nominal_settings(world) -> np.ndarray:
    from frankenbot.sim.camera import RenderSettings

    fresh = SimWorld(seed=0)
    try:
        return RenderSettings.of_model(fresh.model).vector()
    finally:
        fresh.close()


def test_bad_profiles_and_parameters_are_refused():
    with pytest.raises(ConfigError, match="unknown sensor_noise"):
        sensor_params("loud")
    with pytest.raises(ConfigError, match="unknown setting depth_sigma"):
        sensor_params("realistic", {"depth_sigma": 1})
    with pytest.raises(ConfigError, match=">= 0"):
        sensor_params("realistic", {"depth_sigma_1m": -1})
    assert parse_overrides("pose_error_m=0, ir_shadow=false") == {
        "pose_error_m": "0", "ir_shadow": "false"}
    assert sensor_params("harsh", parse_overrides("ir_shadow=false")).ir_shadow is False
    with pytest.raises(ConfigError, match="key=value"):
        parse_overrides("pose_error_m")


def _ir_shadow_reference(z: np.ndarray, valid: np.ndarray, fx: float, baseline: float
                         ) -> np.ndarray:
    """The shifted-comparison form the running maximum replaced."""
    disp = np.zeros_like(z)
    np.divide(fx * baseline, z, out=disp, where=valid)
    shadow = np.zeros(z.shape, dtype=bool)
    span = int(min(32, math.ceil(float(disp.max()) - float(disp[valid].min()))))
    for k in range(1, span + 1):
        shadow[:, :-k] |= disp[:, k:] - disp[:, :-k] >= k
    return shadow & valid


def _edges_reference(model: SensorModel, z: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Edge pixels as the np.roll form found them."""
    best = np.zeros_like(z)
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        nb = np.roll(z, (dr, dc), axis=(0, 1))
        diff = np.abs(nb - z)
        diff[~valid | (nb <= 0)] = 0.0
        best = np.maximum(best, diff)
    edge = best > model.params.discontinuity_m
    edge[0, :] = edge[-1, :] = edge[:, 0] = edge[:, -1] = False
    return edge


def test_fast_depth_effects_match_their_plain_forms():
    """IR shadow, edge finding and the smooth field's upsampling, written for speed (issue 16),
    give what the plain forms give on a stepped depth image with holes."""
    from scipy import ndimage

    from frankenbot.sim.sensor import _linear_index, _upsample

    rng = np.random.default_rng(3)
    z = np.full((60, 80), 0.9, np.float32)
    z[20:40, 30:50] = 0.6  # a box on the table
    z[5:10, 60:75] = 0.45
    z += rng.normal(0, 0.002, z.shape).astype(np.float32)
    z[rng.random(z.shape) < 0.03] = 0.0  # holes
    valid = z > 0
    model = SensorModel(sensor_params("harsh"), 1)
    fx = 600.0
    assert np.array_equal(model._ir_shadow(z, valid, fx),
                          _ir_shadow_reference(z, valid, fx, model.params.baseline_m))
    model.params = sensor_params("harsh", {"edge_hole_rate": 1.0, "flying_pixel_rate": 0.0})
    _, holes = model._edges(z, valid)
    assert np.array_equal(holes, _edges_reference(model, z, valid))
    coarse = rng.standard_normal((7, 9)).astype(np.float32)
    fine = _upsample(coarse, _linear_index(7, 7 * 12, 60), _linear_index(9, 9 * 12, 80))
    zoomed = ndimage.zoom(coarse, 12, order=1, prefilter=False)[:60, :80]
    assert np.allclose(fine, zoomed, atol=1e-5)

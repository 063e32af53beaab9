"""SimRunner: physics on its own thread at a real-time factor, joint states and frames."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from frankenbot.errors import SimError
from frankenbot.sim.render_process import RenderProcess
from frankenbot.sim.runner import SimRunner
from frankenbot.sim.world import SimWorld


@pytest.fixture(scope="module")
def world():
    w = SimWorld(task="pick_up", seed=1, width=160, height=120)
    yield w
    w.close()


@pytest.mark.wall_clock
def test_runner_keeps_real_time_and_emits_joint_states_above_100hz(world):
    stamps: list[float] = []
    runner = SimRunner(world, realtime_factor=1.0, rate_hz=125.0, render=False)
    runner.on_joint_state(lambda s: stamps.append(s.stamp))
    t0, wall0 = world.time, time.monotonic()
    with runner:
        time.sleep(1.5)
    sim_elapsed = world.time - t0
    wall = time.monotonic() - wall0
    assert 0.5 * wall < sim_elapsed < 1.1 * wall  # loose: CI machines are shared
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    assert rate == pytest.approx(125.0, rel=0.02)
    assert np.all(np.diff(stamps) > 0)
    assert runner.latest_joint_state() is not None and not runner.running


def test_fast_runner_outpaces_real_time_and_renders_frames(world):
    frames = []
    runner = SimRunner(world, realtime_factor=math.inf, camera_rate=10.0)
    runner.on_frame(frames.append)
    t0 = world.time
    with runner:
        time.sleep(1.0)
    assert world.time - t0 > 2.0
    assert frames and frames[-1].rgb.shape == (120, 160, 3)
    stamps = [f.stamp for f in frames]
    assert np.all(np.diff(stamps) > 0)
    assert (len(stamps) - 1) / (stamps[-1] - stamps[0]) <= 10.0 * 1.1  # camera_rate, sim time


def test_camera_freeze_stops_frames_but_not_physics(world):
    world.reset("pick_up", seed=1)
    world.inject("camera_freeze", "now")
    frames, ticks = [], []
    runner = SimRunner(world, realtime_factor=4.0, camera_rate=10.0)
    runner.on_frame(frames.append)
    runner.on_joint_state(ticks.append)
    with runner:
        time.sleep(0.8)
    assert ticks and not frames
    world.reset("pick_up", seed=1)


def test_render_process_draws_the_same_frame_as_in_process(world):
    world.reset("put_in_bowl", seed=2)
    rgb, depth = world.render_clean()
    _, qpos = world.render_state()
    with RenderProcess(world.model_xml, world.width, world.height) as proc:
        rgb2, depth2 = proc.render(qpos, world.render_settings())
    assert np.mean(np.abs(rgb.astype(int) - rgb2)) < 1.0
    assert np.mean(np.abs(depth.astype(int) - depth2)) < 1.0


def test_runner_rejects_bad_settings(world):
    with pytest.raises(SimError, match="realtime_factor"):
        SimRunner(world, realtime_factor=0.0)
    with pytest.raises(SimError, match="rate_hz"):
        SimRunner(world, rate_hz=1000.0)
    with pytest.raises(SimError, match="camera_rate"):
        SimRunner(world, camera_rate=float("nan"))

"""Enrolling objects from the simulator's camera: one object alone on the table, moved and
turned between views, each view perceived by the real pipeline and its shape signature kept
(``perception/catalogue.enrol`` makes the prototype). ``frankenbot objects enroll --sim``
uses it; the shipped ``config/objects.yaml`` was made with it from every sim object.

Only the sim's part is here: where the object stands. What is measured is what perception
measures of any camera frame, so a robot enrolment (``bringup/objects_cli.py``) gives the same
kind of prototype from real views.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from dataclasses import replace
from typing import Any, Callable, Sequence

import numpy as np

from frankenbot.errors import ConfigError
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.catalogue import ObjectCatalogue, Prototype, enrol_views
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.pipeline import PerceptionPipeline
from frankenbot.perception.signature import Signature

ENROL_REGION = ((0.26, 0.70), (-0.34, 0.20))  # m: where the object is put for its views
SETTLE_S = 0.4  # s the object settles (a ball rolls to rest) before a view


def view_signatures(world: Any, name: str, views: int, seed: int, camera: Any,
                    config: PerceptionConfig, log: Callable[[str], None] | None = None,
                    noise: list[float] | None = None, yaws: Sequence[float] | None = None
                    ) -> tuple[list[Signature], list[str]]:
    """Signatures and colours of ``views`` views of sim object ``name`` alone on the table,
    each at a new place and yaw (drawn from ``seed``; ``yaws``: these yaws instead);
    ``noise`` gets each view's depth noise (m, RMS)."""
    noise = noise if noise is not None else []
    from frankenbot.sim import objects

    spec = objects.OBJECT_BY_NAME.get(name)
    if spec is None:
        raise ConfigError(f"no sim object {name!r}; known: {', '.join(objects.OBJECT_BY_NAME)}")
    for other in list(world.object_states()):
        world.remove_object(other)
    fmap = FixtureMap.from_data(world.fixture_map_data())
    # an empty catalogue: every object is unknown, measured, and kept whole
    pipeline = PerceptionPipeline(camera, fmap, config, catalogue=ObjectCatalogue())
    rng = np.random.default_rng([abs(int(seed)), zlib.crc32(name.encode())])
    (x0, x1), (y0, y1) = ENROL_REGION
    sigs: list[Signature] = []
    colours: list[str] = []
    noise.clear()
    if yaws is not None and len(yaws) != views:
        raise ConfigError(f"{views} views need {views} yaws, got {len(yaws)}")
    for k in range(views):
        if name in world.object_states():
            world.remove_object(name)
        x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
        yaw = float(rng.uniform(-math.pi, math.pi)) if yaws is None else float(yaws[k])
        world.add_object(name, (x, y, spec.size[2] / 2 + 0.001), yaw)
        world.advance(SETTLE_S)
        rgb, depth = world.render_rgbd()
        pipeline.reset()
        result = pipeline.process_frame(rgb, depth, world.time, world.joint_positions())
        dets = [d for d in result.detections if d.signature is not None]
        if not dets:
            if log:
                log(f"  view {k + 1}: nothing seen")
            continue
        d = max(dets, key=lambda d: d.n_points)  # alone on the table: the biggest is it
        sigs.append(d.signature)  # type: ignore[arg-type]
        colours.append(d.colour)
        noise.append(d.sigma)
    world.remove_object(name)
    return sigs, colours


def calibrated_camera(world: Any, seed: int) -> tuple[Any, PerceptionConfig]:
    """The camera model and perception config of the world's installation, calibrated on its
    free scene ``seed`` when the camera is noisy (a noisy sim camera's pose is off, as a
    robot's is)."""
    from frankenbot.eval.perception_eval import camera_of_world
    from frankenbot.perception.calibration import calibrate_camera

    world.reset(None, seed)
    camera, config = camera_of_world(world), PerceptionConfig()
    if not world.sensor.active:
        return camera, config
    shots = []
    for _ in range(6):
        shots.append(world.render_rgbd())
        world.advance(0.1)
    calib = calibrate_camera(shots, camera, FixtureMap.from_data(world.fixture_map_data()))
    if calib.table_rgb is not None:
        config = replace(config, table_rgb=calib.table_rgb)
    return calib.camera, config


def spread_yaws(views: int, installs: int, seed: int) -> list[list[float]]:
    """The yaws of ``views`` views, per installation: evenly spread over the full turn from
    a phase drawn from ``seed``, the installations interleaved. Drawn at random, nine views
    of a lemon were all seen from the side and its prototype knew no end-on view."""
    phase = float(np.random.default_rng([abs(int(seed)), 7]).uniform(0.0, 2 * math.pi))
    turn = [(phase + 2 * math.pi * g / views + math.pi) % (2 * math.pi) - math.pi
            for g in range(views)]
    return [turn[k::installs] for k in range(installs)]


def enrol_in_sim(category: str, name: str, *, views: int = 24, noise: str = "realistic",
                 installs: int = 3, seed: int = 0, world: Any = None,
                 cameras: dict[int, tuple[Any, PerceptionConfig]] | None = None,
                 log: Callable[[str], None] | None = None,
                 sigmas: list[float] | None = None) -> tuple[Prototype, ...]:
    """The prototypes of sim object ``name`` as category ``category`` (``enrol_views``: one,
    or two when its views fall into two modes) from ``views`` views spread
    over ``installs`` camera installations (sensor seeds 1..installs, each calibrated first):
    what varies between cells (the calibration, the lights) is part of what it measures.
    ``cameras``: calibrations already made, by sensor seed (filled in); ``sigmas`` gets the
    views' depth noise."""
    from frankenbot.sim.sensor import SensorModel, sensor_params

    if installs < 1:
        raise ConfigError(f"installs must be >= 1, got {installs}")
    own = world is None
    if world is None:
        from frankenbot.sim.world import SimWorld

        world = SimWorld()
    cameras = cameras if cameras is not None else {}
    params = sensor_params(noise)
    yaws = spread_yaws(views, installs, seed)
    sigs: list[Signature] = []
    colours: list[str] = []
    try:
        for k in range(installs):
            sensor_seed = k + 1
            world.set_sensor(SensorModel(params, sensor_seed))
            if sensor_seed not in cameras:
                cameras[sensor_seed] = calibrated_camera(world, seed)
            else:
                world.reset(None, seed)
            camera, config = cameras[sensor_seed]
            n = views // installs + (1 if k < views % installs else 0)
            view_noise: list[float] = []
            s, c = view_signatures(world, name, n, seed * 100 + k, camera, config, log,
                                   view_noise, yaws[k])
            sigs += s
            colours += c
            if sigmas is not None:
                sigmas += view_noise
    finally:
        if own:
            world.close()
    colour = Counter(colours).most_common(1)[0][0] if colours else ""
    return enrol_views(category, name, colour, sigs,
                       source=f"sim, noise {noise}, {installs} installations, seed {seed}")

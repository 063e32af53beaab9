"""Builds a ready ``Primitives`` for one robot from the shipped config files.

The executor (in-process or in its node) calls ``build_primitives(robot)``; tests and the
benchmark do the same, so everyone runs the same limits, geometry and fixtures. The motion
backend is the JTC one (analytic IK + joint trajectory controller, works everywhere) unless the
caller passes another: the executor node passes MoveItPy's (``nodes/moveit_backend.py``, ROS
only) with ``motion_backend: moveit``. The fixture map is a provider (the sim's per-scene map,
the map a node received last) or, by default, the cell's file.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

from frankenbot import resources
from frankenbot.errors import ConfigError
from frankenbot.fixture_map import FixtureMap, FixtureMapProvider
from frankenbot.motion.config import ArmConfig, load_arm_config
from frankenbot.motion.jtc_backend import JtcBackend
from frankenbot.motion.kinematics import UR5eKinematics
from frankenbot.motion.safety import SafetyEnvelope
from frankenbot.ports import PixelResolver, RobotInterface
from frankenbot.primitives.config import PrimitiveConfig
from frankenbot.primitives.primitives import Primitives

# (robot, arm config, kinematics, envelope) -> a MotionBackend other than the JTC one
MotionFactory = Callable[[RobotInterface, ArmConfig, UR5eKinematics, SafetyEnvelope], Any]


def build_primitives(robot: RobotInterface, *, arm_config: str | Path | None = None,
                     fixtures: str | Path | None = None,
                     primitive_config: PrimitiveConfig | None = None,
                     motion: MotionFactory | None = None, pixels: PixelResolver | None = None,
                     tcp_offset: float | None = None,
                     fixture_map: FixtureMapProvider | None = None) -> Primitives:
    """Primitives over ``robot`` with config/safety.yaml and the fixture map: ``fixture_map``
    (a provider of the current map) or else the file ``fixtures`` (default
    config/scene_fixtures.yaml).

    ``tcp_offset`` replaces the file's ``motion.tcp_offset`` (the real robot's comes from the
    gripper's description, frankenbot.tcp)."""
    cfg = load_arm_config(arm_config)
    if tcp_offset is not None:
        try:
            kinematics = dataclasses.replace(cfg.kinematics, tcp_offset=float(tcp_offset))
        except ValueError as e:
            raise ConfigError(f"tcp_offset: {e}") from e
        cfg = dataclasses.replace(cfg, kinematics=kinematics)
    kin = UR5eKinematics(cfg.kinematics)
    envelope = SafetyEnvelope(cfg.safety, kin)
    prim_cfg = primitive_config or PrimitiveConfig()
    if fixture_map is None:
        fixed = FixtureMap.load(fixtures if fixtures is not None else resources.fixtures_path())
        fixture_map = lambda: fixed  # noqa: E731 - the file's map, read once
    backend = (motion(robot, cfg, kin, envelope) if motion is not None
               else JtcBackend(robot, kinematics=kin, envelope=envelope, limits=cfg.limits,
                               execution=cfg.execution, posture=cfg.home))
    return Primitives(robot, kinematics=kin, backend=backend, config=prim_cfg, home=cfg.home,
                      pixels=pixels, fixture_map=fixture_map)

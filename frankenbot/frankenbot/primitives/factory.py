"""Builds a ready ``Primitives`` for one robot from the shipped config files.

The executor (in-process or in its node) calls ``build_primitives(robot)``; tests and the
benchmark do the same, so everyone runs the same limits, geometry and fixtures. The motion
backend is the JTC one (analytic IK + joint trajectory controller, works everywhere) unless the
caller passes another: the executor node passes MoveItPy's (``nodes/moveit_backend.py``, ROS
only) with ``motion_backend: moveit``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

from frankenbot.errors import ConfigError
from frankenbot.motion.config import ArmConfig, load_arm_config
from frankenbot.motion.jtc_backend import JtcBackend
from frankenbot.motion.kinematics import UR5eKinematics
from frankenbot.motion.safety import SafetyEnvelope
from frankenbot.ports import PixelResolver, RobotInterface
from frankenbot.primitives.config import PrimitiveConfig, drawer_from_fixtures
from frankenbot.primitives.primitives import Primitives

# (robot, arm config, kinematics, envelope) -> a MotionBackend other than the JTC one
MotionFactory = Callable[[RobotInterface, ArmConfig, UR5eKinematics, SafetyEnvelope], Any]


def build_primitives(robot: RobotInterface, *, arm_config: str | Path | None = None,
                     fixtures: str | Path | None = None,
                     primitive_config: PrimitiveConfig | None = None,
                     motion: MotionFactory | None = None, pixels: PixelResolver | None = None,
                     tcp_offset: float | None = None) -> Primitives:
    """Primitives over ``robot`` with config/safety.yaml and config/scene_fixtures.yaml.

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
    drawer = drawer_from_fixtures(fixtures, prim_cfg.drawer.name)
    prim_cfg = PrimitiveConfig(**{**prim_cfg.__dict__, "drawer": drawer})
    backend = (motion(robot, cfg, kin, envelope) if motion is not None
               else JtcBackend(robot, kinematics=kin, envelope=envelope, limits=cfg.limits,
                               execution=cfg.execution, posture=cfg.home))
    return Primitives(robot, kinematics=kin, backend=backend, config=prim_cfg, home=cfg.home,
                      pixels=pixels)

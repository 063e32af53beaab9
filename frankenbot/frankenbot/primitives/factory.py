"""Builds a ready ``Primitives`` for one robot from the shipped config files.

The executor (in-process or in its node) calls ``build_primitives(robot)``; tests and the
benchmark do the same, so everyone runs the same limits, geometry and fixtures. The motion
backend is chosen by name: ``jtc`` (analytic IK + joint trajectory controller, works everywhere)
or ``moveit`` (moveit_py on a full ROS install; needs a node). The fixture map is a provider
(the sim's per-scene map, the map a node received last) or, by default, the cell's file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from frankenbot import resources
from frankenbot.errors import ConfigError
from frankenbot.fixture_map import FixtureMap, FixtureMapProvider
from frankenbot.motion.config import load_arm_config
from frankenbot.motion.jtc_backend import JtcBackend
from frankenbot.motion.kinematics import UR5eKinematics
from frankenbot.motion.safety import SafetyEnvelope
from frankenbot.ports import PixelResolver, RobotInterface
from frankenbot.primitives.config import PrimitiveConfig
from frankenbot.primitives.primitives import Primitives

BACKENDS = ("jtc", "moveit")


def build_primitives(robot: RobotInterface, *, arm_config: str | Path | None = None,
                     fixtures: str | Path | None = None, backend: str = "jtc",
                     primitive_config: PrimitiveConfig | None = None,
                     moveit_node: Any = None, pixels: PixelResolver | None = None,
                     fixture_map: FixtureMapProvider | None = None) -> Primitives:
    """Primitives over ``robot`` with config/safety.yaml and the fixture map: ``fixture_map``
    (a provider of the current map) or else the file ``fixtures`` (default
    config/scene_fixtures.yaml)."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown motion backend {backend!r}; expected one of {BACKENDS}")
    cfg = load_arm_config(arm_config)
    kin = UR5eKinematics(cfg.kinematics)
    envelope = SafetyEnvelope(cfg.safety, kin)
    prim_cfg = primitive_config or PrimitiveConfig()
    if fixture_map is None:
        fixed = FixtureMap.load(fixtures if fixtures is not None else resources.fixtures_path())
        fixture_map = lambda: fixed  # noqa: E731 - the file's map, read once
    if backend == "moveit":
        from frankenbot.motion.moveit_backend import MoveItBackend

        motion: Any = MoveItBackend(robot, kinematics=kin, envelope=envelope,
                                    limits=cfg.limits, execution=cfg.execution,
                                    node=moveit_node, table_z=cfg.safety.table_z)
    else:
        motion = JtcBackend(robot, kinematics=kin, envelope=envelope, limits=cfg.limits,
                            execution=cfg.execution, posture=cfg.home)
    return Primitives(robot, kinematics=kin, backend=motion, config=prim_cfg, home=cfg.home,
                      pixels=pixels, fixture_map=fixture_map)

"""Loads the arm's configuration (config/safety.yaml) into typed, validated dataclasses.

One file holds the hard safety limits (``safety:``), the planning limits and geometry
(``motion:``) and how motions are watched (``execution:``), so the relation "planning limits stay
below the hard limits" is visible in one place and checked here at load time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from frankenbot import resources, settings
from frankenbot.errors import ConfigError
from frankenbot.motion.jtc_backend import ExecutionConfig
from frankenbot.motion.kinematics import HOME_JOINTS, KinematicsConfig
from frankenbot.motion.safety import SafetyConfig
from frankenbot.motion.trajectory import MotionLimits
from frankenbot.settings import section, setting

DEFAULT_HOME: tuple[float, ...] = HOME_JOINTS


@dataclass(frozen=True)
class MotionSection:
    """The ``motion:`` section: the TCP, the home posture and the planning limits."""

    tcp_offset: float = setting(KinematicsConfig().tcp_offset, "tool0 to the finger pads' "
                                "centre along tool0 z", unit="m", low=0.0, high=0.5)
    home: tuple[float, float, float, float, float, float] = setting(
        HOME_JOINTS, "home posture (above the table, wrist down)", unit="rad")
    limits: MotionLimits = section(MotionLimits, "")


@dataclass(frozen=True)
class ArmConfig:
    """Everything the motion stack reads from config."""

    safety: SafetyConfig = field(default_factory=SafetyConfig)
    limits: MotionLimits = field(default_factory=MotionLimits)
    kinematics: KinematicsConfig = field(default_factory=KinematicsConfig)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    home: tuple[float, ...] = DEFAULT_HOME


def arm_config_from_mapping(data: Mapping[str, Any], where: str = "arm config") -> ArmConfig:
    """The three sections, each through its settings schema, and the rule that ties them:
    planning limits stay below the hard limits."""
    def part(cls: type, name: str) -> Any:
        section_data = data.get(name) or {}
        if not isinstance(section_data, Mapping):
            raise ConfigError(f"{where}: '{name}' must be a mapping")
        return settings.build(cls, section_data, where=f"{where} {name}")

    safety: SafetyConfig = part(SafetyConfig, "safety")
    motion: MotionSection = part(MotionSection, "motion")
    execution: ExecutionConfig = part(ExecutionConfig, "execution")
    kin = KinematicsConfig(motion.tcp_offset, safety.joint_lower, safety.joint_upper)
    limits = motion.limits
    for name, plan, hard in (
            ("joint velocity", limits.max_joint_velocity, safety.max_joint_velocity),
            ("joint acceleration", limits.max_joint_acceleration, safety.max_joint_acceleration),
            ("cartesian speed", (limits.max_cartesian_speed,), (safety.max_cartesian_speed,))):
        if any(p > h for p, h in zip(plan, hard, strict=True)):
            raise ConfigError(f"planning {name} limits {plan} exceed the safety limits {hard}")
    return ArmConfig(safety, limits, kin, execution, motion.home)


def load_arm_config(path: str | Path | None = None) -> ArmConfig:
    """Read config/safety.yaml (or ``path``) into an ArmConfig; ConfigError on any problem."""
    file = Path(path) if path is not None else resources.config_dir() / "safety.yaml"
    try:
        data = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read arm config {file}: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{file} must hold a mapping with safety/motion/execution sections")
    return arm_config_from_mapping(data, str(file))

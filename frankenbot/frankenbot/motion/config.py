"""Loads the arm's configuration (config/safety.yaml) into typed, validated dataclasses.

One file holds the hard safety limits (``safety:``), the planning limits and geometry
(``motion:``) and how motions are watched (``execution:``), so the relation "planning limits stay
below the hard limits" is visible in one place and checked here at load time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from frankenbot import resources
from frankenbot.errors import ConfigError
from frankenbot.motion.jtc_backend import ExecutionConfig
from frankenbot.motion.kinematics import HOME_JOINTS, KinematicsConfig
from frankenbot.motion.safety import SafetyConfig
from frankenbot.motion.trajectory import MotionLimits

DEFAULT_HOME: tuple[float, ...] = HOME_JOINTS


@dataclass(frozen=True)
class ArmConfig:
    """Everything the motion stack reads from config."""

    safety: SafetyConfig = field(default_factory=SafetyConfig)
    limits: MotionLimits = field(default_factory=MotionLimits)
    kinematics: KinematicsConfig = field(default_factory=KinematicsConfig)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    home: tuple[float, ...] = DEFAULT_HOME


def _convert(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(float(v) for v in value)
    return float(value)


def _build(cls: type, data: Mapping[str, Any], section: str) -> Any:
    known = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    unknown = set(data) - known
    if unknown:
        raise ConfigError(f"unknown keys {sorted(unknown)} in '{section}'; expected some of "
                          f"{sorted(known)}")
    try:
        return cls(**{k: _convert(v) for k, v in data.items()})
    except (TypeError, ValueError) as e:
        raise ConfigError(f"invalid '{section}' section: {e}") from e


def arm_config_from_mapping(data: Mapping[str, Any]) -> ArmConfig:
    safety = SafetyConfig.from_mapping(data.get("safety") or {})
    motion = dict(data.get("motion") or {})
    home = tuple(float(v) for v in motion.pop("home", DEFAULT_HOME))
    tcp = {"tcp_offset": float(motion.pop("tcp_offset"))} if "tcp_offset" in motion else {}
    kin = _build(KinematicsConfig, {**tcp, "lower": list(safety.joint_lower),
                                    "upper": list(safety.joint_upper)}, "motion")
    limits = _build(MotionLimits, motion, "motion")
    execution = _build(ExecutionConfig, data.get("execution") or {}, "execution")
    if len(home) != 6 or not all(math.isfinite(v) for v in home):
        raise ConfigError(f"motion.home needs 6 finite joint values, got {home}")
    for name, plan, hard in (
            ("joint velocity", limits.max_joint_velocity, safety.max_joint_velocity),
            ("joint acceleration", limits.max_joint_acceleration, safety.max_joint_acceleration),
            ("cartesian speed", (limits.max_cartesian_speed,), (safety.max_cartesian_speed,))):
        if any(p > h for p, h in zip(plan, hard, strict=True)):
            raise ConfigError(f"planning {name} limits {plan} exceed the safety limits {hard}")
    return ArmConfig(safety, limits, kin, execution, home)


def load_arm_config(path: str | Path | None = None) -> ArmConfig:
    """Read config/safety.yaml (or ``path``) into an ArmConfig; ConfigError on any problem."""
    file = Path(path) if path is not None else resources.config_dir() / "safety.yaml"
    try:
        data = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read arm config {file}: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{file} must hold a mapping with safety/motion/execution sections")
    return arm_config_from_mapping(data)

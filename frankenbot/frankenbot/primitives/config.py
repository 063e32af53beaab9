"""Tunable geometry of the primitives (heights, gripper widths, speeds) and the drawer fixture.

Numbers live here, with the reason for each, rather than inside the primitives, so the sim and
the real arm can differ by config alone. The drawer's handle, pull axis and stroke come from
``config/scene_fixtures.yaml`` (the file perception reads its fixtures from).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from frankenbot import resources
from frankenbot.errors import ConfigError


@dataclass(frozen=True)
class DrawerSpec:
    """Where the drawer's handle is when closed, which way it pulls open, and how far."""

    name: str = "drawer"
    handle_closed: tuple[float, float, float] = (0.57, 0.38, 0.07)  # m, base_link
    pull_axis: tuple[float, float, float] = (-1.0, 0.0, 0.0)  # unit, opening direction
    stroke: float = 0.12  # m of travel
    handle_length: float = 0.10  # m, the bar runs across the pull axis
    # Centre of the cavity when closed and its inner size, for place_in(..., drawer).
    cavity_closed: tuple[float, float, float] = (0.714, 0.38, 0.063)
    cavity_size: tuple[float, float, float] = (0.168, 0.216, 0.086)

    def __post_init__(self) -> None:
        n = math.sqrt(sum(v * v for v in self.pull_axis))
        if not math.isclose(n, 1.0, rel_tol=1e-3):
            raise ConfigError(f"drawer pull_axis must be a unit vector, got {self.pull_axis}")
        if not self.stroke > 0:
            raise ConfigError(f"drawer stroke must be positive, got {self.stroke}")

    def handle_at(self, opening: float) -> tuple[float, float, float]:
        return tuple(h + a * opening for h, a in zip(self.handle_closed,  # type: ignore[return-value]
                                                     self.pull_axis, strict=True))

    def cavity_at(self, opening: float) -> tuple[float, float, float]:
        return tuple(c + a * opening for c, a in zip(self.cavity_closed,  # type: ignore[return-value]
                                                     self.pull_axis, strict=True))


@dataclass(frozen=True)
class PrimitiveConfig:
    """Heights in m above the relevant surface; widths in m of finger gap; times in s."""

    approach_height: float = 0.10  # pre-grasp / pre-place TCP height above the top surface
    grasp_depth: float = 0.02  # pad centre this far below an object's top when grasping
    min_tcp_z: float = 0.027  # pads (22.5 mm below the TCP) clear the table by ~5 mm
    open_margin: float = 0.03  # open this much wider than the object before closing
    min_grasp_width: float = 0.006  # closing narrower than this means nothing is held
    release_margin: float = 0.02  # when placing, open to object width + this
    held_slack: float = 0.01  # fingers wider than object + release_margin + this hold nothing
    place_clearance: float = 0.008  # release with the object's bottom this far above support
    container_floor: float = 0.008  # bowl / bin / drawer floor thickness above their bottom
    gripper_timeout: float = 2.0  # s for the fingers to reach or stall
    gripper_settle: float = 0.15  # s the width must stay still to count as settled
    detect_timeout: float = 1.0  # s to wait for the object to appear in the scene
    look_timeout: float = 0.5  # s above the object to wait for a scene newer than the arrival
    realign_distance: float = 0.008  # m: the object moved more than this -> re-aim the grasp
    block_symmetry: float = math.pi / 2  # yaw symmetry of blocks (cubes)
    table_z: float = 0.0
    push_height: float = 0.027  # TCP height for pushing (pads cover the lower part of a block)
    push_standoff: float = 0.035  # gap between the gripper and the object before a push
    push_speed: float = 0.3  # fraction of normal Cartesian speed while pushing or pulling
    handle_open_width: float = 0.035  # fingers straddle the handle bar (14 mm) with room
    handle_approach: float = 0.08  # m in front of the handle before moving onto it
    handle_min_width: float = 0.004  # closing on the handle must stop above this
    drawer_place_offset: float = 0.03  # m from the open cavity's centre towards the robot
    drawer_hold_width: float = 0.0  # commanded gap while holding the handle (closes on it)
    # Robotiq 2F-85 body half extents (m): along the finger axis and across it. In a deep
    # container (the bin) the palm reaches below the rim, so release spots keep it inside.
    palm_half_along: float = 0.055
    palm_half_across: float = 0.038
    rim_clearance: float = 0.02  # container wall thickness plus room between palm and wall
    drawer: DrawerSpec = field(default_factory=DrawerSpec)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "PrimitiveConfig":
        known = set(cls.__dataclass_fields__) - {"drawer"}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown primitive config keys {sorted(unknown)}; expected "
                              f"some of {sorted(known)}")
        try:
            return cls(**{k: float(v) for k, v in data.items()})
        except (TypeError, ValueError) as e:
            raise ConfigError(f"invalid primitive config: {e}") from e


def drawer_from_fixtures(path: str | Path | None = None, name: str = "drawer") -> DrawerSpec:
    """Read the drawer's handle, pull axis and stroke from the fixtures file.

    Accepts an entry ``name`` (top level or under ``fixtures``) with ``handle`` (or
    ``handle_position``) [x, y, z], ``pull_axis`` [x, y, z], ``stroke`` and optionally
    ``cavity_centre`` / ``cavity_size``. Falls back to the defaults when the file is absent.
    """
    file = Path(path) if path is not None else resources.config_dir() / "scene_fixtures.yaml"
    if not file.is_file():
        if path is not None:
            raise ConfigError(f"fixtures file not found: {file}")
        return DrawerSpec(name=name)
    try:
        data = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read fixtures {file}: {e}") from e
    entry: Any = None
    if isinstance(data, Mapping):
        fixtures = data.get("fixtures", data)
        if isinstance(fixtures, Mapping):
            entry = fixtures.get(name)
        elif isinstance(fixtures, list):
            entry = next((e for e in fixtures if isinstance(e, Mapping)
                          and e.get("id") == name), None)
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{file} has no drawer entry {name!r}")

    def vec(*keys: str) -> tuple[float, float, float] | None:
        for key in keys:
            raw = entry.get(key)
            if raw is not None:
                try:
                    vals = tuple(float(v) for v in raw)
                except (TypeError, ValueError) as e:
                    raise ConfigError(f"drawer {key} must be 3 numbers, got {raw!r}") from e
                if len(vals) != 3:
                    raise ConfigError(f"drawer {key} must be 3 numbers, got {raw!r}")
                return (vals[0], vals[1], vals[2])
        return None

    default = DrawerSpec(name=name)
    handle = vec("handle", "handle_position", "handle_closed")
    axis = vec("pull_axis", "axis")
    cavity = vec("cavity_centre", "cavity_center", "cavity_closed")
    cavity_size = vec("cavity_size")
    return DrawerSpec(
        name=name,
        handle_closed=handle or default.handle_closed,
        pull_axis=axis or default.pull_axis,
        stroke=float(entry.get("stroke", default.stroke)),
        handle_length=float(entry.get("handle_length", default.handle_length)),
        cavity_closed=cavity or default.cavity_closed,
        cavity_size=cavity_size or default.cavity_size,
    )

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

from frankenbot import resources, settings
from frankenbot.errors import ConfigError
from frankenbot.settings import setting


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
        return _along(self.handle_closed, self.pull_axis, opening)

    def cavity_at(self, opening: float) -> tuple[float, float, float]:
        return _along(self.cavity_closed, self.pull_axis, opening)


def _along(p: tuple[float, float, float], axis: tuple[float, float, float],
           d: float) -> tuple[float, float, float]:
    """``p`` moved ``d`` along ``axis``."""
    return (p[0] + axis[0] * d, p[1] + axis[1] * d, p[2] + axis[2] * d)


@dataclass(frozen=True)
class PrimitiveConfig:
    """Heights in m above the relevant surface; widths in m of finger gap; times in s."""

    approach_height: float = setting(0.10, "pre-grasp / pre-place TCP height above the top "
                                     "surface", unit="m", low=0.0)
    grasp_depth: float = setting(0.02, "pad centre this far below an object's top when "
                                 "grasping", unit="m", low=0.0)
    min_tcp_z: float = setting(0.027, "lowest TCP height (the pads, 22.5 mm below it, clear "
                               "the table by ~5 mm)", unit="m")
    open_margin: float = setting(0.03, "open this much wider than the object before closing",
                                 unit="m", low=0.0)
    min_grasp_width: float = setting(0.006, "closing narrower than this means nothing is held",
                                     unit="m", low=0.0)
    release_margin: float = setting(0.02, "when placing, open to object width + this",
                                    unit="m", low=0.0)
    held_slack: float = setting(0.01, "fingers wider than object + release_margin + this hold "
                                "nothing", unit="m", low=0.0)
    place_clearance: float = setting(0.008, "release with the object's bottom this far above "
                                     "its support", unit="m", low=0.0)
    container_floor: float = setting(0.008, "bowl / bin / drawer floor thickness above their "
                                     "bottom", unit="m", low=0.0)
    gripper_timeout: float = setting(2.0, "for the fingers to reach or stall", unit="s",
                                     low=0.0)
    gripper_settle: float = setting(0.15, "the width must stay still this long to count as "
                                    "settled", unit="s", low=0.0)
    detect_timeout: float = setting(1.0, "wait for the object to appear in the scene", unit="s",
                                    low=0.0)
    look_timeout: float = setting(0.5, "above the object, wait for a scene newer than the "
                                  "arrival", unit="s", low=0.0)
    realign_distance: float = setting(0.008, "the object moved more than this: re-aim the grasp",
                                      unit="m", low=0.0)
    block_symmetry: float = setting(math.pi / 2, "yaw symmetry of blocks (cubes)", unit="rad",
                                    low=0.0)
    table_z: float = setting(0.0, "table surface in base_link", unit="m")
    push_height: float = setting(0.027, "TCP height for pushing (the pads cover the lower part "
                                 "of a block)", unit="m")
    push_standoff: float = setting(0.035, "gap between the gripper and the object before a "
                                   "push", unit="m", low=0.0)
    push_speed: float = setting(0.3, "share of the normal Cartesian speed while pushing or "
                                "pulling", low=0.01, high=1.0)
    handle_open_width: float = setting(0.035, "the fingers straddle the handle bar (14 mm) with "
                                       "room", unit="m", low=0.0)
    handle_approach: float = setting(0.08, "in front of the handle before moving onto it",
                                     unit="m", low=0.0)
    handle_min_width: float = setting(0.004, "closing on the handle must stop above this",
                                      unit="m", low=0.0)
    drawer_place_offset: float = setting(0.03, "from the open cavity's centre towards the "
                                         "robot", unit="m")
    drawer_hold_width: float = setting(0.0, "commanded gap while holding the handle (closes on "
                                       "it)", unit="m", low=0.0)
    # Robotiq 2F-85 body half extents: in a deep container (the bin) the palm reaches below the
    # rim, so release spots keep it inside.
    palm_half_along: float = setting(0.055, "gripper body half extent along the finger axis",
                                     unit="m", low=0.0)
    palm_half_across: float = setting(0.038, "gripper body half extent across the finger axis",
                                      unit="m", low=0.0)
    rim_clearance: float = setting(0.02, "container wall thickness plus room between palm and "
                                   "wall", unit="m", low=0.0)
    drawer: DrawerSpec = field(default_factory=DrawerSpec)

    def __post_init__(self) -> None:
        settings.validate(self, "primitives")


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

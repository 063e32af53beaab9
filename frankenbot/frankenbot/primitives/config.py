"""Tunable geometry of the primitives (heights, gripper widths, speeds).

Numbers live here, with the reason for each, rather than inside the primitives, so the sim and
the real arm can differ by config alone. Where the fixtures are (drawers' handles, doors'
hinges, buttons) is not config of the primitives: it is the cell's fixture map
(``frankenbot.fixture_map``), which the primitives read through a provider.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from frankenbot.errors import ConfigError


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
    # --- fixtures (doors, controls) ---
    door_step: float = 0.12  # rad of a hinged door's turn per Cartesian segment of its arc
    door_hold_width: float = 0.0  # commanded gap while holding a door's vertical handle bar
    door_open_target: float = 1.3  # rad: a hinged door is swung this far (capped by travel)
    door_pull_limit: float = 1.0  # rad: pulled by its handle this far, then pushed from inside
    door_push_radius: float = 0.8  # where it is pushed: this share of the hinge-handle distance
    door_reach_margin: float = 0.0  # rad short of where the handle leaves the arm's reach
    door_approach: float = 0.07  # m above a vertical handle bar's grasp before descending
    press_depth: float = 0.0065  # m a button is pushed below its top (its travel is 8 mm)
    press_dwell: float = 0.15  # s held down, so the press registers
    switch_press_offset: float = 0.02  # m from the rocker's pivot to where it is pressed
    switch_press_depth: float = 0.001  # m below the rocker's level top the pads go (past
    # level the rocker snaps over; deeper, the pads would push it past its stop near the pivot)
    knob_grip_depth: float = 0.005  # m below a knob's top where the pads' bottom stops (its
    # grip bar stands above a round body wider than the open fingers)
    knob_speed: float = 0.5  # fraction of normal speed while turning a knob
    enclosure_palm_clearance: float = 0.045  # m between the TCP and a cabinet's front face

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "PrimitiveConfig":
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown primitive config keys {sorted(unknown)}; expected "
                              f"some of {sorted(known)}")
        try:
            return cls(**{k: float(v) for k, v in data.items()})
        except (TypeError, ValueError) as e:
            raise ConfigError(f"invalid primitive config: {e}") from e

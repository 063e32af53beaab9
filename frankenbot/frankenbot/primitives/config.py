"""Tunable geometry of the primitives (heights, gripper widths, speeds).

Numbers live here, with the reason for each, rather than inside the primitives, so the sim and
the real arm can differ by config alone. Where the fixtures are (drawers' handles, doors'
hinges, buttons) is not config of the primitives: it is the cell's fixture map
(``frankenbot.fixture_map``), which the primitives read through a provider.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from frankenbot import settings
from frankenbot.settings import setting


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
    # --- fixtures (doors, controls) ---
    door_step: float = setting(0.12, "a hinged door's turn per Cartesian segment of its arc",
                               unit="rad", low=0.01)
    door_hold_width: float = setting(0.0, "commanded gap while holding a door's vertical handle "
                                     "bar", unit="m", low=0.0)
    door_open_target: float = setting(1.3, "a hinged door is swung this far (capped by its "
                                      "travel)", unit="rad", low=0.0)
    door_pull_limit: float = setting(1.0, "pulled by its handle this far, then pushed from "
                                     "inside", unit="rad", low=0.0)
    door_push_radius: float = setting(0.8, "where a door is pushed: this share of the "
                                      "hinge-handle distance", low=0.1, high=1.0)
    door_reach_margin: float = setting(0.0, "short of where the handle leaves the arm's reach",
                                       unit="rad", low=0.0)
    door_approach: float = setting(0.07, "above a vertical handle bar's grasp before "
                                   "descending", unit="m", low=0.0)
    press_depth: float = setting(0.0065, "a button is pushed this far below its top (its travel "
                                 "is 8 mm)", unit="m", low=0.0)
    press_dwell: float = setting(0.15, "held down this long, so the press registers", unit="s",
                                 low=0.0)
    switch_press_offset: float = setting(0.02, "from the rocker's pivot to where it is pressed",
                                         unit="m", low=0.0)
    switch_press_depth: float = setting(0.001, "below the rocker's level top the pads go (past "
                                        "level it snaps over; deeper, they would push it past "
                                        "its stop near the pivot)", unit="m", low=0.0)
    knob_grip_depth: float = setting(0.005, "below a knob's top where the pads' bottom stops (its "
                                     "grip bar stands above a body wider than the open fingers)",
                                     unit="m", low=0.0)
    knob_speed: float = setting(0.5, "share of the normal speed while turning a knob", low=0.01,
                                high=1.0)
    enclosure_palm_clearance: float = setting(0.045, "between the TCP and a cabinet's front face",
                                              unit="m", low=0.0)

    def __post_init__(self) -> None:
        settings.validate(self, "primitives")

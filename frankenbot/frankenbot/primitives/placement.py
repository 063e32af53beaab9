"""Where to release an object inside an open container that may already hold others.

Releasing every block at a bin's centre lowered the second one onto the first: the arm stopped
short of its goal ("lower: arm did not reach the goal") and the place failed with the block
still held; a spot near the rim instead hit the rim with the gripper's palm. So the release spot
is the one with the most room from what the camera sees inside, among spots where the palm
stays within the rim, with the fingers closing across the container's short side (the palm is
longest along the finger axis). Where nothing fits beside the others (a bowl), the object is
released on top of what lies under the spot rather than pushed into it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from frankenbot.state import SceneObject

GRID = 5  # candidate spots per axis of the container's usable floor


@dataclass(frozen=True)
class Spot:
    x: float
    y: float
    support_z: float  # where the released object's bottom will rest
    finger_axis: float  # rad: direction (in the base frame) the fingers should close along


@dataclass(frozen=True)
class Palm:
    """Half extents (m) of the gripper body around the TCP, and room to keep from a wall."""

    along: float = 0.055  # along the finger axis
    across: float = 0.038
    rim_clearance: float = 0.02


def occupants(box: SceneObject, scene_objects: Iterable[SceneObject],
              exclude: Iterable[str] = ()) -> list[SceneObject]:
    """Perceived movable objects whose centre lies over the container's footprint."""
    skip = set(exclude) | {box.object_id}
    out = []
    for o in scene_objects:
        if o.object_id in skip or o.is_fixture:
            continue
        lx, ly = box.local_xy(o.position[0], o.position[1])
        if abs(lx) <= box.size[0] / 2 and abs(ly) <= box.size[1] / 2 \
                and o.position[2] - o.size[2] / 2 < box.top_z:
            out.append(o)
    return out


def spot_in_container(box: SceneObject, floor_z: float, held_size: tuple[float, float, float],
                      inside: list[SceneObject], palm: Palm = Palm()) -> Spot:
    """The release spot in ``box`` farthest from the objects ``inside`` it (the centre when it
    is empty or when all spots are equally good), resting on anything still under it."""
    held_half = max(held_size[0], held_size[1]) / 2
    long_x = box.size[0] >= box.size[1]  # the container's long side is its local x axis
    long_half, short_half = (box.size[0], box.size[1]) if long_x else (box.size[1], box.size[0])
    long_half, short_half = long_half / 2, short_half / 2
    # fingers close along the short side: the palm's long extent lies across the long side
    room_long = max(0.0, long_half - palm.rim_clearance - max(palm.across, held_half))
    room_short = max(0.0, short_half - palm.rim_clearance - max(palm.along, held_half))
    if box.shape == "bowl":  # round: keep the spot within the inscribed circle
        room_long = room_short = min(room_long, room_short) / math.sqrt(2.0)
    hx, hy = (room_long, room_short) if long_x else (room_short, room_long)
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    spots = []
    for i in range(GRID):
        for j in range(GRID):
            lx = hx * (2 * i / (GRID - 1) - 1)
            ly = hy * (2 * j / (GRID - 1) - 1)
            x = box.position[0] + c * lx - s * ly
            y = box.position[1] + s * lx + c * ly
            room = min((math.hypot(x - o.position[0], y - o.position[1]) for o in inside),
                       default=math.inf)
            # the most room first (capped: past a metre all spots are free), then the centre
            spots.append(((min(room, 1.0), -round(math.hypot(lx, ly), 6)), x, y))
    _, bx, by = max(spots, key=lambda t: t[0])
    support = floor_z
    for o in inside:
        if math.hypot(bx - o.position[0], by - o.position[1]) < held_half + max(o.size[:2]) / 2:
            support = max(support, o.top_z)  # no room beside it: rest on top of it
    short_axis = box.yaw + (math.pi / 2 if long_x else 0.0)
    return Spot(bx, by, support, short_axis)

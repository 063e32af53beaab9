"""Where to release an object inside an open container, in an open drawer or on a flat top that
may already hold others.

Releasing every block at a bin's centre lowered the second one onto the first: the arm stopped
short of its goal ("lower: arm did not reach the goal") and the place failed with the block
still held; a spot near the rim instead hit the rim with the gripper's palm. So the release spot
is the one with the most room from what the camera sees inside, among spots where the palm
stays within the rim (a deep basket or bin: the palm reaches below it), with the fingers
closing across the container's short side (the palm is longest along the finger axis). Where
nothing fits beside the others (a bowl), the object is released on top of what lies under the
spot rather than pushed into it. Any footprint works: round ones (bowls, plates) keep the spot
within their inscribed circle, boxes (bins, baskets, trays) within their rectangle.

An open drawer is reached only where it stands out of its cabinet: the spot keeps the palm in
front of the cabinet's face and the held object inside the drawer's box, preferring the fingers
across the drawer (the palm's narrow side towards the cabinet) and turning them along it when
the object is too long for the exposed part. An object held off its middle is turned so that
its longer part reaches in under the face; where it does not fit at all, ``NoSpot`` says how far
off its middle a grasp would have to be for it to fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from frankenbot import shapes
from frankenbot.errors import FrankenbotError
from frankenbot.fixture_map import FixturePart
from frankenbot.state import SceneObject

GRID = 5  # candidate spots per axis of the container's usable floor


@dataclass(frozen=True)
class Spot:
    x: float
    y: float
    support_z: float  # where the released object's bottom will rest
    finger_axis: float  # rad: direction (in the base frame) the fingers should close along
    # rad: the way the gripper's x axis must point (an object held off its middle reaches
    # into the drawer); None: either way
    tool_x: float | None = None


class NoSpot(FrankenbotError, ValueError):
    """No release spot fits (an open drawer's exposed part too short for the object).
    ``off_centre``: held at least this far (m) from its middle along the gripper's x axis it
    would fit (0: it would not)."""

    def __init__(self, detail: str, off_centre: float = 0.0) -> None:
        super().__init__(detail)
        self.off_centre = off_centre


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
    if box.shape in shapes.ROUND:  # round: keep the spot within the inscribed circle
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


ON_TOP_GAP = 0.02  # m: an object whose bottom is this close to a top stands on it


def on_top_of(o: SceneObject, support: SceneObject) -> bool:
    """``o`` stands on ``support``'s top (its centre over the top, its bottom at the top)."""
    lx, ly = support.local_xy(o.position[0], o.position[1])
    return (abs(lx) <= support.size[0] / 2 and abs(ly) <= support.size[1] / 2
            and abs(o.position[2] - o.size[2] / 2 - support.top_z) <= ON_TOP_GAP)


def in_cavity(o: SceneObject, part: FixturePart, opening: float) -> bool:
    """``o``'s centre is inside ``part``'s cavity (a drawer's box) open by ``opening``."""
    return part.cavity_contains(o.position, opening)


def spot_on_support(support: SceneObject, held_size: tuple[float, float, float],
                    on_it: list[SceneObject]) -> Spot:
    """A spot on ``support``'s flat top (a plate, a box, the cabinet's top, the stove) with the
    most room from what already stands on it; the held footprint stays on the top."""
    return spot_in_container(support, support.top_z, held_size, on_it, Palm(0.0, 0.0, 0.0))


def spot_in_drawer(part: FixturePart, opening: float, face: Sequence[float] | None,
                   held_extents: tuple[float, float],
                   inside: Iterable[SceneObject], palm: Palm, *, held_offset: float = 0.0,
                   prefer: float = 0.03, palm_gap: float = 0.003, margin: float = 0.003,
                   palm_below_rim: bool = False) -> Spot:
    """The release spot (the TCP's) in ``part`` (a drawer with a cavity in the fixture map)
    open by ``opening``: in the part of its cavity outside the fixture's front face (the point
    ``face``), the object's centre ``prefer`` m out from the cavity's centre where that fits.
    ``held_extents``: the held object's extent along the gripper's x axis and along its
    fingers; ``held_offset``: its centre from the TCP along the x axis (held off its middle:
    turned so that its longer part reaches into the cabinet); ``palm_below_rim``: at the
    release height the palm is lower than the drawer's walls, so it must stay inside them too
    (its front wall, nearest the robot, is what it would hit)."""
    assert part.cavity_size is not None
    centre = np.asarray(part.cavity_at(opening), dtype=float)
    length, width, height = part.cavity_size
    out = np.array([part.axis[0], part.axis[1]], dtype=float)
    out /= float(np.linalg.norm(out))
    side = np.array([-out[1], out[0]])
    floor = float(centre[2]) - height / 2
    t_face = (float((np.asarray(face[:2]) - centre[:2]) @ out) if face is not None
              else -length / 2)
    along_x, along_y = held_extents  # the held object along tool x, along the fingers
    off = abs(held_offset)
    others = [np.asarray(o.position[:2]) for o in inside]
    needed = 0.0
    # tool x along the drawer (fingers across it: the palm's narrow side to the cabinet) first;
    # the object's centre lies ``shift`` deeper in than the TCP. Across it, an offset only
    # narrows the room on both sides.
    for finger_axis, ext_out, ext_side, reach, shift in (
            (math.atan2(side[1], side[0]), along_x, along_y, palm.across, off),
            (math.atan2(out[1], out[0]), along_y, along_x + 2 * off, palm.along, 0.0)):
        palm_lo = t_face + reach + palm_gap
        lo = max(palm_lo, -length / 2 + margin + ext_out / 2 + shift)
        hi = length / 2 - margin - ext_out / 2 + shift
        room = width / 2 - margin - ext_side / 2
        if palm_below_rim:
            side_reach = palm.along if reach == palm.across else palm.across
            hi = min(hi, length / 2 - reach)
            room = min(room, width / 2 - side_reach)
        if lo > hi or room < 0:
            if reach == palm.across:  # how far off its middle would do
                fits_rim = not palm_below_rim or palm_lo <= length / 2 - reach
                if fits_rim and room >= 0 and ext_out + 2 * margin <= length:
                    needed = max(0.0, palm_lo - (length / 2 - margin - ext_out / 2))
            continue
        t0 = min(max(prefer + shift, lo), hi)
        best: tuple[tuple[float, float], float, float] | None = None
        for t in sorted({t0, *np.linspace(lo, hi, 5).tolist()}):
            for u in np.linspace(-room, room, 5).tolist():
                xy = centre[:2] + out * (t - shift) + side * u  # the object's centre
                gap = min((float(np.linalg.norm(xy - o)) for o in others), default=math.inf)
                key = (min(gap, 1.0), -round(math.hypot(t - t0, u), 6))
                if best is None or key > best[0]:
                    best = (key, float(xy[0]), float(xy[1]))
        assert best is not None
        _, x, y = best
        support = floor
        for o in inside:
            if math.hypot(x - o.position[0], y - o.position[1]) < (
                    max(along_x, along_y) + max(o.size[:2])) / 2:
                support = max(support, o.top_z)
        tool_x = None
        if shift > 0.0:  # x axis pointing out of the cabinet when the offset is positive
            sign = 1.0 if held_offset < 0 else -1.0
            tool_x = math.atan2(sign * out[1], sign * out[0])
        return Spot(float(x + out[0] * shift), float(y + out[1] * shift), support, finger_axis,
                    tool_x)
    raise NoSpot(f"{part.part_id} is not open far enough for an object {along_x * 100:.0f} x "
                 f"{along_y * 100:.0f} cm in the gripper (its open part is "
                 f"{max(0.0, length / 2 - t_face) * 100:.0f} cm long)", needed)

"""Primitives that put the held object down: on a flat top, into a container of any
footprint, into an open drawer, on the table at (x, y).

Where exactly (``placement.py``): in a bowl, bin, basket or tray the spot with the most room
from what is already inside, the palm kept within a deep container's rim; on a plate, a tray or
a fixture's top (the cabinet, the stove) a free spot on it; in an open drawer the part that
stands out of its cabinet, clear of the cabinet's face and of the handles above it. Only flat
tops take things (``shapes.SUPPORTS``): a ball, a mug or a bottle is refused as a target, and
so is a fixture behind a door (a microwave cannot be loaded from above). Blocks keep the first
waves' behaviour: stacked centred and aligned on a block, released where they always were.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Mapping

from frankenbot import shapes
from frankenbot.common import FailureCode
from frankenbot.fixture_map import FixturePart, measured_opening
from frankenbot.motion.kinematics import symmetric_yaws
from frankenbot.ports import CancelToken, PrimitiveResult, Value
from frankenbot.primitives.placement import (
    NoSpot,
    Palm,
    in_cavity,
    occupants,
    on_top_of,
    spot_in_container,
    spot_in_drawer,
    spot_on_support,
)
from frankenbot.state import SceneObject

if TYPE_CHECKING:  # Primitives imports this module
    from frankenbot.primitives.primitives import Primitives, _Held

Handler = Callable[[Mapping[str, Value], CancelToken], PrimitiveResult]

WIDE_SUPPORTS = ("plate", "tray")  # put things on them beside what is already there
DRAWER_RIM = 0.012  # m a drawer's front wall stands above its cavity
# a low object whose release would put the palm down between a drawer's walls where the palm
# does not fit (a short open part) is let go from this far over the rim, if that drop is
# at most MAX_DRAWER_DROP
RIM_CLEAR = 0.01  # m
MAX_DRAWER_DROP = 0.07  # m (a low object: a lying marker, a block, a lemon)
# a long object whose held length does not fit a drawer's open part is put down and taken
# again off its middle by what it lacks and REGRASP_MARGIN, up to MAX_OFF_CENTRE of its length
REGRASP_MARGIN = 0.012  # m (an opening is measured within a few mm)
MAX_OFF_CENTRE = 0.3
HIGH_TOP = 0.2  # m: a fixture's top above this is approached from nearer above
HIGH_APPROACH = 0.05  # m over it (a 10 cm hover over the cabinet strains the elbow)
ALREADY_CLOSED_M = 0.008  # m: a drawer above open less than this is closed


class PlacePrimitives:
    """place_on, place_in and place_at over one ``Primitives`` (its robot, held object, fixture
    map, motion helpers and config)."""

    def __init__(self, prims: "Primitives") -> None:
        self.p = prims

    def handlers(self) -> dict[str, Handler]:
        return {"place_on": self.place_on, "place_in": self.place_in,
                "place_at": self.place_at}

    def lift_to(self, z: float, cancel: CancelToken) -> None:
        """Straight up to TCP height ``z`` where the arm is (if lower): carrying into an open
        drawer, a joint-space move from low down swept the arm through the drawer's front."""
        tcp = self.p.kin.fk(self.p._q())
        if tcp[2, 3] < z - 0.005:
            tcp[2, 3] = z
            self.p._line(tcp, cancel, "lift to carry")

    def place_on(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        object_id = self.p._obj_arg(args, "obj")
        target_id = self.p._obj_arg(args, "target")
        if target_id == object_id:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"cannot place {object_id} on itself")
        held = self.p._held_or_stop(object_id)
        target = self.p._find(target_id)
        if target.shape not in shapes.SUPPORTS and target.shape != shapes.UNKNOWN:
            return PrimitiveResult.failure(
                FailureCode.BLOCKED, f"{target_id} is a {target.shape}: its top is not flat, "
                "nothing is stacked on it (flat tops: "
                f"{', '.join(sorted(shapes.SUPPORTS))})")
        if target.is_fixture:  # on the stove: on its burner, where that holds it
            target = self._cooking_surface(target, held.size) or target
        if not (target.is_fixture or target.shape in WIDE_SUPPORTS):
            x, y, support = target.position[0], target.position[1], target.top_z
        else:  # a plate, a tray or a fixture's top: a free spot on it
            on_it = [o for o in self.p.others_than_held(held, self.p.robot.scene().objects)
                     if o.object_id != target_id and not o.is_fixture and on_top_of(o, target)]
            spot = spot_on_support(target, held.size, on_it)
            x, y, support = spot.x, spot.y, spot.support_z
        above = support + held.size[2] + self.p.config.approach_height
        yaw = self.p._place_yaw(held, x, y, above,
                              target.yaw if target.shape == "block" else None)
        # over a tall fixture (the cabinet's top) the arm is near its full height: less above
        approach = HIGH_APPROACH if target.is_fixture and support > HIGH_TOP else None
        return self.p._release_at(held, x, y, support, yaw, support + held.size[2], cancel,
                                  approach)

    def _cooking_surface(self, fixture: SceneObject, held_size: tuple[float, float, float]
                         ) -> SceneObject | None:
        """The fixture's burner as the camera sees it, when the held footprint fits on it."""
        spec = self.p.fixture_map().fixture(fixture.object_id)
        if spec is None:
            return None
        for part in spec.parts:
            if part.kind != "burner":
                continue
            seen = self.p.robot.scene().get(part.part_id)
            if seen is not None and max(held_size[:2]) <= min(seen.size[:2]):
                return seen
        return None

    def place_in(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        cfg = self.p.config
        object_id = self.p._obj_arg(args, "obj")
        container_id = self.p._obj_arg(args, "container")
        held = self.p._held_or_stop(object_id)
        fmap = self.p.fixture_map()
        part = fmap.part(container_id)
        if part is not None and part.kind == "drawer" and part.cavity_size is not None:
            return self._into_drawer(held, part, cancel)
        fixture = fmap.fixture(container_id)
        if fixture is not None:
            drawers = [q.part_id for q in fixture.parts if q.kind == "drawer"]
            if drawers:
                return PrimitiveResult.failure(
                    FailureCode.INVALID_ARGUMENT, f"{container_id} has drawers: name one of "
                    f"{', '.join(drawers)}")
            if fixture.cavity_size is not None:
                return PrimitiveResult.failure(
                    FailureCode.INVALID_ARGUMENT, f"{container_id} is closed by a door on its "
                    "front: it cannot be loaded from above (put it on top instead)")
        box = self.p._find(container_id)
        if box.object_id == object_id:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"cannot place {object_id} in itself")
        top = box.top_z
        if box.shape in ("plate", "zone"):
            on_it = [o for o in self.p.robot.scene().objects if o.object_id not in (
                object_id, container_id) and not o.is_fixture and on_top_of(o, box)]
            spot = spot_on_support(box, held.size, on_it) if box.shape == "plate" else None
            x, y = (spot.x, spot.y) if spot is not None else (box.position[0], box.position[1])
            floor = spot.support_z if spot is not None else top  # flat: rest on its surface
            yaw = self.p._place_yaw(held, x, y, top + held.size[2] + cfg.approach_height, None)
            return self.p._release_at(held, x, y, floor, yaw, top, cancel)
        if box.shape in shapes.OPEN_CONTAINERS or box.shape in ("drawer", shapes.UNKNOWN):
            bottom = box.position[2] - box.size[2] / 2
            floor = bottom + cfg.container_floor
            inside = occupants(box, self.p.robot.scene().objects, exclude=(object_id,))
            spot = spot_in_container(box, floor, held.size, inside, Palm(
                cfg.palm_half_along, cfg.palm_half_across, cfg.rim_clearance))
            # tool y (the finger axis) is (sin yaw, -cos yaw): yaw = axis + 90 degrees
            yaw = self.p._best_yaw(spot.x, spot.y, top + held.size[2] + cfg.approach_height,
                                 symmetric_yaws(spot.finger_axis + math.pi / 2, math.pi))
            return self.p._release_at(held, spot.x, spot.y, spot.support_z, yaw, top, cancel,
                                      contained=box.shape in shapes.OPEN_CONTAINERS)
        return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                       f"{container_id} is a {box.shape}, not a container")

    def _into_drawer(self, held: "_Held", part: FixturePart,
                         cancel: CancelToken) -> PrimitiveResult:
        """Into the part of an open drawer that stands out of its cabinet (see
        ``placement.spot_in_drawer``). An object too long for it held at its middle is put down
        and taken again nearer one end, its longer part then reaching under the cabinet's
        face (``Primitives.regrasp``)."""
        cfg = self.p.config
        name = part.part_id
        scene = {o.object_id: o for o in self.p.robot.scene().objects}
        opening = measured_opening(part, scene)
        if opening is None:
            opening = self.p.believed_opening(part)
        if opening is None or not part.is_open(opening):
            return PrimitiveResult.failure(FailureCode.BLOCKED, f"{name} is closed: open it "
                                                                "first")
        assert part.cavity_size is not None
        centre = part.cavity_at(opening)
        assert centre is not None
        face, blocker = self.p._fixture_ops.front_above(part, centre[2] - part.cavity_size[2] / 2)
        inside = [o for o in scene.values() if o.object_id != held.object_id
                  and not o.is_fixture and in_cavity(o, part, opening)]
        floor = centre[2] - part.cavity_size[2] / 2
        rim = floor + part.cavity_size[2] + DRAWER_RIM
        palm = Palm(cfg.palm_half_along, cfg.palm_half_across, 0.0)
        regrasped = False
        while True:
            release = floor + cfg.place_clearance + held.grasp_offset
            palm_low = release + self.p.gripper.palm_bottom < rim
            drop = 0.0
            try:
                try:
                    spot = spot_in_drawer(part, opening, face, held.extents(), inside, palm,
                                          held_offset=held.offset,
                                          prefer=cfg.drawer_place_offset,
                                          palm_below_rim=palm_low)
                except NoSpot:
                    # the palm does not fit down between the walls: let go from over the rim
                    drop = rim + RIM_CLEAR - self.p.gripper.palm_bottom - release
                    if not palm_low or drop > MAX_DRAWER_DROP:
                        raise
                    spot = spot_in_drawer(part, opening, face, held.extents(), inside, palm,
                                          held_offset=held.offset,
                                          prefer=cfg.drawer_place_offset, palm_below_rim=False)
                break
            except NoSpot as e:
                above = self.p.fixture_map().part(blocker) if blocker else None
                ajar = above is not None and (self.p._fixture_ops.opening(above) or 0.0
                                              ) > ALREADY_CLOSED_M
                # a long object held at its middle: take it again nearer one end
                off = e.off_centre + REGRASP_MARGIN
                if (not regrasped and not ajar and e.off_centre > 0.0
                        and off <= MAX_OFF_CENTRE * held.extents()[0]):
                    held = self.p.regrasp(held, off, cancel)
                    regrasped = True
                    continue
                why = f": {blocker} above it stands out, close it first" if ajar else ""
                return PrimitiveResult.failure(FailureCode.BLOCKED, f"{e}{why}")
        top = centre[2] + part.cavity_size[2] / 2
        self.lift_to(top + held.size[2] + cfg.approach_height, cancel)
        yaws = ((spot.tool_x,) if spot.tool_x is not None
                else symmetric_yaws(spot.finger_axis + math.pi / 2, math.pi))
        yaw = self.p._best_yaw(spot.x, spot.y, top + held.size[2] + cfg.approach_height, yaws)
        return self.p._release_at(held, spot.x, spot.y, spot.support_z, yaw, top, cancel,
                                  drop=drop, out_of_sight=True)

    def place_at(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        object_id = self.p._obj_arg(args, "obj")
        x = self.p._num_arg(args, "x")
        y = self.p._num_arg(args, "y")
        held = self.p._held_or_stop(object_id)
        z = self.p.config.table_z
        yaw = self.p._place_yaw(held, x, y, z + held.size[2] + self.p.config.approach_height, None)
        return self.p._release_at(held, x, y, z, yaw, z, cancel)


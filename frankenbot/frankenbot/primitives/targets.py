"""Primitives that aim at pixels or at spots relative to other objects (catalog:
program/spatial_catalog.py, geometry and convention: frankenbot/spatial.py).

Pixel targets are back-projected by the ``PixelResolver`` port with the depth image and the
camera model. Before anything moves, the 3-D point is checked: on the table (not the floor past
its edge), inside the placement region and the safety envelope, and not on another object
(unless ``stack=1`` asks for exactly that), and the held object's footprint there must clear
every perceived object. A refused target is a typed failure with the reason and nothing moves;
an accepted one is logged and returned in the result's data (``target``).

Relative placements pick a free spot on the table beside a reference object and release there.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Mapping

from frankenbot import shapes, spatial
from frankenbot.common import FailureCode
from frankenbot.errors import MotionError, PerceptionError
from frankenbot.motion.kinematics import symmetric_yaws, top_down_pose
from frankenbot.ports import CancelToken, PixelTarget, PrimitiveResult, Value
from frankenbot.primitives.gripper import StepFailed
from frankenbot.state import SceneObject

if TYPE_CHECKING:  # Primitives imports this module
    from frankenbot.primitives.primitives import Primitives, _Held

_log = logging.getLogger(__name__)

TABLE_TOLERANCE = 0.015  # m: a surface point within this of the table height is the table
STACK_TOLERANCE = 0.025  # m: with stack=1, the surface must be this close to the object's top
STACK_ON = frozenset(shapes.SUPPORTS | {shapes.UNKNOWN})  # flat tops (shapes.py)

Handler = Callable[[Mapping[str, Value], CancelToken], PrimitiveResult]


def _fail(code: FailureCode, detail: str, **data: object) -> StepFailed:
    return StepFailed(PrimitiveResult.failure(code, detail, **data))


class TargetPrimitives:
    """Pixel and relative-placement primitives over one ``Primitives`` (its robot, beliefs,
    motion helpers and config)."""

    def __init__(self, prims: "Primitives", region: spatial.Region | None = None) -> None:
        self.p = prims
        self.region = region or spatial.Region()

    def handlers(self) -> dict[str, Handler]:
        out: dict[str, Handler] = {
            "place_at_pixel": self.place_at_pixel, "move_above_pixel": self.move_above_pixel,
            "push_to_pixel": self.push_to_pixel, "place_between": self.place_between,
            "place_near": self.place_near, "lift": self.lift,
        }
        for rel in spatial.DIRECTIONS:
            out[f"place_{rel}"] = self._relative(rel)
            out[f"push_{rel}"] = self._pushed(rel)
        return out

    # ------------------------------------------------------------------ checks
    def _resolve(self, args: Mapping[str, Value]) -> PixelTarget:
        u, v = self.p._num_arg(args, "u"), self.p._num_arg(args, "v")
        if self.p.pixels is None:
            raise _fail(FailureCode.NO_STATE, "no depth camera is connected to the primitives "
                        "(no pixel resolver): pixel targets cannot be back-projected")
        try:
            return self.p.pixels.resolve(u, v)
        except PerceptionError as e:
            raise _fail(FailureCode.NO_STATE, f"pixel ({u:g}, {v:g}): {e}") from e

    def _check_tcp(self, x: float, y: float, z: float, what: str) -> None:
        envelope = getattr(self.p.backend, "envelope", None)
        if envelope is None:
            return
        try:
            envelope.check_position((x, y, z), what)
        except MotionError as e:
            raise _fail(FailureCode.REJECTED_BY_SAFETY, str(e)) from e

    def _on_table(self, t: PixelTarget) -> None:
        table = self.p.config.table_z
        x, y, z = t.position
        where = f"pixel ({t.u:g}, {t.v:g}) -> ({x:.3f}, {y:.3f}, {z:.3f}) m"
        if z < table - TABLE_TOLERANCE:
            raise _fail(FailureCode.INVALID_ARGUMENT, f"{where} is off the table (the surface "
                        f"there is {table - z:.2f} m below the table top)", target=t.position)
        if not self.region.contains(x, y):
            raise _fail(FailureCode.REJECTED_BY_SAFETY, f"{where} is outside the placement "
                        f"region x {self.region.x}, y {self.region.y}, radius "
                        f"{self.region.radius} m", target=t.position)

    def _object_under(self, x: float, y: float, exclude: str) -> SceneObject | None:
        """The perceived object whose footprint contains (x, y), the highest first."""
        hits = []
        for o in spatial.obstacles(self.p.robot.scene().objects, exclude=(exclude,)):
            lx, ly = o.local_xy(x, y)
            if abs(lx) <= o.size[0] / 2 + 0.005 and abs(ly) <= o.size[1] / 2 + 0.005:
                hits.append(o)
        return max(hits, key=lambda o: o.top_z, default=None)

    # ------------------------------------------------------------------ pixel primitives
    def place_at_pixel(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        p = self.p
        object_id = p._obj_arg(args, "obj")
        stack = p._num_arg(args, "stack", 0.0) >= 0.5
        held = p._held_or_stop(object_id)
        t = self._resolve(args)
        self._on_table(t)
        x, y, z = t.position
        table = p.config.table_z
        under = self._object_under(x, y, object_id)
        raised = z > table + TABLE_TOLERANCE
        where = f"pixel ({t.u:g}, {t.v:g}) -> ({x:.3f}, {y:.3f}, {z:.3f}) m"
        if stack:
            if under is None or not raised:
                raise _fail(FailureCode.INVALID_ARGUMENT, f"{where}: stack=1 but no object is "
                            f"there to stack on (the surface is the table)", target=t.position)
            if under.shape not in STACK_ON or abs(z - under.top_z) > STACK_TOLERANCE:
                raise _fail(FailureCode.BLOCKED, f"{where} is on {under.object_id} "
                            f"({under.shape}), whose top is not a flat support there",
                            target=t.position)
            support = under.top_z
            yaw = p._place_yaw(held, x, y, support + held.size[2] + p.config.approach_height,
                               under.yaw if under.shape == "block" else None)
            return self._release(held, x, y, support, yaw, t, f"on {under.object_id}", cancel)
        if raised or under is not None:
            what = under.object_id if under is not None else "something"
            raise _fail(FailureCode.BLOCKED, f"{where} is on {what} ({z - table:.3f} m above "
                        f"the table); point at free table, or pass stack=1 to stack",
                        target=t.position)
        r_held = spatial.footprint_radius(held.size)
        others = spatial.obstacles(p.robot.scene().objects, exclude=(object_id,))
        gap = spatial.clearance_at(x, y, r_held, others)
        if gap < 0.0:
            near = min(others, key=lambda o: math.hypot(x - o.position[0], y - o.position[1]))
            raise _fail(FailureCode.BLOCKED, f"{where}: {object_id} would not fit there, it "
                        f"would overlap {near.object_id} by {-gap * 100:.1f} cm",
                        target=t.position)
        yaw = p._place_yaw(held, x, y, table + held.size[2] + p.config.approach_height, None)
        return self._release(held, x, y, table, yaw, t, "on the table", cancel)

    def _release(self, held: "_Held", x: float, y: float, support: float, yaw: float,
                 t: PixelTarget, what: str, cancel: CancelToken) -> PrimitiveResult:
        p = self.p
        self._check_tcp(x, y, support + held.grasp_offset + p.config.place_clearance,
                        "pixel place target")
        _log.info("place_at_pixel: pixel (%g, %g) -> target (%.3f, %.3f, %.3f) m %s "
                  "(depth frame %.2f s old)", t.u, t.v, x, y, support, what, t.age)
        result = p._release_at(held, x, y, support, yaw, max(support, p.config.table_z), cancel)
        if not result.ok:
            return result
        return PrimitiveResult.success(
            f"released {held.object_id} {what} at ({x:.3f}, {y:.3f}, {support:.3f}) m from "
            f"pixel ({t.u:g}, {t.v:g})", target=(x, y, support), pixel=(t.u, t.v),
            depth=t.depth, frame_age=t.age)

    def move_above_pixel(self, args: Mapping[str, Value],
                         cancel: CancelToken) -> PrimitiveResult:
        p = self.p
        height = p._num_arg(args, "height", 0.10)
        t = self._resolve(args)
        x, y, z = t.position
        if z < p.config.table_z - TABLE_TOLERANCE:
            raise _fail(FailureCode.INVALID_ARGUMENT, f"pixel ({t.u:g}, {t.v:g}) -> ({x:.3f}, "
                        f"{y:.3f}, {z:.3f}) m is off the table", target=t.position)
        tz = max(z, p.config.table_z) + height
        self._check_tcp(x, y, tz, "pixel hover target")
        yaw = p._best_yaw(x, y, tz, symmetric_yaws(p._current_yaw(), math.pi))
        _log.info("move_above_pixel: pixel (%g, %g) -> (%.3f, %.3f, %.3f) m", t.u, t.v, x, y, tz)
        p._to_pose(top_down_pose(x, y, tz, yaw), cancel, "move above pixel")
        return PrimitiveResult.success(f"above ({x:.3f}, {y:.3f}, {tz:.3f}) m from pixel "
                                       f"({t.u:g}, {t.v:g})", target=(x, y, tz))

    def push_to_pixel(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        p = self.p
        obj = p._find(p._obj_arg(args, "obj"))
        t = self._resolve(args)
        self._on_table(t)
        x, y, z = t.position
        if z > p.config.table_z + TABLE_TOLERANCE:
            raise _fail(FailureCode.BLOCKED, f"pixel ({t.u:g}, {t.v:g}) -> ({x:.3f}, {y:.3f}, "
                        f"{z:.3f}) m is on an object, not free table", target=t.position)
        others = spatial.obstacles(p.robot.scene().objects, exclude=(obj.object_id,))
        if spatial.clearance_at(x, y, spatial.footprint_radius(obj.size), others) < 0.0:
            raise _fail(FailureCode.BLOCKED, f"{obj.object_id} would end up against another "
                        f"object at ({x:.3f}, {y:.3f}) m", target=t.position)
        self._check_tcp(x, y, max(p.config.push_height, p.config.min_tcp_z), "push target")
        _log.info("push_to_pixel: pixel (%g, %g) -> (%.3f, %.3f) m", t.u, t.v, x, y)
        result = p._push_to_xy(obj, (x, y), f"({x:.3f}, {y:.3f}) m", cancel)
        if not result.ok:
            return result
        return PrimitiveResult.success(result.detail, target=(x, y, p.config.table_z),
                                       **dict(result.data))

    def lift(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        """Straight up to ``height`` (TCP above the table), keeping x, y and the wrist's yaw;
        already higher: nothing moves. The safety review inserts it to carry over tall things."""
        p = self.p
        height = p._num_arg(args, "height", 0.25)
        q = p._q()
        x, y, z = p.kin.tcp_position(q)
        target = p.config.table_z + height
        if z >= target - 0.005:
            return PrimitiveResult.success(f"already at {z:.3f} m", height=z)
        self._check_tcp(x, y, target, "lift target")
        p._line(top_down_pose(x, y, target, p._current_yaw()), cancel, "lift")
        return PrimitiveResult.success(f"lifted to {target:.3f} m", height=target)

    # ------------------------------------------------------------------ relative placements
    def _place_spot(self, held: "_Held", spot: spatial.Spot,
                    cancel: CancelToken) -> PrimitiveResult:
        p = self.p
        table = p.config.table_z
        self._check_tcp(spot.x, spot.y, table + held.grasp_offset + p.config.place_clearance,
                        "placement target")
        yaw = p._place_yaw(held, spot.x, spot.y,
                           table + held.size[2] + p.config.approach_height, None)
        _log.info("placing %s %s", held.object_id, spot.detail)
        result = p._release_at(held, spot.x, spot.y, table, yaw, table, cancel)
        if not result.ok:
            return result
        return PrimitiveResult.success(f"released {held.object_id} {spot.detail}",
                                       target=(spot.x, spot.y, table))

    def _relative(self, relation: str) -> Handler:
        def handler(args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
            p = self.p
            object_id = p._obj_arg(args, "obj")
            ref_id = p._obj_arg(args, "ref")
            if ref_id == object_id:
                return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                               f"cannot place {object_id} beside itself")
            gap = p._num_arg(args, "gap", spatial.DEFAULT_GAP)
            held = p._held_or_stop(object_id)
            ref = p._find(ref_id)
            try:
                spot = spatial.spot_beside(relation, ref, held.size, p.robot.scene().objects,
                                           held_id=object_id, gap=gap, region=self.region,
                                           rolls=held.shape in shapes.ROLLING)
            except spatial.NoFreeSpot as e:  # named: a recovery may clear the way first
                named = {"objects": (ref_id, *e.blockers)} if e.blockers else {}
                return PrimitiveResult.failure(FailureCode.BLOCKED, str(e), **named)
            return self._place_spot(held, spot, cancel)
        return handler

    def _pushed(self, relation: str) -> Handler:
        """``push_<relation>``: push the object along the table to the free spot on that side
        of ``ref`` (the spot a relative placement would choose)."""
        def handler(args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
            p = self.p
            obj = p._find(p._obj_arg(args, "obj"))
            ref_id = p._obj_arg(args, "ref")
            if ref_id == obj.object_id:
                return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                               f"cannot push {ref_id} beside itself")
            ref = p._find(ref_id)
            if spatial.objects_related(relation, obj, ref):
                return PrimitiveResult.success(f"{obj.object_id} is already "
                                               f"{relation.replace('_', ' ')} {ref_id}")
            objects = p.robot.scene().objects
            try:
                spot = spatial.spot_beside(relation, ref, obj.size, objects,
                                           held_id=obj.object_id, region=self.region)
            except spatial.NoFreeSpot as e:
                return PrimitiveResult.failure(FailureCode.BLOCKED, str(e))
            try:
                route = spatial.push_route(obj, (spot.x, spot.y), objects, region=self.region,
                                           standoff=p.config.push_standoff)
            except spatial.NoFreeSpot as e:
                # no way round: name what stands in the way (a recovery may clear it first)
                blockers = spatial.push_blockers(obj, (spot.x, spot.y), objects)
                return PrimitiveResult.failure(
                    FailureCode.BLOCKED, str(e) + (f" ({', '.join(blockers)} in the way)"
                                                   if blockers else ""),
                    objects=(ref_id, *blockers))
            push_z = max(p.config.push_height, p.config.min_tcp_z)
            for x, y in route:
                self._check_tcp(x, y, push_z, "push target")
            _log.info("pushing %s %s via %s", obj.object_id, spot.detail, route[:-1] or "-")
            for k, (x, y) in enumerate(route):
                if k:  # where the last leg left it, as the camera sees it now
                    seen = p._newer_view(obj.object_id, cancel)
                    obj = seen if seen is not None else replace(
                        obj, position=(*route[k - 1], obj.position[2]))
                what = spot.detail if k == len(route) - 1 else f"({x:.3f}, {y:.3f}) m"
                result = p._push_to_xy(obj, (x, y), what, cancel)
                if not result.ok:
                    return result
            return PrimitiveResult.success(result.detail, target=(spot.x, spot.y,
                                                                  p.config.table_z),
                                           legs=len(route))
        return handler

    def place_between(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        p = self.p
        object_id = p._obj_arg(args, "obj")
        a_id, b_id = p._obj_arg(args, "a"), p._obj_arg(args, "b")
        if len({object_id, a_id, b_id}) != 3:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           "place_between needs three distinct objects")
        held = p._held_or_stop(object_id)
        a, b = p._find(a_id), p._find(b_id)
        try:
            spot = spatial.spot_between(a, b, held.size, p.robot.scene().objects,
                                        held_id=object_id, region=self.region)
        except spatial.NoFreeSpot as e:
            return PrimitiveResult.failure(FailureCode.BLOCKED, str(e))
        return self._place_spot(held, spot, cancel)

    def place_near(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        p = self.p
        object_id = p._obj_arg(args, "obj")
        ref_id = p._obj_arg(args, "ref")
        if ref_id == object_id:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"cannot place {object_id} near itself")
        held = p._held_or_stop(object_id)
        ref = p._find(ref_id)
        try:
            spot = spatial.free_spot_near(ref, held.size, p.robot.scene().objects,
                                          held_id=object_id, region=self.region)
        except spatial.NoFreeSpot as e:
            return PrimitiveResult.failure(FailureCode.BLOCKED, str(e))
        return self._place_spot(held, spot, cancel)

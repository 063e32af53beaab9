"""Built-in monitors: small checks that are always on, whatever the program says.

Each monitor looks at ONE consistent ``WorldSnapshot`` plus a ``MonitorContext`` (which primitive is
running, on which objects, since when, and where those objects were when it started) and either
returns a ``Detection`` or None. They never block and never touch the robot: the monitor loop runs
them at 200 Hz beside the control thread, so each check must cost microseconds.

Failures that a primitive reports itself (motion rejected by the safety envelope, a trajectory the
controller aborted, a grasp that closed on nothing) are not polled here; ``kind_for_failure`` maps
their failure codes to the same anomaly taxonomy so the escalator treats both paths alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Protocol, Sequence

from frankenbot import spatial
from frankenbot.common import AnomalyClass, AnomalyKind
from frankenbot.state import CLOCKS_APART_S, SceneObject, WorldSnapshot

# Which argument names of a primitive refer to objects whose pose matters while it runs.
OBJECT_ARGS = ("obj", "target", "container", "drawer")
# Primitives that move the arm (a stall or an e-stop matters only while one of these runs).
MOTION_PRIMITIVES = frozenset({
    "home", "move_above", "pick", "place_on", "place_in", "place_at", "push_to", "open_drawer",
    "close_drawer", "open_door", "close_door", "press", "toggle", "turn",
    # pixel targets and relative placements (program/spatial_catalog.py)
    "place_at_pixel", "move_above_pixel", "push_to_pixel", "place_left_of", "place_right_of",
    "place_behind", "place_in_front_of", "place_between", "place_near", "lift",
    "push_left_of", "push_right_of", "push_behind", "push_in_front_of",
})
# Primitives that move their ``obj`` along the table on purpose (it moves: no anomaly).
PUSHING_PRIMITIVES = frozenset({"push_to", "push_to_pixel", "push_left_of", "push_right_of",
                                "push_behind", "push_in_front_of"})
# Primitives during which the gripper legitimately closes / opens on purpose.
GRASPING_PRIMITIVES = frozenset({"pick", "open_gripper", "close_gripper"})

# The class each detected kind belongs to (the paper's predictable / semi / unpredictable split).
KIND_CLASS: Mapping[AnomalyKind, AnomalyClass] = {
    AnomalyKind.GRASP_LOST: AnomalyClass.PREDICTABLE,
    AnomalyKind.GRASP_FAILED: AnomalyClass.PREDICTABLE,
    AnomalyKind.OBJECT_MOVED: AnomalyClass.PREDICTABLE,
    AnomalyKind.MOTION_ABORTED: AnomalyClass.PREDICTABLE,
    AnomalyKind.MOTION_REJECTED: AnomalyClass.SEMI_PREDICTABLE,
    AnomalyKind.TARGET_OCCUPIED: AnomalyClass.SEMI_PREDICTABLE,
    AnomalyKind.PLACE_FAILED: AnomalyClass.SEMI_PREDICTABLE,
    AnomalyKind.FIXTURE_STUCK: AnomalyClass.SEMI_PREDICTABLE,
    AnomalyKind.STALL: AnomalyClass.SEMI_PREDICTABLE,
    AnomalyKind.TIMEOUT: AnomalyClass.SEMI_PREDICTABLE,
    AnomalyKind.OBJECT_MISSING: AnomalyClass.UNPREDICTABLE,
    AnomalyKind.SCENE_STALE: AnomalyClass.UNPREDICTABLE,
    AnomalyKind.ESTOP: AnomalyClass.UNPREDICTABLE,
    AnomalyKind.PRIMITIVE_FAILED: AnomalyClass.UNPREDICTABLE,
    AnomalyKind.PROGRAM_MONITOR: AnomalyClass.PREDICTABLE,
}



def class_of(kind: AnomalyKind) -> AnomalyClass:
    return KIND_CLASS.get(kind, AnomalyClass.UNPREDICTABLE)


@dataclass(frozen=True)
class MonitorContext:
    """What the control thread is doing right now, as the monitors need to know it.

    ``reference`` holds the positions of the primitive's objects when it started, so "moved" means
    moved since the robot committed to a plan for them. ``primitive`` is None between primitives.
    """

    primitive: str | None = None
    args: Mapping[str, object] = field(default_factory=dict)
    node_path: str = ""
    started_at: float = 0.0
    reference: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)
    held_at_start: str | None = None  # carried on purpose: its motion is no anomaly
    # the same objects as perceived then (pose, size): what a partial view is judged against
    reference_objects: Mapping[str, SceneObject] = field(default_factory=dict)

    def objects(self) -> tuple[str, ...]:
        return tuple(str(self.args[k]) for k in OBJECT_ARGS
                     if k in self.args and isinstance(self.args[k], str))


@dataclass(frozen=True)
class Detection:
    """One monitor's verdict that something is wrong."""

    monitor: str  # e.g. builtin:grasp_lost or a program monitor's name
    kind: AnomalyKind
    anomaly_class: AnomalyClass
    detail: str
    objects: tuple[str, ...] = ()
    builtin: bool = True


class Monitor(Protocol):
    """A built-in check. ``reset`` clears any internal history (a new primitive started)."""

    name: str
    kind: AnomalyKind

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        ...

    def reset(self) -> None:
        ...


class _Base:
    name = "builtin"
    kind = AnomalyKind.PRIMITIVE_FAILED

    def _hit(self, detail: str, objects: Sequence[str] = ()) -> Detection:
        return Detection(self.name, self.kind, class_of(self.kind), detail, tuple(objects))

    def reset(self) -> None:
        return None


class EStopMonitor(_Base):
    """The e-stop is engaged: nothing else matters."""

    name = "builtin:estop"
    kind = AnomalyKind.ESTOP

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        return self._hit("e-stop engaged") if snap.robot.estop else None


FRAMES_AT_REST = 2  # new scene frames after the arm stops before positions are compared


class GraspLostMonitor(_Base):
    """The brain believes it holds an object but the fingers closed on nothing, the fingers opened
    wider than the object, or the camera sees the object far from the gripper (it fell)."""

    name = "builtin:grasp_lost"
    kind = AnomalyKind.GRASP_LOST

    def __init__(self, empty_width: float = 0.006, max_offset: float = 0.08,
                 open_margin: float = 0.012, opened_width: float = 0.06,
                 fresh_s: float = 0.5) -> None:
        self.fresh_s = fresh_s  # s: older sightings of the held object are not checked
        self.opened_width = opened_width  # m: a finger gap this wide never holds a block
        self._frames_at_rest = 0  # scene frames seen since the arm stopped moving
        self._rest_since = math.inf  # robot clock: when the arm last came to rest
        self._grip: tuple[str, float] | None = None  # (object, finger gap it was first held at)
        self._last_stamp = -math.inf
        self.empty_width = empty_width
        self.max_offset = max_offset
        self.open_margin = open_margin

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        held = snap.robot.held_object
        if held is None or ctx.primitive in GRASPING_PRIMITIVES:
            self._grip = None  # a new grasp records its own finger gap
            return None
        r = snap.robot
        if r.gripper_closed_cmd and r.gripper_width < self.empty_width:
            return self._hit(f"fingers closed on nothing while holding {held} "
                             f"(width {r.gripper_width * 1000:.1f} mm)", (held,))
        if self._grip is None or self._grip[0] != held:
            self._grip = (held, r.gripper_width)  # the gap the pick left it held at
        obj = snap.scene.get(held)
        if obj is None:
            return None
        if r.gripper_closed_cmd and self.open_margin > 0:
            # the larger horizontal extent: a held object is partly hidden by the fingers, so
            # its perceived size shrinks; a real drop opens the fingers far wider than this,
            # and wider than the gap it was first held at (a 7 cm apple seen as 5 cm)
            grip = max(max(obj.size[0], obj.size[1]) + self.open_margin, self.opened_width,
                       self._grip[1] + self.open_margin)
            if r.gripper_width > grip:
                return self._hit(f"fingers opened to {r.gripper_width * 1000:.0f} mm while "
                                 f"holding {held}", (held,))
        fresh = obj.last_seen <= 0.0 or snap.scene.stamp - obj.last_seen <= self.fresh_s
        # frames that arrive right after the arm stops were taken while it still moved: the
        # sighting must be stamped after the arm came to rest (the camera's latency grows with
        # load, so counting frames alone is not enough) and a couple of frames must have come
        if r.moving:
            self._frames_at_rest = 0
            self._rest_since = math.inf
            self._last_stamp = snap.scene.stamp
        else:
            if self._rest_since == math.inf:
                self._rest_since = r.stamp
            if snap.scene.stamp != self._last_stamp:
                self._last_stamp = snap.scene.stamp
                self._frames_at_rest += 1
        seen_at = obj.last_seen if obj.last_seen > 0.0 else snap.scene.stamp
        same_clock = abs(snap.scene.stamp - r.stamp) < CLOCKS_APART_S
        at_rest = (self._frames_at_rest >= FRAMES_AT_REST
                   and (seen_at >= self._rest_since or not same_clock))
        if (not snap.scene.stale and r.gripper_closed_cmd and at_rest and fresh
                and self.max_offset > 0):
            # only while the fingers are closed (opened, the object is being let go: a place
            # holds it until the gripper has retreated), only while the arm is still (a moving
            # arm outruns the scene's latency) and only for a fresh sighting: a remembered pose
            # (the object hidden, e.g. merged with a same-coloured bowl below it) says nothing
            # about where the gripper has it now
            offset = math.dist(obj.position, r.tcp_position)
            if offset > self.max_offset:
                return self._hit(f"{held} seen {offset:.2f} m from the gripper", (held,))
        return None


class ObjectMovedMonitor(_Base):
    """An object the running primitive works on moved since the primitive started (fixtures
    and their parts excepted: a drawer or door moves on its joint when worked, and a blocked
    one is the fixture primitives' ``fixture_stuck``).

    A large object (a bin, a bowl) that the arm partly hides while placing into it is perceived
    with a shifted centre; a shift that small against its footprint neither means it moved nor
    matters for placing into it. So the threshold grows to ``size_fraction`` of the object's
    smaller horizontal extent (blocks keep ``threshold``), and to half that extent while the
    gripper is over the object (hiding the most of it): it still lies under the gripper then.
    A container moved away (out from under the gripper) is still caught. An object seen only
    in part (the fingers around a lying bottle hide its middle: what is seen is one end) is
    measured off-centre; when the whole of what is seen lies inside the footprint it had when
    the primitive started, it is a part of it seen where it was, not a move."""

    name = "builtin:object_moved"
    kind = AnomalyKind.OBJECT_MOVED

    def __init__(self, threshold: float = 0.03, grasp_radius: float = 0.06,
                 size_fraction: float = 0.3) -> None:
        self.threshold = threshold
        self.grasp_radius = grasp_radius
        self.size_fraction = size_fraction

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        if ctx.primitive is None or snap.scene.stale:
            return None
        r = snap.robot
        for oid in ctx.objects():
            if oid in (r.held_object, ctx.held_at_start):
                continue
            if ctx.primitive in PUSHING_PRIMITIVES and oid == ctx.args.get("obj"):
                continue  # pushed: it is meant to move
            ref = ctx.reference.get(oid)
            obj = snap.scene.get(oid)
            if ref is None or obj is None or obj.is_fixture:
                continue  # a drawer or door moves on its joint: by the primitive, or stuck
            if r.gripper_closed_cmd and math.dist(obj.position, r.tcp_position) < \
                    self.grasp_radius:
                continue  # being grasped and lifted: it moves with the fingers (pick checks)
            moved = math.hypot(obj.position[0] - ref[0], obj.position[1] - ref[1])
            extent = min(obj.size[0], obj.size[1])
            limit = max(self.threshold, self.size_fraction * extent)
            if math.hypot(r.tcp_position[0] - obj.position[0],
                          r.tcp_position[1] - obj.position[1]) < extent / 2:
                limit = max(limit, extent / 2)  # the gripper over it hides part of it
            if moved > limit and not _within(obj, ctx.reference_objects.get(oid),
                                             self.threshold):
                return self._hit(f"{oid} moved {moved:.3f} m during {ctx.primitive}", (oid,))
        return None


def _within(obj: SceneObject, ref: SceneObject | None, margin: float) -> bool:
    """Does ``obj``'s footprint (its rectangle) lie inside ``ref``'s grown by ``margin``?"""
    if ref is None:
        return False
    c, s = math.cos(obj.yaw), math.sin(obj.yaw)
    rc, rs = math.cos(ref.yaw), math.sin(ref.yaw)
    hx, hy = obj.size[0] / 2, obj.size[1] / 2
    for ux, uy in ((hx, hy), (hx, -hy), (-hx, hy), (-hx, -hy)):
        dx = obj.position[0] + c * ux - s * uy - ref.position[0]
        dy = obj.position[1] + s * ux + c * uy - ref.position[1]
        if abs(rc * dx + rs * dy) > ref.size[0] / 2 + margin or \
                abs(-rs * dx + rc * dy) > ref.size[1] / 2 + margin:
            return False
    return True


class ObjectMissingMonitor(_Base):
    """An object the running primitive needs is no longer in the (fresh) scene."""

    name = "builtin:object_missing"
    kind = AnomalyKind.OBJECT_MISSING

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        if ctx.primitive is None or ctx.primitive == "detect" or snap.scene.stale:
            return None
        for oid in ctx.objects():
            if oid in (snap.robot.held_object, ctx.held_at_start) or oid not in ctx.reference:
                continue
            if snap.scene.get(oid) is None:
                return self._hit(f"{oid} is no longer visible during {ctx.primitive}", (oid,))
        return None


def _sits_on(other: SceneObject, base: SceneObject, margin: float = 0.01) -> bool:
    half = max(base.size[0], base.size[1]) / 2.0 + margin
    return other.xy_distance(base) < half and other.position[2] > base.position[2]


def _in_hand(other: SceneObject, held_id: str, snap: WorldSnapshot) -> bool:
    """``other`` is the held object under a second name: of its colour, within its size of the
    gripper (lowered onto a block, a held red block was tracked again as red_block_2 on it,
    and the place was taken for one onto an occupied block)."""
    r = snap.robot
    held = snap.scene.get(held_id)
    if r.held_object != held_id or held is None or other.colour != held.colour:
        return False
    reach = 0.5 * max(held.size) + spatial.IN_HAND_MARGIN
    return math.dist(other.position, r.tcp_position) < reach


class TargetOccupiedMonitor(_Base):
    """The place target is already taken: something sits on the block we stack on, or on the
    table spot we place at (bowls and bins may hold several objects, so they never count; on
    a fixture's top, the cabinet's, the place finds a free spot itself)."""

    name = "builtin:target_occupied"
    kind = AnomalyKind.TARGET_OCCUPIED

    def __init__(self, spot_radius: float = 0.035) -> None:
        self.spot_radius = spot_radius

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        if ctx.primitive not in ("place_on", "place_at", "place_in") or snap.scene.stale:
            return None
        obj = str(ctx.args.get("obj", ""))
        if ctx.primitive == "place_at":
            x, y = ctx.args.get("x"), ctx.args.get("y")
            if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
                return None
            for other in snap.scene.objects:
                if other.object_id == obj or other.is_fixture:
                    continue
                if math.hypot(other.position[0] - x, other.position[1] - y) < self.spot_radius:
                    return self._hit(f"{other.object_id} occupies ({x:.2f}, {y:.2f})",
                                     (other.object_id,))
            return None
        key = "target" if ctx.primitive == "place_on" else "container"
        base = snap.scene.get(str(ctx.args.get(key, "")))
        if base is None or (ctx.primitive == "place_in" and base.shape != "plate"):
            return None
        if base.is_fixture:  # a fixture's top: place_on finds a free spot on it, or fails
            return None
        for other in snap.scene.objects:
            if other.object_id in (obj, base.object_id) or other.is_fixture:
                continue
            if _in_hand(other, obj, snap):
                continue
            if _sits_on(other, base):
                return self._hit(f"{other.object_id} sits on {base.object_id}",
                                 (base.object_id, other.object_id))
        return None


class StallMonitor(_Base):
    """The arm is commanded to move but its joints have not changed for ``stall_s`` seconds."""

    name = "builtin:stall"
    kind = AnomalyKind.STALL

    def __init__(self, stall_s: float = 2.0, eps: float = 1e-3) -> None:
        self.stall_s = stall_s
        self.eps = eps
        self._last_q: tuple[float, ...] | None = None
        self._since = 0.0

    def reset(self) -> None:
        self._last_q = None

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        if ctx.primitive not in MOTION_PRIMITIVES or not snap.robot.moving:
            self._last_q = None
            return None
        q = snap.robot.joint_positions
        last = self._last_q
        if last is None or max(abs(a - b) for a, b in zip(q, last, strict=False)) > self.eps:
            self._last_q = q
            self._since = snap.time
            return None
        if snap.time - self._since > self.stall_s:
            return self._hit(f"arm commanded to move but still for {snap.time - self._since:.1f} s "
                             f"during {ctx.primitive}")
        return None


class SceneStaleMonitor(_Base):
    """Camera frames stopped: the scene the monitors and primitives rely on is out of date."""

    name = "builtin:scene_stale"
    kind = AnomalyKind.SCENE_STALE

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        if snap.scene.stale and ctx.primitive is not None and ctx.primitive != "wait":
            return self._hit(f"scene stale (last frame at {snap.scene.stamp:.2f} s)")
        return None


class TimeoutMonitor(_Base):
    """A primitive ran longer than its limit (``wait`` gets its own duration plus a margin).

    Limits of motion primitives are seconds at full speed: the pendant's slider stretches
    every motion by 1/scaling (the scaled JTC), so the limit stretches with it (never by more
    than 1/``min_scaling``: a paused arm still times out)."""

    name = "builtin:timeout"
    kind = AnomalyKind.TIMEOUT

    def __init__(self, default_s: float = 60.0, limits: Mapping[str, float] | None = None,
                 wait_margin_s: float = 2.0, min_scaling: float = 0.05) -> None:
        self.default_s = default_s
        self.limits = dict(limits or {})
        self.wait_margin_s = wait_margin_s
        self.min_scaling = min_scaling

    def check(self, snap: WorldSnapshot, ctx: MonitorContext) -> Detection | None:
        if ctx.primitive is None:
            return None
        limit = self.limits.get(ctx.primitive, self.default_s)
        if ctx.primitive == "wait":
            seconds = ctx.args.get("seconds", 0.0)
            limit = float(seconds) + self.wait_margin_s if isinstance(seconds, (int, float)) \
                else limit
        elif ctx.primitive in MOTION_PRIMITIVES:
            scaling = snap.robot.speed_scaling
            if math.isfinite(scaling):
                limit /= min(1.0, max(self.min_scaling, scaling))
        elapsed = snap.time - ctx.started_at
        if elapsed > limit:
            return self._hit(f"{ctx.primitive} running {elapsed:.1f} s > limit {limit:.1f} s")
        return None


def default_monitors(params: Mapping[str, float] | None = None) -> tuple[Monitor, ...]:
    """The built-in set, in priority order (the e-stop first). ``params`` overrides thresholds:
    empty_width, max_offset, open_margin, moved_threshold, spot_radius, stall_s, timeout_s."""
    p = dict(params or {})
    return (
        EStopMonitor(),
        GraspLostMonitor(p.get("empty_width", 0.006), p.get("max_offset", 0.08),
                         p.get("open_margin", 0.006)),
        ObjectMissingMonitor(),
        ObjectMovedMonitor(p.get("moved_threshold", 0.03)),
        TargetOccupiedMonitor(p.get("spot_radius", 0.035)),
        StallMonitor(p.get("stall_s", 2.0)),
        SceneStaleMonitor(),
        TimeoutMonitor(p.get("timeout_s", 60.0)),
    )

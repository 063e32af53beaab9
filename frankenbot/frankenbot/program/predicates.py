"""Predicates over the brain's state: what ``holding(x)``, ``in(x, c)``, ... mean, precisely.

Conditions in ``if``/``while`` and in monitors are judged here against one ``WorldSnapshot``
(perceived scene + robot state, same instant), never against simulator ground truth. The monitor
loop runs these at 200 Hz, so each evaluation is a few dictionary look-ups and float compares;
``compile_condition`` turns a condition into a closure once so per-tick cost stays in microseconds.
Tolerances are the named constants below (metres unless noted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

from frankenbot import shapes, spatial
from frankenbot.errors import ProgramError
from frankenbot.fixture_map import (
    LIT_KINDS,
    FixtureMap,
    FixturePart,
    measured_on,
    measured_opening,
)
from frankenbot.program.tree import And, Cond, Ident, Monitor, Not, Or, Pred
from frankenbot.state import SceneObject, WorldSnapshot

# --- gripper ------------------------------------------------------------------------------
GRIPPER_OPEN_MIN_WIDTH = 0.075  # finger gap at or above which the gripper counts as open
GRIPPER_FULLY_OPEN_WIDTH = 0.080  # at or above: fully open, so it cannot be holding anything
GRIPPER_EMPTY_MAX_WIDTH = 0.004  # at or below: closed on nothing
# --- in(x, c) -----------------------------------------------------------------------------
IN_FOOTPRINT_SHRINK = 0.01  # x's centre must be this far inside c's footprint edge
IN_BELOW_BOTTOM_TOL = 0.02  # x's bottom may be this far below c's bottom (perception noise)
IN_ABOVE_RIM_MARGIN = 0.03  # x's bottom may be this far above c's rim (a block sitting on top)
# --- on(x, y) -----------------------------------------------------------------------------
ON_Z_TOL = 0.02  # |x bottom - y top| at most this
ON_XY_MARGIN = 0.01  # x's centre within y's footprint grown by this
# --- visible(x) ---------------------------------------------------------------------------
VISIBLE_MAX_AGE = 1.0  # s: an object not seen for longer (scene clock) is not visible
# --- drawer_open(d), open(x), closed(x) ----------------------------------------------------
DRAWER_OPEN_MIN_PULL = 0.05  # handle this much further out than the closed front face
DRAWER_CLOSED_MAX_PULL = 0.065  # ... at most this far out: closed (no fixture map to ask)
# open / closed with a fixture map: its part's share of travel (fixture_map.OPEN_SHARE, ...)
# --- in(x, drawer) ------------------------------------------------------------------------
CAVITY_MARGIN = 0.01  # m: x's centre this far outside a drawer's cavity still counts as in it


class PredicateError(ProgramError):
    """A condition names a predicate this module does not know, or has the wrong arity."""


def _index(snap: WorldSnapshot) -> dict[str, SceneObject]:
    return {o.object_id: o for o in snap.scene.objects}


def _local_xy(obj: SceneObject, ref: SceneObject) -> tuple[float, float]:
    """``obj``'s centre in ``ref``'s horizontal frame (rotated by ref.yaw)."""
    return ref.local_xy(obj.position[0], obj.position[1])


def _bottom(o: SceneObject) -> float:
    return o.position[2] - o.size[2] / 2.0


def holding(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str) -> bool:
    """The primitives hold ``x`` and the fingers are on something. While a place lets go
    (``RobotSnapshot.releasing``), ``x`` counts as held until the gripper has retreated and
    the camera shows it at its new place (``Primitives._release_at``), however wide the
    fingers opened: a mug's release opens them fully, and a drop monitor took it for a drop
    and sent the arm back through the mug."""
    r = snap.robot
    if r.held_object != x:
        return False
    return r.releasing or GRIPPER_EMPTY_MAX_WIDTH < r.gripper_width < GRIPPER_FULLY_OPEN_WIDTH


def _in_hand(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str) -> bool:
    """``x`` is in the closed fingers: it is in or on nothing else, however close above a
    container or a support the arm carries it (a block held over the bin is not in it)."""
    return snap.robot.gripper_closed_cmd and holding(snap, objs, x)


def _open_drawer_span(snap: WorldSnapshot, objs: Mapping[str, SceneObject],
                      box: SceneObject) -> tuple[float, float] | None:
    """Local x range an open drawer's contents occupy: from its handle to its back wall.

    A drawer fixture's pose is where it sits closed; pulled open, its box (and what was put
    in it) slides out towards the handle, outside that footprint. Without this, ``in(x,
    drawer)`` was false for a block just released into the open drawer, so verification loops
    and drop monitors re-picked it. None when the drawer is closed or its handle is unseen."""
    if box.shape != "drawer" or not drawer_open(snap, objs, box.object_id):
        return None
    handle = objs.get(f"{box.object_id}_handle")
    if handle is None:
        return None
    hl, _ = _local_xy(handle, box)
    back = box.size[0] / 2.0 - IN_FOOTPRINT_SHRINK
    return (hl, back) if hl < 0 else (-back, hl)


def inside(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str, c: str) -> bool:
    o, box = objs.get(x), objs.get(c)
    if o is None or x == c or _in_hand(snap, objs, x):
        return False
    in_fixture = _in_fixture(snap, objs, o, c)
    if in_fixture is not None:
        return in_fixture
    if box is None:
        return False
    lx, ly = _local_xy(o, box)
    if box.shape in shapes.ROUND and box.shape in shapes.CONTAINERS:  # a bowl, a plate
        r = max(0.0, min(box.size[0], box.size[1]) / 2.0 - IN_FOOTPRINT_SHRINK)
        if math.hypot(lx, ly) > r:
            return False
    hx = max(0.0, box.size[0] / 2.0 - IN_FOOTPRINT_SHRINK)
    hy = max(0.0, box.size[1] / 2.0 - IN_FOOTPRINT_SHRINK)
    span = _open_drawer_span(snap, objs, box)
    if span is None and box.shape == "drawer" and (box.opening or 0.0) > 0.0:
        # no map and no handle seen: the box and its contents slid out by its opening,
        # towards its front (a fixture's front faces its local -x)
        span = (-hx - float(box.opening or 0.0), hx - float(box.opening or 0.0))
    lo, hi = span if span is not None else (-hx, hx)
    if not lo <= lx <= hi or abs(ly) > hy:
        return False
    b = _bottom(o)
    # a drawer is shut in by the furniture above it: what rests above its rim stands on the
    # furniture (a bowl on the cabinet), not in the drawer
    rim = IN_FOOTPRINT_SHRINK if box.shape == "drawer" else IN_ABOVE_RIM_MARGIN
    return _bottom(box) - IN_BELOW_BOTTOM_TOL <= b <= box.top_z + rim


def on(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str, y: str) -> bool:
    o, base = objs.get(x), objs.get(y)
    if o is None or base is None or x == y or _in_hand(snap, objs, x):
        return False
    if abs(_bottom(o) - base.top_z) > ON_Z_TOL:
        return False
    lx, ly = _local_xy(o, base)
    return (abs(lx) <= base.size[0] / 2.0 + ON_XY_MARGIN
            and abs(ly) <= base.size[1] / 2.0 + ON_XY_MARGIN)


def near(snap: WorldSnapshot, objs: Mapping[str, SceneObject], a: str, b: str,
         d: float) -> bool:
    oa, ob = objs.get(a), objs.get(b)
    return oa is not None and ob is not None and oa.xy_distance(ob) <= d


def visible(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str) -> bool:
    o = objs.get(x)
    if o is None or snap.scene.stale or o.occluded:
        return False
    if o.last_seen > 0.0 and snap.scene.stamp > 0.0:
        return snap.scene.stamp - o.last_seen <= VISIBLE_MAX_AGE
    return True


def gripper_open(snap: WorldSnapshot, objs: Mapping[str, SceneObject]) -> bool:
    return snap.robot.gripper_width >= GRIPPER_OPEN_MIN_WIDTH


def _map(snap: WorldSnapshot) -> FixtureMap | None:
    fmap = snap.fixture_map
    return fmap if isinstance(fmap, FixtureMap) else None


def _fact(snap: WorldSnapshot, *ids: str) -> bool | None:
    """The executor's belief ``open:<id>`` (or the first waves' ``drawer_open:<id>``)."""
    for i in ids:
        for key in (f"open:{i}", f"drawer_open:{i}"):
            value = snap.facts.get(key)
            if value is not None:
                return bool(value)
    return None


def _openable(snap: WorldSnapshot, x: str) -> FixturePart | None:
    fmap = _map(snap)
    part = fmap.stateful_part(x) if fmap is not None else None
    return part if part is not None and part.kind not in LIT_KINDS and part.travel > 0 else None


def _handle_pull(objs: Mapping[str, SceneObject], d: str) -> float | None:
    """How far ``<d>_handle`` stands out of the fixture ``d``'s front (no map to ask)."""
    drawer, handle = objs.get(d), objs.get(f"{d}_handle")
    if drawer is None or handle is None:
        return None
    lx, _ly = _local_xy(handle, drawer)
    return abs(lx) - drawer.size[0] / 2.0


def _open_state(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str
                ) -> tuple[bool, bool] | None:
    """(open, closed) of the drawer or door ``x`` (or a fixture's only one): the executor's
    belief when it has one (how the primitives left it), else the camera's measured opening
    against the part's travel in the fixture map, else where its handle is seen."""
    part = _openable(snap, x)
    fact = _fact(snap, x, *((part.part_id,) if part is not None else ()))
    if fact is not None:
        return fact, not fact
    if part is not None:
        value = measured_opening(part, objs)
        if value is not None:
            return part.is_open(value), part.is_closed(value)
    pull = _handle_pull(objs, x)
    if pull is None:
        return None
    return pull > DRAWER_OPEN_MIN_PULL, pull <= DRAWER_CLOSED_MAX_PULL


def is_open(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str) -> bool:
    """``open(x)``: see ``_open_state`` (unknown: false)."""
    state = _open_state(snap, objs, x)
    return state is not None and state[0]


def is_closed(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str) -> bool:
    """``closed(x)``: see ``_open_state`` (unknown: false). A drawer ajar is neither."""
    state = _open_state(snap, objs, x)
    return state is not None and state[1]


def drawer_open(snap: WorldSnapshot, objs: Mapping[str, SceneObject], d: str) -> bool:
    """The first waves' name of ``open(d)``: the executor's fact ``drawer_open:<d>`` (or
    ``open:<d>``) when it has one; otherwise the measured opening, or geometry: the drawer's
    handle object ``<d>_handle`` stands out of the drawer's front by more than
    DRAWER_OPEN_MIN_PULL (the handle's distance from the drawer centre minus half its depth)."""
    return is_open(snap, objs, d)


def on_state(snap: WorldSnapshot, objs: Mapping[str, SceneObject], x: str) -> bool:
    """``on_state(x)``: the lamp or burner ``x`` (or a stove's burner, a light panel's lamp) is
    lit as the camera sees it."""
    fmap = _map(snap)
    part = fmap.stateful_part(x) if fmap is not None else None
    if part is not None and part.kind in LIT_KINDS:
        lit = measured_on(part, objs)
        if lit is not None:
            return lit
    o = objs.get(x)
    return bool(o is not None and o.on)


def _opening_for_cavity(snap: WorldSnapshot, objs: Mapping[str, SceneObject],
                        part: FixturePart) -> float:
    value = measured_opening(part, objs)
    if value is not None:
        return value
    fact = _fact(snap, part.part_id)
    return part.travel if fact else 0.0


def _in_fixture(snap: WorldSnapshot, objs: Mapping[str, SceneObject], o: SceneObject,
                c: str) -> bool | None:
    """``in(x, c)`` for a fixture ``c`` with a cavity in the map: a drawer (its box where it
    stands now, or anywhere between closed and there), a cabinet (any of its drawers), a
    microwave or cupboard (behind its door); None when ``c`` is no such fixture."""
    fmap = _map(snap)
    if fmap is None:
        return None
    parts: list[FixturePart] = []
    part = fmap.part(c)
    fixture = fmap.fixture(c)
    if part is not None and part.cavity_size is not None:
        parts = [part]
    elif fixture is not None and fixture.self_part is None:
        parts = [p for p in fixture.parts if p.cavity_size is not None]
        if not parts and fixture.cavity_centre is not None and fixture.cavity_size is not None:
            box = SceneObject(c, "", fixture.kind, "", fixture.cavity_centre,
                              fixture.cavity_size, fixture.yaw)
            lx, ly = _local_xy(o, box)
            return (abs(lx) <= box.size[0] / 2 and abs(ly) <= box.size[1] / 2
                    and abs(o.position[2] - box.position[2]) <= box.size[2] / 2)
    if not parts:
        return None
    for p in parts:
        opening = _opening_for_cavity(snap, objs, p)
        for share in (1.0, 0.66, 0.33, 0.0):  # it slides with the drawer
            if p.cavity_contains(o.position, opening * share, margin=CAVITY_MARGIN):
                return True
    return False


def empty(snap: WorldSnapshot, objs: Mapping[str, SceneObject], c: str) -> bool:
    if c not in objs:
        return False
    return not any(inside(snap, objs, o, c) for o in objs if o != c)


def _relation(name: str) -> Callable[..., bool]:
    """``left_of(a, b)`` and its kin (convention: frankenbot/spatial.py)."""
    def judge(snap: WorldSnapshot, objs: Mapping[str, SceneObject], a: str, b: str) -> bool:
        oa, ob = objs.get(a), objs.get(b)
        if oa is None or ob is None or a == b:
            return False
        return spatial.objects_related(name, oa, ob)
    judge.__name__ = name
    return judge


def between(snap: WorldSnapshot, objs: Mapping[str, SceneObject], a: str, b: str,
            c: str) -> bool:
    oa, ob, oc = objs.get(a), objs.get(b), objs.get(c)
    return (oa is not None and ob is not None and oc is not None and len({a, b, c}) == 3
            and spatial.relation_holds("between", oa.position[:2], ob.position[:2],
                                       oc.position[:2]))


def free_spot_near(snap: WorldSnapshot, objs: Mapping[str, SceneObject], ref: str) -> bool:
    """A standard block (4 cm) would fit on the table beside ``ref`` (front, left, right or
    behind), clear of every other perceived object."""
    o = objs.get(ref)
    if o is None:
        return False
    try:
        spatial.free_spot_near(o, FREE_SPOT_PROBE_SIZE, objs.values(),
                               held_id=snap.robot.held_object or "")
    except spatial.NoFreeSpot:
        return False
    return True


FREE_SPOT_PROBE_SIZE = (0.04, 0.04, 0.04)  # the footprint free_spot_near asks room for

_Fn = Callable[..., bool]
PREDICATES: Mapping[str, tuple[_Fn, int]] = {
    "holding": (holding, 1), "in": (inside, 2), "on": (on, 2), "near": (near, 3),
    "visible": (visible, 1), "gripper_open": (gripper_open, 0),
    "drawer_open": (drawer_open, 1), "empty": (empty, 1),
    "open": (is_open, 1), "closed": (is_closed, 1), "on_state": (on_state, 1),
    **{rel: (_relation(rel), 2) for rel in spatial.DIRECTIONS},
    "between": (between, 3), "free_spot_near": (free_spot_near, 1),
}

Checker = Callable[[WorldSnapshot, Mapping[str, SceneObject]], bool]


def _resolve(v: Ident | float, bindings: Mapping[str, str]) -> str | float:
    if isinstance(v, Ident):
        return bindings.get(v.name, v.name)
    return float(v)


def _compile(cond: Cond, bindings: Mapping[str, str]) -> Checker:
    if isinstance(cond, Pred):
        entry = PREDICATES.get(cond.name)
        if entry is None:
            raise PredicateError(f"unknown predicate {cond.name!r}; known: "
                                 + ", ".join(sorted(PREDICATES)))
        fn, arity = entry
        if len(cond.args) != arity:
            raise PredicateError(f"{cond.name} takes {arity} argument(s), got {len(cond.args)}")
        args = tuple(_resolve(a, bindings) for a in cond.args)
        return lambda snap, objs: fn(snap, objs, *args)
    if isinstance(cond, Not):
        inner = _compile(cond.operand, bindings)
        return lambda snap, objs: not inner(snap, objs)
    parts = tuple(_compile(c, bindings) for c in cond.operands)
    if isinstance(cond, And):
        return lambda snap, objs: all(p(snap, objs) for p in parts)
    if isinstance(cond, Or):
        return lambda snap, objs: any(p(snap, objs) for p in parts)
    raise PredicateError(f"not a condition: {cond!r}")


def compile_condition(cond: Cond, bindings: Mapping[str, str] | None = None
                      ) -> Callable[[WorldSnapshot], bool]:
    """A fast closure ``snapshot -> bool`` for ``cond`` (names checked once, here)."""
    check = _compile(cond, dict(bindings or {}))
    return lambda snap: check(snap, _index(snap))


def evaluate_predicate(pred: Cond, snapshot: WorldSnapshot,
                       bindings: Mapping[str, str] | None = None) -> bool:
    """Judge a predicate or a whole not/and/or condition on one snapshot.

    ``bindings`` maps skill parameter names to object ids while a skill body runs.
    Raises PredicateError for unknown predicates or wrong arity (the validator prevents both).
    """
    return _compile(pred, bindings or {})(snapshot, _index(snapshot))


@dataclass(frozen=True)
class MonitorProbe:
    """A program monitor as the monitor loop sees it: ``name`` and ``holds(snapshot)``."""

    monitor: Monitor
    name: str = ""
    _check: Callable[[WorldSnapshot], bool] = field(default=lambda s: False, repr=False,
                                                    compare=False)

    @classmethod
    def of(cls, monitor: Monitor) -> "MonitorProbe":
        return cls(monitor, monitor.name, compile_condition(monitor.when))

    def holds(self, snap: WorldSnapshot) -> bool:
        return self._check(snap)

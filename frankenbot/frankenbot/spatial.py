"""Spatial relations and free spots on the table, from the perceived scene: one home for both.

Convention (the predicates, the placement primitives, the offline planner and the sim oracle all
use it): relations are judged in ``base_link`` as seen by an operator standing behind the robot's
base and looking the way the arm faces (+x, across the table), which is also how the robot "sees"
the table. So

* ``left_of(a, b)``: a lies towards +y of b; ``right_of``: towards -y;
* ``behind(a, b)``: a lies further from the robot than b (+x); ``in_front_of``: nearer (-x);
* ``between(a, b, c)``: a's centre lies on the segment from b to c (inner 70 %), within
  BETWEEN_MAX_OFFSET of the line.

A directional relation holds when a's centre is at least REL_MIN_OFFSET along the direction and
no further sideways than along it (a 90-degree cone), and their footprints are at most
REL_MAX_GAP apart: a block at the far end of the table is not "behind the plate" to a person
asking for it there (the sim oracle's place_relative check uses the same bound). The camera's
own left and right do not matter: the sim camera looks back at the robot from the far corner,
so its image is mirrored with respect to this convention, and the prompt says so.

Everything here is pure geometry on ``SceneObject``s (centres, footprints as circles), cheap
enough for 200 Hz monitors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from frankenbot.errors import FrankenbotError
from frankenbot.state import SceneObject

REL_MIN_OFFSET = 0.03  # m: a must be at least this far along the direction from b
BETWEEN_RANGE = (0.15, 0.85)  # fraction of the b->c segment a's projection must fall in
BETWEEN_MAX_OFFSET = 0.05  # m: a's centre at most this far off the b-c line
BETWEEN_SPOT_OFFSET = 0.03  # m: a chosen spot between two objects at most this far off it
FLAT_HEIGHT = 0.005  # m: objects thinner than this (zones, markings) are not obstacles
# m beyond a held object's half size where something is in the hand with it (a piece of it
# tracked under another name)
IN_HAND_MARGIN = 0.03
SPOT_CLEARANCE = 0.012  # m between footprints of the placed object and any other object
DEFAULT_GAP = 0.03  # m between the placed object's footprint and the reference's
# a chosen spot beside a reference stays within this tangent of the relation's direction
# (the relation allows 1), the rest absorbing perception error; for a thing that rolls, the
# tighter one also absorbs its roll after the release (a lemon put 0.71 out of line beside a
# mug, 1.3 cm off in the camera's view, rolled 2 cm further out: no longer left of it)
SPOT_CONE = 0.75
ROLLING_SPOT_CONE = 0.5
REL_MAX_GAP = 0.10  # m: at most this between the footprints for a directional relation
# m: a chosen spot leaves this much of REL_MAX_GAP for perception and release error (a few mm
# each under realistic noise) so the placed object still holds the relation when re-perceived
PLACE_GAP_MARGIN = 0.03
ROUND_SHAPES = ("bowl", "plate")

DIRECTIONS: dict[str, tuple[float, float]] = {
    "left_of": (0.0, 1.0), "right_of": (0.0, -1.0),
    "behind": (1.0, 0.0), "in_front_of": (-1.0, 0.0),
}
RELATIONS = (*DIRECTIONS, "between")


@dataclass(frozen=True)
class Region:
    """Where on the table a placement may go: a box in base x/y and a ring around the base
    (inside the arm's comfortable reach, outside its base column)."""

    x: tuple[float, float] = (0.20, 0.80)
    y: tuple[float, float] = (-0.50, 0.50)
    radius: tuple[float, float] = (0.25, 0.80)

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        r = math.hypot(x, y)
        return (self.x[0] + margin <= x <= self.x[1] - margin
                and self.y[0] + margin <= y <= self.y[1] - margin
                and self.radius[0] + margin <= r <= self.radius[1] - margin)


@dataclass(frozen=True)
class Spot:
    """A chosen free spot (x, y on the table) and why it was chosen."""

    x: float
    y: float
    detail: str


class NoFreeSpot(FrankenbotError, ValueError):
    """No spot satisfies the relation, the clearances and the region. ``blockers``: the
    objects on the first choice, where there are any (a recovery may clear them first)."""

    def __init__(self, message: str, blockers: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.blockers = tuple(blockers)


def footprint_radius(size: Sequence[float], shape: str = "block") -> float:
    """Radius of a footprint's bounding circle (round shapes: half their width)."""
    if shape in ROUND_SHAPES:
        return 0.5 * max(size[0], size[1])
    return 0.5 * math.hypot(size[0], size[1])


def object_radius(o: SceneObject) -> float:
    """Radius of ``o``'s footprint circle."""
    return footprint_radius(o.size, o.shape)


def relation_holds(relation: str, a: tuple[float, float], b: tuple[float, float],
                   c: tuple[float, float] | None = None, *, radii: float | None = None) -> bool:
    """The relation between centres ``a`` and ``b`` (and ``c`` for between), per the module's
    convention. ``radii``: the sum of a's and b's footprint radii; with it a directional
    relation also needs the footprints within REL_MAX_GAP of each other."""
    if relation == "between":
        if c is None:
            raise ValueError("between needs a third point")
        return _between(a, b, c)
    ux, uy = DIRECTIONS[relation]
    dx, dy = a[0] - b[0], a[1] - b[1]
    along = dx * ux + dy * uy
    across = abs(-dx * uy + dy * ux)
    close = radii is None or math.hypot(dx, dy) - radii <= REL_MAX_GAP
    return along >= REL_MIN_OFFSET and across <= along and close


@dataclass(frozen=True)
class FaceRelation:
    """Where a footprint stands against one face of a box (a fixture): ``out`` from the face
    (its centre's distance past it), ``across`` from the face's middle, the face's
    ``half_width``, and the ``gap`` between the footprint and the face."""

    out: float
    across: float
    half_width: float
    gap: float

    @property
    def holds(self) -> bool:
        """Beside that face: past it, not beyond its ends, within REL_MAX_GAP of it."""
        return self.out >= 0.0 and self.across <= self.half_width and self.gap <= REL_MAX_GAP


def face_relation(relation: str, a: tuple[float, float], radius: float,
                  box_centre: tuple[float, float], box_yaw: float,
                  box_size: Sequence[float]) -> FaceRelation:
    """``relation`` (left_of ... in_front_of) of a footprint of ``radius`` at ``a`` to the face
    of the box that looks that way (a fixture beside which things stand)."""
    ux, uy = DIRECTIONS[relation]
    c, s = math.cos(box_yaw), math.sin(box_yaw)
    hx, hy = box_size[0] / 2, box_size[1] / 2
    half_along = abs(ux * c + uy * s) * hx + abs(-ux * s + uy * c) * hy
    half_across = abs(-uy * c + ux * s) * hx + abs(uy * s + ux * c) * hy
    dx, dy = a[0] - box_centre[0], a[1] - box_centre[1]
    along, across = dx * ux + dy * uy, abs(-dx * uy + dy * ux)
    return FaceRelation(along - half_along, across, half_across, along - half_along - radius)


def objects_related(relation: str, a: SceneObject, b: SceneObject) -> bool:
    """Does ``a`` stand ``relation`` (left_of ... in_front_of) ``b``? Beside the face of a
    fixture (the sim's oracle reads it so), else by the two footprints' centres."""
    if b.is_fixture:
        return face_relation(relation, a.position[:2], object_radius(a), b.position[:2],
                             b.yaw, b.size).holds
    return relation_holds(relation, a.position[:2], b.position[:2],
                          radii=object_radius(a) + object_radius(b))


def _between(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> bool:
    bx, by = c[0] - b[0], c[1] - b[1]
    length2 = bx * bx + by * by
    if length2 < 1e-8:
        return False
    t = ((a[0] - b[0]) * bx + (a[1] - b[1]) * by) / length2
    px, py = b[0] + t * bx, b[1] + t * by
    off = math.hypot(a[0] - px, a[1] - py)
    return BETWEEN_RANGE[0] <= t <= BETWEEN_RANGE[1] and off <= BETWEEN_MAX_OFFSET


def obstacles(objects: Iterable[SceneObject], exclude: Iterable[str] = ()) -> list[SceneObject]:
    """Objects a placed object must keep clear of (not flat markings, not the excluded ids)."""
    skip = set(exclude)
    return [o for o in objects if o.object_id not in skip and o.size[2] >= FLAT_HEIGHT
            and all(math.isfinite(v) for v in o.position)]


def segment_point_distance(p: tuple[float, float], a: tuple[float, float],
                           b: tuple[float, float]) -> float:
    """Distance (m) from point ``p`` to the segment ``a``-``b`` in the plane."""
    ax, ay = b[0] - a[0], b[1] - a[1]
    length2 = ax * ax + ay * ay
    t = 0.0 if length2 < 1e-12 else max(0.0, min(1.0, ((p[0] - a[0]) * ax
                                                       + (p[1] - a[1]) * ay) / length2))
    return math.hypot(p[0] - (a[0] + t * ax), p[1] - (a[1] + t * ay))


def footprint_gap(o: SceneObject, a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance (m) from the segment ``a``-``b`` to ``o``'s footprint (0: it crosses it).

    Round shapes are circles; others are their yawed rectangles, not the rectangle's bounding
    circle: a long fixture such as the drawer cabinet would otherwise reach far beyond its
    sides (the review flagged carries that pass well clear of it)."""
    if o.shape in ROUND_SHAPES:
        return max(0.0, segment_point_distance((o.position[0], o.position[1]), a, b)
                   - object_radius(o))
    hx, hy = o.size[0] / 2.0, o.size[1] / 2.0
    la, lb = o.local_xy(*a), o.local_xy(*b)
    # Liang-Barsky: does the segment (in the object's frame) enter the rectangle?
    t0, t1 = 0.0, 1.0
    d = (lb[0] - la[0], lb[1] - la[1])
    crosses = True
    for p, q in ((-d[0], la[0] + hx), (d[0], hx - la[0]), (-d[1], la[1] + hy),
                 (d[1], hy - la[1])):
        if abs(p) < 1e-12:
            if q < 0:
                crosses = False
                break
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            crosses = False
            break
    if crosses:
        return 0.0

    def to_box(pt: tuple[float, float]) -> float:
        return math.hypot(max(abs(pt[0]) - hx, 0.0), max(abs(pt[1]) - hy, 0.0))

    corners = [(sx * hx, sy * hy) for sx in (-1, 1) for sy in (-1, 1)]
    return min([to_box(la), to_box(lb)] + [segment_point_distance(c, la, lb) for c in corners])


def _extent_along(o: SceneObject, ux: float, uy: float) -> float:
    """How far ``o``'s footprint reaches from its centre along the unit direction (ux, uy)."""
    if o.shape in ROUND_SHAPES:
        return object_radius(o)
    c, s = math.cos(o.yaw), math.sin(o.yaw)
    return abs(ux * c + uy * s) * o.size[0] / 2 + abs(-ux * s + uy * c) * o.size[1] / 2


def clearance_at(x: float, y: float, radius: float, others: Iterable[SceneObject]) -> float:
    """Smallest gap (m) between a footprint circle at (x, y) and the others' footprints
    (``footprint_gap``: round ones' circles, others' yawed rectangles; a 13 x 2 cm marker
    lying 19 cm from a plate's centre, as a circle, had left no room beside the plate);
    at most -``radius`` where the circle's centre is on one (an overlap); +inf when there
    are none."""
    gaps = [footprint_gap(o, (x, y), (x, y)) - radius for o in others]
    return min(gaps, default=math.inf)


def is_free(x: float, y: float, radius: float, others: Iterable[SceneObject],
            region: Region, clearance: float = SPOT_CLEARANCE) -> bool:
    return (region.contains(x, y, radius * 0.5)
            and clearance_at(x, y, radius, others) >= clearance)


def spot_beside(relation: str, ref: SceneObject, held_size: Sequence[float],
                objects: Iterable[SceneObject], *, held_id: str = "",
                gap: float = DEFAULT_GAP, region: Region | None = None,
                rolls: bool = False) -> Spot:
    """A free table spot on the ``relation`` side of ``ref`` for an object of ``held_size``
    (``rolls``: a thing that may roll once let go, kept nearer the relation's direction).

    First choice: straight out from ref's centre, ``gap`` between the footprints; then the
    other candidates nearest first: further out and sideways inside the relation's cone, while
    the footprints stay within REL_MAX_GAP - PLACE_GAP_MARGIN of each other (or ``gap`` when
    asked for more), so the placed object still holds the relation when seen again. Raises
    NoFreeSpot with the reason."""
    region = region or Region()
    if relation not in DIRECTIONS:
        raise ValueError(f"unknown relation {relation!r}; known: {', '.join(DIRECTIONS)}")
    ux, uy = DIRECTIONS[relation]
    r_held = footprint_radius(held_size)
    others = obstacles(objects, exclude=(held_id, ref.object_id))
    # beside a fixture: out from its face on that side, not from its bounding circle (beside a
    # wide stove the circle would leave the object far from the face it is meant to stand at)
    radii = (_extent_along(ref, ux, uy) if ref.is_fixture else object_radius(ref)) + r_held
    base = radii + gap
    max_gap = max(gap, REL_MAX_GAP - PLACE_GAP_MARGIN)
    cone = ROLLING_SPOT_CONE if rolls else SPOT_CONE
    cands = []
    for i in range(0, 11):
        d = base + 0.01 * i
        for j in range(-8, 9):
            side = 0.01 * j
            # inside the cone with a margin; the footprints no further apart than max_gap
            if abs(side) > cone * d or math.hypot(d, side) - radii > max_gap + 1e-9:
                continue
            x = ref.position[0] + ux * d - uy * side
            y = ref.position[1] + uy * d + ux * side
            cands.append((math.hypot(d - base, side), x, y))
    reasons = set()
    for _cost, x, y in sorted(cands, key=lambda c: c[0]):
        if not region.contains(x, y, r_held * 0.5):
            reasons.add("off the reachable table region")
            continue
        if clearance_at(x, y, r_held, others) < SPOT_CLEARANCE:
            reasons.add("occupied")
            continue
        if (footprint_gap(ref, (x, y), (x, y)) if ref.is_fixture
                else math.hypot(x - ref.position[0], y - ref.position[1])
                - object_radius(ref)) - r_held < gap * 0.5:
            continue
        return Spot(x, y, f"{relation.replace('_', ' ')} {ref.object_id} at "
                          f"({x:.3f}, {y:.3f}) m")
    # what stands on the first choice, straight out from the reference
    x0, y0 = ref.position[0] + ux * base, ref.position[1] + uy * base
    blockers = sorted(o.object_id for o in others if not o.is_fixture
                      and clearance_at(x0, y0, r_held, [o]) < SPOT_CLEARANCE)
    raise NoFreeSpot(f"no free spot {relation.replace('_', ' ')} {ref.object_id} within "
                     f"{max_gap * 100:.0f} cm of it: every candidate is "
                     f"{' or '.join(sorted(reasons)) or 'too close'}"
                     + (f" ({', '.join(blockers)} on the nearest)" if blockers else ""),
                     blockers)


def spot_between(b: SceneObject, c: SceneObject, held_size: Sequence[float],
                 objects: Iterable[SceneObject], *, held_id: str = "",
                 region: Region | None = None) -> Spot:
    """A free spot between ``b`` and ``c``: the midpoint first, then the nearest free candidate
    along the segment (within the between-range) and off it by up to BETWEEN_SPOT_OFFSET (the
    relation allows BETWEEN_MAX_OFFSET; the rest absorbs perception and release error), e.g.
    beside a third object lying near the line. Raises NoFreeSpot."""
    region = region or Region()
    r_held = footprint_radius(held_size)
    others = obstacles(objects, exclude=(held_id,))
    bx, by, cx, cy = b.position[0], b.position[1], c.position[0], c.position[1]
    length = math.hypot(cx - bx, cy - by)
    if length < 1e-6:
        raise NoFreeSpot(f"no spot between {b.object_id} and {c.object_id}: they coincide")
    nx, ny = -(cy - by) / length, (cx - bx) / length  # unit normal of the segment
    cands = []
    # on the line, then 1 cm steps out on either side (+ first: ties keep that order)
    steps = round(BETWEEN_SPOT_OFFSET / 0.01)
    offsets = [0.0] + [sign * 0.01 * k for k in range(1, steps + 1) for sign in (1, -1)]
    for t in (0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7):
        for off in offsets:
            cands.append((math.hypot((t - 0.5) * length, off), t, off))
    for _cost, t, off in sorted(cands, key=lambda k: k[0]):
        x, y = bx + t * (cx - bx) + off * nx, by + t * (cy - by) + off * ny
        if is_free(x, y, r_held, others, region):
            return Spot(x, y, f"between {b.object_id} and {c.object_id} at ({x:.3f}, {y:.3f}) m")
    raise NoFreeSpot(f"no free spot between {b.object_id} and {c.object_id}: the gap is too "
                     f"narrow for a {2 * r_held * 100:.0f} cm footprint or occupied")


PUSH_CLEARANCE = 0.005  # m between a pushed object's footprint and anything it passes
PUSH_GRID = 0.02  # m between the grid points a detour is searched on
PUSH_STANDOFF = 0.035  # m: the gripper starts this far behind the object (primitives' default)
PUSHER_MIN_X = 0.10  # m: the least x the gripper comes down at behind a pushed object
PUSHER_RADIUS = 0.03  # m: the closed fingers lowered behind the object must clear others


def push_reach(size: Sequence[float], standoff: float = PUSH_STANDOFF) -> float:
    """How far behind an object's centre the gripper comes down to push it (its half length,
    the fingers' half thickness, the standoff)."""
    return 0.5 * max(size[0], size[1]) + 0.012 + standoff


def push_blockers(obj: SceneObject, end: tuple[float, float], objects: Iterable[SceneObject]
                  ) -> list[str]:
    """The movable objects (not fixtures) the straight push of ``obj`` to ``end`` would shove,
    nearest the start first: what to clear away when no push route goes round them."""
    r = footprint_radius(obj.size, obj.shape) + PUSH_CLEARANCE
    start = (obj.position[0], obj.position[1])
    hit = [o for o in obstacles(objects, exclude=(obj.object_id,))
           if not o.is_fixture and footprint_gap(o, start, end) < r]
    hit.sort(key=lambda o: math.dist(start, o.position[:2]))
    return [o.object_id for o in hit]


def push_route(obj: SceneObject, end: tuple[float, float], objects: Iterable[SceneObject],
               *, region: Region | None = None, standoff: float = PUSH_STANDOFF
               ) -> list[tuple[float, float]]:
    """Where to push ``obj`` on its way to ``end``: straight there when that shoves nothing,
    else the shortest detour on a grid over the table region (Dijkstra over the points where
    the object's footprint clears everything), pulled taut into as few straight legs as keep
    clear. Each leg starts with the gripper lowered behind the object (``standoff`` behind
    its edge): there too the table must be in the region and free. Returns the legs' ends
    (the last is ``end``); raises NoFreeSpot when no route exists."""
    import heapq

    region = region or Region()
    # the gripper comes down behind the object, nearer the base than a placement may go
    # (pushing a plate away from the robot), but never into the base's column
    pusher_region = replace(region, x=(min(region.x[0], PUSHER_MIN_X), region.x[1]))
    others = obstacles(objects, exclude=(obj.object_id,))
    r = footprint_radius(obj.size, obj.shape) + PUSH_CLEARANCE
    behind = push_reach(obj.size, standoff)
    start = (obj.position[0], obj.position[1])

    def clear(a: tuple[float, float], b: tuple[float, float]) -> bool:
        length = math.dist(a, b)
        if length > 1e-9:  # where the gripper comes down to push from a towards b
            px = a[0] - (b[0] - a[0]) / length * behind
            py = a[1] - (b[1] - a[1]) / length * behind
            if (not pusher_region.contains(px, py)
                    or clearance_at(px, py, PUSHER_RADIUS, others) < 0):
                return False
        return all(footprint_gap(o, a, b) >= r for o in others)

    if clear(start, end):
        return [end]
    nx = round((region.x[1] - region.x[0]) / PUSH_GRID)
    ny = round((region.y[1] - region.y[0]) / PUSH_GRID)
    nodes = {(i, j): (region.x[0] + i * PUSH_GRID, region.y[0] + j * PUSH_GRID)
             for i in range(nx + 1) for j in range(ny + 1)}
    free = {k for k, p in nodes.items() if region.contains(*p, r * 0.5)
            and all(footprint_gap(o, p, p) >= r for o in others)}
    # the search starts at the object and ends at the goal: both join the grid points within
    # two and a half steps that they reach in a clear straight line
    src, dst = (-1, -1), (-2, -2)
    nodes[src], nodes[dst] = start, end
    reach = 2.5 * PUSH_GRID
    best: dict[tuple[int, int], float] = {src: 0.0}
    came: dict[tuple[int, int], tuple[int, int]] = {}
    heap: list[tuple[float, tuple[int, int]]] = [(0.0, src)]
    while heap:
        cost, here = heapq.heappop(heap)
        if here == dst:
            break
        if cost > best.get(here, math.inf):
            continue
        p = nodes[here]
        if here == src:
            nbrs = [k for k in free if math.dist(nodes[k], p) <= reach and clear(p, nodes[k])]
        else:
            i, j = here
            nbrs = [(i + di, j + dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)
                    if (di or dj) and (i + di, j + dj) in free
                    and clear(p, nodes[(i + di, j + dj)])]
            if math.dist(p, end) <= reach and clear(p, end):
                nbrs.append(dst)
        for k in nbrs:
            c = cost + math.dist(p, nodes[k])
            if c < best.get(k, math.inf):
                best[k], came[k] = c, here
                heapq.heappush(heap, (c, k))
    if dst not in came:
        raise NoFreeSpot(f"no push path for {obj.object_id} to ({end[0]:.3f}, {end[1]:.3f}) m "
                         "that shoves nothing on the way")
    path = [end]
    k = came[dst]
    while k != src:
        path.append(nodes[k])
        k = came[k]
    path.append(start)
    path.reverse()
    legs: list[tuple[float, float]] = []
    i = 0
    while i < len(path) - 1:  # pulled taut: the farthest point still in a clear line
        j = next(j for j in range(len(path) - 1, i, -1) if j == i + 1
                 or clear(path[i], path[j]))
        legs.append(path[j])
        i = j
    legs[-1] = end
    return legs


NEAR_ORDER = ("in_front_of", "left_of", "right_of", "behind")


def free_spot_near(ref: SceneObject, held_size: Sequence[float],
                   objects: Iterable[SceneObject], *, held_id: str = "",
                   region: Region | None = None) -> Spot:
    """The first free spot beside ``ref`` in the order front, left, right, behind (front:
    nearest the robot, the cheapest reach). Raises NoFreeSpot."""
    objs = list(objects)
    reasons = []
    for rel in NEAR_ORDER:
        try:
            return spot_beside(rel, ref, held_size, objs, held_id=held_id, region=region)
        except NoFreeSpot as e:
            reasons.append(str(e))
    raise NoFreeSpot(f"no free spot near {ref.object_id} ({'; '.join(reasons)})")

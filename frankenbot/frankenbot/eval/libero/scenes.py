"""Layouts of a mapped LIBERO task on our table: one ``SceneSpec`` per (task, seed).

LIBERO's regions are boxes on its own table (a 1 m-class kitchen or living-room table); our
arm reaches a smaller area beside its fixtures. A task's table regions are turned half a turn
(see ``mapping``), scaled (at most 1.4: our stand-ins are larger than LIBERO's objects) so that
the centres of its objects' regions fit the free table in reach (``tasks.FREE_REGION``, which
holds the families' spawn area), and each object is drawn uniformly inside its mapped region.
Where our objects would then overlap, or a region falls on a fixture's body or the space a part
the task moves sweeps, the region is grown by 2 cm steps until the object fits, so every layout
is still drawn around LIBERO's own arrangement. Objects that start on another object, on a
fixture's top, on the burner or inside a drawer (in the part pulled out, which the camera sees
into) are put there. A layout is redrawn when the
camera cannot see an object, when the goal already holds, or when objects alike (two black
bowls) lose the order or the neighbour LIBERO's words tell them apart by. The same (task, seed)
always gives the same scene.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from frankenbot.errors import SimError
from frankenbot.eval.libero.mapping import MappedTask, Start
from frankenbot.sim import families, layout, tasks
from frankenbot.sim import fixtures as fx
from frankenbot.sim.scene_spec import SceneSpec, check, parse_goal
from frankenbot.sim.tasks import FixturePlacement, ObjectState, OracleView, Placement

# the area objects start in: the families' spawn area and the free table around it
# (``tasks.FREE_REGION``), fixtures' footprints and swept space kept out
AREA = ((0.28, tasks.FREE_REGION[0][1]), tasks.FREE_REGION[1])  # not under the arm at HOME
# our objects are larger than LIBERO's for its spacing (a 18 cm plate, 13.6 cm bowls): a
# compact layout is spread up to this much where the table has room
MAX_SCALE = 1.4
MIN_HALF = 0.01  # m: a region is drawn in at least this half-width
GROW = 0.02  # m a region grows by when the object does not fit
GROWTHS = 12
TRIES = 40  # draws per region size
ATTEMPTS = 40  # whole layouts before giving up
ON_BURNER_JITTER = 0.02  # m about the burner's centre
ON_TOP_JITTER = 0.03  # m about a fixture top's corner nearest the robot
GAP = tasks.GAP
LANGUAGES = ("benchmark", "bddl")


@dataclass(frozen=True)
class TableMap:
    """LIBERO table (x, y) -> ours: half a turn about the regions' centre, scaled."""

    centre: tuple[float, float]  # LIBERO
    scale: float
    target: tuple[float, float]  # ours

    def __call__(self, x: float, y: float) -> tuple[float, float]:
        return (self.target[0] - self.scale * (x - self.centre[0]),
                self.target[1] - self.scale * (y - self.centre[1]))


def table_map(mapped: MappedTask) -> TableMap:
    centres = [_box_centre(s.region.ranges[0]) for s in mapped.starts
               if s.kind == "table" and s.region is not None and s.region.ranges]
    (ax0, ax1), (ay0, ay1) = AREA
    target = ((ax0 + ax1) / 2, (ay0 + ay1) / 2)
    if not centres:
        return TableMap((0.0, 0.0), 1.0, target)
    xs, ys = [c[0] for c in centres], [c[1] for c in centres]
    ext_x, ext_y = max(xs) - min(xs), max(ys) - min(ys)
    # the region centres land at least 8 cm inside the area (room for the objects themselves)
    room_x, room_y = (ax1 - ax0) - 0.16, (ay1 - ay0) - 0.16
    scale = min(MAX_SCALE, room_x / ext_x if ext_x > 1e-6 else MAX_SCALE,
                room_y / ext_y if ext_y > 1e-6 else MAX_SCALE)
    return TableMap(((max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2), scale, target)


def _box_centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def fixture_placements(mapped: MappedTask) -> tuple[FixturePlacement, ...]:
    """Our fixtures at their slots (``families.SLOTS``)."""
    out = []
    for fid in dict.fromkeys(mapped.fixtures.values()):
        x, y, yaw = families.SLOTS[fid]
        out.append(FixturePlacement(fid, x, y, yaw))
    return tuple(out)


def instruction_of(mapped: MappedTask, language: str = "benchmark") -> str:
    """LIBERO's words: ``benchmark`` = what its benchmark gives a policy (the file name's
    words), ``bddl`` = the file's ``:language`` text."""
    if language not in LANGUAGES:
        raise SimError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    return mapped.task.benchmark_language if language == "benchmark" else mapped.task.language


def sample_scene(mapped: MappedTask, seed: int, language: str = "benchmark") -> SceneSpec:
    """The scene of ``mapped`` for ``seed`` (SimError if no layout fits)."""
    instruction = instruction_of(mapped, language)
    fixtures = fixture_placements(mapped)
    fmap = families.fixture_map(fixtures)
    tmap = table_map(mapped)
    key = zlib.crc32(mapped.task.task_id.encode())
    last = ""
    for attempt in range(ATTEMPTS):
        rng = np.random.default_rng([abs(int(seed)), key, attempt])
        try:
            # later attempts draw in other orders, then in wider regions (a layout where the
            # camera cannot see an object behind a larger one needs them further apart)
            placements = _layout(mapped, rng, tmap, fixtures, fmap, shuffle=attempt >= 10,
                                 wider=max(0, (attempt - 20) // 4))
        except SimError as e:
            last = str(e)
            continue
        confused = _confusable(mapped, placements, tmap, fmap)
        if confused:
            last = confused
            continue
        hidden = tasks.hidden_from_camera(placements, fixtures, every_object=True)
        if hidden:
            last = f"the camera cannot see {', '.join(hidden)}"
            continue
        spec = SceneSpec(f"{mapped.task.task_id}#{seed}", instruction, tuple(placements),
                         mapped.goal, fixtures, dict(mapped.states), int(seed))
        if goal_holds_at_start(spec, fmap):
            last = "the goal already holds"
            continue
        return spec
    raise SimError(f"{mapped.task.task_id}: no layout for seed {seed} ({last})")


def moving_parts(mapped: MappedTask, fmap) -> set[str]:
    """The fixture parts a task opens, closes or finds open: their swept space stays clear
    (a drawer no one touches may have a bowl in front of it, as in LIBERO's kitchens)."""
    out = {p for p, v in mapped.states.items() if v > 0 and p in fmap.parts}
    for atom in parse_goal(mapped.goal):
        for arg in atom.args:
            part = fmap.stateful_part(arg) if arg != "stove" else None
            if part is not None and part.handle is not None:
                out.add(part.part_id)
    return out


def layout_keepouts(mapped: MappedTask, fmap) -> list:
    """Per fixture: does a disc (x, y, r) touch its body or the space its moving parts
    sweep?"""
    parts = moving_parts(mapped, fmap)
    return [lambda x, y, r, f=f: f.footprint_contains(x, y, margin=r + 0.03, parts=parts)
            for f in fmap.fixtures if f.kind != "zone"]


def _layout(mapped: MappedTask, rng: np.random.Generator, tmap: TableMap,
            fixtures: tuple[FixturePlacement, ...], fmap, shuffle: bool = False,
            wider: int = 0) -> list[Placement]:
    keepouts = layout_keepouts(mapped, fmap)
    placed: list[tuple[float, float, float]] = []
    out: dict[str, Placement] = {}
    table = [s for s in mapped.starts if s.kind == "table"]
    table.sort(key=lambda s: -layout.OBJECT_BY_NAME[s.name].radius)
    if shuffle:  # the largest first fits most layouts; a crowded one may need another order
        table = [table[int(i)] for i in rng.permutation(len(table))]
    for s in table:
        out[s.name] = _on_table(s, rng, tmap, placed, keepouts, wider)
    rest = [s for s in mapped.starts if s.kind != "table"]
    for _ in range(len(rest) + 1):  # an object on another waits for it
        for s in list(rest):
            if s.kind == "on_object" and s.ref not in out:
                continue
            out[s.name] = _stacked(s, rng, out, fmap, mapped.states)
            rest.remove(s)
    if rest:
        raise SimError(f"no start for {', '.join(s.name for s in rest)}")
    return [out[s.name] for s in mapped.starts]


ORDER_MIN = 0.02  # m: LIBERO differences smaller than this name no order
NEAREST_MARGIN = 1.5  # LIBERO's nearest neighbour must be this much nearer than the next


def _confusable(mapped: MappedTask, placements: list[Placement], tmap: TableMap,
                fmap=None) -> str:
    """Why objects alike (two black bowls, two plates) could be mistaken for each other in this
    layout ("" if they cannot): LIBERO tells them apart by where they stand ("the left plate",
    "the black bowl next to the ramekin", "between the plate and the ramekin", "from table
    center", "at the front"), so each keeps its order along both table axes among its
    look-alikes, its nearest other object, and being the look-alike nearest the middle of two
    other objects or of the table."""
    table = {s.name: tmap(*_box_centre(s.region.ranges[0])) for s in mapped.starts
             if s.kind == "table" and s.region is not None and s.region.ranges}
    ours = {p.name: (p.x, p.y) for p in placements if p.name in table}
    looks: dict[tuple[str, str], list[str]] = {}
    for name in table:
        o = layout.OBJECT_BY_NAME[name]
        looks.setdefault((o.colour, o.shape), []).append(name)
    for group in looks.values():
        if len(group) < 2:
            continue
        for a in group:
            for b in group:
                for axis in (0, 1):
                    want = table[a][axis] - table[b][axis]
                    if want > ORDER_MIN and ours[a][axis] <= ours[b][axis]:
                        return f"{a} and {b} swapped along {'xy'[axis]}"
            others = [n for n in table if n not in group]
            if len(others) < 2:
                continue
            near = sorted(others, key=lambda n: math.dist(table[a], table[n]))
            if math.dist(table[a], table[near[1]]) < NEAREST_MARGIN * math.dist(
                    table[a], table[near[0]]):
                continue
            got = min(others, key=lambda n: math.dist(ours[a], ours[n]))
            if got != near[0]:
                return f"{a} is nearest {got}, in LIBERO {near[0]}"
    others_of = {tuple(g): [n for n in table if n not in g] for g in looks.values()
                 if len(g) >= 2}
    for group, others in others_of.items():
        points = [(f"the middle of {b} and {c}", _mid(table[b], table[c]),
                   _mid(ours[b], ours[c])) for i, b in enumerate(others) for c in others[i + 1:]]
        points.append(("the middle of the table", (0.0, 0.0), _span_centre(placements, fmap)))
        for what, libero, here in points:
            near = sorted(group, key=lambda n: math.dist(table[n], libero))
            if math.dist(table[near[1]], libero) < NEAREST_MARGIN * math.dist(
                    table[near[0]], libero):
                continue
            got = min(group, key=lambda n: math.dist(ours[n], here))
            if got != near[0]:
                return f"{got} is nearest {what}, in LIBERO {near[0]}"
    return ""


def _mid(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)


def _span_centre(placements: list[Placement], fmap) -> tuple[float, float]:
    """The middle of everything on our table, objects and fixtures, as the planner reads
    "the middle of the table" (the brain has no model of the table itself)."""
    boxes = [(p.x, p.y, *layout.OBJECT_BY_NAME[p.name].size[:2]) for p in placements]
    if fmap is not None:
        boxes += [(o.position[0], o.position[1], o.size[0], o.size[1])
                  for o in fmap.scene_objects()]
    xs = [x + k * w / 2 for x, _y, w, _d in boxes for k in (-1, 1)]
    ys = [y + k * d / 2 for _x, y, _w, d in boxes for k in (-1, 1)]
    return ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)


def _yaw(name: str, rng: np.random.Generator) -> float:
    shape = layout.OBJECT_BY_NAME[name].shape
    if shape == "block":
        return float(rng.uniform(-math.pi / 4, math.pi / 4))
    return float(rng.uniform(-math.pi, math.pi)) if shape in tasks._TURNED else 0.0


def _on_table(s: Start, rng: np.random.Generator, tmap: TableMap,
              placed: list[tuple[float, float, float]], keepouts, wider: int = 0) -> Placement:
    assert s.region is not None
    r = layout.OBJECT_BY_NAME[s.name].radius
    box = s.region.ranges[0] if s.region.ranges else (0.0, 0.0, 0.0, 0.0)
    cx, cy = tmap(*_box_centre(box))
    hx = max(MIN_HALF, tmap.scale * abs(box[2] - box[0]) / 2)
    hy = max(MIN_HALF, tmap.scale * abs(box[3] - box[1]) / 2)
    (ax0, ax1), (ay0, ay1) = AREA
    for growth in range(wider, GROWTHS + 1):
        gx, gy = hx + growth * GROW, hy + growth * GROW
        for _ in range(TRIES):
            x = float(rng.uniform(cx - gx, cx + gx))
            y = float(rng.uniform(cy - gy, cy + gy))
            if not (ax0 + r / 2 <= x <= ax1 - r / 2 and ay0 + r / 2 <= y <= ay1 - r / 2):
                continue
            if any(math.hypot(x - px, y - py) < r + pr + GAP for px, py, pr in placed):
                continue
            if any(k(x, y, r) for k in keepouts):
                continue
            placed.append((x, y, r))
            return Placement(s.name, x, y, _yaw(s.name, rng))
    raise SimError(f"no room for {s.name} near its region {s.region.name}")


def _stacked(s: Start, rng: np.random.Generator, out: dict[str, Placement], fmap,
             states) -> Placement:
    spec = layout.OBJECT_BY_NAME[s.name]
    half = spec.size[2] / 2
    if s.kind == "on_object":
        base = out[s.ref]
        bspec = layout.OBJECT_BY_NAME[s.ref]
        bz = base.z if base.z is not None else layout.TABLE_TOP_Z + bspec.size[2] / 2
        return Placement(s.name, base.x, base.y, _yaw(s.name, rng),
                         bz + bspec.size[2] / 2 + half + 0.002)
    if s.kind == "in_drawer":
        part = fmap.part(s.ref)
        if part is None or part.cavity_size is None:
            raise SimError(f"{s.ref} is not a drawer of this scene")
        centre = part.cavity_at(float(states.get(s.ref, 0.0)))
        sx, sy, sz = part.cavity_size
        if max(spec.size[0], spec.size[1]) > min(sx, sy) - 0.01 or spec.size[2] > sz + 0.05:
            raise SimError(f"{s.name} does not fit in {s.ref}")
        jx = max(0.0, sx / 2 - spec.radius - 0.005)
        jy = max(0.0, sy / 2 - spec.radius - 0.005)
        # in the part pulled out of the cabinet (its front is the part's -x), as far in as
        # lets it stay out: the camera looks in over the drawer's front wall, and sees the
        # least just behind it
        pulled = float(states.get(s.ref, 0.0))
        lx = max(-jx, min(jx, -sx / 2 + pulled - spec.radius))
        ly = float(rng.uniform(-jy, jy))
        c, sn = math.cos(part.yaw), math.sin(part.yaw)
        return Placement(s.name, centre[0] + c * lx - sn * ly, centre[1] + sn * lx + c * ly,
                         _yaw(s.name, rng), centre[2] - sz / 2 + half + 0.002)
    # on a burner (near its centre), or on a fixture's top at the corner nearest the robot
    # (a fixture's top is high, and the slots stand at the back of the reach)
    part = fmap.part(s.ref)
    c0, s0 = 0.0, 0.0
    if part is not None:
        centre, size, yaw = part.position, part.size, part.yaw
        jx = jy = ON_BURNER_JITTER
    else:
        f = fmap.fixture(s.ref)
        if f is None or not f.top:
            raise SimError(f"{s.ref} has no top to stand {s.name} on")
        centre, size, yaw = f.position, f.size, f.yaw
        hx = max(0.0, size[0] / 2 - spec.radius - 0.02)
        hy = max(0.0, size[1] / 2 - spec.radius - 0.02)
        corners = [(sx * hx, sy * hy) for sx in (-1, 1) for sy in (-1, 1)]
        c0, s0 = min(corners, key=lambda v: math.hypot(*_to_world(centre, yaw, *v)))
        jx, jy = min(hx, ON_TOP_JITTER), min(hy, ON_TOP_JITTER)
    lx, ly = c0 + float(rng.uniform(-jx, jx)), s0 + float(rng.uniform(-jy, jy))
    if part is None:  # stay on the top
        lx, ly = float(np.clip(lx, -hx, hx)), float(np.clip(ly, -hy, hy))
    x, y = _to_world(centre, yaw, lx, ly)
    return Placement(s.name, x, y, _yaw(s.name, rng), centre[2] + size[2] / 2 + half + 0.002)


def _to_world(centre, yaw: float, lx: float, ly: float) -> tuple[float, float]:
    c, sn = math.cos(yaw), math.sin(yaw)
    return centre[0] + c * lx - sn * ly, centre[1] + sn * lx + c * ly


def start_view(spec: SceneSpec, fmap) -> OracleView:
    """The oracle's view of a layout before any physics (objects at rest where placed)."""
    objects = {}
    for p in spec.placements:
        o = layout.OBJECT_BY_NAME[p.name]
        z = p.z if p.z is not None else layout.TABLE_TOP_Z + o.size[2] / 2
        q = (math.cos(p.yaw / 2), 0.0, 0.0, math.sin(p.yaw / 2))
        objects[p.name] = ObjectState(p.name, o.shape, o.colour, (p.x, p.y, z), q, o.size, 0.0,
                                      False)
    states = {pid: float(spec.fixture_states.get(pid, 0.0)) for pid in fmap.parts}
    for pid, part in fmap.parts.items():
        if part.kind in ("light", "burner"):
            knob = [c for c in fmap.controller_of(pid) if c.kind == "knob"]
            states[pid] = float(bool(knob) and states.get(knob[0].part_id, 0.0) >= fx.KNOB_ON)
    return OracleView(objects, 0.0, states, fmap)


def goal_holds_at_start(spec: SceneSpec, fmap=None) -> bool:
    fmap = fmap if fmap is not None else families.fixture_map(spec.fixtures)
    return check(spec.params(), start_view(spec, fmap), [])

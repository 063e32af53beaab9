"""Task families: seeded scene sampling, instruction templates and oracle predicates.

A task instance is fully determined by (family, seed): the same pair always yields the same
objects, poses and instruction. The oracle predicates read only simulator ground truth
(``ObjectState``), never the brain's beliefs; ``SimWorld.evaluate`` requires them to hold over a
stability window so that a block still rolling off a tower does not count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from frankenbot.errors import SimError
from frankenbot.sim import families, layout, scene_spec
from frankenbot.sim.objects import ELLIPSOIDAL, SPHERICAL
from frankenbot.transforms import QuatWXYZ


@dataclass(frozen=True)
class TaskInstance:
    """One sampled task: what to say to the robot and the resolved parameters the oracle checks."""

    family: str
    task_id: str
    instruction: str
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Placement:
    """Initial pose of one object; ``z`` None = resting on the table."""

    name: str
    x: float
    y: float
    yaw: float = 0.0
    z: float | None = None


@dataclass(frozen=True)
class FixturePlacement:
    """Where a fixture stands in a scene: its id (sim/fixtures.py INSTANCES), the centre of its
    footprint on the table and the yaw of its front (0: the front faces the robot, -x)."""

    fid: str
    x: float
    y: float
    yaw: float = 0.0


# the first waves' cell: the one-drawer unit at the back left, facing the robot
DEFAULT_FIXTURES: tuple[FixturePlacement, ...] = (FixturePlacement("drawer", 0.72, 0.38, 0.0),)


@dataclass(frozen=True)
class ObjectState:
    """Ground truth of one object (oracle and perception scoring only)."""

    name: str
    shape: str
    colour: str
    position: tuple[float, float, float]
    quaternion: tuple[float, float, float, float]  # w, x, y, z
    size: tuple[float, float, float]
    speed: float  # m/s
    held: bool  # touching both finger pads


@dataclass(frozen=True)
class OracleView:
    """Everything a predicate may look at."""

    objects: Mapping[str, ObjectState]
    drawer_opening: float  # m, 0 = closed (the one-drawer unit)
    # every part of the scene's fixtures: drawer/sliding door opening (m), hinged door, knob
    # or switch angle (rad), button travel (m); lights and burners 1.0 on, 0.0 off
    fixtures: Mapping[str, float] = field(default_factory=dict)
    fixture_map: Any = None  # frankenbot.fixture_map.FixtureMap of the scene (its geometry)


@dataclass(frozen=True)
class SampledScene:
    task: TaskInstance
    placements: tuple[Placement, ...]
    drawer_opening: float = 0.0
    fixtures: tuple[FixturePlacement, ...] = DEFAULT_FIXTURES
    # initial part states (part id -> joint value, or 1.0/0.0 for a light); others start closed
    fixture_states: Mapping[str, float] = field(default_factory=dict)
    template: int = -1  # which of the family's instruction templates was formatted (-1: none)


TEMPLATES: dict[str, tuple[str, ...]] = {
    "pick_up": ("pick up the {obj_text}", "grab the {obj_text} and lift it",
                "lift the {obj_text} off the table"),
    "put_in_bowl": ("put the {obj_text} in the {target_text}",
                    "place the {obj_text} into the {target_text}",
                    "move the {obj_text} to the {target_text}"),
    "put_on_plate": ("put the {obj_text} on the {target_text}",
                     "place the {obj_text} onto the {target_text}",
                     "set the {obj_text} down on the {target_text}"),
    "stack": ("stack the {obj_text} on the {target_text}",
              "put the {obj_text} on top of the {target_text}",
              "place the {obj_text} onto the {target_text}"),
    "tower": ("build a tower: {a} at the bottom, then {b}, then {c} on top",
              "stack {b} on {a} and then {c} on {b}",
              "make a tower of three blocks, from the bottom: {a}, {b}, {c}"),
    "sort_by_colour": ("sort the blocks into the bowls of the same colour",
                       "put each block in the bowl that matches its colour",
                       "sort the blocks by colour into the bowls"),
    "clear_table": ("clear the table: put all blocks in the {target_text}",
                    "put every block into the {target_text}",
                    "tidy up the blocks into the {target_text}"),
    "open_drawer": ("open the drawer", "pull the drawer open", "open the drawer fully"),
    "put_in_drawer": ("put the {obj_text} in the drawer and close it",
                      "store the {obj_text} in the drawer, then close the drawer",
                      "open the drawer, put the {obj_text} inside and shut it"),
    "push_to_zone": ("push the {obj_text} into the marked zone",
                     "slide the {obj_text} into the zone",
                     "push the {obj_text} onto the coloured patch"),
    "conditional": ("put the block closest to the robot in the {target_text}",
                    "if the {target_text} is empty, put the {obj_text} in it, otherwise put it "
                    "on the white plate",
                    "put the block nearest to you into the {target_text}",
                    "if the {target_text} is empty put the {obj_text} there, else place it on "
                    "the white plate"),
    "place_relative": ("put the {obj_text} to the left of the {target_text}",
                       "place the {obj_text} to the right of the {target_text}",
                       "put the {obj_text} in front of the {target_text}",
                       "set the {obj_text} down behind the {target_text}",
                       "put the {obj_text} between the {target_text} and the {target2_text}",
                       "move the {obj_text} next to the {target_text}"),
}
FIRST_WAVE_FAMILIES: tuple[str, ...] = tuple(TEMPLATES)
TEMPLATES.update(families.TEMPLATES)
# place_relative templates: index -> relation (the oracle's convention, see relative_ok)
RELATIVE_RELATIONS = ("left_of", "right_of", "in_front_of", "behind", "between", "near")
# conditional templates: index -> variant
_CONDITIONAL_VARIANT = {0: "closest", 1: "if_empty", 2: "closest", 3: "if_empty"}

TASK_FAMILIES: tuple[str, ...] = tuple(TEMPLATES)


def instruction_templates(family: str) -> tuple[str, ...]:
    """The instruction templates of ``family`` (SimError names the valid families)."""
    if family not in TEMPLATES:
        raise SimError(f"unknown task family {family!r}; valid: {', '.join(TASK_FAMILIES)}")
    return TEMPLATES[family]


def _text(name: str) -> str:
    return name.replace("_", " ")


GAP = 0.03  # m between footprints: room for an open finger beside every object
# everyday objects laid at any yaw (round ones gain nothing; first-wave containers stay square)
_TURNED = ("mug", "bottle", "box", "carton", "basket", "tray", "lemon", "marker", "spatula")


class _Sampler:
    """Non-overlapping random placements inside the spawn region."""

    def __init__(self, rng: np.random.Generator, tries: int = 2000, gap: float = GAP) -> None:
        self.rng = rng
        self.tries = tries
        self.gap = gap
        self.placed: list[tuple[float, float, float]] = []  # x, y, radius
        self.out: list[Placement] = []
        # fixtures' footprints and swept space: (x, y, r) -> True where a disc may not stand
        self.keepouts: list = []

    def place(self, name: str, region: tuple[tuple[float, float], tuple[float, float]] | None
              = None, z: float | None = None) -> Placement:
        spec = layout.OBJECT_BY_NAME[name]
        (x0, x1), (y0, y1) = region or (layout.SPAWN_X, layout.SPAWN_Y)
        r = spec.radius
        for _ in range(self.tries):
            x = float(self.rng.uniform(x0 + r, x1 - r)) if x1 - x0 > 2 * r else (x0 + x1) / 2
            y = float(self.rng.uniform(y0 + r, y1 - r)) if y1 - y0 > 2 * r else (y0 + y1) / 2
            if all(math.hypot(x - px, y - py) > r + pr + self.gap
                   for px, py, pr in self.placed) and not any(k(x, y, r) for k in self.keepouts):
                break
        else:
            raise SimError(f"could not place {name} without overlap (scene too crowded)")
        yaw = (float(self.rng.uniform(-math.pi / 4, math.pi / 4)) if spec.shape == "block"
               else float(self.rng.uniform(-math.pi, math.pi)) if spec.shape in _TURNED
               else 0.0)
        self.placed.append((x, y, r))
        p = Placement(name, x, y, yaw, z)
        self.out.append(p)
        return p

    def put(self, p: Placement) -> None:
        self.out.append(p)


def _blocks(rng: np.random.Generator, n: int, colours=layout.BLOCK_COLOURS) -> list[str]:
    chosen = rng.choice(len(colours), size=n, replace=False)
    return [f"{colours[int(i)]}_block" for i in chosen]


def sample_task(family: str, seed: int) -> SampledScene:
    """Sample the scene and instruction of ``family`` for ``seed`` (deterministic).

    Random sequential placement can run out of room; the layout is then redrawn from a derived
    seed, so every (family, seed) still maps to exactly one scene.
    """
    instruction_templates(family)
    for attempt in range(50):
        key = [abs(int(seed)), TASK_FAMILIES.index(family)] + ([attempt] if attempt else [])
        try:
            sampled = _sample_once(family, seed, np.random.default_rng(key))
        except SimError:
            continue
        new_world = family not in FIRST_WAVE_FAMILIES
        if not hidden_from_camera(sampled.placements, sampled.fixtures, every_object=new_world):
            return sampled
    raise SimError(f"could not lay out {family} for seed {seed}")  # pragma: no cover


# Line of sight from the camera to each block's top face, against the other objects and the
# cabinet as boxes. A block that the only camera cannot see at reset (e.g. behind the bin) is
# unknowable to any brain, so such layouts are redrawn; an object covered on purpose (stacked
# on, inside a container) is exempt. Occlusion during a task is what object permanence is for.
_TOP_FACE = ((0.0, 0.0), (0.35, 0.35), (-0.35, 0.35), (0.35, -0.35), (-0.35, -0.35))
_MIN_VISIBLE_POINTS = 4  # of the five top-face points


def _box_of(p: Placement) -> tuple[tuple[float, float, float], tuple[float, float, float], float]:
    spec = layout.OBJECT_BY_NAME[p.name]
    z = p.z if p.z is not None else layout.TABLE_TOP_Z + spec.size[2] / 2
    return (p.x, p.y, z), tuple(s / 2 for s in spec.size), p.yaw  # type: ignore[return-value]


def _segment_hits_box(a: np.ndarray, b: np.ndarray, centre, half, yaw: float) -> bool:
    """Slab test of segment a->b against a box rotated by ``yaw`` about z."""
    c, s = math.cos(-yaw), math.sin(-yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    pa, pb = rot @ (a - np.asarray(centre)), rot @ (b - np.asarray(centre))
    d = pb - pa
    lo, hi = 0.0, 1.0
    for i in range(3):
        if abs(d[i]) < 1e-12:
            if abs(pa[i]) > half[i]:
                return False
            continue
        t0, t1 = sorted(((-half[i] - pa[i]) / d[i], (half[i] - pa[i]) / d[i]))
        lo, hi = max(lo, t0), min(hi, t1)
        if lo > hi:
            return False
    return True


def hidden_from_camera(placements: tuple[Placement, ...] | list[Placement],
                       fixture_placements: tuple[FixturePlacement, ...] = DEFAULT_FIXTURES,
                       every_object: bool = False) -> list[str]:
    """Blocks (``every_object``: every object) of a layout that the sim camera cannot see
    (fewer than 4 of 5 top-face points in line of sight past the other objects, the fixtures
    and the arm at HOME); objects stacked on or held inside another are not counted."""
    from frankenbot.sim.model import CAMERA_POSITION, arm_home_boxes

    eye = np.asarray(CAMERA_POSITION, dtype=float)
    boxes = [(p.name, *_box_of(p)) for p in placements]
    for f in families.fixture_map(fixture_placements).fixtures:
        if f.kind != "zone":
            boxes.append((f.fixture_id, f.position, tuple(v / 2 for v in f.size), f.yaw))
    arm = [(c, h, 0.0) for c, h in arm_home_boxes()]
    hidden = []
    for p in placements:
        spec = layout.OBJECT_BY_NAME[p.name]
        if spec.shape != "block" and not every_object:
            continue
        (x, y, z), half, _ = _box_of(p)
        blockers = []
        for name, centre, bhalf, yaw in boxes:
            if name == p.name:
                continue
            covers = abs(x - centre[0]) <= bhalf[0] and abs(y - centre[1]) <= bhalf[1]
            if not covers:  # something stacked on it or holding it is covering by design
                blockers.append((centre, bhalf, yaw))
        if len(blockers) < len(boxes) - 1:
            continue
        # the gripper hanging over an object at HOME covers nothing by design (clear_table
        # seed 10127 had a block behind the bin pass as "held" by it, and no frame saw it)
        blockers += arm
        top = z + half[2] - 1e-4
        c, s = math.cos(p.yaw), math.sin(p.yaw)
        seen = 0
        for fx, fy in _TOP_FACE:
            ox, oy = fx * spec.size[0], fy * spec.size[1]
            pt = np.array([x + c * ox - s * oy, y + s * ox + c * oy, top])
            if not any(_segment_hits_box(eye, pt, *b) for b in blockers):
                seen += 1
        if seen < _MIN_VISIBLE_POINTS:
            hidden.append(p.name)
    return hidden


def _sample_once(family: str, seed: int, rng: np.random.Generator) -> SampledScene:
    templates = instruction_templates(family)
    s = _Sampler(rng, tries=300)
    k = int(rng.integers(len(templates)))
    params: dict[str, object] = {}
    fmt: dict[str, str] = {}
    opening = 0.0
    if family in ("pick_up", "put_in_bowl", "put_on_plate", "stack", "push_to_zone",
                  "put_in_drawer"):
        blocks = _blocks(rng, 3)
        obj = blocks[0]
        params["object"] = obj
        if family == "put_in_bowl":
            bowls = [f"{c}_bowl" for c in layout.BOWL_COLOURS]
            rng.shuffle(bowls)
            params["target"] = bowls[0]
            s.place(bowls[0])
            s.place(bowls[1])
        elif family == "put_on_plate":
            params["target"] = "white_plate"
            s.place("white_plate")
        elif family == "stack":
            params["target"] = blocks[1]
        elif family == "put_in_drawer":
            params["target"] = "drawer"
        if family == "push_to_zone":
            params["target"] = "zone"
            zx, zy = layout.ZONE.centre
            s.place(obj, ((zx - 0.06, zx + 0.06), (zy + 0.16, zy + 0.26)))
            blocks = blocks[1:]
        for b in blocks:
            s.place(b)
    elif family == "tower":
        blocks = _blocks(rng, 3)
        params["order"] = tuple(blocks)
        for b in blocks:
            s.place(b)
        fmt.update(a=_text(blocks[0]), b=_text(blocks[1]), c=_text(blocks[2]))
    elif family == "sort_by_colour":
        for c in layout.BOWL_COLOURS:
            s.place(f"{c}_bowl")
        blocks = [f"{c}_block" for c in layout.BOWL_COLOURS]
        for b in blocks:
            s.place(b)
        params["pairs"] = tuple((b, b.replace("_block", "_bowl")) for b in blocks)
    elif family == "clear_table":
        params["target"] = "gray_bin"
        s.place("gray_bin")
        blocks = _blocks(rng, 3)
        for b in blocks:
            s.place(b)
        params["objects"] = tuple(blocks)
    elif family == "open_drawer":
        params["target"] = "drawer"
        for b in _blocks(rng, 2):
            s.place(b)
    elif family == "conditional":
        variant = _CONDITIONAL_VARIANT[k]
        params["variant"] = variant
        bowl = layout.BOWL_COLOURS[int(rng.integers(3))] + "_bowl"
        params["target"] = bowl
        bowl_p = s.place(bowl)
        blocks = _blocks(rng, 3)
        placed = [s.place(b) for b in blocks]
        if variant == "closest":
            nearest = min(placed, key=lambda p: math.hypot(p.x, p.y))
            params["object"] = nearest.name
        else:
            s.place("white_plate")
            occupied = bool(rng.integers(2))
            params["object"] = blocks[0]
            params["bowl_occupied"] = occupied
            if occupied:
                filler = _blocks(rng, 1, [c for c in layout.BLOCK_COLOURS
                                          if f"{c}_block" not in blocks])[0]
                z = -layout.BOWL_HEIGHT / 2 + 0.006 + layout.BLOCK_SIZE / 2 + 0.001
                s.put(Placement(filler, bowl_p.x, bowl_p.y, 0.0, layout.BOWL_HEIGHT / 2 + z))
                params["filler"] = filler
            params["resolved_target"] = "white_plate" if occupied else bowl
    elif family == "place_relative":
        _sample_relative(rng, s, k, params, fmt)
    elif family in families.FAMILIES:
        placed, states = families.sample(family, rng, k, s, fmt, params)
        instruction = templates[k].format(**fmt)
        task = TaskInstance(family, f"{family}-{int(seed)}", instruction, params)
        return SampledScene(task, tuple(s.out), states.get("drawer", 0.0), placed or (),
                            states, template=k)
    else:  # pragma: no cover - TEMPLATES and this function are edited together
        raise SimError(f"task family {family!r} has no sampler")
    if "object" in params:
        fmt.setdefault("obj_text", _text(str(params["object"])))
    if "target" in params:
        fmt.setdefault("target_text", _text(str(params["target"])))
    instruction = templates[k].format(**fmt)
    task = TaskInstance(family, f"{family}-{int(seed)}", instruction, params)
    return SampledScene(task, tuple(s.out), opening, template=k)


RELATIVE_REF_REGION = ((0.40, 0.56), (-0.16, 0.08))  # room on every side of the reference
BETWEEN_SPAN = (0.20, 0.28)  # m between the two references' centres


def _sample_relative(rng: np.random.Generator, s: _Sampler, k: int,
                     params: dict[str, object], fmt: dict[str, str]) -> None:
    """One block to move, a reference (a bowl, the plate or another block) with room on every
    side, for ``between`` a second reference 20-28 cm from the first, and one distractor."""
    relation = RELATIVE_RELATIONS[k]
    blocks = _blocks(rng, 3)
    refs_pool = [f"{c}_bowl" for c in layout.BOWL_COLOURS] + ["white_plate", blocks[1]]
    ref = refs_pool[int(rng.integers(len(refs_pool)))]
    refs = [s.place(ref, RELATIVE_REF_REGION)]
    if relation == "between":
        spec = layout.OBJECT_BY_NAME[blocks[2]]
        for _ in range(200):
            d = float(rng.uniform(*BETWEEN_SPAN))
            a = float(rng.uniform(-math.pi, math.pi))
            x, y = refs[0].x + d * math.cos(a), refs[0].y + d * math.sin(a)
            inside = (layout.SPAWN_X[0] + spec.radius <= x <= layout.SPAWN_X[1] - spec.radius
                      and layout.SPAWN_Y[0] + spec.radius <= y <= layout.SPAWN_Y[1] - spec.radius)
            if inside:
                refs.append(s.place(blocks[2], ((x, x), (y, y))))
                break
        else:
            raise SimError("no room for the second reference")
        fmt["target2_text"] = _text(blocks[2])
    # the object starts clearly away from the reference(s): the oracle must not hold at reset
    spec = layout.OBJECT_BY_NAME[blocks[0]]
    for _ in range(100):
        p = s.place(blocks[0])
        if all(math.hypot(p.x - r.x, p.y - r.y) > spec.radius + layout.OBJECT_BY_NAME[
                r.name].radius + 0.14 for r in refs):
            break
        s.placed.pop()
        s.out.pop()
    else:
        raise SimError("no start for the object away from its reference")
    for b in blocks[1:]:
        if b not in (r.name for r in refs):
            s.place(b)
    params.update(object=blocks[0], relation=relation, target=refs[0].name,
                  refs=tuple(r.name for r in refs),
                  ref_start=tuple((r.x, r.y) for r in refs))


# ---------------------------------------------------------------------------- oracle predicates
def _dz(a: ObjectState, b: ObjectState) -> float:
    return a.position[2] - b.position[2]


def _xy(a: ObjectState, b: ObjectState) -> float:
    return math.hypot(a.position[0] - b.position[0], a.position[1] - b.position[1])


def _yaw(q: tuple[float, float, float, float]) -> float:
    return QuatWXYZ(*q).yaw()  # MuJoCo's order


def half_height(o: ObjectState) -> float:
    """Half the object's extent along world z, its shape turned by its orientation (a bottle that
    fell over is as low as it is wide; a ball or an apple that turned is as tall as before)."""
    if o.shape in SPHERICAL:  # a ball that turned is no taller (its box would be)
        return 0.5 * o.size[2]
    w, x, y, z = o.quaternion
    # third row of the rotation matrix of (w, x, y, z)
    row = (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
    if o.shape in ELLIPSOIDAL:  # the support function of the turned ellipsoid
        return 0.5 * math.sqrt(sum((r * s) ** 2 for r, s in zip(row, o.size, strict=True)))
    return 0.5 * sum(abs(r) * s for r, s in zip(row, o.size, strict=True))


def bottom_z(o: ObjectState) -> float:
    return o.position[2] - half_height(o)


def inside(obj: ObjectState, container: ObjectState) -> tuple[bool, str]:
    """``obj`` rests inside ``container`` (a bowl, bin, basket or tray), on a plate, not
    held."""
    if obj.held:
        return False, f"{obj.name} is still held"
    bottom = bottom_z(obj)
    c_bottom = container.position[2] - container.size[2] / 2
    c_top = container.position[2] + container.size[2] / 2
    spec = layout.OBJECT_BY_NAME.get(container.name)
    if container.shape == "bowl":
        inner = spec.dim("inner") if spec is not None else layout.BOWL_INNER_RADIUS
        ok_xy = _xy(obj, container) < inner
    elif container.shape in ("bin", "basket", "tray"):
        wall = spec.dim("wall") if spec is not None else layout.BIN_WALL
        yaw = _yaw(container.quaternion)
        dx = obj.position[0] - container.position[0]
        dy = obj.position[1] - container.position[1]
        lx = math.cos(yaw) * dx + math.sin(yaw) * dy
        ly = -math.sin(yaw) * dx + math.cos(yaw) * dy
        ok_xy = (abs(lx) < container.size[0] / 2 - wall
                 and abs(ly) < container.size[1] / 2 - wall)
    elif container.shape == "plate":
        ok_xy = _xy(obj, container) < container.size[0] / 2
        ok_z = abs(bottom - c_top) < 0.012
        return ok_xy and ok_z, (f"{obj.name} on {container.name}: xy {_xy(obj, container):.3f} m,"
                                f" gap {bottom - c_top:+.3f} m")
    else:
        return False, f"{container.name} is not a container"
    ok_z = c_bottom - 0.005 < bottom < c_top
    return ok_xy and ok_z, (f"{obj.name} in {container.name}: xy {_xy(obj, container):.3f} m, "
                            f"bottom {bottom:.3f} in [{c_bottom:.3f}, {c_top:.3f}]")


def on_top(obj: ObjectState, base: ObjectState) -> tuple[bool, str]:
    """``obj`` rests on ``base`` (centred within half the base's width)."""
    want = (obj.size[2] + base.size[2]) / 2
    ok = (not obj.held and _xy(obj, base) < base.size[0] / 2
          and abs(_dz(obj, base) - want) < 0.012)
    return ok, (f"{obj.name} on {base.name}: xy {_xy(obj, base):.3f} m, dz {_dz(obj, base):.3f}"
                f" (want {want:.3f}){' held' if obj.held else ''}")


def _get(view: OracleView, name: str) -> ObjectState:
    if name not in view.objects:
        raise KeyError(name)
    return view.objects[name]


def check(task: TaskInstance, view: OracleView) -> tuple[bool, list[str]]:
    """Evaluate ``task``'s predicate on one instant: (holds, one line per checked condition)."""
    p = task.params
    lines: list[str] = []
    try:
        return _check(task.family, p, view, lines), lines
    except KeyError as e:
        lines.append(f"{e.args[0]} is no longer in the scene")
        return False, lines


def _check(family: str, p: Mapping[str, object], view: OracleView, lines: list[str]) -> bool:
    d = layout.DRAWER
    if family == "pick_up":
        o = _get(view, str(p["object"]))
        lift = o.position[2] - o.size[2] / 2
        lines.append(f"{o.name} held={o.held}, lifted {lift:.3f} m (need >= 0.05)")
        return o.held and lift >= 0.05
    if family in ("put_in_bowl", "put_on_plate", "clear_table", "sort_by_colour") or (
            family == "conditional"):
        if family == "clear_table":
            pairs = [(str(n), str(p["target"])) for n in p["objects"]]  # type: ignore[union-attr]
        elif family == "sort_by_colour":
            pairs = [(str(a), str(b)) for a, b in p["pairs"]]  # type: ignore[union-attr,misc]
        elif family == "conditional":
            target = str(p.get("resolved_target", p["target"]))
            pairs = [(str(p["object"]), target)]
        else:
            pairs = [(str(p["object"]), str(p["target"]))]
        ok = True
        for a, b in pairs:
            good, line = inside(_get(view, a), _get(view, b))
            lines.append(("OK " if good else "NO ") + line)
            ok = ok and good
        return ok
    if family == "stack":
        good, line = on_top(_get(view, str(p["object"])), _get(view, str(p["target"])))
        lines.append(("OK " if good else "NO ") + line)
        return good
    if family == "tower":
        a, b, c = (_get(view, str(n)) for n in p["order"])  # type: ignore[union-attr]
        g1, l1 = on_top(b, a)
        g2, l2 = on_top(c, b)
        lines += [("OK " if g1 else "NO ") + l1, ("OK " if g2 else "NO ") + l2]
        return g1 and g2
    if family == "open_drawer":
        lines.append(f"drawer open {view.drawer_opening:.3f} m (need >= {0.8 * d.stroke:.3f})")
        return view.drawer_opening >= 0.8 * d.stroke
    if family == "put_in_drawer":
        o = _get(view, str(p["object"]))
        cx, cy, cz = d.cavity_centre(view.drawer_opening)
        sx, sy, sz = d.cavity_size
        inside_box = (abs(o.position[0] - cx) < sx / 2 and abs(o.position[1] - cy) < sy / 2
                      and abs(o.position[2] - cz) < sz / 2 + 0.005)
        closed = view.drawer_opening < 0.015
        lines.append(f"{o.name} inside drawer={inside_box} at {o.position[0]:.3f},"
                     f"{o.position[1]:.3f},{o.position[2]:.3f}; drawer opening "
                     f"{view.drawer_opening:.3f} m (closed < 0.015)")
        return inside_box and closed and not o.held
    if family == "push_to_zone":
        o = _get(view, str(p["object"]))
        on_table = abs(o.position[2] - o.size[2] / 2 - layout.TABLE_TOP_Z) < 0.01
        inz = layout.ZONE.contains(o.position[0], o.position[1])
        lines.append(f"{o.name} in zone={inz}, on table={on_table}")
        return inz and on_table and not o.held
    if family == "place_relative":
        return relative_ok(p, view, lines)
    if family in families.FAMILIES:
        return families.check(family, p, view, lines)
    if family == scene_spec.SCENE_FAMILY:
        return scene_spec.check(p, view, lines)
    raise SimError(f"no oracle for family {family!r}")  # pragma: no cover




FREE_REGION = ((0.22, 0.74), (-0.37, 0.24))


def sample_free_scene(seed: int) -> SampledScene:
    """Every movable object on the table, no task (task "" on reset; the full-scene benchmark).

    Sequential random placement can paint itself into a corner with this many objects, so the
    whole layout is redrawn (deterministically) until everything fits. Blocks may hide behind
    the bin or a bowl here: the perception benchmark scores those as occluded.
    """
    names = ["gray_bin", *(f"{c}_bowl" for c in layout.BOWL_COLOURS), "white_plate",
             *(f"{c}_block" for c in layout.BLOCK_COLOURS)]
    for attempt in range(100):
        s = _Sampler(np.random.default_rng([abs(int(seed)), 7919, attempt]), tries=200,
                     gap=0.015)  # a crowded showcase, not a manipulation task
        try:
            for name in names:
                s.place(name, FREE_REGION)
        except SimError:
            continue
        task = TaskInstance("", f"scene-{int(seed)}", "", {})
        return SampledScene(task, tuple(s.out), 0.0)
    raise SimError(f"could not lay out the full scene for seed {seed}")  # pragma: no cover


# ---------------------------------------------------------------------------- relative placement
# The oracle's own reading of the relations (base frame, seen from behind the robot looking along
# +x): left = +y, right = -y, behind = +x, in front = -x. The object's centre must lie at least
# REL_MIN_ALONG along the direction from the reference's and no further sideways than along
# (a 90-degree cone), with at most REL_MAX_GAP between the footprints ("left of the bowl", not
# "somewhere on the left half of the table"). References must not have been pushed.
REL_MIN_ALONG = 0.03
REL_MAX_GAP = 0.10
REL_BETWEEN = (0.15, 0.85, 0.05)  # projection range on the segment, max distance off the line
REL_REF_MOVED = 0.02
_DIR = {"left_of": (0.0, 1.0), "right_of": (0.0, -1.0), "behind": (1.0, 0.0),
        "in_front_of": (-1.0, 0.0)}


def _footprint(o: ObjectState) -> float:
    spec = layout.OBJECT_BY_NAME.get(o.name)
    if spec is not None:
        return spec.radius
    return 0.5 * math.hypot(o.size[0], o.size[1])


def relative_ok(p: Mapping[str, object], view: OracleView, lines: list[str]) -> bool:
    """The object rests on the table in the asked relation to its reference(s), which stayed."""
    o = _get(view, str(p["object"]))
    refs = [_get(view, str(n)) for n in p["refs"]]  # type: ignore[union-attr]
    relation = str(p["relation"])
    on_table = abs(bottom_z(o) - layout.TABLE_TOP_Z) < 0.01 and not o.held
    ok = on_table
    lines.append(f"{'OK' if on_table else 'NO'} {o.name} on the table, released")
    for ref, start in zip(refs, p["ref_start"], strict=True):  # type: ignore[arg-type]
        moved = math.hypot(ref.position[0] - start[0], ref.position[1] - start[1])
        good = moved <= REL_REF_MOVED
        ok = ok and good
        lines.append(f"{'OK' if good else 'NO'} {ref.name} moved {moved:.3f} m")
    if relation == "between":
        b, c = refs
        bx, by = c.position[0] - b.position[0], c.position[1] - b.position[1]
        t = ((o.position[0] - b.position[0]) * bx + (o.position[1] - b.position[1]) * by) / (
            bx * bx + by * by)
        off = math.hypot(o.position[0] - (b.position[0] + t * bx),
                         o.position[1] - (b.position[1] + t * by))
        good = REL_BETWEEN[0] <= t <= REL_BETWEEN[1] and off <= REL_BETWEEN[2]
        lines.append(f"{'OK' if good else 'NO'} {o.name} between {b.name} and {c.name}: "
                     f"t {t:.2f}, off the line {off:.3f} m")
        return ok and good
    ref = refs[0]
    dx, dy = o.position[0] - ref.position[0], o.position[1] - ref.position[1]
    gap = math.hypot(dx, dy) - _footprint(o) - _footprint(ref)
    close = gap <= REL_MAX_GAP
    if relation == "near":
        good = close
    else:
        ux, uy = _DIR[relation]
        along, across = dx * ux + dy * uy, abs(-dx * uy + dy * ux)
        good = close and along >= REL_MIN_ALONG and across <= along
    lines.append(f"{'OK' if good else 'NO'} {o.name} {relation} {ref.name}: offset "
                 f"({dx:+.3f}, {dy:+.3f}) m, footprint gap {gap:.3f} m")
    return ok and good

"""Scenes given as data, judged by a goal expression: tasks that need no code of their own.

A task family (``sim/tasks.py``, ``sim/families.py``) samples its scenes and has its oracle in
code. A ``SceneSpec`` is a scene someone else laid out (an external suite's task, a test's
hand-made state): where each object stands, which fixtures stand where and in what state, the
instruction, and the goal as a small expression over simulator state::

    in(black_bowl, top_drawer) and closed(top_drawer)

Predicates (arguments are scene object ids, fixture ids or part ids):

* ``in(x, c)``: x rests inside c: a bowl, bin, basket or tray (``tasks.inside``), a drawer
  (its cavity at its current opening), or a fixture with a cavity behind a door (microwave,
  cupboard); ``on(x, s)``: x rests on s: a plate (``tasks.inside``), a bowl or open container
  (inside it or on its rim: a bowl stacked in a bowl), another object's flat top
  (``tasks.on_top``), a fixture's top (cabinet, microwave, cupboard, stove) or a burner;
* ``open(p)``, ``closed(p)``: a drawer or door (a fixture id means its one door or drawer);
* ``turned_on(p)``, ``turned_off(p)``: a lamp or burner (``stove`` means its burner);
* ``left_of(x, r)``, ``right_of``, ``in_front_of``, ``behind``: the relations of
  ``tasks.relative_ok`` (seen from behind the robot: left = +y, in front = towards the robot),
  where ``r`` may also be a fixture (judged against its footprint's edge).

A goal is a conjunction of such atoms (``and``). The thresholds are the task families' own, so a
scene judged here and a family's scene agree on what "open" or "in" means. Nothing here knows
where a scene came from; the reading of an external suite lives in ``eval/``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from frankenbot import spatial
from frankenbot.errors import SimError
from frankenbot.shapes import OPEN_CONTAINERS
from frankenbot.sim import families, layout

SCENE_FAMILY = "scene"  # TaskInstance.family of a scene given as data

# predicate -> (arity, what the arguments may be: o = movable object, f = fixture or part,
# x = either)
PREDICATES: dict[str, tuple[str, ...]] = {
    "in": ("o", "x"), "on": ("o", "x"),
    "open": ("f",), "closed": ("f",), "turned_on": ("f",), "turned_off": ("f",),
    "left_of": ("o", "x"), "right_of": ("o", "x"), "in_front_of": ("o", "x"),
    "behind": ("o", "x"),
}
RELATIONS = ("left_of", "right_of", "in_front_of", "behind")
ON_TOP_TOLERANCE = 0.015  # m between an object's bottom and the surface it rests on
RIM_RISE = 0.02  # m an object stacked on a container's rim may sit above the rim

_ATOM = re.compile(r"^\s*([a-z_]+)\s*\(\s*([^()]*?)\s*\)\s*$")


@dataclass(frozen=True)
class GoalAtom:
    """One predicate of a goal: ``in(black_bowl, top_drawer)``."""

    predicate: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(self.args)})"


def parse_goal(text: str) -> tuple[GoalAtom, ...]:
    """``a(x, y) and b(z)`` -> its atoms (SimError names the first thing that is wrong)."""
    if not text or not text.strip():
        raise SimError("a goal must hold at least one predicate, got an empty text")
    atoms = []
    for part in re.split(r"\s+and\s+", text.strip()):
        m = _ATOM.match(part)
        if m is None:
            raise SimError(f"goal: cannot read {part!r}; expected name(arg, ...) joined by "
                           f"'and', e.g. 'in(red_block, green_bowl) and closed(top_drawer)'")
        name = m.group(1)
        args = tuple(a.strip() for a in m.group(2).split(",")) if m.group(2) else ()
        if name not in PREDICATES:
            raise SimError(f"goal: unknown predicate {name!r}; known: {', '.join(PREDICATES)}")
        if len(args) != len(PREDICATES[name]) or not all(args):
            raise SimError(f"goal: {name} takes {len(PREDICATES[name])} argument(s), got "
                           f"{part.strip()!r}")
        atoms.append(GoalAtom(name, args))
    return tuple(atoms)


def goal_text(atoms: tuple[GoalAtom, ...] | list[GoalAtom]) -> str:
    return " and ".join(str(a) for a in atoms)


@dataclass(frozen=True)
class SceneSpec:
    """A scene as data: objects (``tasks.Placement``; ``z`` given for one resting on another or
    inside a drawer), fixtures (``tasks.FixturePlacement``) and their parts' initial states
    (part id -> opening m / angle rad / 1.0 lit), the instruction and the goal expression.
    ``seed`` seeds what the world draws itself (the camera's noise and pose error)."""

    task_id: str
    instruction: str
    placements: tuple[Any, ...]
    goal: str
    fixtures: tuple[Any, ...] = ()
    fixture_states: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0

    def atoms(self) -> tuple[GoalAtom, ...]:
        return parse_goal(self.goal)

    def validate(self) -> None:
        """Every name the goal uses is in the scene; objects exist in the catalogue, once."""
        from frankenbot.sim import fixtures as fx

        names = [p.name for p in self.placements]
        unknown = [n for n in names if n not in layout.OBJECT_BY_NAME]
        if unknown:
            raise SimError(f"scene {self.task_id}: unknown object(s) {', '.join(unknown)}")
        if len(set(names)) != len(names):
            raise SimError(f"scene {self.task_id}: an object is placed twice")
        fids = [f.fid for f in self.fixtures]
        bad = [f for f in fids if f not in fx.INSTANCE_BY_ID]
        if bad:
            raise SimError(f"scene {self.task_id}: unknown fixture(s) {', '.join(bad)}")
        fixture_names = set(fids)
        for fid in fids:
            inst = fx.INSTANCE_BY_ID[fid]
            fixture_names.update(inst.part_id(p.suffix) for p in inst.spec.parts)
        for atom in self.atoms():
            for kind, arg in zip(PREDICATES[atom.predicate], atom.args, strict=True):
                ok = (arg in names if kind == "o" else arg in fixture_names if kind == "f"
                      else arg in names or arg in fixture_names)
                if not ok:
                    raise SimError(f"scene {self.task_id}: goal {atom} names {arg!r}, which is "
                                   f"not in the scene")

    def params(self) -> dict[str, object]:
        """The TaskInstance parameters: the goal, where every object started (relations check
        that the reference stayed), and the first object and target the goal names (what the
        anomaly engine aims at by default)."""
        starts = {p.name: (float(p.x), float(p.y)) for p in self.placements}
        out: dict[str, object] = {"goal": self.goal, "starts": starts}
        for atom in self.atoms():
            if atom.predicate in ("in", "on") or atom.predicate in RELATIONS:
                out.setdefault("object", atom.args[0])
                out.setdefault("target", atom.args[1])
        return out


# ------------------------------------------------------------------------------ the oracle
def check(params: Mapping[str, object], view, lines: list[str]) -> bool:
    """Every atom of ``params['goal']`` holds in ``view`` (all are judged, for the record)."""
    ok = True
    for atom in parse_goal(str(params["goal"])):
        good = _holds(atom, params, view, lines)
        ok = ok and good
    return ok


def _holds(atom: GoalAtom, params: Mapping[str, object], view, lines: list[str]) -> bool:
    from frankenbot.sim import tasks

    name, args = atom.predicate, atom.args
    if name in ("open", "closed", "turned_on", "turned_off"):
        goal = {"open": "open", "closed": "closed", "turned_on": "on", "turned_off": "off"}[name]
        return families.goal_holds(view, _part_id(view, args[0]), goal, lines)
    obj = tasks._get(view, args[0])
    target = args[1]
    if name in RELATIONS:
        return _relation(obj, name, target, params, view, lines)
    if target in view.objects:
        base = view.objects[target]
        if base.shape in OPEN_CONTAINERS:  # in it; "on" it may also mean on its rim
            good, line = tasks.inside(obj, base)
            if not good and name == "on":
                good, line = _on_rim(obj, base)
        elif name == "in" or base.shape == "plate":
            good, line = tasks.inside(obj, base)
        else:
            good, line = tasks.on_top(obj, base)
        lines.append(("OK " if good else "NO ") + line)
        return good
    fmap = view.fixture_map
    part = fmap.part(target) if fmap is not None else None
    if part is not None:
        if name == "in" and part.cavity_size is not None:
            return families.in_enclosure(view, obj.name, target, lines)
        if name == "on" and part.kind == "burner":
            return _on_box(obj, target, part.position, part.size, part.yaw, lines,
                           round_radius=part.size[0] / 2)
        lines.append(f"NO {target} is not something to put things {name}")
        return False
    fixture = fmap.fixture(target) if fmap is not None else None
    if fixture is None:
        lines.append(f"NO {target} is not in the scene")
        return False
    if name == "in":
        if fixture.cavity_centre is None or fixture.cavity_size is None:
            lines.append(f"NO {target} has no cavity")
            return False
        return _in_box(obj, target, fixture.cavity_centre, fixture.cavity_size, fixture.yaw,
                       lines)
    if not fixture.top:
        lines.append(f"NO {target} has no top to put things on")
        return False
    return _on_box(obj, target, fixture.position, fixture.size, fixture.yaw, lines)


def _part_id(view, name: str) -> str:
    fmap = view.fixture_map
    part = fmap.stateful_part(name) if fmap is not None else None
    return part.part_id if part is not None else name


def _local(x: float, y: float, centre, yaw: float) -> tuple[float, float]:
    dx, dy = x - centre[0], y - centre[1]
    c, s = math.cos(yaw), math.sin(yaw)
    return c * dx + s * dy, -s * dx + c * dy


def _on_rim(obj, base) -> tuple[bool, str]:
    """``obj`` stacked on an open container's rim (a bowl on a bowl it does not fit into)."""
    from frankenbot.sim import tasks

    bottom = tasks.bottom_z(obj)
    top = base.position[2] + base.size[2] / 2
    xy = tasks._xy(obj, base)
    ok = (not obj.held and xy < base.size[0] / 2
          and top - ON_TOP_TOLERANCE < bottom < top + RIM_RISE)
    return ok, (f"{obj.name} on {base.name}'s rim: xy {xy:.3f} m, bottom {bottom:.3f} "
                f"(rim {top:.3f}){' held' if obj.held else ''}")


def _on_box(obj, target: str, centre, size, yaw: float, lines: list[str],
            round_radius: float | None = None) -> bool:
    """``obj`` rests (released) on the top face of a box (a fixture's top, a burner plate)."""
    from frankenbot.sim import tasks

    top = centre[2] + size[2] / 2
    lx, ly = _local(obj.position[0], obj.position[1], centre, yaw)
    over = (math.hypot(lx, ly) < round_radius if round_radius is not None
            else abs(lx) < size[0] / 2 and abs(ly) < size[1] / 2)
    bottom = tasks.bottom_z(obj)
    good = over and abs(bottom - top) < ON_TOP_TOLERANCE and not obj.held
    lines.append(f"{'OK' if good else 'NO'} {obj.name} on {target}: local ({lx:+.3f}, "
                 f"{ly:+.3f}), bottom {bottom:.3f} (top {top:.3f})"
                 f"{' held' if obj.held else ''}")
    return good


def _in_box(obj, target: str, centre, size, yaw: float, lines: list[str]) -> bool:
    """``obj``'s centre inside a fixture's cavity (the microwave's inside), released."""
    lx, ly = _local(obj.position[0], obj.position[1], centre, yaw)
    dz = obj.position[2] - centre[2]
    good = (abs(lx) < size[0] / 2 and abs(ly) < size[1] / 2 and abs(dz) < size[2] / 2
            and not obj.held)
    lines.append(f"{'OK' if good else 'NO'} {obj.name} in {target}: local ({lx:+.3f}, "
                 f"{ly:+.3f}, {dz:+.3f}){' held' if obj.held else ''}")
    return good


def _relation(obj, relation: str, ref: str, params: Mapping[str, object], view,
              lines: list[str]) -> bool:
    from frankenbot.sim import tasks

    if ref in view.objects:
        starts = params.get("starts") or {}
        start = starts.get(ref) if isinstance(starts, Mapping) else None
        if start is None:
            r = view.objects[ref]
            start = (r.position[0], r.position[1])
        p = {"object": obj.name, "refs": (ref,), "relation": relation, "ref_start": (start,)}
        return tasks.relative_ok(p, view, lines)
    fixture = view.fixture_map.fixture(ref) if view.fixture_map is not None else None
    if fixture is None:
        lines.append(f"NO {ref} is not in the scene")
        return False
    # a fixture is a box: the object beside the face that looks that way, not past its ends,
    # within the family oracle's gap (the geometry is frankenbot.spatial's, as the program's
    # own relation predicates judge a fixture)
    spec = layout.OBJECT_BY_NAME.get(obj.name)
    radius = spec.radius if spec is not None else 0.5 * math.hypot(obj.size[0], obj.size[1])
    face = spatial.face_relation(relation, obj.position[:2], radius, fixture.position[:2],
                                 fixture.yaw, fixture.size)
    on_table = abs(tasks.bottom_z(obj) - layout.TABLE_TOP_Z) < 0.01 and not obj.held
    good = on_table and face.holds
    lines.append(f"{'OK' if good else 'NO'} {obj.name} {relation} {ref}: {face.out:+.3f}"
                 f" m out from its face, {face.across:.3f} m across (half width "
                 f"{face.half_width:.3f}), gap {face.gap:.3f} m"
                 f"{'' if on_table else ', not resting on the table'}")
    return good

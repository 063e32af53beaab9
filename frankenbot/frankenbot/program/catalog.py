"""The catalog: typed signatures of primitives, predicates and library skills.

The validator checks calls against a catalog, the planner lists it in the prompt, the interpreter
refuses anything not in it, and memory adds promoted skills to it. A catalog is immutable and passed
in explicitly (no global registry): ``default_catalog()`` builds the built-in one and
``catalog.with_skills(...)`` returns an extended copy.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from frankenbot import shapes


class ParamType(str, enum.Enum):
    OBJECT = "object"  # a scene object id such as red_block (or a skill parameter of type object)
    NUMBER = "number"  # a real number (int literals are accepted)
    STRING = "string"  # a double-quoted string


class SignatureKind(str, enum.Enum):
    PRIMITIVE = "primitive"
    PREDICATE = "predicate"
    SKILL = "skill"


@dataclass(frozen=True)
class Param:
    name: str
    type: ParamType
    doc: str = ""
    default: float | str | None = None  # None: required
    minimum: float | None = None  # NUMBER only
    maximum: float | None = None  # NUMBER only
    shapes: tuple[str, ...] = ()  # OBJECT only: allowed shape classes; empty = any
    hint: str = ""  # shown with a range error (e.g. where a pixel range comes from)

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class Signature:
    """A callable's name, parameters and one-line documentation.

    For skills, ``body`` holds the skill's definition in the program language (canonical text).
    """

    name: str
    kind: SignatureKind
    params: tuple[Param, ...] = ()
    doc: str = ""
    body: str = ""

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def render(self) -> str:
        """One line for prompts and help: ``pick(obj: object)  -- doc``."""
        parts = []
        for p in self.params:
            s = f"{p.name}: {p.type.value}"
            if p.default is not None:
                s += f" = {p.default!r}" if isinstance(p.default, str) else f" = {p.default:g}"
            parts.append(s)
        return f"{self.name}({', '.join(parts)})" + (f"  -- {self.doc}" if self.doc else "")


@dataclass(frozen=True)
class Catalog:
    """Primitives, predicates and skills by name. Names are unique across the three kinds."""

    entries: Mapping[str, Signature] = field(default_factory=dict)

    def get(self, name: str) -> Signature | None:
        return self.entries.get(name)

    def of_kind(self, kind: SignatureKind) -> tuple[Signature, ...]:
        return tuple(s for s in self.entries.values() if s.kind == kind)

    @property
    def primitives(self) -> tuple[Signature, ...]:
        return self.of_kind(SignatureKind.PRIMITIVE)

    @property
    def predicates(self) -> tuple[Signature, ...]:
        return self.of_kind(SignatureKind.PREDICATE)

    @property
    def skills(self) -> tuple[Signature, ...]:
        return self.of_kind(SignatureKind.SKILL)

    def with_skills(self, skills: Iterable[Signature]) -> "Catalog":
        """A copy with skills added or replaced; a skill may not shadow a primitive/predicate."""
        entries = dict(self.entries)
        for s in skills:
            if s.kind != SignatureKind.SKILL:
                raise ValueError(f"with_skills expects skills, got {s.kind.value} {s.name!r}")
            old = entries.get(s.name)
            if old is not None and old.kind != SignatureKind.SKILL:
                raise ValueError(f"skill {s.name!r} would shadow the {old.kind.value} of that name")
            entries[s.name] = s
        return Catalog(entries)


def _obj(name: str, doc: str = "", shapes: tuple[str, ...] = ()) -> Param:
    return Param(name, ParamType.OBJECT, doc, shapes=shapes)


def _num(name: str, doc: str, default: float | None, lo: float, hi: float) -> Param:
    return Param(name, ParamType.NUMBER, doc, default=default, minimum=lo, maximum=hi)


def _sorted(names: Iterable[str]) -> tuple[str, ...]:
    """A role set of shapes.py in the vocabulary's own order (how the prompt lists them)."""
    wanted = set(names)
    return tuple(s for s in shapes.SHAPES if s in wanted)


_P = SignatureKind.PRIMITIVE
_Q = SignatureKind.PREDICATE
# loaded from above: open containers, plates, the zone, and of the enclosures only drawers (a
# microwave's or a cupboard's inside is behind a door on its front)
CONTAINERS = _sorted((shapes.CONTAINERS - shapes.ENCLOSURES) | {"drawer"})
SUPPORTS = _sorted(shapes.SUPPORTS)
GRASPABLE = _sorted(shapes.GRASPABLE)
DOORS = ("door", "microwave", "cupboard")
OPENABLE = _sorted(shapes.OPENABLE)
SWITCHABLE = _sorted(shapes.SWITCHABLE)

BUILTIN_SIGNATURES: tuple[Signature, ...] = (
    # --- primitives (executed by frankenbot.primitives against a RobotInterface) ---
    Signature("home", _P, (), "move the arm to its home pose above the table"),
    Signature("detect", _P, (_obj("obj"),), "look for the object again and refresh its pose"),
    Signature("move_above", _P, (_obj("obj"), _num("height", "metres above the object's top",
                                                   0.10, 0.02, 0.40)),
              "move the gripper above an object"),
    Signature("pick", _P, (_obj("obj", shapes=GRASPABLE),),
              "grasp an object from above and lift it (not containers, plates or fixtures)"),
    Signature("place_on", _P, (_obj("obj"), _obj("target", shapes=SUPPORTS)),
              "put the held object on a flat top (a block, box, plate, tray, cabinet, stove)"),
    Signature("place_in", _P, (_obj("obj"), _obj("container", shapes=CONTAINERS)),
              "put the held object into a container (bowl, bin, basket, tray, plate, an open "
              "drawer)"),
    Signature("place_at", _P, (_obj("obj"), _num("x", "metres, base frame", None, -1.0, 1.0),
                               _num("y", "metres, base frame", None, -1.0, 1.0)),
              "put the held object on the table at (x, y)"),
    Signature("push_to", _P, (_obj("obj"), _obj("target", shapes=("zone", "unknown"))),
              "push an object along the table into a zone"),
    Signature("open_drawer", _P, (_obj("drawer", shapes=("drawer",)),),
              "pull a drawer open (the drawer, or a cabinet's top/middle/bottom_drawer)"),
    Signature("close_drawer", _P, (_obj("drawer", shapes=("drawer",)),), "push a drawer shut"),
    Signature("open_door", _P, (_obj("door", shapes=DOORS),),
              "open a door by its handle (hinged: swung open; sliding: slid open)"),
    Signature("close_door", _P, (_obj("door", shapes=DOORS),), "close a door by its handle"),
    Signature("press", _P, (_obj("obj", shapes=_sorted(shapes.PRESSABLE)),),
              "press a push button once (each press switches what it controls)"),
    Signature("toggle", _P, (_obj("obj", shapes=_sorted(shapes.TOGGLEABLE)),),
              "flip a rocker switch to its other side"),
    Signature("turn", _P, (_obj("obj", shapes=_sorted(shapes.TURNABLE)),
                           _num("degrees", "positive: counter-clockwise seen from above (a "
                                "stove knob's on direction); stops at the knob's ends", None,
                                -360.0, 360.0)),
              "turn a knob by degrees (positive: counter-clockwise seen from above, a stove "
              "knob's on direction)"),
    Signature("open_gripper", _P, (), "open the gripper fully"),
    Signature("close_gripper", _P, (), "close the gripper"),
    Signature("wait", _P, (_num("seconds", "how long to wait", None, 0.0, 30.0),),
              "do nothing for a while"),
    # --- predicates (evaluated on a WorldSnapshot by frankenbot.program.predicates) ---
    Signature("holding", _Q, (_obj("obj"),), "the gripper holds the object"),
    Signature("in", _Q, (_obj("obj"), _obj("container")), "the object is inside the container"),
    Signature("on", _Q, (_obj("obj"), _obj("target")), "the object rests on top of the target"),
    Signature("near", _Q, (_obj("a"), _obj("b"), _num("d", "metres", None, 0.0, 2.0)),
              "the two objects' centres are within d metres (horizontally)"),
    Signature("visible", _Q, (_obj("obj"),), "the object is in the current scene"),
    Signature("gripper_open", _Q, (), "the gripper is open"),
    Signature("drawer_open", _Q, (_obj("drawer", shapes=("drawer",)),),
              "the drawer is open (as open(drawer))"),
    Signature("open", _Q, (_obj("x", shapes=OPENABLE),),
              "the drawer or door (or a fixture's only door) is open"),
    Signature("closed", _Q, (_obj("x", shapes=OPENABLE),),
              "the drawer or door (or a fixture's only door) is closed"),
    Signature("on_state", _Q, (_obj("x", shapes=SWITCHABLE),),
              "the light or burner (or a stove's, a light panel's) is on"),
    Signature("empty", _Q, (_obj("container"),), "nothing is inside the container"),
)


def default_catalog(image_size: tuple[int, int] | None = None) -> Catalog:
    """The built-in primitives and predicates (no skills; memory adds those).

    ``image_size`` (width, height) bounds the pixel primitives' ``u``/``v``; by default it is
    the shipped camera's (``config/camera.yaml``), the image the set-of-mark prompt shows.
    """
    from frankenbot.program.spatial_catalog import spatial_signatures

    extra = spatial_signatures(image_size)
    return Catalog({s.name: s for s in (*BUILTIN_SIGNATURES, *extra)})

"""The cell's fixture map: which fixtures stand where, their parts, and where each part's handle,
hinge, cavity or control is.

Fixtures (a cabinet of drawers, a door box, a light panel, a stove, the first waves' drawer
unit, a painted zone) do not move on their own, so where they stand is installation data, like
the camera's extrinsics: measured once on a robot (``config/scene_fixtures.yaml``), given by the
sim per scene. Their *state* (how far a drawer is open, a door's angle, a lamp lit) is not in
the map: perception measures it from the camera and the scene carries it
(``SceneObject.opening``/``on``).

The YAML (``fixtures:`` a mapping id -> entry) has for each fixture ``shape`` (its kind),
``position`` [x, y, z] (body centre), ``size`` [x, y, z] (in its own frame), ``yaw`` and
optionally ``colour``, ``label``, ``top`` (a surface to put things on), ``cavity_centre`` and
``cavity_size`` (inside, behind a door) and ``parts``: a mapping part id -> entry with
``kind`` (drawer, hinged_door, sliding_door, button, switch, knob, light, burner), ``position``,
``size``, ``handle`` [x, y, z] (closed), ``bar`` (horizontal | vertical), ``axis`` (opening
direction; a hinged door's hinge axis), ``hinge`` (a point on it), ``travel`` (m or rad),
``cavity_centre``/``cavity_size`` and ``controls`` (ids of the parts a control switches). The
first waves' one-drawer entry (``handle``, ``pull_axis``, ``stroke`` at its top level) reads as
a fixture that is its own drawer. All in metres/radians, base_link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from frankenbot import shapes
from frankenbot.errors import ConfigError
from frankenbot.state import SceneObject

Vec3 = tuple[float, float, float]
PART_KINDS = ("drawer", "hinged_door", "sliding_door", "button", "switch", "knob", "light",
              "burner")
# a part kind -> the shape its scene object carries (shapes.PART_KINDS)
PART_SHAPE = {"drawer": "drawer", "hinged_door": "door", "sliding_door": "door",
              "button": "button", "switch": "switch", "knob": "knob", "light": "light",
              "burner": "burner"}
LIT_KINDS = ("light", "burner")
# a part counts as open beyond this share of its travel (and closed below CLOSED_SHARE)
OPEN_SHARE = 0.4
CLOSED_SHARE = 0.12


def _vec3(entry: Mapping[str, Any], key: str, where: str) -> Vec3:
    raw = entry.get(key)
    if isinstance(raw, Mapping):
        raw = [raw.get("x"), raw.get("y"), raw.get("z")]
    if not isinstance(raw, (list, tuple)):  # (a string of three digits is no position)
        raise ConfigError(f"{where}: '{key}' must be 3 numbers, got {raw!r}")
    try:
        vals = tuple(float(v) for v in raw)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: '{key}' must be 3 numbers, got {raw!r}") from e
    if len(vals) != 3 or not all(math.isfinite(v) for v in vals):
        raise ConfigError(f"{where}: '{key}' must be 3 finite numbers, got {raw!r}")
    return (vals[0], vals[1], vals[2])


def _opt_vec3(entry: Mapping[str, Any], key: str, where: str) -> Vec3 | None:
    return _vec3(entry, key, where) if entry.get(key) is not None else None


def _unit(v: Vec3, where: str) -> Vec3:
    n = math.sqrt(sum(c * c for c in v))
    if n < 1e-9:
        raise ConfigError(f"{where}: axis must not be zero")
    return (v[0] / n, v[1] / n, v[2] / n)


def _rotate_about(point: np.ndarray, origin: np.ndarray, axis: np.ndarray,
                  angle: float) -> np.ndarray:
    """Rodrigues: ``point`` turned by ``angle`` about the line through ``origin`` along ``axis``."""
    v = point - origin
    c, s = math.cos(angle), math.sin(angle)
    return origin + v * c + np.cross(axis, v) * s + axis * float(axis @ v) * (1 - c)


@dataclass(frozen=True)
class FixturePart:
    """One part of a fixture, in base_link, at its closed / off state (see module docstring)."""

    part_id: str
    kind: str
    fixture_id: str
    label: str
    position: Vec3
    size: Vec3
    yaw: float = 0.0
    handle: Vec3 | None = None
    bar: str = ""  # "horizontal" | "vertical"
    axis: Vec3 = (-1.0, 0.0, 0.0)
    hinge: Vec3 | None = None
    travel: float = 0.0
    cavity_centre: Vec3 | None = None
    cavity_size: Vec3 | None = None
    controls: tuple[str, ...] = ()
    handle_length: float = 0.1

    @property
    def shape(self) -> str:
        return PART_SHAPE[self.kind]

    @property
    def sliding(self) -> bool:
        return self.kind in ("drawer", "sliding_door")

    def _moved(self, p: Vec3, opening: float) -> Vec3:
        if self.kind == "hinged_door" and self.hinge is not None:
            q = _rotate_about(np.asarray(p, float), np.asarray(self.hinge, float),
                              np.asarray(self.axis, float), opening)
            return (float(q[0]), float(q[1]), float(q[2]))
        if self.sliding:
            return tuple(c + a * opening for c, a in zip(p, self.axis, strict=True))  # type: ignore[return-value]
        return p

    def handle_at(self, opening: float) -> Vec3:
        """The handle's centre when the part is open by ``opening`` (m or rad)."""
        if self.handle is None:
            raise ConfigError(f"{self.part_id} has no handle")
        return self._moved(self.handle, opening)

    def cavity_at(self, opening: float) -> Vec3 | None:
        return None if self.cavity_centre is None else self._moved(self.cavity_centre, opening)

    def cavity_contains(self, point: Vec3, opening: float, margin: float = 0.0,
                        above: float = 0.0) -> bool:
        """Is ``point`` inside the part's cavity open by ``opening`` (grown by ``margin`` on
        every side and by ``above`` over its top)?"""
        centre = self.cavity_at(opening)
        if centre is None or self.cavity_size is None:
            return False
        dx, dy = point[0] - centre[0], point[1] - centre[1]
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        lx, ly = c * dx + s * dy, -s * dx + c * dy
        sx, sy, sz = self.cavity_size
        dz = point[2] - centre[2]
        return (abs(lx) <= sx / 2 + margin and abs(ly) <= sy / 2 + margin
                and -sz / 2 - margin <= dz <= sz / 2 + margin + above)

    def door_normal_at(self, opening: float) -> Vec3:
        """Outward horizontal normal of a part's front face at ``opening`` (a hinged door's
        turns with it)."""
        out = np.array([-math.cos(self.yaw), -math.sin(self.yaw), 0.0])  # the front faces -x
        if self.kind == "hinged_door" and self.hinge is not None:
            out = _rotate_about(out, np.zeros(3), np.asarray(self.axis, float), opening)
        return (float(out[0]), float(out[1]), 0.0)

    def opening_of_handle(self, position: Vec3, tolerance: float = 0.04) -> float | None:
        """The opening at which the handle would be at ``position`` (None if it cannot be)."""
        if self.handle is None:
            return None
        p = np.asarray(position, float)
        h = np.asarray(self.handle, float)
        if self.sliding:
            axis = np.asarray(self.axis, float)
            along = float((p - h) @ axis)
            lateral = float(np.linalg.norm((p - h) - along * axis))
            if lateral > tolerance or not (-tolerance <= along <= self.travel + tolerance):
                return None
            return float(min(max(along, 0.0), self.travel))
        if self.kind == "hinged_door" and self.hinge is not None:
            axis = np.asarray(self.axis, float)
            o = np.asarray(self.hinge, float)
            v0, v = h - o, p - o
            v0 -= axis * float(axis @ v0)
            v -= axis * float(axis @ v)
            r0, r = float(np.linalg.norm(v0)), float(np.linalg.norm(v))
            if r < 1e-6 or abs(r - r0) > tolerance:
                return None
            angle = math.atan2(float(axis @ np.cross(v0, v)), float(v0 @ v))
            if not (-0.2 <= angle <= self.travel + 0.2):
                return None
            return float(min(max(angle, 0.0), self.travel))
        return None

    def is_open(self, opening: float) -> bool:
        return opening >= OPEN_SHARE * self.travel

    def is_closed(self, opening: float) -> bool:
        return opening <= CLOSED_SHARE * self.travel

    def scene_object(self, stamp: float = 0.0) -> SceneObject:
        label = self.label + (" (sliding)" if self.kind == "sliding_door" else "")
        return SceneObject(object_id=self.part_id, label=label, shape=self.shape,
                           colour="", position=self.position, size=self.size, yaw=self.yaw,
                           confidence=1.0, is_fixture=True, last_seen=stamp,
                           controls=self.controls)


@dataclass(frozen=True)
class Fixture:
    """A fixture of the cell: its body (an oriented box) and its parts."""

    fixture_id: str
    kind: str
    label: str
    colour: str
    position: Vec3
    size: Vec3
    yaw: float = 0.0
    top: bool = False
    cavity_centre: Vec3 | None = None
    cavity_size: Vec3 | None = None
    parts: tuple[FixturePart, ...] = ()
    # the first waves' drawer unit: the fixture is itself its only drawer
    self_part: FixturePart | None = None

    def all_parts(self) -> tuple[FixturePart, ...]:
        return (self.self_part,) if self.self_part is not None else self.parts

    def local_xy(self, x: float, y: float) -> tuple[float, float]:
        dx, dy = x - self.position[0], y - self.position[1]
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return c * dx + s * dy, -s * dx + c * dy

    def body_contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        lx, ly = self.local_xy(x, y)
        return abs(lx) <= self.size[0] / 2 + margin and abs(ly) <= self.size[1] / 2 + margin

    def footprint_contains(self, x: float, y: float, margin: float = 0.02,
                           parts: Iterable[str] | None = None) -> bool:
        """Is (x, y) over the fixture's body or the space its drawers, doors and handles sweep
        (what no movable object stands on, and what perception leaves to the map)? ``parts``:
        only these parts' swept space (None: every part's)."""
        if self.body_contains(x, y, margin):
            return True
        only = None if parts is None else set(parts)
        for part in self.all_parts():
            if part.handle is None or (only is not None and part.part_id not in only):
                continue
            reach = part.travel if part.sliding else 0.0
            steps = np.linspace(0.0, part.travel if part.kind == "hinged_door" else reach, 7)
            for t in steps:
                hx, hy, _ = part.handle_at(float(t))
                cx, cy, _ = part._moved(part.position, float(t))
                for fx_, fy_ in ((hx, hy), (cx, cy), ((hx + cx) / 2, (hy + cy) / 2)):
                    if math.hypot(x - fx_, y - fy_) <= max(part.size[0], part.size[1]) / 2 * (
                            1.0 if part.sliding else 0.6) + margin:
                        return True
        return False

    def scene_object(self, stamp: float = 0.0) -> SceneObject:
        shape = "drawer" if self.self_part is not None else self.kind
        return SceneObject(object_id=self.fixture_id, label=self.label, shape=shape,
                           colour=self.colour, position=self.position, size=self.size,
                           yaw=self.yaw, confidence=1.0, is_fixture=True, last_seen=stamp)


@dataclass(frozen=True)
class FixtureMap:
    """Every fixture of the cell; parts looked up by id."""

    fixtures: tuple[Fixture, ...] = ()
    _parts: Mapping[str, FixturePart] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        parts: dict[str, FixturePart] = {}
        for f in self.fixtures:
            for p in f.all_parts():
                if p.part_id in parts:
                    raise ConfigError(f"fixture part id {p.part_id!r} is used twice")
                parts[p.part_id] = p
        object.__setattr__(self, "_parts", parts)

    @property
    def parts(self) -> Mapping[str, FixturePart]:
        return self._parts

    def part(self, part_id: str) -> FixturePart | None:
        return self._parts.get(part_id)

    def fixture(self, fixture_id: str) -> Fixture | None:
        return next((f for f in self.fixtures if f.fixture_id == fixture_id), None)

    def ids(self) -> tuple[str, ...]:
        return tuple(f.fixture_id for f in self.fixtures) + tuple(
            p for p in self._parts if p not in {f.fixture_id for f in self.fixtures})

    def stateful_part(self, object_id: str) -> FixturePart | None:
        """The part whose state ``open(x)``/``on_state(x)`` of ``object_id`` means: the part
        itself, or a fixture's only openable or lit part (``microwave`` -> its door, ``stove``
        -> its burner, ``light_panel`` -> its lamp)."""
        part = self._parts.get(object_id)
        if part is not None:
            return part
        f = self.fixture(object_id)
        if f is None:
            return None
        for group in (("hinged_door", "sliding_door", "drawer"), LIT_KINDS):
            found = [p for p in f.parts if p.kind in group]
            if len(found) == 1:
                return found[0]
        return None

    def controller_of(self, part_id: str) -> tuple[FixturePart, ...]:
        """The controls (buttons, switches, knobs) that switch ``part_id``."""
        return tuple(p for p in self._parts.values() if part_id in p.controls)

    def scene_objects(self, stamp: float = 0.0) -> tuple[SceneObject, ...]:
        """The fixtures and their parts as scene objects (state not measured: None)."""
        out = [f.scene_object(stamp) for f in self.fixtures]
        out += [p.scene_object(stamp) for f in self.fixtures for p in f.parts]
        return tuple(out)

    def without(self, fixture_ids: Iterable[str]) -> "FixtureMap":
        drop = set(fixture_ids)
        return FixtureMap(tuple(f for f in self.fixtures if f.fixture_id not in drop))

    def to_data(self) -> dict[str, Any]:
        return {"fixtures": {f.fixture_id: _fixture_to_data(f) for f in self.fixtures}}

    @classmethod
    def from_data(cls, data: Any) -> "FixtureMap":
        if data is None:
            return cls()
        if isinstance(data, Mapping) and "fixtures" in data:
            data = data["fixtures"]
        entries: list[tuple[str, Mapping[str, Any]]] = []
        if isinstance(data, Mapping):
            for fid, entry in data.items():
                if not isinstance(entry, Mapping):
                    raise ConfigError(f"fixture {fid}: expected a mapping, got {entry!r}")
                entries.append((str(fid), entry))
        elif isinstance(data, list):
            for entry in data:
                if not isinstance(entry, Mapping) or "id" not in entry:
                    raise ConfigError(f"fixture entries need an 'id', got {entry!r}")
                entries.append((str(entry["id"]), entry))
        else:
            raise ConfigError(f"fixtures must be a list or mapping, got {type(data).__name__}")
        return cls(tuple(_fixture_from_data(fid, e) for fid, e in entries))

    @classmethod
    def load(cls, path: str | Path | None) -> "FixtureMap":
        """The map in a YAML file; an empty path means no fixtures."""
        if not path:
            return cls()
        import yaml

        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"fixtures file not found: {p}")
        try:
            return cls.from_data(yaml.safe_load(p.read_text()))
        except yaml.YAMLError as e:
            raise ConfigError(f"cannot read fixtures {p}: {e}") from e


def _part_from_data(pid: str, fid: str, entry: Mapping[str, Any], yaw: float) -> FixturePart:
    where = f"fixture {fid} part {pid}"
    kind = str(entry.get("kind", ""))
    if kind not in PART_KINDS:
        raise ConfigError(f"{where}: unknown kind {kind!r}; expected one of {PART_KINDS}")
    axis = _unit(_vec3(entry, "axis", where), where) if entry.get("axis") is not None else (
        -1.0, 0.0, 0.0)
    try:
        travel = float(entry.get("travel", 0.0))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: travel must be a number") from e
    if kind in ("drawer", "hinged_door", "sliding_door", "knob", "switch") and not travel > 0:
        raise ConfigError(f"{where}: a {kind} needs a positive travel")
    if kind == "hinged_door" and entry.get("hinge") is None:
        raise ConfigError(f"{where}: a hinged door needs a hinge point")
    controls = entry.get("controls", ())
    if isinstance(controls, str):
        controls = (controls,)
    return FixturePart(
        part_id=pid, kind=kind, fixture_id=fid,
        label=str(entry.get("label", pid.replace("_", " "))),
        position=_vec3(entry, "position", where), size=_vec3(entry, "size", where),
        yaw=float(entry.get("yaw", yaw)), handle=_opt_vec3(entry, "handle", where),
        bar=str(entry.get("bar", "")), axis=axis, hinge=_opt_vec3(entry, "hinge", where),
        travel=travel, cavity_centre=_opt_vec3(entry, "cavity_centre", where),
        cavity_size=_opt_vec3(entry, "cavity_size", where),
        controls=tuple(str(c) for c in controls),
        handle_length=float(entry.get("handle_length", 0.1)))


def _fixture_from_data(fid: str, entry: Mapping[str, Any]) -> Fixture:
    where = f"fixture {fid}"
    kind = str(entry.get("shape", entry.get("kind", "drawer" if "drawer" in fid else "zone")))
    if kind not in shapes.FIXTURE_KINDS:
        raise ConfigError(f"{where}: unknown kind {kind!r}; expected one of "
                          f"{shapes.FIXTURE_KINDS}")
    colour = str(entry.get("colour", entry.get("color", "")))
    label = str(entry.get("label", f"{colour} {kind}".strip()))
    position, size = _vec3(entry, "position", where), _vec3(entry, "size", where)
    yaw = float(entry.get("yaw", 0.0))
    parts_data = entry.get("parts") or {}
    if not isinstance(parts_data, Mapping):
        raise ConfigError(f"{where}: parts must be a mapping id -> entry")
    parts = tuple(_part_from_data(str(pid), fid, p, yaw) for pid, p in parts_data.items())
    self_part = None
    if kind == "drawer" and not parts:
        # the first waves' entry: handle, pull_axis and stroke at the top level
        handle = _opt_vec3(entry, "handle", where)
        axis = _unit(_vec3(entry, "pull_axis", where), where) if entry.get(
            "pull_axis") is not None else (-1.0, 0.0, 0.0)
        try:
            stroke = float(entry.get("stroke", 0.0))
        except (TypeError, ValueError) as e:
            raise ConfigError(f"{where}: stroke must be a number") from e
        self_part = FixturePart(
            part_id=fid, kind="drawer", fixture_id=fid, label=label, position=position,
            size=size, yaw=yaw, handle=handle, bar="horizontal", axis=axis, travel=stroke,
            cavity_centre=_opt_vec3(entry, "cavity_centre", where),
            cavity_size=_opt_vec3(entry, "cavity_size", where),
            handle_length=float(entry.get("handle_length", 0.1)))
    return Fixture(fixture_id=fid, kind=kind, label=label, colour=colour, position=position,
                   size=size, yaw=yaw, top=bool(entry.get("top", False)),
                   cavity_centre=_opt_vec3(entry, "cavity_centre", where) if self_part is None
                   else None, cavity_size=_opt_vec3(entry, "cavity_size", where)
                   if self_part is None else None, parts=parts, self_part=self_part)


def _r(v: Iterable[float]) -> list[float]:
    return [round(float(c), 6) for c in v]


def _part_to_data(p: FixturePart) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": p.kind, "label": p.label, "position": _r(p.position),
                           "size": _r(p.size), "yaw": round(p.yaw, 6)}
    if p.handle is not None:
        out.update(handle=_r(p.handle), bar=p.bar, handle_length=p.handle_length)
    out["axis"] = _r(p.axis)
    if p.hinge is not None:
        out["hinge"] = _r(p.hinge)
    if p.travel:
        out["travel"] = round(p.travel, 6)
    if p.cavity_centre is not None and p.cavity_size is not None:
        out.update(cavity_centre=_r(p.cavity_centre), cavity_size=_r(p.cavity_size))
    if p.controls:
        out["controls"] = list(p.controls)
    return out


def _fixture_to_data(f: Fixture) -> dict[str, Any]:
    out: dict[str, Any] = {"shape": f.kind, "colour": f.colour, "label": f.label,
                           "position": _r(f.position), "size": _r(f.size),
                           "yaw": round(f.yaw, 6)}
    if f.top:
        out["top"] = True
    if f.self_part is not None:
        p = f.self_part
        if p.handle is not None:
            out.update(handle=_r(p.handle), handle_length=p.handle_length)
        out.update(pull_axis=_r(p.axis), stroke=p.travel)
        if p.cavity_centre is not None and p.cavity_size is not None:
            out.update(cavity_centre=_r(p.cavity_centre), cavity_size=_r(p.cavity_size))
    elif f.cavity_centre is not None and f.cavity_size is not None:
        out.update(cavity_centre=_r(f.cavity_centre), cavity_size=_r(f.cavity_size))
    if f.parts:
        out["parts"] = {p.part_id: _part_to_data(p) for p in f.parts}
    return out


def with_state(obj: SceneObject, opening: float | None = None,
               on: bool | None = None) -> SceneObject:
    """``obj`` with a measured state."""
    return replace(obj, opening=opening, on=on)


# The current map, as the primitives and predicates read it: a robot cell's file loaded once, or
# the sim's per-scene map (a reset can change it).
FixtureMapProvider = Callable[[], "FixtureMap"]


def measured_opening(part: FixturePart, objects: Mapping[str, SceneObject]) -> float | None:
    """How far ``part`` is open as the scene reports it (m or rad; None: not measured): the
    part's own measured ``opening``, else where its handle object (``<part>_handle``) was seen
    along the handle's path."""
    obj = objects.get(part.part_id)
    if obj is not None and obj.opening is not None and math.isfinite(obj.opening):
        return float(obj.opening)
    handle = objects.get(f"{part.part_id}_handle")
    if handle is not None and part.handle is not None:
        return part.opening_of_handle(handle.position)
    return None


def measured_on(part: FixturePart, objects: Mapping[str, SceneObject]) -> bool | None:
    """Whether the lamp or burner ``part`` is lit as the scene reports it (None: not seen)."""
    obj = objects.get(part.part_id)
    return None if obj is None else obj.on


"""Fixtures (drawer, zone) from config, merged into every perceived scene.

Fixtures do not move on their own and are hard to segment (a drawer front is part of a cabinet, a
zone is paint on the table), so their pose comes from ``config/scene_fixtures.yaml``. Accepted
layouts: a list under ``fixtures`` (or the top level) of entries with ``id``, or a mapping
``id -> entry``. Each entry has ``shape``, ``position`` [x, y, z] and ``size`` [x, y, z] in metres
in base_link, and optional ``yaw``, ``label``, ``colour``; a drawer may add ``handle`` (centre
when closed), ``pull_axis`` and ``stroke`` so perception can find the handle and measure how far
the drawer is open.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from frankenbot.errors import ConfigError
from frankenbot.state import SHAPES, SceneObject


def _vec3(entry: Mapping[str, Any], key: str, fid: str) -> tuple[float, float, float]:
    raw = entry.get(key)
    if isinstance(raw, Mapping):
        raw = [raw.get("x"), raw.get("y"), raw.get("z")]
    if not isinstance(raw, (list, tuple)):
        raise ConfigError(f"fixture {fid}: '{key}' must be 3 numbers, got {raw!r}")
    try:
        vals = tuple(float(v) for v in raw)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"fixture {fid}: '{key}' must be 3 numbers, got {raw!r}") from e
    if len(vals) != 3:
        raise ConfigError(f"fixture {fid}: '{key}' must be 3 numbers, got {raw!r}")
    return (vals[0], vals[1], vals[2])


@dataclass(frozen=True)
class FixtureGeometry:
    """A fixture plus what perception needs to recognise its moving parts (drawer handle)."""

    obj: SceneObject
    handle: tuple[float, float, float] | None = None  # handle centre when closed
    pull_axis: tuple[float, float, float] = (-1.0, 0.0, 0.0)  # unit, opening direction
    stroke: float = 0.0  # full opening, metres

    def footprint_contains(self, x: float, y: float, margin: float = 0.02) -> bool:
        """Is (x, y) over the fixture, or over the space its drawer and handle slide into?"""
        px, py = self.obj.position[0], self.obj.position[1]
        hx, hy = self.obj.size[0] / 2 + margin, self.obj.size[1] / 2 + margin
        ax, ay = self.pull_axis[0], self.pull_axis[1]
        reach = self.stroke
        if self.handle is not None:  # the handle sticks out of the front
            front = abs(ax) * self.obj.size[0] / 2 + abs(ay) * self.obj.size[1] / 2
            reach += max(0.0, (self.handle[0] - px) * ax + (self.handle[1] - py) * ay - front)
        for t in np.linspace(0.0, reach, 6):
            if abs(x - (px + ax * t)) <= hx and abs(y - (py + ay * t)) <= hy:
                return True
        return False

    def handle_opening(self, position: tuple[float, float, float],
                       tolerance: float = 0.04) -> float | None:
        """Opening (m) if ``position`` lies on the handle's travel, else None."""
        if self.handle is None:
            return None
        d = np.asarray(position) - np.asarray(self.handle)
        axis = np.asarray(self.pull_axis)
        along = float(d @ axis)
        lateral = float(np.linalg.norm(d - along * axis))
        if lateral > tolerance or not (-tolerance <= along <= self.stroke + tolerance):
            return None
        return float(min(max(along, 0.0), self.stroke))


def fixture_from_mapping(fid: str, entry: Mapping[str, Any]) -> SceneObject:
    shape = str(entry.get("shape", "drawer" if "drawer" in fid else "zone"))
    if shape not in SHAPES:
        raise ConfigError(f"fixture {fid}: unknown shape {shape!r}; expected one of {SHAPES}")
    colour = str(entry.get("colour", entry.get("color", "")))
    label = str(entry.get("label", f"{colour} {shape}".strip()))
    return SceneObject(object_id=fid, label=label, shape=shape, colour=colour,
                       position=_vec3(entry, "position", fid), size=_vec3(entry, "size", fid),
                       yaw=float(entry.get("yaw", 0.0)), confidence=1.0, is_fixture=True)


def geometry_from_mapping(fid: str, entry: Mapping[str, Any]) -> FixtureGeometry:
    obj = fixture_from_mapping(fid, entry)
    handle = _vec3(entry, "handle", fid) if entry.get("handle") is not None else None
    axis = _vec3(entry, "pull_axis", fid) if entry.get("pull_axis") is not None else (
        -1.0, 0.0, 0.0)
    norm = float(np.linalg.norm(axis))
    if norm < 1e-9:
        raise ConfigError(f"fixture {fid}: pull_axis must not be zero")
    try:
        stroke = float(entry.get("stroke", 0.0))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"fixture {fid}: stroke must be a number") from e
    unit = (axis[0] / norm, axis[1] / norm, axis[2] / norm)
    return FixtureGeometry(obj, handle, unit, stroke)


def fixture_geometry_from_data(data: Any) -> tuple[FixtureGeometry, ...]:
    if data is None:
        return ()
    if isinstance(data, Mapping) and "fixtures" in data:
        data = data["fixtures"]
    out: list[FixtureGeometry] = []
    if isinstance(data, Mapping):
        for fid, entry in data.items():
            if not isinstance(entry, Mapping):
                raise ConfigError(f"fixture {fid}: expected a mapping, got {entry!r}")
            out.append(geometry_from_mapping(str(fid), entry))
    elif isinstance(data, list):
        for entry in data:
            if not isinstance(entry, Mapping) or "id" not in entry:
                raise ConfigError(f"fixture entries need an 'id', got {entry!r}")
            out.append(geometry_from_mapping(str(entry["id"]), entry))
    else:
        raise ConfigError(f"fixtures must be a list or mapping, got {type(data).__name__}")
    return tuple(out)


def fixtures_from_data(data: Any) -> tuple[SceneObject, ...]:
    return tuple(g.obj for g in fixture_geometry_from_data(data))


def load_fixture_geometry(path: str | Path | None) -> tuple[FixtureGeometry, ...]:
    """Fixtures (with drawer handle geometry) from a YAML file; an empty path means none."""
    if not path:
        return ()
    import yaml

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"fixtures file not found: {p}")
    return fixture_geometry_from_data(yaml.safe_load(p.read_text()))


def load_fixtures(path: str | Path | None) -> tuple[SceneObject, ...]:
    """Fixture objects from a YAML file; an empty path means no fixtures."""
    return tuple(g.obj for g in load_fixture_geometry(path))

"""Fixtures (drawer, zone) from config, merged into every perceived scene.

Fixtures do not move on their own and are hard to segment (a drawer front is part of a cabinet, a
zone is paint on the table), so their pose comes from ``config/scene_fixtures.yaml``. Accepted
layouts: a list under ``fixtures`` (or the top level) of entries with ``id``, or a mapping
``id -> entry``. Each entry has ``shape``, ``position`` [x, y, z] and ``size`` [x, y, z] in metres
in base_link, and optional ``yaw``, ``label``, ``colour``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from frankenbot.errors import ConfigError
from frankenbot.state import SHAPES, SceneObject


def _vec3(entry: Mapping[str, Any], key: str, fid: str) -> tuple[float, float, float]:
    raw = entry.get(key)
    if isinstance(raw, Mapping):
        raw = [raw.get("x"), raw.get("y"), raw.get("z")]
    try:
        vals = tuple(float(v) for v in raw)  # type: ignore[union-attr]
    except (TypeError, ValueError) as e:
        raise ConfigError(f"fixture {fid}: '{key}' must be 3 numbers, got {raw!r}") from e
    if len(vals) != 3:
        raise ConfigError(f"fixture {fid}: '{key}' must be 3 numbers, got {raw!r}")
    return (vals[0], vals[1], vals[2])


def fixture_from_mapping(fid: str, entry: Mapping[str, Any]) -> SceneObject:
    shape = str(entry.get("shape", "drawer" if "drawer" in fid else "zone"))
    if shape not in SHAPES:
        raise ConfigError(f"fixture {fid}: unknown shape {shape!r}; expected one of {SHAPES}")
    colour = str(entry.get("colour", entry.get("color", "")))
    label = str(entry.get("label", f"{colour} {shape}".strip()))
    return SceneObject(object_id=fid, label=label, shape=shape, colour=colour,
                       position=_vec3(entry, "position", fid), size=_vec3(entry, "size", fid),
                       yaw=float(entry.get("yaw", 0.0)), confidence=1.0, is_fixture=True)


def fixtures_from_data(data: Any) -> tuple[SceneObject, ...]:
    if data is None:
        return ()
    if isinstance(data, Mapping) and "fixtures" in data:
        data = data["fixtures"]
    out: list[SceneObject] = []
    if isinstance(data, Mapping):
        for fid, entry in data.items():
            if not isinstance(entry, Mapping):
                raise ConfigError(f"fixture {fid}: expected a mapping, got {entry!r}")
            out.append(fixture_from_mapping(str(fid), entry))
    elif isinstance(data, list):
        for entry in data:
            if not isinstance(entry, Mapping) or "id" not in entry:
                raise ConfigError(f"fixture entries need an 'id', got {entry!r}")
            out.append(fixture_from_mapping(str(entry["id"]), entry))
    else:
        raise ConfigError(f"fixtures must be a list or mapping, got {type(data).__name__}")
    return tuple(out)


def load_fixtures(path: str | Path | None) -> tuple[SceneObject, ...]:
    """Fixtures from a YAML file; an empty path means no fixtures."""
    if not path:
        return ()
    import yaml

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"fixtures file not found: {p}")
    return fixtures_from_data(yaml.safe_load(p.read_text()))

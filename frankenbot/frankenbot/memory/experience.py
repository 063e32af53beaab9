"""Anomaly experience for tier 2: past recoveries turned into a prior over candidate repairs.

The local expert ranks candidate repairs whose keys name the action and the call, e.g.
``retry:pick(obj=red_block)``, ``insert:detect(obj=red_block)``, ``goto:start``, ``replan``.
Memory stores what was tried per (anomaly kind, primitive) with the outcome. ``experience_prior``
maps a new situation to bonuses for candidate keys: a recovery that worked before gets a positive
bonus, one that failed a negative one, scaled by how often it was seen (full weight from
``FULL_WEIGHT_TRIES`` tries). Object ids are generalised: a stored
``insert:detect(obj=green_block)`` suggests ``insert:detect(obj=X)`` for the objects of the new
situation's failed call, so experience with one block helps with another.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from frankenbot.memory.store import MemoryStore

FULL_WEIGHT_TRIES = 3
_CALL_RE = re.compile(r"^(?P<name>[A-Za-z_]\w*)\((?P<args>.*)\)$")
_NUMBER_RE = re.compile(r"^-?\d+(\.\d+)?$")


def _value(x: Any) -> str:
    return str(getattr(x, "value", x))


def _objects_of(situation: Any) -> list[str]:
    call = getattr(situation, "failed_call", None)
    objs = [v for v in (getattr(call, "args", {}) or {}).values() if isinstance(v, str)]
    objs += [o for o in getattr(situation, "objects", ()) if isinstance(o, str)]
    return list(dict.fromkeys(objs))


def candidate_keys(action: str, situation: Any) -> list[str]:
    """Keys of the new situation's candidates that a stored recovery ``action`` stands for."""
    call = getattr(situation, "failed_call", None)
    kind, _, rest = action.partition(":")
    if kind in ("retry", "skip"):
        return [f"{kind}:{call.text()}"] if call is not None else []
    if kind == "insert":
        m = _CALL_RE.match(rest)
        if m is None:
            return [action]
        args = [a.strip().split("=", 1) for a in m["args"].split(",") if "=" in a]
        obj_args = [i for i, (_, v) in enumerate(args) if not _NUMBER_RE.match(v.strip())]
        if len(obj_args) != 1:
            return [action]
        out = []
        for obj in _objects_of(situation):
            new = [(k, obj if i == obj_args[0] else v) for i, (k, v) in enumerate(args)]
            out.append(f"insert:{m['name']}({', '.join(f'{k}={v}' for k, v in new)})")
        return out or [action]
    if kind in ("goto", "replan", "abort"):
        return [action]
    return []  # program handlers ("handler x") and "stop arm" are not tier-2 candidates


def experience_prior(store: MemoryStore, weight: float = 1.0
                     ) -> Callable[[Any], dict[str, float]]:
    """A ``Situation -> {candidate key: bonus}`` function for the tier-2 escalation policy."""

    def prior(situation: Any) -> dict[str, float]:
        kind = _value(situation.kind)
        call = getattr(situation, "failed_call", None)
        primitive = getattr(call, "name", "") or ""
        out: dict[str, float] = {}
        for e in _relevant(store.experience_for(kind, primitive, limit=20), primitive):
            confidence = min(1.0, e.tries / FULL_WEIGHT_TRIES)
            bonus = weight * (2.0 * e.success_rate - 1.0) * confidence
            for key in candidate_keys(e.action, situation):
                out.setdefault(key, bonus)  # entries come best-matching first
        return out

    return prior


def _relevant(entries: Iterable[Any], primitive: str) -> list[Any]:
    """Same primitive (or unknown on either side) only: other primitives' recoveries differ."""
    return [e for e in entries if not primitive or not e.primitive or e.primitive == primitive]

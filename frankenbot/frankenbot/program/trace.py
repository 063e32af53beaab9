"""The interpreter's trace: what ran, when, and how it ended, node by node.

Entries feed the ``/frankenbot/tree_state`` topic (one per change), the ExecuteProgram result
(as JSON) and memory's episode record. Paths are the stable node paths of ``tree.iter_nodes``;
inside a skill call the skill's own path is appended to the call's (``main/3/put_twice/0``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Iterable

from frankenbot.common import NodeStatus

TRACE_EVENTS = ("enter", "leave", "preempt", "handler", "escalate", "jump")


@dataclass(frozen=True)
class TraceEntry:
    """One trace event. ``node`` is the node's canonical one-line text; ``t`` the clock time."""

    t: float
    path: str
    node: str
    line: int
    event: str  # one of TRACE_EVENTS
    status: NodeStatus
    detail: str = ""

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["status"] = self.status.value
        return d


def trace_to_json(trace: Iterable[TraceEntry]) -> str:
    """The trace as a JSON array of objects (status as its string value)."""
    return json.dumps([e.to_dict() for e in trace])


def trace_from_json(text: str) -> tuple[TraceEntry, ...]:
    """Inverse of ``trace_to_json`` (for tools that read stored episodes)."""
    out = []
    for d in json.loads(text):
        out.append(TraceEntry(float(d["t"]), str(d["path"]), str(d["node"]), int(d["line"]),
                              str(d["event"]), NodeStatus(d["status"]), str(d.get("detail", ""))))
    return tuple(out)

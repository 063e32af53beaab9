"""Live progress lines for the terminal: phase, active tree node, anomaly events, VLM calls.

Pure formatting over plain values, so it serves the task-status topic, the run_task action's
feedback and tests alike. Only changes are printed, one line each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable


@dataclass(frozen=True)
class EventView:
    event_id: str  # the same event is reported again when its outcome changes
    kind: str
    tier: int
    action: str
    outcome: str
    latency: float
    detail: str = ""

    @classmethod
    def of(cls, msg: object) -> "EventView":
        """From anything with AnomalyEvent's fields (the ROS message, a record)."""
        return cls(*(getattr(msg, f) for f in ("event_id", "kind", "tier", "action", "outcome",
                                                 "latency", "detail")))


TIER_NAMES = {0: "unhandled", 1: "tier 1 (coded)", 2: "tier 2 (local expert)",
              3: "tier 3 (VLM replan)"}


def format_event(e: EventView) -> str:
    latency = f", {e.latency * 1000:.0f} ms to recovery command" if e.latency >= 0 else ""
    detail = f" - {e.detail}" if e.detail else ""
    return (f"  ! anomaly {e.kind}{detail}: {TIER_NAMES.get(e.tier, f'tier {e.tier}')} "
            f"-> {e.action or 'no action'} [{e.outcome}{latency}]")


@dataclass
class ProgressPrinter:
    """Remembers what it printed; ``update`` prints what changed."""

    write: Callable[[str], None] = print
    _phase: str = ""
    _node: str = ""
    _vlm_calls: int = -1
    _event_outcomes: dict[str, str] = field(default_factory=dict)  # event id -> printed outcome
    lines: list[str] = field(default_factory=list)

    def _emit(self, line: str) -> None:
        self.lines.append(line)
        self.write(line)

    def update(self, *, phase: str = "", active_path: str = "", active_node: str = "",
               active_line: int = 0, vlm_calls: int | None = None,
               events: Iterable[EventView] = ()) -> None:
        if phase and phase != self._phase:
            self._phase = phase
            self._emit(f"[phase] {phase}")
        if active_node and active_node != self._node:
            self._node = active_node
            where = f"line {active_line}, " if active_line else ""
            self._emit(f"  > {active_node}   ({where}{active_path})")
        if vlm_calls is not None and vlm_calls != self._vlm_calls:
            if self._vlm_calls >= 0 or vlm_calls > 0:
                self._emit(f"  VLM calls so far: {vlm_calls}")
            self._vlm_calls = vlm_calls
        for e in events:
            if self._event_outcomes.get(e.event_id) != e.outcome:
                self._event_outcomes[e.event_id] = e.outcome
                self._emit(format_event(e))

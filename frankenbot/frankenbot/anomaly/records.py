"""AnomalyEvent records: what was detected, which tier acted, when, and how it ended.

The executor opens a record when a monitor fires or a primitive fails, fills in the tier, the
action and the recovery-command time when the escalation is decided (or the program's handler
starts), and settles the outcome at the end: a record followed by another anomaly on the same
node counts as escalated, the rest as recovered when the task then succeeded and failed when it
did not. ``nodes/executor_node.py`` turns records into ``frankenbot_interfaces/AnomalyEvent``.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

from frankenbot.common import AnomalyClass, AnomalyKind, RecoveryOutcome, Tier


@dataclass(frozen=True)
class AnomalyRecord:
    event_id: str
    kind: AnomalyKind
    anomaly_class: AnomalyClass
    source: str  # program monitor name or builtin:<name> or primitive:<name>
    node_path: str
    detail: str
    onset: float  # first observed (monitor loop) / failure returned (primitive)
    detected_at: float
    tier: Tier = Tier.NONE
    action: str = ""
    decided_at: float = 0.0  # when the tier chose the repair (0: not escalated)
    recovery_commanded_at: float = 0.0  # first primitive of the recovery started; 0 when none
    outcome: RecoveryOutcome = RecoveryOutcome.PENDING

    @property
    def latency(self) -> float:
        """Seconds from detection to the recovery command, -1 when none was commanded."""
        if self.recovery_commanded_at <= 0.0:
            return -1.0
        return self.recovery_commanded_at - self.detected_at

    @property
    def onset_latency(self) -> float:
        """Seconds from the first observation of the anomaly to the recovery command."""
        if self.recovery_commanded_at <= 0.0:
            return -1.0
        return self.recovery_commanded_at - self.onset

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        d.update(kind=self.kind.value, anomaly_class=self.anomaly_class.value,
                 tier=int(self.tier), outcome=self.outcome.value, latency=self.latency)
        return d


class AnomalyLog:
    """Thread-safe list of records for one task (the monitor loop and control thread both write)."""

    def __init__(self, on_change: Callable[[AnomalyRecord], None] | None = None) -> None:
        self._lock = threading.Lock()  # guards _records
        self._records: list[AnomalyRecord] = []
        self._on_change = on_change

    def open(self, kind: AnomalyKind, anomaly_class: AnomalyClass, source: str, node_path: str,
             detail: str, onset: float, detected_at: float) -> AnomalyRecord:
        with self._lock:
            rec = AnomalyRecord(str(len(self._records) + 1), kind, anomaly_class, source,
                                node_path, detail, onset, detected_at)
            self._records.append(rec)
        return rec

    def update(self, event_id: str, **changes: Any) -> AnomalyRecord:
        with self._lock:
            i = int(event_id) - 1
            rec = replace(self._records[i], **changes)
            self._records[i] = rec
        if self._on_change is not None:
            self._on_change(rec)
        return rec

    def get(self, event_id: str) -> AnomalyRecord:
        with self._lock:
            return self._records[int(event_id) - 1]

    def last_open(self) -> AnomalyRecord | None:
        """The latest record whose recovery has not been commanded yet."""
        with self._lock:
            for rec in reversed(self._records):
                if rec.recovery_commanded_at <= 0.0 and rec.outcome == RecoveryOutcome.PENDING:
                    return rec
        return None

    def records(self) -> tuple[AnomalyRecord, ...]:
        with self._lock:
            return tuple(self._records)

    def settle(self, success: bool) -> tuple[AnomalyRecord, ...]:
        """Give every pending record its final outcome (see the module docstring)."""
        with self._lock:
            recs = self._records
            for i, rec in enumerate(recs):
                if rec.outcome != RecoveryOutcome.PENDING:
                    continue
                later = any(r.node_path == rec.node_path and r.node_path
                            for r in recs[i + 1:])
                if rec.recovery_commanded_at <= 0.0:
                    outcome = RecoveryOutcome.FAILED
                elif later:
                    outcome = RecoveryOutcome.ESCALATED
                else:
                    outcome = RecoveryOutcome.RECOVERED if success else RecoveryOutcome.FAILED
                recs[i] = replace(rec, outcome=outcome)
            return tuple(recs)

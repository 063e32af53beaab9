"""AnomalyRecord -> frankenbot_interfaces/AnomalyEvent, for the executor node and recordings.

Message types are imported inside the function, so importing this module needs no ROS install.
"""

from __future__ import annotations

from typing import Any, Callable

from frankenbot.anomaly.records import AnomalyRecord


def event_to_msg(r: AnomalyRecord, *, task_id: str, to_time: Callable[[float], Any]) -> Any:
    """The event message of one record; ``to_time`` maps the record's clock (seconds) to a
    builtin_interfaces/Time. The header is left for the publisher to stamp."""
    from frankenbot_interfaces.msg import AnomalyEvent

    return AnomalyEvent(task_id=task_id, event_id=r.event_id, kind=r.kind.value,
                        anomaly_class=r.anomaly_class.value, tier=int(r.tier), source=r.source,
                        node_path=r.node_path, detail=r.detail,
                        detected_at=to_time(r.detected_at),
                        recovery_commanded_at=to_time(r.recovery_commanded_at),
                        latency=float(r.latency), action=r.action, outcome=r.outcome.value)

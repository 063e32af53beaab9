"""Memory's records <-> frankenbot_interfaces messages (Skill, AnomalyEvent, RecordEpisode).

The one place where the memory node and the planner node's memory ports translate between the
store's dataclasses and the service messages, so both sides of a service agree field by field.
"""

from __future__ import annotations

from typing import Any

from frankenbot.memory.records import EpisodeAnomaly, EpisodeRecord, SkillRecord
from frankenbot.program.catalog import Param, ParamType, Signature, SignatureKind
from frankenbot_interfaces.msg import AnomalyEvent, Skill
from frankenbot_interfaces.srv import RecordEpisode


def skill_msg(s: SkillRecord) -> Skill:
    return Skill(name=s.name, param_names=list(s.param_names), param_types=list(s.param_types),
                 description=s.description, body=s.body, uses=s.uses, successes=s.successes,
                 origin=s.origin)


def signature_from_msg(msg: Any) -> Signature | None:
    """A Skill message as the catalog entry the planner lists (None when a type is unknown)."""
    try:
        params = tuple(Param(n, ParamType(t)) for n, t in
                       zip(msg.param_names, msg.param_types, strict=True))
    except ValueError:
        return None
    return Signature(msg.name, SignatureKind.SKILL, params, msg.description, msg.body)


def anomaly_from_msg(e: Any) -> EpisodeAnomaly:
    """AnomalyEvent message -> EpisodeAnomaly (the primitive is derived from node_path later)."""
    return EpisodeAnomaly(kind=e.kind, tier=int(e.tier), action=e.action, outcome=e.outcome,
                          node_path=e.node_path, source=e.source, detail=e.detail,
                          anomaly_class=e.anomaly_class, latency=float(e.latency))


def anomaly_msg(a: EpisodeAnomaly, task_id: str = "") -> AnomalyEvent:
    """EpisodeAnomaly -> AnomalyEvent message (the fields memory keeps; no timestamps)."""
    return AnomalyEvent(task_id=task_id, kind=a.kind, tier=int(a.tier), action=a.action,
                        outcome=a.outcome, node_path=a.node_path, source=a.source,
                        detail=a.detail, anomaly_class=a.anomaly_class,
                        latency=float(a.latency))


def record_request(ep: EpisodeRecord) -> RecordEpisode.Request:
    return RecordEpisode.Request(
        task_id=ep.task_id, instruction=ep.instruction, program=ep.program, success=ep.success,
        outcome=ep.outcome, anomalies=[anomaly_msg(a, ep.task_id) for a in ep.anomalies],
        vlm_calls=ep.vlm_calls, repair_calls=ep.repair_calls, planning_time=ep.planning_time,
        execution_time=ep.execution_time, trace_json=ep.trace_json)


def episode_from_request(request: Any) -> EpisodeRecord:
    return EpisodeRecord(
        instruction=request.instruction, program=request.program,
        success=bool(request.success), outcome=request.outcome, task_id=request.task_id,
        anomalies=tuple(anomaly_from_msg(a) for a in request.anomalies),
        vlm_calls=int(request.vlm_calls), repair_calls=int(request.repair_calls),
        planning_time=float(request.planning_time),
        execution_time=float(request.execution_time),
        trace_json=request.trace_json or "[]")

"""Coded repairs: the tier-1 recoveries and the rule-only baseline for tier 2.

One table maps an anomaly kind to the repair an engineer would code for it. For the predictable
kinds (``TIER1_KINDS``: a dropped object, a failed grasp, an object nudged before the grasp, an
aborted motion, a camera hiccup) it is the tier-1 built-in recovery: regrasp, re-detect, retry,
wait for the camera. For every other kind the same table is the rule-only baseline that the local
expert is measured against. Choices come from the generated candidate list, so a rule can never
invent an edit outside it; a rule whose repair was already tried for the node falls back to replan.
"""

from __future__ import annotations

from typing import Sequence

from frankenbot.anomaly.candidates import NEEDS_HELD, Candidate, RepairAction, Situation
from frankenbot.common import AnomalyKind

# Kinds with a built-in coded recovery at tier 1 (no model call).
TIER1_KINDS = frozenset({
    AnomalyKind.GRASP_LOST,
    AnomalyKind.GRASP_FAILED,
    AnomalyKind.OBJECT_MOVED,
    AnomalyKind.MOTION_ABORTED,
    AnomalyKind.SCENE_STALE,
})


def _find(cands: Sequence[Candidate], action: RepairAction, call_name: str = "",
          obj: str = "") -> Candidate | None:
    for c in cands:
        if c.action != action:
            continue
        if call_name and (c.call is None or c.call.name != call_name):
            continue
        if obj and (c.call is None or c.call.args.get("obj") != obj):
            continue
        return c
    return None


def rule_choice(s: Situation, cands: Sequence[Candidate]) -> Candidate | None:
    """The coded repair for ``s`` among ``cands`` (None when the table has nothing to offer)."""
    call = s.failed_call
    obj = call.args.get("obj") if call is not None else None
    obj = obj if isinstance(obj, str) else ""
    moved = s.objects[0] if s.objects else obj
    k = s.kind
    choice: Candidate | None = None
    if k == AnomalyKind.ESTOP:
        return _find(cands, RepairAction.ABORT)
    if k == AnomalyKind.GRASP_LOST:
        if s.held_object is not None and s.held_object == obj:  # already regrasped: stale
            choice = _find(cands, RepairAction.RETRY)
        elif call is not None and call.name in NEEDS_HELD | {"push_to"}:
            choice = _find(cands, RepairAction.INSERT, "pick", obj)
        else:
            choice = _find(cands, RepairAction.RETRY)
    elif k == AnomalyKind.GRASP_FAILED or k == AnomalyKind.OBJECT_MOVED:
        choice = _find(cands, RepairAction.INSERT, "detect", moved)
    elif k in (AnomalyKind.MOTION_ABORTED, AnomalyKind.STALL, AnomalyKind.TIMEOUT,
               AnomalyKind.PRIMITIVE_FAILED, AnomalyKind.PROGRAM_MONITOR):
        choice = _find(cands, RepairAction.RETRY)
        if k == AnomalyKind.MOTION_ABORTED and call is not None \
                and f"retry:{call.text()}" in s.tried:
            # a plain retry already failed here: start the motion again from home
            choice = _find(cands, RepairAction.INSERT, "home") or choice
    elif k in (AnomalyKind.SCENE_STALE, AnomalyKind.TARGET_OCCUPIED, AnomalyKind.FIXTURE_STUCK):
        choice = _find(cands, RepairAction.INSERT, "wait")
    elif k == AnomalyKind.PLACE_FAILED:
        choice = _find(cands, RepairAction.GOTO) or _find(cands, RepairAction.RETRY)
    elif k == AnomalyKind.OBJECT_MISSING:
        # search the one closed place first (the candidate exists only while not yet tried),
        # then hand over to the planner, which stops cleanly if the object is still gone
        choice = _find(cands, RepairAction.INSERT, "open_drawer")
    elif k == AnomalyKind.MOTION_REJECTED:
        choice = _find(cands, RepairAction.REPLAN)
    return choice or _find(cands, RepairAction.REPLAN)


def already_done(s: Situation, cands: Sequence[Candidate]) -> Candidate | None:
    """A failed pick whose object is already in the hand (its lift cut short, or a replanned
    program starting again from its first pick): run it again, which only finishes the lift
    (``pick`` of the held object lifts it to the carry height); skipping it would leave the
    object held low, the pick's goal half met."""
    call = s.failed_call
    if call is not None and call.name == "pick" and s.held_object is not None \
            and call.args.get("obj") == s.held_object:
        if f"retry:{call.text()}" not in s.tried:
            return _find(cands, RepairAction.RETRY) or _find(cands, RepairAction.SKIP)
        return _find(cands, RepairAction.SKIP)
    return None


def tier1_choice(s: Situation, cands: Sequence[Candidate]) -> Candidate | None:
    """The built-in coded recovery, only for predictable kinds (and picks already done);
    never replan or abort here."""
    done = already_done(s, cands)
    if done is not None:
        return done
    if s.kind not in TIER1_KINDS:
        return None
    choice = rule_choice(s, cands)
    if choice is None or choice.action in (RepairAction.REPLAN, RepairAction.ABORT):
        return None
    return choice

"""The interpreter's ``Escalator``, backed by the anomaly package's three-tier policy.

It translates the interpreter's ``EscalationContext`` (program tree, node, event, failure) into
an anomaly ``Situation`` (adding what the robot holds and sees right now), asks the
``EscalationPolicy``, records tier / action / decision time on the task's AnomalyLog, and
turns the chosen repair back into one of the interpreter's ``Decision`` types. The
recovery-command time itself is stamped by the executor when the first primitive of the recovery
starts. A tier-3 program is parsed and validated again here; an invalid one aborts instead.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Iterable

from frankenbot.anomaly.candidates import Call as RepairCall
from frankenbot.anomaly.candidates import RepairAction, Situation
from frankenbot.anomaly.escalation import EscalationPolicy, Resolution
from frankenbot.anomaly.monitors import class_of
from frankenbot.anomaly.records import AnomalyLog, AnomalyRecord
from frankenbot.common import AnomalyKind, FailureCode, Tier, kind_for_failure
from frankenbot.program.catalog import Catalog, ParamType
from frankenbot.program.check import check_text
from frankenbot.program.escalation import (
    Abort,
    Decision,
    EscalationContext,
    GotoLabel,
    InsertCall,
    ReplaceProgram,
    RetryNode,
    SkipNode,
)
from frankenbot.program.tree import Arg, Call, Ident
from frankenbot.state import WorldSnapshot

FIXTURE_PRIMITIVES = frozenset({"open_drawer", "close_drawer", "open_door", "close_door",
                                "press", "toggle", "turn"})


def to_repair_call(call: Call | None) -> RepairCall | None:
    if call is None:
        return None
    args: dict[str, str | float] = {}
    for a in call.args:
        v = a.value
        args[a.name] = v.name if isinstance(v, Ident) else v
    return RepairCall(call.name, args)


def to_tree_call(call: RepairCall, catalog: Catalog) -> Call:
    sig = catalog.get(call.name)
    args = []
    for name, v in call.args.items():
        p = sig.param(name) if sig is not None else None
        if isinstance(v, str) and (p is None or p.type == ParamType.OBJECT):
            args.append(Arg(name, Ident(v)))
        elif isinstance(v, str):
            args.append(Arg(name, v))
        else:
            args.append(Arg(name, float(v)))
    return Call(call.name, tuple(args))


class TieredEscalator:
    """Implements ``frankenbot.program.escalation.Escalator`` for one task."""

    def __init__(self, policy: EscalationPolicy, log: AnomalyLog, *,
                 snapshot: Callable[[], WorldSnapshot], catalog: Catalog, task: str = "",
                 object_ids: Callable[[], Iterable[str]] | None = None,
                 on_decided: Callable[[AnomalyRecord, bool], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self.log = log
        self._snapshot = snapshot
        self._catalog = catalog
        self.task = task
        self._object_ids = object_ids
        self._on_decided = on_decided
        self._clock = clock
        self._lock = threading.Lock()  # guards _pending and _tried
        self._pending: dict[str, tuple[str, tuple[str, ...]]] = {}  # event name -> (id, objects)
        self._tried: dict[str, list[str]] = {}  # node path -> repair keys used there
        self.resolutions: list[Resolution] = []
        self.replaced = 0
        self.last_program_text = ""

    def expect(self, event_name: str, record: AnomalyRecord, objects: tuple[str, ...]) -> None:
        """The executor delivered a firing for ``event_name``; an escalation for it follows."""
        with self._lock:
            self._pending[event_name] = (record.event_id, objects)

    def escalate(self, ctx: EscalationContext) -> Decision:
        now = self._clock()
        kind = ctx.event.kind
        if ctx.failure is not None and not ctx.failure.ok and kind in (
                AnomalyKind.PRIMITIVE_FAILED, AnomalyKind.PROGRAM_MONITOR):
            kind = kind_for_failure(ctx.failure.code)
        if ctx.failure is not None and ctx.failure.code == FailureCode.BLOCKED \
                and ctx.call is not None and ctx.call.name in FIXTURE_PRIMITIVES:
            kind = AnomalyKind.FIXTURE_STUCK  # a drawer that does not slide, not a full target
        with self._lock:
            pending = self._pending.pop(ctx.event.name, None)
            tried = tuple(self._tried.get(ctx.node_path, ()))
        rec: AnomalyRecord | None = None
        objects: tuple[str, ...] = ()
        if pending is not None:
            rec = self.log.get(pending[0])
            objects = pending[1]
            if rec.recovery_commanded_at > 0.0 or rec.decided_at > 0.0:  # handler ran: new one
                rec = None
        if not objects and ctx.failure is not None:
            named = ctx.failure.data.get("objects")  # what a primitive's failure names
            if isinstance(named, (tuple, list)):
                objects = tuple(str(o) for o in named)
        if rec is None:
            detail = ctx.event.detail or (ctx.failure.detail if ctx.failure else "")
            onset = ctx.event.detected_at or now
            name = ctx.event.name
            source = name if not ctx.event.builtin or ":" in name else f"builtin:{name}"
            rec = self.log.open(kind, class_of(kind), source, ctx.node_path, detail, onset, now)
        snap = self._snapshot()
        situation = Situation(
            kind=kind, anomaly_class=class_of(kind), detail=rec.detail,
            task=self.task or ctx.program.description, failed_call=to_repair_call(ctx.call),
            node_path=ctx.node_path, labels=ctx.labels or ctx.program.labels(),
            held_object=snap.robot.held_object, visible=snap.scene.ids(), objects=objects,
            tried=tried)
        res = self.policy.decide(situation, allow_tier1=not ctx.handler_ran)
        decision = self._decision(res)
        if isinstance(decision, Abort) and res.action != RepairAction.ABORT:
            res = Resolution(res.tier, RepairAction.ABORT, None, "", decision.reason,
                             res.confidence, res.vlm_calls, res.decided_at, res.tiers_tried)
        self.resolutions.append(res)
        rec = self.log.update(rec.event_id, tier=res.tier, action=res.label,
                              decided_at=res.decided_at)
        if self._on_decided is not None:
            self._on_decided(rec, isinstance(decision, Abort))
        if res.candidate is not None:
            with self._lock:
                self._tried.setdefault(ctx.node_path, []).append(res.candidate.key)
        return decision

    def _decision(self, res: Resolution) -> Decision:
        a = res.action
        if a == RepairAction.RETRY:
            return RetryNode()
        if a == RepairAction.GOTO and res.candidate is not None:
            return GotoLabel(res.candidate.label)
        if a == RepairAction.INSERT and res.candidate is not None and res.candidate.call:
            return InsertCall(to_tree_call(res.candidate.call, self._catalog))
        if a == RepairAction.SKIP:
            return SkipNode()
        if a == RepairAction.REPLAN and res.program_text:
            ids = list(self._object_ids()) if self._object_ids is not None else None
            checked = check_text(res.program_text, self._catalog, ids)
            if not checked.ok or checked.program is None:
                errs = "; ".join(d.message for d in checked.diagnostics[:3])
                return Abort(f"replanned program is invalid: {errs}")
            self.replaced += 1
            self.last_program_text = res.program_text
            return ReplaceProgram(checked.program)
        reason = res.reason or "no tier could repair the anomaly"
        return Abort(f"tier {int(res.tier)}: {reason}" if res.tier != Tier.NONE else reason)

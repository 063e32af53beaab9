"""What the interpreter tells the escalator, and the decisions it accepts back.

The interpreter owns the tree and its cursor; the anomaly package owns the tiers. When a monitor
fires without a program handler, a handler says ``then escalate``, a retry budget runs out, or a
primitive fails with nobody handling it, the interpreter builds an ``EscalationContext`` and calls
the injected ``Escalator``; the ``Decision`` it returns is applied as a tree edit at that node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol, Union

from frankenbot.common import AnomalyKind
from frankenbot.ports import PrimitiveResult
from frankenbot.program.trace import TraceEntry
from frankenbot.program.tree import Call, Program


@dataclass(frozen=True)
class MonitorEvent:
    """A firing delivered to the interpreter (from the monitor loop's thread, or made by the
    interpreter itself for a failed primitive). ``name`` is the program monitor's name when
    ``builtin`` is False."""

    name: str
    kind: AnomalyKind
    detail: str = ""
    detected_at: float = 0.0
    builtin: bool = False


@dataclass(frozen=True)
class RetryNode:
    """Run the failed/interrupted node again."""


@dataclass(frozen=True)
class GotoLabel:
    """Continue main from a label."""

    label: str


@dataclass(frozen=True)
class InsertCall:
    """Run this call first, then retry the node."""

    call: Call


@dataclass(frozen=True)
class SkipNode:
    """Carry on after the node as if it had succeeded."""


@dataclass(frozen=True)
class Abort:
    reason: str


@dataclass(frozen=True)
class ReplaceProgram:
    """Swap in a new (validated) program and run its main from the start."""

    program: Program


Decision = Union[RetryNode, GotoLabel, InsertCall, SkipNode, Abort, ReplaceProgram]


@dataclass(frozen=True)
class EscalationContext:
    """Everything a higher tier needs to choose a tree edit.

    ``call`` is the node's call with skill parameters already replaced by object ids (None when
    the event came between nodes); ``handler_ran`` tells the policy that tier 1 (the program's
    own handler) already had its turn; ``budgets_used`` counts goto/retry/handler/escalation use.
    """

    program: Program
    node_path: str
    call: Call | None
    event: MonitorEvent
    trace_tail: tuple[TraceEntry, ...] = ()
    budgets_used: Mapping[str, int] = field(default_factory=dict)
    failure: PrimitiveResult | None = None
    handler_ran: bool = False
    labels: tuple[str, ...] = ()


class Escalator(Protocol):
    """Tier 2/3 behind one call (``frankenbot.anomaly`` implements it; tests use fakes)."""

    def escalate(self, ctx: EscalationContext) -> Decision:
        ...

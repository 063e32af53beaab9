"""Anomaly experience from memory as a prior for tier 2 (optional input).

Memory aggregates past recoveries per (anomaly kind, primitive, action) with how often each was
tried and how often it recovered (``MemoryStore.experience_for``). Actions are the same keys the
candidates use (AnomalyEvent.action), so a past success can raise a candidate's score and a past
failure lower it. Tier 2 adds the prior to the LM's scores, and with the rule-only method an action
with a clearly better record than the rule's choice replaces it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from frankenbot.anomaly.candidates import Situation

TRUST_TRIES = 5  # tries after which a record counts fully


def experience_prior(store: Any, *, weight: float = 2.0, limit: int = 8
                     ) -> Callable[[Situation], Mapping[str, float]]:
    """A ``Situation -> {candidate key: bonus}`` function over a memory store.

    The bonus is ``weight * (success_rate - 0.5)``, scaled down for actions tried only a few
    times; only experience with the same primitive counts (other primitives' records differ in
    what their actions mean).
    """

    def prior(s: Situation) -> Mapping[str, float]:
        primitive = s.failed_call.name if s.failed_call is not None else ""
        out: dict[str, float] = {}
        for e in store.experience_for(s.kind.value, primitive, limit):
            if primitive and e.primitive != primitive:
                continue
            trust = min(e.tries, TRUST_TRIES) / TRUST_TRIES
            out[e.action] = out.get(e.action, 0.0) + weight * (e.success_rate - 0.5) * trust
        return out

    return prior

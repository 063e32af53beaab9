"""The escalation policy: tier 1 coded recovery -> tier 2 local expert -> tier 3 VLM replan.

Given one anomaly ``Situation`` it returns a ``Resolution``: which tier settled it and with what
edit. Budgets (from config) bound every tier: coded recoveries per (node, kind), tier-2 attempts
per task, replans per task. A tier that is out of budget, not ready, unsure, or whose choice is
"replan" hands over to the next one; when nothing is left the task is aborted with a reason that
says why. The e-stop is never "recovered": it always aborts.

Pure logic: the program interpreter, the planner and the model are reached through small
injected objects, so the same policy runs in-process, in the ROS node and in tests.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Protocol

from frankenbot import settings
from frankenbot.anomaly.candidates import Candidate, RepairAction, Situation, generate_candidates
from frankenbot.anomaly.local_expert import ExpertNotReady, LocalExpert
from frankenbot.anomaly.repair_rules import rule_choice, tier1_choice
from frankenbot.common import AnomalyKind, Tier
from frankenbot.settings import setting

TIER2_METHODS = ("rules", "lm", "rules+lm")
EXPERIENCE_OVERRIDE = 0.5  # prior bonus above which memory's record beats the rule table


@dataclass(frozen=True)
class Budgets:
    """Per-task limits of the escalation tiers (``frankenbot_executor`` parameters)."""

    handler_retries: int = setting(2, "tier-1 coded recoveries per (node, anomaly kind) and "
                                   "task", low=0, live=True)
    tier2_attempts: int = setting(2, "tier-2 (local expert) decisions per task", low=0,
                                  live=True)
    replans: int = setting(2, "tier-3 replans (counted VLM calls) per task", low=0, live=True)

    def __post_init__(self) -> None:
        settings.validate(self, "budget")


@dataclass(frozen=True)
class Tier2Settings:
    """How tier 2 ranks the candidate repairs (``frankenbot_executor`` parameters)."""

    tier2_method: str = setting("rules", "tier-2 ranking: rules | lm | rules+lm (chosen by the "
                                "tier-2 evaluation, see the anomaly benchmark)",
                                choices=TIER2_METHODS)
    confidence_threshold: float = setting(0.35, "below this softmax confidence the local "
                                          "expert escalates", low=0.0, high=1.0, live=True)
    rule_bonus: float = setting(1.0, "rules+lm: log-score bonus of the rule's choice",
                                live=True)

    def __post_init__(self) -> None:
        settings.validate(self, "tier 2")


@dataclass(frozen=True)
class ReplanResult:
    ok: bool
    program_text: str = ""
    message: str = ""
    vlm_calls: int = 0


class Replanner(Protocol):
    """Tier 3: the planner (in-process, or the /frankenbot/replan service)."""

    def replan(self, situation: Situation, failure_context: str) -> ReplanResult:
        ...


@dataclass(frozen=True)
class Resolution:
    """What the escalator decided for one anomaly."""

    tier: Tier
    action: RepairAction
    candidate: Candidate | None = None  # tiers 1 and 2
    program_text: str = ""  # tier 3 (a validated new program)
    reason: str = ""  # why this tier / why the abort
    confidence: float = 1.0
    vlm_calls: int = 0
    decided_at: float = 0.0  # clock time the recovery was commanded
    tiers_tried: tuple[Tier, ...] = ()

    @property
    def label(self) -> str:
        """The AnomalyEvent ``action`` text: "insert:pick(obj=red_block)", "replan", "abort"."""
        if self.candidate is not None:
            return self.candidate.key
        return self.action.value


def failure_context_text(s: Situation) -> str:
    """The compact failure context the planner receives for a replan."""
    return "\n".join(s.prompt_lines() + [f"Node: {s.node_path or '?'}"])


@dataclass
class _Counters:
    tier1: dict[tuple[str, AnomalyKind], int] = field(default_factory=dict)
    tier2: int = 0
    replans: int = 0
    vlm_calls: int = 0


class EscalationPolicy:
    """Decides tier by tier; one instance per task (it owns the task's budget counters)."""

    def __init__(self, *, budgets: Budgets = Budgets(), expert: LocalExpert | None = None,
                 tier2: Tier2Settings = Tier2Settings(), replanner: Replanner | None = None,
                 experience: Callable[[Situation], Mapping[str, float]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.budgets = budgets
        self.expert = expert
        self.tier2_method = tier2.tier2_method
        self.threshold = tier2.confidence_threshold
        self.rule_bonus = tier2.rule_bonus
        self.replanner = replanner
        self.experience = experience
        self._clock = clock
        self._lock = threading.Lock()  # guards the counters (decide may run on any thread)
        self._n = _Counters()

    @property
    def replans(self) -> int:
        return self._n.replans

    @property
    def vlm_calls(self) -> int:
        return self._n.vlm_calls

    def reset(self) -> None:
        with self._lock:
            self._n = _Counters()

    def decide(self, s: Situation, *, allow_tier1: bool = True) -> Resolution:
        """Walk the tiers for ``s``. ``allow_tier1`` is False when the program's own handler
        (tier 1) already ran and escalated."""
        tried: list[Tier] = []
        if s.kind == AnomalyKind.ESTOP:
            return self._done(Tier.NONE, RepairAction.ABORT, reason="e-stop engaged")
        cands = generate_candidates(s)
        reasons: list[str] = []
        with self._lock:
            if allow_tier1:
                key = (s.node_path, s.kind)
                used = self._n.tier1.get(key, 0)
                # tier 1 may repeat its recovery on a node (its budget bounds that); the
                # "already tried" filter is for tier 2's choice
                choice = tier1_choice(s, generate_candidates(replace(s, tried=())))
                if choice is not None and used < self.budgets.handler_retries:
                    self._n.tier1[key] = used + 1
                    return self._done(Tier.CODED, choice.action, choice,
                                      reason=f"coded recovery for {s.kind.value}", tried=(1,))
                if choice is not None:
                    reasons.append(f"tier 1 budget used ({used}/{self.budgets.handler_retries})")
                tried.append(Tier.CODED)
            tier2 = self._tier2(s, cands, reasons)
            tried.append(Tier.LOCAL_EXPERT)
            if tier2 is not None:
                return replace(tier2, tiers_tried=tuple(tried))
            if self.replanner is None:
                return self._done(Tier.LOCAL_EXPERT, RepairAction.ABORT,
                                  reason="; ".join(reasons + ["no planner for tier 3"]),
                                  tried=tuple(tried))
            if self._n.replans >= self.budgets.replans:
                return self._done(Tier.VLM_REPLAN, RepairAction.ABORT,
                                  reason="; ".join(reasons + [f"replan budget used "
                                                              f"({self.budgets.replans})"]),
                                  tried=tuple(tried))
            self._n.replans += 1
        # the replan call can take seconds: never hold the lock across it
        result = self.replanner.replan(s, failure_context_text(s))
        with self._lock:
            self._n.vlm_calls += result.vlm_calls
        tried.append(Tier.VLM_REPLAN)
        if result.ok and result.program_text.strip():
            return self._done(Tier.VLM_REPLAN, RepairAction.REPLAN, program=result.program_text,
                              reason="; ".join(reasons + [result.message or "replanned"]),
                              vlm=result.vlm_calls,
                              tried=tuple(tried))
        return self._done(Tier.VLM_REPLAN, RepairAction.ABORT,
                          reason="; ".join(reasons + [f"replan failed: "
                                                      f"{result.message or 'no program'}"]),
                          vlm=result.vlm_calls, tried=tuple(tried))

    def _tier2(self, s: Situation, cands: tuple[Candidate, ...],
               reasons: list[str]) -> Resolution | None:
        if self._n.tier2 >= self.budgets.tier2_attempts:
            reasons.append(f"tier 2 budget used ({self.budgets.tier2_attempts})")
            return None
        rule = rule_choice(s, cands)
        choice: Candidate | None
        confidence = 1.0
        if self.tier2_method == "rules":
            choice = rule
            if self.experience is not None:  # a clearly better record overrides the table
                prior = self.experience(s)
                best = max(cands, key=lambda c: prior.get(c.key, 0.0))
                if prior.get(best.key, 0.0) > max(EXPERIENCE_OVERRIDE,
                                                  prior.get(rule.key, 0.0) if rule else 0.0):
                    choice = best
        else:
            if self.expert is None or not self.expert.ready:
                reasons.append("local expert not ready")
                return None
            prior = dict(self.experience(s)) if self.experience is not None else {}
            if self.tier2_method == "rules+lm" and rule is not None:
                prior[rule.key] = prior.get(rule.key, 0.0) + self.rule_bonus
            try:
                ranking = self.expert.rank(s, cands, prior)
            except ExpertNotReady as e:
                reasons.append(str(e))
                return None
            choice, confidence = ranking.choice, ranking.confidence
            if confidence < self.threshold:
                reasons.append(f"local expert unsure ({confidence:.2f} < {self.threshold:.2f}, "
                               f"best {choice.key})")
                self._n.tier2 += 1
                return None
        self._n.tier2 += 1
        if choice is None or choice.action == RepairAction.REPLAN:
            reasons.append("tier 2 chose replan")
            return None
        return self._done(Tier.LOCAL_EXPERT, choice.action, choice, confidence=confidence,
                          reason=f"tier 2 ({self.tier2_method}) chose {choice.key}")

    def _done(self, tier: Tier, action: RepairAction, cand: Candidate | None = None, *,
              program: str = "", reason: str = "", confidence: float = 1.0, vlm: int = 0,
              tried: tuple[int, ...] = ()) -> Resolution:
        return Resolution(tier, action, cand, program, reason, confidence, vlm, self._clock(),
                          tuple(Tier(t) for t in tried))

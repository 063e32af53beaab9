"""The escalation policy: tiers in order, budgets, abstaining expert, replans counted."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from frankenbot.anomaly.candidates import Call, RepairAction, Situation
from frankenbot.anomaly.escalation import (
    Budgets,
    EscalationPolicy,
    ReplanResult,
    Tier2Settings,
)
from frankenbot.anomaly.local_expert import LocalExpert
from frankenbot.anomaly.monitors import class_of
from frankenbot.anomaly.tiny_model import build_tiny_loader
from frankenbot.common import AnomalyKind, Tier
from frankenbot.errors import ConfigError

PLACE = Call("place_in", {"obj": "red_block", "container": "green_bowl"})


def sit(kind: AnomalyKind, node: str = "main/2", **kw) -> Situation:
    return Situation(kind, class_of(kind), "d", "put the red block in the green bowl", PLACE,
                     node, ("start",), **kw)


@dataclass
class FakePlanner:
    ok: bool = True
    calls: list[str] = field(default_factory=list)

    def replan(self, situation: Situation, failure_context: str) -> ReplanResult:
        self.calls.append(failure_context)
        if not self.ok:
            return ReplanResult(False, "", "no plan found", 1)
        return ReplanResult(True, 'task "x" { main { exit success } }', "ok", 1)


def test_predictable_kind_is_settled_by_tier1_without_the_planner():
    planner = FakePlanner()
    pol = EscalationPolicy(replanner=planner)
    r = pol.decide(sit(AnomalyKind.GRASP_LOST))
    assert r.tier == Tier.CODED and r.label == "insert:pick(obj=red_block)"
    assert planner.calls == [] and pol.vlm_calls == 0


def test_tier1_budget_per_node_then_tier2_then_tier3():
    planner = FakePlanner()
    pol = EscalationPolicy(budgets=Budgets(handler_retries=1, tier2_attempts=1, replans=1),
                           replanner=planner)
    s = sit(AnomalyKind.MOTION_ABORTED)
    assert pol.decide(s).tier == Tier.CODED
    r2 = pol.decide(s)
    assert r2.tier == Tier.LOCAL_EXPERT and r2.action == RepairAction.RETRY
    assert r2.tiers_tried == (Tier.CODED, Tier.LOCAL_EXPERT)
    r3 = pol.decide(s)
    assert r3.tier == Tier.VLM_REPLAN and r3.action == RepairAction.REPLAN and r3.program_text
    assert pol.replans == 1 and pol.vlm_calls == 1
    r4 = pol.decide(s)
    assert r4.action == RepairAction.ABORT and "replan budget" in r4.reason
    # another node has its own tier-1 budget
    assert pol.decide(sit(AnomalyKind.MOTION_ABORTED, node="main/5")).tier == Tier.CODED


def test_unpredictable_goes_to_the_planner_and_a_failed_replan_aborts_cleanly():
    planner = FakePlanner(ok=False)
    pol = EscalationPolicy(replanner=planner)
    r = pol.decide(sit(AnomalyKind.OBJECT_MISSING))
    assert r.tier == Tier.VLM_REPLAN and r.action == RepairAction.ABORT
    assert "no plan found" in r.reason and pol.vlm_calls == 1
    assert "object missing" in planner.calls[0]


def test_estop_always_aborts_without_any_tier():
    planner = FakePlanner()
    r = EscalationPolicy(replanner=planner).decide(sit(AnomalyKind.ESTOP))
    assert r.action == RepairAction.ABORT and r.tier == Tier.NONE and planner.calls == []


def test_without_planner_unresolved_anomalies_abort_with_reason():
    r = EscalationPolicy().decide(sit(AnomalyKind.OBJECT_MISSING))
    assert r.action == RepairAction.ABORT and "no planner" in r.reason


def test_lm_tier_escalates_while_the_model_is_not_loaded():
    planner = FakePlanner()
    expert = LocalExpert(build_tiny_loader())  # never started
    pol = EscalationPolicy(expert=expert, tier2=Tier2Settings("lm"), replanner=planner)
    r = pol.decide(sit(AnomalyKind.TARGET_OCCUPIED))
    assert r.tier == Tier.VLM_REPLAN and r.action == RepairAction.REPLAN
    assert "not ready" in r.reason and len(planner.calls) == 1


def test_lm_tier_abstains_below_the_confidence_threshold():
    expert = LocalExpert(build_tiny_loader())
    expert.start()
    assert expert.wait_ready(60)
    planner = FakePlanner()
    unsure = EscalationPolicy(expert=expert, tier2=Tier2Settings("lm", 0.99),
                              replanner=planner)
    r = unsure.decide(sit(AnomalyKind.TARGET_OCCUPIED))
    assert r.tier == Tier.VLM_REPLAN and len(planner.calls) == 1
    sure = EscalationPolicy(expert=expert, tier2=Tier2Settings("rules+lm", 0.3, 20.0),
                            replanner=planner)
    r2 = sure.decide(sit(AnomalyKind.TARGET_OCCUPIED))
    assert r2.tier == Tier.LOCAL_EXPERT and r2.label == "insert:wait(seconds=1)"
    assert r2.confidence > 0.99


def test_program_handler_already_ran_skips_tier1():
    r = EscalationPolicy().decide(sit(AnomalyKind.GRASP_LOST), allow_tier1=False)
    assert r.tier == Tier.LOCAL_EXPERT


@pytest.mark.parametrize("kw", [{"tier2_method": "magic"}, {"confidence_threshold": 1.5}])
def test_bad_configuration_is_refused(kw):
    with pytest.raises(ConfigError):
        Tier2Settings(**kw)


def test_negative_budget_is_refused():
    with pytest.raises(ConfigError, match="replans"):
        Budgets(replans=-1)


@dataclass(frozen=True)
class Exp:
    kind: str
    primitive: str
    action: str
    tier: int
    tries: int
    recovered: int

    @property
    def success_rate(self) -> float:
        return self.recovered / self.tries


class Store:
    def __init__(self, rows):
        self.rows = rows

    def experience_for(self, kind, primitive="", limit=5):
        return tuple(r for r in self.rows if r.kind == kind)[:limit]


def test_memory_experience_can_override_the_rule_table():
    from frankenbot.memory.experience import experience_prior

    s = sit(AnomalyKind.TARGET_OCCUPIED)
    rows = [Exp("target_occupied", "place_in", "replan", 3, 6, 6),
            Exp("target_occupied", "place_in", "insert:wait(seconds=1)", 2, 6, 0),
            Exp("target_occupied", "pick", "skip:pick(obj=red_block)", 2, 9, 9)]
    prior = experience_prior(Store(rows))(s)
    assert prior["replan"] > 0.9 and prior["insert:wait(seconds=1)"] < -0.9
    assert "skip:pick(obj=red_block)" not in prior  # another primitive's experience
    planner = FakePlanner()
    plain = EscalationPolicy(replanner=planner).decide(s)
    assert plain.tier == Tier.LOCAL_EXPERT and plain.label == "insert:wait(seconds=1)"
    informed = EscalationPolicy(replanner=planner, experience=experience_prior(Store(rows)))
    r = informed.decide(s)
    assert r.tier == Tier.VLM_REPLAN  # memory says waiting never helped: straight to replan

"""The anomaly mix: seeded episode draws, class ratios, reports, paired ablations, workers."""

from __future__ import annotations

from collections import Counter

import pytest

from frankenbot.anomaly.candidates import Call, Situation, generate_candidates
from frankenbot.anomaly.repair_rules import rule_choice
from frankenbot.common import AnomalyClass, AnomalyKind
from frankenbot.errors import ConfigError
from frankenbot.eval.mix import (
    KIND_USE,
    FiredAnomaly,
    MixOutcome,
    _without_monitors,
    ablation_table,
    catalogue_class,
    draw_episodes,
    markdown_ablations,
    summarise,
)
from frankenbot.sim.anomalies import KINDS


def test_episode_list_is_deterministic_and_uses_evaluation_seeds_by_default():
    a = draw_episodes("natural", 30)
    assert a == draw_episodes("natural", 30)
    assert a[0].seed == 10000 and [e.index for e in a] == list(range(30))
    assert draw_episodes("stress", 30) != a
    assert draw_episodes("natural", 5, first_seed=10)[0].seed == 10


def test_draws_follow_the_mix_ratio_and_fit_the_family():
    for mix, expect in (("natural", (0.70, 0.20, 0.10)), ("stress", (0.5, 0.3, 0.2))):
        eps = draw_episodes(mix, 600)
        classes = Counter(KINDS[i.kind].anomaly_class for e in eps for i in e.injections)
        total = sum(classes.values())
        got = [classes[c] / total for c in (AnomalyClass.PREDICTABLE,
                                             AnomalyClass.SEMI_PREDICTABLE,
                                             AnomalyClass.UNPREDICTABLE)]
        for g, e in zip(got, expect, strict=True):
            assert abs(g - e) < 0.06, (mix, got)
        for e in eps:
            assert len(e.injections) <= 2
            assert len({i.kind for i in e.injections}) == len(e.injections)
            for i in e.injections:
                assert e.family in KIND_USE[i.kind].families
                assert i.phase in KIND_USE[i.kind].phases
                if e.family in ("open_drawer", "push_to_zone"):
                    assert i.phase in ("now", "moving")


def test_bad_mix_arguments_are_refused():
    with pytest.raises(ConfigError, match="unknown mix"):
        draw_episodes("chaos", 3)
    with pytest.raises(ConfigError, match="episodes"):
        draw_episodes("natural", 0)


def _o(i, success, ablation="full", kind="", status="success", reason="", tiers=(),
       latency=-1.0, tier=-1):
    fired = ()
    if kind:
        fired = (FiredAnomaly(kind, "transport", catalogue_class(kind), "", 1.0, tier,
                              latency),)
    impossible = bool(kind) and KINDS[kind].impossible
    handled = impossible and (success or "no longer reachable" in reason)
    return MixOutcome(i, 10000 + i, "put_in_bowl", ablation, "x", (kind,) if kind else (),
                      fired, success, status, reason, 0, 0, tiers, 1.0, impossible, handled)


def test_summary_counts_impossible_apart_and_reports_latency_per_tier():
    eps = [_o(0, True), _o(1, True, kind="drop_in_transport", tiers=(1,), tier=1, latency=0.2),
           _o(2, False, kind="occupy_target", status="escalated"),
           _o(3, False, kind="move_container_away", status="escalated",
              reason="the green bowl is no longer reachable"),
           _o(4, False, kind="move_container_away", status="success")]
    r = summarise(eps)
    assert r["possible_episodes"] == 3 and r["success_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert r["impossible_episodes"] == 2 and r["impossible_handled_rate"] == 0.5
    assert r["per_class"]["predictable"]["successes"] == 1
    assert r["per_class"]["impossible"]["n"] == 2
    assert r["per_kind"]["occupy_target"]["successes"] == 0
    assert r["latency_onset_to_recovery_s"]["1"]["median"] == 0.2
    assert r["vlm_calls_per_task"] == 0.0 and r["wilson_low"] < r["success_rate"]


def test_ablation_table_pairs_by_episode_with_exact_mcnemar():
    full = [_o(i, True) for i in range(10)]
    worse = [_o(i, i >= 7, ablation="no_tier1") for i in range(10)]
    rows = ablation_table(full + worse, ["full", "no_tier1"])
    r = rows["no_tier1"]
    assert r["only_full"] == 7 and r["only_ablation"] == 0
    assert r["mcnemar_p"] == pytest.approx(2 / 2 ** 7)
    assert r["delta_vs_full"] == pytest.approx(-0.7)
    assert rows["full"]["mcnemar_p"] == 1.0
    assert "| no_tier1 | 10 |" in markdown_ablations(rows, "t")


def test_without_monitors_keeps_main_and_drops_monitors():
    text = ('task "t" {\n  main {\n    pick(obj=red_block)\n    exit success\n  }\n'
            '  monitor m when not holding(red_block) during place_in {\n'
            '    pick(obj=red_block)\n    then resume\n  }\n}\n')
    out = _without_monitors(text)
    assert "monitor" not in out and "pick(obj=red_block)" in out


def test_a_missing_object_is_searched_for_in_the_drawer_before_replanning():
    s = Situation(AnomalyKind.OBJECT_MISSING, AnomalyClass.UNPREDICTABLE, "gone",
                  failed_call=Call("pick", {"obj": "red_block"}), visible=("drawer",),
                  objects=("red_block",))
    choice = rule_choice(s, generate_candidates(s))
    assert choice is not None and choice.key == "insert:open_drawer(drawer=drawer)"
    tried = Situation(**{**s.__dict__, "tried": (choice.key,)})
    assert rule_choice(tried, generate_candidates(tried)).key == "replan"
    no_drawer = Situation(**{**s.__dict__, "visible": ()})
    assert rule_choice(no_drawer, generate_candidates(no_drawer)).key == "replan"


def test_a_mix_of_named_families_draws_only_them():
    from frankenbot.eval.suite import resolve_families
    from frankenbot.sim.tasks import FIRST_WAVE_FAMILIES, TASK_FAMILIES

    first = resolve_families(["first_wave"])
    assert first == FIRST_WAVE_FAMILIES
    new = resolve_families(["new_world", "stack"])
    assert "stack" in new and not set(new) & (set(first) - {"stack"})
    assert set(first) | set(resolve_families(["new_world"])) == set(TASK_FAMILIES)
    with pytest.raises(ConfigError, match="unknown task family bogus.*groups: first_wave"):
        resolve_families(["bogus"])
    eps = draw_episodes("natural", 60, tasks={f: f for f in first})
    assert {e.family for e in eps} <= set(first)
    everything = draw_episodes("natural", 60, tasks={f: f for f in TASK_FAMILIES})
    assert [e.family for e in eps] != [e.family for e in everything]
    assert eps == draw_episodes("natural", 60, tasks={f: f for f in first})

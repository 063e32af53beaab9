"""The labelled tier-2 set is well-formed and the evaluation scores methods consistently."""

from __future__ import annotations

import json

import pytest

from frankenbot.anomaly.candidates import generate_candidates
from frankenbot.anomaly.local_expert import LocalExpert
from frankenbot.anomaly.tiny_model import build_tiny_loader
from frankenbot.errors import ConfigError
from frankenbot.eval.anomaly_bench import SITUATIONS
from frankenbot.eval.situations import (
    build_set,
    load_situations,
    situation_from_json,
    situation_to_json,
)
from frankenbot.eval.tier2_eval import evaluate, random_expected, report


@pytest.fixture(scope="module")
def items():
    return load_situations(SITUATIONS)


def test_set_has_at_least_40_situations_of_every_class(items):
    assert len(items) >= 40
    classes = {it.situation.anomaly_class.value for it in items}
    assert classes == {"predictable", "semi_predictable", "unpredictable"}
    assert len({it.sid for it in items}) == len(items)


def test_every_correct_repair_is_a_generated_candidate(items):
    for it in items:
        keys = {c.key for c in generate_candidates(it.situation)}
        assert set(it.correct) & keys, (it.sid, it.correct)


def test_generator_builds_well_formed_situations_from_sim_tasks():
    # the fixture is a frozen snapshot; the sim's sampler may evolve, the shape may not
    recs = build_set(per_family=1)
    assert len(recs) >= 20
    for r in recs:
        s = situation_from_json(r["situation"])
        assert set(r["correct"]) & {c.key for c in generate_candidates(s)}, r["id"]


def test_situations_round_trip_through_json(items):
    for it in items[:10]:
        assert situation_from_json(json.loads(json.dumps(
            situation_to_json(it.situation)))) == it.situation


def test_bad_records_are_refused_with_the_record_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"situations": [{"id": "x", "correct": ["retry"], "situation":
                                               {"kind": "nonsense", "anomaly_class": "p"}}]}))
    with pytest.raises(ConfigError, match="nonsense"):
        load_situations(bad)


def test_evaluation_scores_all_methods_and_random_matches_expectation(items):
    expert = LocalExpert(build_tiny_loader())
    expert.start()
    assert expert.wait_ready(60)
    scores = evaluate(items, expert, rule_bonus=50.0)
    assert set(scores) == {"rules", "random", "lm", "rules+lm"}
    for sc in scores.values():
        assert sc.total == len(items)
        assert sum(n for _, n in sc.by_class.values()) == len(items)
    # a huge bonus on the rule's pick makes rules+lm agree with rules exactly
    assert scores["rules+lm"].correct == scores["rules"].correct
    assert 0.0 < random_expected(items) < 0.5
    text = report(scores, items)
    assert "rules" in text and "lm" in text and "random" in text

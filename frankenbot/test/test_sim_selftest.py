"""Scripted pick-and-place per object type and grip slip: the world is fit for manipulation."""

from __future__ import annotations

import json

import pytest

from frankenbot.cli import main as cli_main
from frankenbot.errors import SimError
from frankenbot.sim.selftest import (
    CASES,
    FIRST_WAVE_CASES,
    GRASP_CATEGORIES,
    NEW_WORLD_CASES,
    measure_slip,
    run_selftest,
    summary,
)


def test_each_object_type_succeeds_for_two_seeds():
    results = run_selftest(2, list(FIRST_WAVE_CASES))
    assert set(results) == set(FIRST_WAVE_CASES)
    for name, r in results.items():
        assert r.successes == r.attempts == 2, (name, r.failures)


def test_the_new_world_cases_cover_every_category_and_fixture_part():
    from frankenbot.sim.fixtures import KINDS

    assert {f"pick:{c}" for c in GRASP_CATEGORIES} <= set(CASES)
    parts = {p.suffix for k in KINDS.values() for p in k.parts
             if p.kind not in ("light", "burner")} | {"drawer"}
    worked = {c.split(":")[0] for c in NEW_WORLD_CASES}
    assert parts <= worked, parts - worked


@pytest.mark.slow
def test_every_new_world_case_succeeds_for_one_seed():
    results = run_selftest(1, list(NEW_WORLD_CASES), first_seed=3)
    failed = {n: r.failures for n, r in results.items() if r.successes != r.attempts}
    assert not failed, failed


def test_held_block_slips_less_than_a_centimetre_at_half_a_metre_per_second():
    result = measure_slip(seed=1, speed=0.5)
    assert result.peak_tcp_speed >= 0.5
    assert result.max_slip < 0.01, result


def test_selftest_rejects_unknown_types():
    with pytest.raises(SimError, match="valid: block"):
        run_selftest(1, ["teapot"])


def test_cli_selftest_json(capsys):
    assert cli_main(["sim", "selftest", "--seeds", "1", "--types", "block", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pass"] is True and out["types"]["block"]["successes"] == 1


def test_summary_fails_below_threshold():
    results = run_selftest(1, ["block"])
    results["block"].successes = 0
    assert summary(results)["pass"] is False

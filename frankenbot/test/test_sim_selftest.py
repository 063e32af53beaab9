"""Scripted pick-and-place per object type and grip slip: the world is fit for manipulation."""

from __future__ import annotations

import json

import pytest

from frankenbot.cli import main as cli_main
from frankenbot.errors import SimError
from frankenbot.sim.selftest import CASES, measure_slip, run_selftest, summary


def test_each_object_type_succeeds_for_two_seeds():
    results = run_selftest(2)
    assert set(results) == set(CASES)
    for name, r in results.items():
        assert r.successes == r.attempts == 2, (name, r.failures)


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

"""Fuzzing: arbitrary text never raises anything but ProgramSyntaxError, and nothing is slow.

The normal run is short; the 100k-input campaign is the slow test below (FRANKENBOT_FUZZ_N sets
its size) or ``python -m frankenbot.eval.fuzz --n 100000``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frankenbot.eval.fuzz import MAX_SECONDS, check_one, run_fuzz
from frankenbot.program import (
    ProgramSyntaxError,
    check_text,
    default_catalog,
    parse_program,
    parse_skills,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_raises_only_the_syntax_error(text):
    for parse in (parse_program, parse_skills):
        try:
            parse(text)
        except ProgramSyntaxError as e:
            assert e.line >= 0 and e.column >= 0 and e.message
    result = check_text(text, default_catalog(), ())
    assert result.program is not None or result.diagnostics[0].code == "syntax"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["task", '"t"', "{", "}", "main", "(", ")", "pick", "obj", "=",
                                 "x", ",", "if", "not", "holding", "monitor", "when", "then",
                                 "retry", "max", "2", "skill", ":", "object", "goto", "exit",
                                 "success", "#", "\n", "```"]), max_size=60).map(" ".join))
def test_token_soup_raises_only_the_syntax_error(text):
    parsed, problem = check_one(text)
    assert problem == ""


def test_a_short_mixed_campaign_finds_nothing():
    report = run_fuzz(1500, seed=7)
    assert report.failures == []
    assert report.max_seconds <= MAX_SECONDS
    assert set(report.by_kind) == {"random", "soup", "mutant", "deep", "big"}
    assert report.parsed > 0 and report.syntax_errors > 0


@pytest.mark.slow
def test_long_fuzz_campaign_finds_nothing():
    n = int(os.environ.get("FRANKENBOT_FUZZ_N", "10000"))
    report = run_fuzz(n, seed=11)
    print(report.summary())
    assert report.ok, report.failures[:3]

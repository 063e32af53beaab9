"""Wilson intervals and McNemar's exact test against known values."""

import pytest

from frankenbot.eval.stats import mcnemar_exact, wilson_interval


def test_wilson_interval_matches_reference_values():
    # 7/10 -> [0.3968, 0.8922] (Wilson 1927; as tabulated by Newcombe 1998)
    ci = wilson_interval(7, 10)
    assert ci.low == pytest.approx(0.3968, abs=1e-4)
    assert ci.high == pytest.approx(0.8922, abs=1e-4)


def test_wilson_interval_stays_inside_unit_range_at_the_extremes():
    assert wilson_interval(0, 5).low == 0.0 and 0.4 < wilson_interval(0, 5).high < 0.5
    assert wilson_interval(5, 5).high == 1.0 and 0.5 < wilson_interval(5, 5).low < 0.6
    assert (wilson_interval(0, 0).low, wilson_interval(0, 0).high) == (0.0, 1.0)


def test_wilson_interval_rejects_impossible_counts():
    with pytest.raises(ValueError):
        wilson_interval(6, 5)


def test_mcnemar_counts_only_discordant_pairs():
    a = [True] * 10 + [False] * 2 + [True] * 5
    b = [True] * 10 + [True] * 2 + [False] * 5
    r = mcnemar_exact(a, b)
    assert (r.only_a, r.only_b) == (5, 2)
    # two-sided binomial(7, 0.5) tail at k=2: 2 * (1 + 7 + 21) / 128
    assert r.p_value == pytest.approx(2 * 29 / 128)


def test_mcnemar_identical_runs_are_not_different():
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])

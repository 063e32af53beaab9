"""Statistics for the benchmark: Wilson score intervals and the exact McNemar test.

The paper reported success rates from 10 trials with no intervals; we report every rate with its
Wilson 95% interval and compare ablations per episode (paired) with McNemar's exact test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> Interval:
    """Wilson score interval for a binomial proportion (well behaved at 0 and n)."""
    if trials < 0 or not 0 <= successes <= max(trials, 0):
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return Interval(0.0, 1.0)
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class McNemarResult:
    only_a: int  # episodes A solved and B did not
    only_b: int
    p_value: float


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Two-sided exact McNemar test on paired outcomes (binomial test on discordant pairs)."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes need equal lengths, got {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = only_a + only_b
    if n == 0:
        return McNemarResult(0, 0, 1.0)
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return McNemarResult(only_a, only_b, min(1.0, 2.0 * tail))

"""The one place that names which scene seeds are for development and which for evaluation.

Development and tests use seeds below ``EVALUATION_FIRST_SEED``; benchmarks that produce the
numbers we report default to seeds from ``EVALUATION_FIRST_SEED`` on. A failure found on an
evaluation seed is fixed with a regression test on a development seed, so the evaluation seeds
never become data the code was fitted to.
"""

from __future__ import annotations

from frankenbot.errors import ConfigError

EVALUATION_FIRST_SEED = 10_000
DEVELOPMENT_SEEDS = range(0, EVALUATION_FIRST_SEED)


def evaluation_seeds(n: int, first: int = EVALUATION_FIRST_SEED) -> tuple[int, ...]:
    """``n`` consecutive evaluation seeds from ``first`` (itself an evaluation seed)."""
    if n < 1:
        raise ConfigError(f"need at least one seed, got {n}")
    if first < EVALUATION_FIRST_SEED:
        raise ConfigError(
            f"seed {first} is a development seed; evaluation seeds start at {EVALUATION_FIRST_SEED}"
        )
    return tuple(range(first, first + n))


def development_seeds(n: int, first: int = 0) -> tuple[int, ...]:
    """``n`` consecutive development seeds from ``first``, never reaching evaluation seeds."""
    if n < 1:
        raise ConfigError(f"need at least one seed, got {n}")
    if first < 0 or first + n > EVALUATION_FIRST_SEED:
        raise ConfigError(
            f"development seeds are 0..{EVALUATION_FIRST_SEED - 1}, "
            f"asked for {first}..{first + n - 1}"
        )
    return tuple(range(first, first + n))


def is_evaluation_seed(seed: int) -> bool:
    return seed >= EVALUATION_FIRST_SEED

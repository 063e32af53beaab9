"""Memory settings: where the database lives and the promotion/retrieval thresholds.

One frozen dataclass shared by the in-process API, the CLI and the node (whose parameters map onto
these fields one to one), with validation that names the bad value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from frankenbot.errors import ConfigError

DB_FILENAME = "memory.sqlite3"


def default_db_path() -> Path:
    """``<user data dir>/frankenbot/memory.sqlite3`` (e.g. ~/.local/share/frankenbot on Linux)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("frankenbot", appauthor=False)) / DB_FILENAME


@dataclass(frozen=True)
class MemoryConfig:
    """Thresholds and budgets; the defaults are what config/sim.yaml ships."""

    db_path: str = ""  # "" = default_db_path(); an SQLite file (kept for single robots)
    db_url: str = ""  # sqlite:///path | postgresql://user@host:port/db; "" = db_path
    robot_id: str = ""  # who records episodes and learns skills in a shared memory
    fixtures: str = ""  # comma-separated fixture ids of this robot's scene ("" = not checked)
    seed_dir: str = ""  # "" = the package's skills/ directory
    load_seeds: bool = True
    min_support: int = 3  # k: successful episodes that must contain a pattern
    min_success_rate: float = 0.8  # r: successes / episodes containing the pattern
    min_pattern_length: int = 2
    max_pattern_length: int = 4
    token_budget: int = 1200  # default budget of get_context
    max_exemplars: int = 3
    use_embeddings: bool = True  # False: lexical retrieval only (never loads a model)
    embedding_model_dir: str = ""  # "" = the packaged all-MiniLM-L6-v2

    def __post_init__(self) -> None:
        if self.min_support < 1:
            raise ConfigError(f"memory min_support must be >= 1, got {self.min_support}")
        if not (0.0 <= self.min_success_rate <= 1.0) or math.isnan(self.min_success_rate):
            raise ConfigError(
                f"memory min_success_rate must be in [0, 1], got {self.min_success_rate}")
        if self.min_pattern_length < 2:
            raise ConfigError(
                f"memory min_pattern_length must be >= 2, got {self.min_pattern_length}")
        if self.max_pattern_length < self.min_pattern_length:
            raise ConfigError(
                f"memory max_pattern_length ({self.max_pattern_length}) must be >="
                f" min_pattern_length ({self.min_pattern_length})")
        if self.token_budget < 1:
            raise ConfigError(f"memory token_budget must be >= 1, got {self.token_budget}")
        if self.max_exemplars < 0:
            raise ConfigError(f"memory max_exemplars must be >= 0, got {self.max_exemplars}")

        if self.db_url and self.db_path:
            raise ConfigError(f"memory db_url ({self.db_url!r}) and db_path ({self.db_path!r})"
                              " are both set; set one (db_url: sqlite:///path works too)")
        bad = [f for f in self.fixture_ids if not f.replace("_", "").isalnum()]
        if bad:
            raise ConfigError(f"memory fixtures must be comma-separated object ids, got {bad}")

    @property
    def resolved_db_path(self) -> Path:
        return Path(self.db_path).expanduser() if self.db_path else default_db_path()

    @property
    def resolved_db_url(self) -> str:
        """The database to open: ``db_url``, else ``sqlite:///`` + the resolved db_path."""
        return self.db_url or f"sqlite://{self.resolved_db_path}"

    @property
    def fixture_ids(self) -> tuple[str, ...]:
        return tuple(f.strip() for f in self.fixtures.split(",") if f.strip())

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "MemoryConfig":
        """Build from a parameter dict (unknown keys and wrong types are errors, not ignored)."""
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known:
                raise ConfigError(f"unknown memory setting {key!r}; known: {sorted(known)}")
            default = known[key].default
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ConfigError(f"memory {key} must be true/false, got {value!r}")
            elif isinstance(default, int):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ConfigError(f"memory {key} must be an integer, got {value!r}")
            elif isinstance(default, float):
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ConfigError(f"memory {key} must be a number, got {value!r}")
                value = float(value)
            elif not isinstance(value, str):
                raise ConfigError(f"memory {key} must be a string, got {value!r}")
            kwargs[key] = value
        return cls(**kwargs)

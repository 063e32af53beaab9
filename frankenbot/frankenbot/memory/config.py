"""Memory settings: where the database lives and the promotion/retrieval thresholds.

One settings schema (``frankenbot.settings``) shared by the in-process API, the CLI and the node
(whose parameters are these fields, declared with types and ranges from here), with validation
that names the bad value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frankenbot import settings
from frankenbot.errors import ConfigError
from frankenbot.settings import setting

DB_FILENAME = "memory.sqlite3"


def default_db_path() -> Path:
    """``<user data dir>/frankenbot/memory.sqlite3`` (e.g. ~/.local/share/frankenbot on Linux)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("frankenbot", appauthor=False)) / DB_FILENAME


@dataclass(frozen=True)
class MemoryConfig:
    """Thresholds and budgets; the defaults are what config/sim.yaml ships."""

    db_path: str = setting("", "SQLite file of the memory; empty = <user data dir>/frankenbot/"
                           "memory.sqlite3 (or db_url)")
    db_url: str = setting("", "database URL: sqlite:///path or postgresql://user@host:port/db "
                          "(a memory shared by a fleet); empty = db_path")
    robot_id: str = setting("", "this robot's name in a shared memory (who records episodes and "
                            "learns skills); empty = the node's namespace")
    fixtures: str = setting("", "comma-separated fixture ids of this robot's scene; skills "
                            "learnt with others are not offered (empty = not checked)")
    seed_dir: str = setting("", "directory of seed skill files (*.fb); empty = the package's "
                            "skills/")
    load_seeds: bool = setting(True, "load and validate the seed skills at start-up")
    min_support: int = setting(3, "k: successful episodes that must contain a call sequence to "
                               "promote it", low=1)
    min_success_rate: float = setting(0.8, "r: successes / episodes containing a sequence "
                                      "needed to promote it", low=0.0, high=1.0)
    min_pattern_length: int = setting(2, "shortest statement sequence considered for promotion",
                                      low=2)
    max_pattern_length: int = setting(4, "longest statement sequence considered for promotion",
                                      low=2)
    token_budget: int = setting(1200, "default token budget of get_context (estimated tokens "
                                "for skills + exemplars + experience)", low=1)
    max_exemplars: int = setting(3, "default number of exemplar episodes get_context returns",
                                 low=0)
    use_embeddings: bool = setting(True, "rank exemplars with the packaged all-MiniLM-L6-v2 "
                                   "(false: lexical BM25 only, never loads a model)")
    embedding_model_dir: str = setting("", "directory of a sentence embedding model; empty = "
                                       "the packaged MiniLM")

    def __post_init__(self) -> None:
        settings.validate(self, "memory")
        if self.max_pattern_length < self.min_pattern_length:
            raise ConfigError(
                f"memory max_pattern_length ({self.max_pattern_length}) must be >="
                f" min_pattern_length ({self.min_pattern_length})")
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

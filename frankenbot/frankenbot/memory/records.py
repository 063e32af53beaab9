"""Data that goes into and comes out of the memory store.

Frozen dataclasses only: the store, the ROS node and the planner exchange these, so a record can be
passed between threads and compared in tests without surprises. Times are seconds; ``created`` is
Unix time as stored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from frankenbot.errors import MemoryStoreError
from frankenbot.program.catalog import Param, ParamType, Signature, SignatureKind


class SkillOrigin:
    """Where a library skill came from (stored as these strings)."""

    SEED = "seed"
    PROMOTED = "promoted"
    IMPORTED = "imported"
    ALL = (SEED, PROMOTED, IMPORTED)


@dataclass(frozen=True)
class SkillRecord:
    """One library skill: its definition text plus usage statistics."""

    name: str
    params: tuple[tuple[str, str], ...]  # (name, type) with type in object|number|string
    description: str
    body: str  # the full `skill name(...) "doc" { ... }` definition in canonical program text
    origin: str
    uses: int = 0
    successes: int = 0
    source: str = ""  # seed file, promoting pattern key, or import file
    created: float = 0.0
    robot_id: str = ""  # the robot that learnt (promoted) or imported it; "" for seeds
    fixtures: tuple[str, ...] = ()  # fixture ids it was learnt with (bound to its parameters)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.params)

    @property
    def param_types(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.params)

    def signature(self) -> Signature:
        """The catalog entry the validator, planner and interpreter use for this skill."""
        return Signature(
            self.name,
            SignatureKind.SKILL,
            tuple(Param(n, ParamType(t)) for n, t in self.params),
            self.description,
            self.body,
        )


@dataclass(frozen=True)
class EpisodeAnomaly:
    """One anomaly of an episode and what was done about it (mirrors msg/AnomalyEvent)."""

    kind: str
    tier: int = 0
    action: str = ""  # recovery chosen, e.g. "retry main/2", "goto start", "replan", "abort"
    outcome: str = ""  # RecoveryOutcome value
    primitive: str = ""  # primitive running at detection ("" when unknown)
    node_path: str = ""
    source: str = ""  # the monitor that fired
    detail: str = ""
    anomaly_class: str = ""
    latency: float = -1.0


@dataclass(frozen=True)
class EpisodeRecord:
    """One finished task as the planner/executor report it."""

    instruction: str
    program: str
    success: bool
    outcome: str = ""  # ExitStatus value
    task_id: str = ""
    anomalies: tuple[EpisodeAnomaly, ...] = ()
    vlm_calls: int = 0
    repair_calls: int = 0
    planning_time: float = 0.0
    execution_time: float = 0.0
    trace_json: str = "[]"
    robot_id: str = ""  # "" = the recording store's robot_id

    def __post_init__(self) -> None:
        for name in ("vlm_calls", "repair_calls"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise MemoryStoreError(f"episode {name} must be a count >= 0, got {v!r}")
        for name in ("planning_time", "execution_time"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise MemoryStoreError(f"episode {name} must be seconds >= 0, got {v!r}")
        if not isinstance(self.instruction, str) or not isinstance(self.program, str):
            raise MemoryStoreError("episode instruction and program must be text")
        for a in self.anomalies:
            if not isinstance(a, EpisodeAnomaly) or not a.kind:
                raise MemoryStoreError(f"episode anomalies must be EpisodeAnomaly with a kind,"
                                       f" got {a!r}")


@dataclass(frozen=True)
class StoredEpisode:
    """An episode as read back from the store."""

    episode_id: int
    record: EpisodeRecord
    created: float


@dataclass(frozen=True)
class RecordResult:
    """What recording an episode did: its id and the names of skills it promoted."""

    episode_id: int
    promoted: tuple[str, ...] = ()
    message: str = ""


@dataclass(frozen=True)
class Exemplar:
    """A past successful episode offered to the planner as an example."""

    episode_id: int
    instruction: str
    program: str
    score: float


@dataclass(frozen=True)
class ExperienceSummary:
    """Aggregated recoveries for one anomaly situation: what was tried and how it went."""

    kind: str
    primitive: str
    action: str
    tier: int
    tries: int
    recovered: int

    @property
    def success_rate(self) -> float:
        return self.recovered / self.tries if self.tries else 0.0

    def line(self) -> str:
        """Compact ``situation -> recovery -> outcome`` text for prompts and GetContext."""
        where = f" during {self.primitive}" if self.primitive else ""
        return (f"{self.kind}{where} -> {self.action or 'none'} (tier {self.tier})"
                f" -> recovered {self.recovered}/{self.tries}")


@dataclass(frozen=True)
class MemoryContext:
    """What memory contributes to a planning prompt, already fitted to a token budget."""

    skills: tuple[SkillRecord, ...] = ()
    exemplars: tuple[Exemplar, ...] = ()
    experience: tuple[str, ...] = ()
    tokens: int = 0
    retrieval: str = "lexical"  # embedding | lexical
    dropped: dict[str, int] = field(default_factory=dict)  # what the budget left out, by part

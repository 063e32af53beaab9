"""The memory store: skills, episodes, embeddings and anomaly experience in one database.

The database is an SQLite file (the embedded default, one robot) or a PostgreSQL database that a
fleet shares (``memory.db_url``; see backend.py and docs/MEMORY.md). Everything below holds on
both; engine specifics live in the backend.

Fleet: every episode and skill carries the ``robot_id`` that recorded or learnt it, and a skill
the fixtures it was learnt with. ``offered_skills`` re-validates each skill against this robot's
own catalog and fixtures, so a skill learnt on another arm reaches this one's prompt only when
this arm can run it. Writers are serialised per database (one write transaction at a time), so
two robots finishing together cannot both promote the same pattern; the unique body constraint
and idempotent promotion (a pattern promoted once is never promoted again) back that up.

Durability (SQLite): WAL journal with ``synchronous=FULL`` and one transaction per episode, so
a process killed at any point (SIGKILL included) loses nothing that ``record_episode`` returned
for, and the file always opens (PostgreSQL gives the same per committed transaction). Safety: a
file (or a PostgreSQL database) that is not a FrankenBot memory, is corrupt, or belongs to another
application raises ``MemoryStoreError`` and is never written. Every public method is thread-safe
(one connection, guarded by a lock), so a ROS node can serve from several callback threads.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from frankenbot.errors import FrankenbotError, MemoryStoreError, ProgramError
from frankenbot.memory import language, promotion
from frankenbot.memory.backend import (
    BUSY_TIMEOUT_S,  # noqa: F401 (public name, kept here)
    Backend,
    SqliteBackend,
    open_backend,
)
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import (
    EpisodeAnomaly,
    EpisodeRecord,
    Exemplar,
    ExperienceSummary,
    MemoryContext,
    RecordResult,
    SkillOrigin,
    SkillRecord,
    StoredEpisode,
)
from frankenbot.memory.retrieval import Bm25, Embedder, TransformerEmbedder, cosine_scores, rank
from frankenbot.memory.tokens import estimate_tokens
from frankenbot.program.catalog import Catalog, SignatureKind, default_catalog
from frankenbot.program.tree import Call, Program, SkillDef

log = logging.getLogger(__name__)

# Exemplars must be at least this similar to be worth prompt tokens.
MIN_EMBEDDING_SCORE = 0.2
MIN_LEXICAL_SCORE = 0.0
# Recoveries among grouped experience rows (portable: PostgreSQL cannot sum booleans).
_RECOVERED = "sum(CASE WHEN outcome = 'recovered' THEN 1 ELSE 0 END)"


class MemoryStore:
    """Skills, episodes and experience in one database; see the module docstring.

    Use ``MemoryStore.open(path_or_url)`` (or ``open(config=...)``) and ``close()`` / ``with``.
    """

    def __init__(self, backend: Backend, config: MemoryConfig, base_catalog: Catalog,
                 embedder: Embedder | None) -> None:
        self._backend: Backend | None = backend
        self.dialect = backend.engine  # sqlite | postgresql
        self.where = backend.where  # the database, as messages name it (password redacted)
        # The SQLite file (None on PostgreSQL); kept for single-robot tools and tests.
        self.path: Path | None = backend.path if isinstance(backend, SqliteBackend) else None
        self.config = config
        self.robot_id = config.robot_id
        self.base_catalog = base_catalog
        self._db_lock = threading.RLock()  # guards the backend (one connection, many threads)
        self._embedder = embedder
        self._embedder_failed = not config.use_embeddings and embedder is None
        self._embedder_lock = threading.Lock()  # guards lazy model loading
        self.wait_for_model = True  # False: never wait for a model load in progress
        self.model_threads: int | None = None  # torch threads to set when the model loads
        self.seed_problems: tuple[str, ...] = ()
        self._unfit_cache: tuple[object, dict[str, str]] | None = None
        # why the file could only be opened read-only ('' = writable; SQLite only)
        self.read_only: str = getattr(backend, "read_only", "")

    # ------------------------------------------------------------------------------ lifecycle

    @classmethod
    def open(cls, path: str | Path | None = None, config: MemoryConfig | None = None, *,
             base_catalog: Catalog | None = None, embedder: Embedder | None = None
             ) -> "MemoryStore":
        """Open (creating or migrating) the database; load seed skills when configured.

        ``path`` (an SQLite file or a database URL, see backend.py) overrides the config's
        ``db_url``/``db_path``; ``base_catalog`` is this robot's catalog (what its executor
        runs); ``embedder`` injects a model (tests, benchmark), otherwise the packaged MiniLM
        loads lazily on first use when ``use_embeddings`` is on.
        """
        config = config or MemoryConfig()
        if path is None:
            url = config.resolved_db_url
        elif isinstance(path, str) and "://" in path:
            url = path
        else:
            url = f"sqlite://{Path(path).expanduser()}"
        backend = open_backend(url)
        store = cls(backend, config, base_catalog or default_catalog(), embedder)
        if store.read_only:
            log.warning("memory database %s is read-only: context is served, nothing new is "
                        "stored (%s)", store.where, store.read_only)
        elif config.load_seeds:
            from frankenbot.memory.seed import load_seed_skills

            try:
                store.seed_problems = load_seed_skills(store, config.seed_dir or None)
            except BaseException:
                store.close()
                raise
        return store

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        with self._db_lock:
            backend, self._backend = self._backend, None
            if backend is not None:
                backend.close()

    def __enter__(self) -> "MemoryStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def integrity_check(self) -> tuple[str, ...]:
        """SQLite's full ``PRAGMA integrity_check``: () when the file is sound, else the problems.

        The crash-safety tests and the reliability benchmark call it after killing writers;
        an operator can too (it reads every page, so it takes a while on a large memory).
        """
        if self.dialect != "sqlite":
            return ()  # PostgreSQL checksums and repairs its own pages; nothing to read here
        rows = self._query("PRAGMA integrity_check")
        problems = tuple(str(r[0]) for r in rows)
        return () if problems == ("ok",) else problems

    @property
    def _db(self) -> Backend:
        if self._backend is None:
            raise MemoryStoreError(f"memory store {self.where} is closed")
        return self._backend

    @property
    def conn(self) -> Any:
        """The driver's connection (sqlite3 or psycopg), for engine-specific inspection."""
        return self._db.raw

    @contextmanager
    def _tx(self, doing: str) -> Iterator[Backend]:
        """One write transaction that excludes other writers (all robots), errors made clear."""
        if self.read_only:
            raise MemoryStoreError(f"memory database {self.where} is read-only; nothing was "
                                   f"stored while {doing} ({self.read_only})")
        with self._db_lock:
            db = self._db
            try:
                db.begin_write()
            except db.errors as e:
                db.rollback()
                raise db.error(e, doing) from e
            try:
                yield db
                db.commit()
            except db.errors as e:
                db.rollback()
                raise db.error(e, doing) from e
            except BaseException:
                db.rollback()
                raise

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with self._db_lock:
            db = self._db
            try:
                return db.query(sql, params)
            except db.errors as e:
                if db.in_transaction():  # PostgreSQL: a failed read outside a write tx
                    db.rollback()
                raise db.error(e, "reading") from e

    # ------------------------------------------------------------------------------- skills

    def list_skills(self, filter: str = "") -> tuple[SkillRecord, ...]:
        """Library skills whose name or description contains ``filter`` (case-insensitive)."""
        rows = self._query("SELECT * FROM skills ORDER BY origin != 'seed', created, name")
        f = filter.lower()
        return tuple(_skill_from_row(r) for r in rows
                     if not f or f in r["name"].lower() or f in r["description"].lower())

    def offered_skills(self) -> tuple[SkillRecord, ...]:
        """Skills worth a prompt's tokens: those this robot can run that still work.

        A promoted skill that has been used at least ``min_support`` times with a success rate
        below ``min_success_rate`` is retired from prompts (the same quality bar that promoted
        it); it stays in the catalog so programs that call it still validate and run. A skill
        this robot cannot run (``unfit_skills``: learnt on another robot with fixtures or
        callables this one lacks) is not offered either.
        """
        k, r = self.config.min_support, self.config.min_success_rate
        library = self.list_skills()
        unfit = self.unfit_skills(library)
        return tuple(s for s in library
                     if s.name not in unfit
                     and not (s.origin == SkillOrigin.PROMOTED and s.uses >= k
                              and s.successes / s.uses < r))

    def unfit_skills(self, library: Sequence[SkillRecord] | None = None) -> dict[str, str]:
        """Library skills this robot cannot run, each with the reason.

        A skill shared through a fleet memory was validated against the catalog of the robot
        that learnt it. Here it is checked again against this robot's: every fixture it was
        learnt with must be among this robot's ``fixtures`` (when it declares them), and its
        body must validate against this robot's base catalog plus the skills that passed (so a
        skill calling an unfit skill is unfit too).
        """
        skills = list(self.list_skills() if library is None else library)
        key = (tuple((s.name, s.body, s.fixtures) for s in skills), self.config.fixture_ids)
        cached = self._unfit_cache
        if cached is not None and cached[0] == key:
            return dict(cached[1])
        have = set(self.config.fixture_ids)
        unfit: dict[str, str] = {}
        for s in skills:
            missing = sorted(set(s.fixtures) - have) if have else []
            if missing:
                unfit[s.name] = (f"learnt by {s.robot_id or 'another robot'} with fixture(s)"
                                 f" {', '.join(missing)}, which this robot does not have")
        changed = True
        while changed:  # a skill may only call skills that are fit themselves
            changed = False
            catalog = self.base_catalog.with_skills(
                s.signature() for s in skills if s.name not in unfit)
            for s in skills:
                if s.name in unfit:
                    continue
                try:
                    (definition,) = language.parse_library(s.body)
                    language.check_skill(definition, catalog)
                except (ProgramError, ValueError) as e:
                    unfit[s.name] = f"does not validate against this robot's catalog: {e}"
                    changed = True
        self._unfit_cache = (key, dict(unfit))
        return unfit

    def get_skill(self, name: str) -> SkillRecord | None:
        rows = self._query("SELECT * FROM skills WHERE name = ?", (name,))
        return _skill_from_row(rows[0]) if rows else None

    def catalog(self, base: Catalog | None = None) -> Catalog:
        """``base`` (default: the store's base catalog) plus every library skill."""
        return (base or self.base_catalog).with_skills(s.signature() for s in self.list_skills())

    def add_skill_text(self, text: str, origin: str, source: str = "",
                       replace: bool = False) -> tuple[SkillRecord, ...]:
        """Parse, validate and store the skills of a library text (all or nothing).

        Raises ProgramError (with line/column) for a syntax error or an invalid skill and
        MemoryStoreError for a name clash or a duplicate body, unless ``replace`` is set, in
        which case a skill of the same name is overwritten (its statistics kept).
        """
        return self.add_skills(language.parse_library(text), origin, source, replace)

    def add_skills(self, skills: Sequence[SkillDef], origin: str, source: str = "",
                   replace: bool = False) -> tuple[SkillRecord, ...]:
        """Validate and store parsed skills in one transaction (all or nothing)."""
        with self._tx("adding skills"):
            return tuple(self._add_skill(s, origin, source, replace) for s in skills)

    def _add_skill(self, skill: SkillDef, origin: str, source: str, replace: bool,
                   fixtures: Sequence[str] = ()) -> SkillRecord:
        """Validate and store one skill inside the caller's write transaction.

        Seeds belong to no robot; imported and promoted skills to this store's robot_id.
        """
        if origin not in SkillOrigin.ALL:
            raise MemoryStoreError(f"skill origin must be one of {SkillOrigin.ALL}, got {origin!r}")
        existing = self._skill_row(skill.name)
        if existing is not None and not replace:
            raise MemoryStoreError(f"a skill named {skill.name!r} is already in the library")
        others = [r for r in self._skill_rows() if r["name"] != skill.name]
        catalog = self.base_catalog.with_skills(_skill_from_row(r).signature() for r in others)
        base_kind = self.base_catalog.get(skill.name)
        if base_kind is not None:
            raise MemoryStoreError(
                f"skill {skill.name!r} would shadow the {base_kind.kind.value} of that name")
        language.check_skill(skill, catalog)
        key = skill_key(skill)
        dup = [r["name"] for r in others if r["canon_key"] == key]
        if dup:
            raise MemoryStoreError(
                f"skill {skill.name!r} duplicates library skill {dup[0]!r} (same body up to"
                " parameter names)")
        body = language.print_skill(skill)
        params = [[p.name, p.type] for p in skill.params]
        now = time.time()
        robot = "" if origin == SkillOrigin.SEED else self.robot_id
        fixtures_json = json.dumps(sorted(set(fixtures)))
        if existing is not None:
            self._db.execute(
                "UPDATE skills SET params_json=?, description=?, body=?, canon_key=?, origin=?,"
                " source=?, robot_id=?, fixtures_json=? WHERE name=?",
                (json.dumps(params), skill.description, body, key, origin, source, robot,
                 fixtures_json, skill.name))
        else:
            self._db.execute(
                "INSERT INTO skills (name, params_json, description, body, canon_key, origin,"
                " source, created, robot_id, fixtures_json) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (skill.name, json.dumps(params), skill.description, body, key, origin, source,
                 now, robot, fixtures_json))
        row = self._skill_row(skill.name)
        assert row is not None
        return _skill_from_row(row)

    def remove_skill(self, name: str) -> bool:
        """Delete a skill; True if it existed.

        The patterns it covered are marked retired (``skill = ''``) so that promotion does not
        bring back a skill somebody removed on purpose.
        """
        with self._tx("removing a skill"):
            users = [r["name"] for r in self._skill_rows() if r["name"] != name
                     and any(c.name == name for d in language.parse_library(r["body"])
                             for c in _calls_of(d))]
            if users:
                raise MemoryStoreError(f"skill {name!r} is called by {', '.join(users)};"
                                       " remove those first")
            self._db.execute("UPDATE patterns SET skill = '' WHERE skill = ?", (name,))
            return self._db.execute("DELETE FROM skills WHERE name = ?", (name,)).rowcount > 0

    def _skill_row(self, name: str) -> Any | None:
        return self._db.execute("SELECT * FROM skills WHERE name = ?", (name,)).fetchone()

    def _skill_rows(self) -> list[Any]:
        return list(self._db.execute("SELECT * FROM skills ORDER BY created, name"))

    # ----------------------------------------------------------------------------- episodes

    def record_episode(self, episode: EpisodeRecord) -> RecordResult:
        """Store a finished episode atomically; update skill statistics; maybe promote skills.

        The episode, its anomaly experience, the pattern counts and any promoted skills commit
        together: after this returns the episode survives a crash, and before it nothing does.
        """
        if not episode.instruction.strip():
            raise MemoryStoreError("an episode needs a non-empty instruction")
        notes: list[str] = []
        vector = self._embed_quietly([episode.instruction])
        with self._tx("recording an episode"):
            catalog = self.catalog()
            program = None
            try:
                program = self._as_library_calls(language.parse_task(episode.program))
            except ProgramError as e:
                notes.append(f"program not parsed, no skill statistics or mining: {e}")
            robot = episode.robot_id or self.robot_id
            cur = self._db.execute(
                "INSERT INTO episodes (task_id, instruction, program, success, outcome,"
                " anomalies_json, vlm_calls, repair_calls, planning_time, execution_time,"
                " trace_json, created, robot_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
                " RETURNING id",
                (episode.task_id, episode.instruction, episode.program, int(episode.success),
                 episode.outcome, json.dumps([asdict(a) for a in episode.anomalies]),
                 episode.vlm_calls, episode.repair_calls, episode.planning_time,
                 episode.execution_time, episode.trace_json, time.time(), robot))
            episode_id = int(cur.fetchone()[0])
            for a in episode.anomalies:
                self._insert_experience(episode_id, a, catalog)
            if vector is not None and self._embedder is not None:
                self._db.execute(
                    "INSERT INTO embeddings (episode_id, model, vector) VALUES (?,?,?)",
                    (episode_id, self._embedder.name, vector[0].astype(np.float32).tobytes()))
            promoted: tuple[str, ...] = ()
            if program is not None:
                self._count_skill_uses(program, catalog, episode.success)
                self._count_patterns(program, catalog, episode.success, episode.trace_json,
                                     notes)
                promoted = self._promote(catalog, notes, program)
        return RecordResult(episode_id, promoted, "; ".join(notes))

    def _as_library_calls(self, program: Program) -> Program:
        """The program with its copies of library skills dropped, so they count as the library's.

        The planner attaches the definitions of the library skills a program calls (the
        executor knows only primitives); a copy identical to the library's skill (same name,
        same body up to parameter names) is that skill: its uses are counted and the calls are
        mined like any library call. A local skill that differs stays the program's own.
        """
        if not program.skills:
            return program
        kept = tuple(d for d in program.skills
                     if (row := self._skill_row(d.name)) is None
                     or row["canon_key"] != skill_key(d))
        return program if len(kept) == len(program.skills) else replace(program, skills=kept)

    def _insert_experience(self, episode_id: int, a: EpisodeAnomaly, catalog: Catalog) -> None:
        primitive = a.primitive
        if not primitive and a.node_path:
            last = a.node_path.rstrip("/").rsplit("/", 1)[-1]
            sig = catalog.get(last)
            if sig is not None and sig.kind in (SignatureKind.PRIMITIVE, SignatureKind.SKILL):
                primitive = last
        situation = a.detail or a.source
        self._db.execute(
            "INSERT INTO experience (episode_id, kind, primitive, situation, action, tier,"
            " outcome, latency) VALUES (?,?,?,?,?,?,?,?)",
            (episode_id, a.kind, primitive, situation, a.action, int(a.tier), a.outcome,
             float(a.latency)))

    def _count_skill_uses(self, program: Program, catalog: Catalog,
                          success: bool) -> None:
        for call in program.calls():
            sig = catalog.get(call.name)
            if sig is not None and sig.kind == SignatureKind.SKILL \
                    and program.skill(call.name) is None:
                self._db.execute(
                    "UPDATE skills SET uses = uses + 1, successes = successes + ? WHERE name = ?",
                    (int(success), call.name))

    def _count_patterns(self, program: Program, catalog: Catalog, success: bool,
                        trace_json: str, notes: list[str]) -> None:
        """Update pattern statistics, attributing outcomes per occurrence when a trace exists.

        With the executor's trace, an occurrence counts as a success when all its calls
        finished successfully, as a failure when one of its nodes failed, and not at all when
        the run never reached it, whatever the episode's overall outcome (a failure elsewhere
        does not blame this sequence). Without a trace, each pattern in the program takes the
        episode's outcome.
        """
        cfg = self.config
        found = promotion.occurrences_in(program, catalog, cfg.min_pattern_length,
                                         cfg.max_pattern_length)
        trace = _trace_entries(trace_json, notes)
        outcome: dict[str, tuple[promotion.Pattern, str]] = {}
        for p, paths, calls in found:
            if trace is None:
                result = promotion.OK if success else promotion.FAILED
            else:
                result = promotion.window_outcome(paths, calls, trace)
            prev = outcome.get(p.key, (p, promotion.NOT_RUN))[1]
            # One vote per episode and pattern: any failed occurrence wins, then any ok one.
            rank = {promotion.FAILED: 2, promotion.OK: 1, promotion.NOT_RUN: 0}
            if rank[result] >= rank[prev]:
                outcome[p.key] = (p, result)
        for key, (p, result) in outcome.items():
            if result == promotion.NOT_RUN:
                continue
            self._db.execute(
                "INSERT INTO patterns (key, length, calls_json, seen, successes)"
                " VALUES (?, ?, ?, 1, ?) ON CONFLICT(key) DO UPDATE SET"
                " seen = patterns.seen + 1, successes = patterns.successes + excluded.successes",
                (key, len(p), key, int(result == promotion.OK)))

    def _promote(self, catalog: Catalog, notes: list[str], program: Program
                 ) -> tuple[str, ...]:
        """Promote the patterns that now clear the bar, inside the episode's write transaction.

        Idempotent: a pattern that has a skill (``patterns.skill``), or whose body is already in
        the library, is never promoted again. Writers are serialised, so the counts read here
        are complete; should a skill of the same body or name still appear (a writer outside
        this lock, e.g. an older FrankenBot), the unique constraints turn it into a note.
        """
        cfg = self.config
        # Patterns already covered by a skill still take part: they make their sub-sequences
        # redundant (closedness), they are just not promoted again.
        rows = self._db.query(
            "SELECT key, seen, successes, skill FROM patterns WHERE successes >= ?",
            (cfg.min_support,))
        stats = [promotion.PatternStats(promotion.Pattern.from_key(r["key"]), r["seen"],
                                        r["successes"]) for r in rows]
        library = {r["canon_key"]: r["name"] for r in self._skill_rows()}
        for r in rows:  # in the library: remember which skill covers it
            if r["skill"] is None and r["key"] in library:
                self._db.execute("UPDATE patterns SET skill = ? WHERE key = ?",
                                 (library[r["key"]], r["key"]))
        exclude = set(library) | {r["key"] for r in rows if r["skill"] is not None}
        promoted: list[str] = []
        bindings: dict[str, tuple[str, ...]] | None = None
        for s in promotion.select(stats, exclude, cfg.min_support, cfg.min_success_rate,
                                  cfg.min_pattern_length):
            taken = set(catalog.entries) | {r["name"] for r in self._skill_rows()}
            name = promotion.skill_name(s.pattern, taken)
            skill = promotion.to_skill(s.pattern, name, catalog, s.seen, s.successes)
            if bindings is None:
                bindings = _bindings(program, catalog, cfg.min_pattern_length,
                                     cfg.max_pattern_length)
            fixtures = [o for o in bindings.get(s.pattern.key, ()) if o in cfg.fixture_ids]
            try:
                # Round-trip through text: only what the parser and validator accept is stored.
                text = language.print_skill(skill)
                (reparsed,) = language.parse_library(text)
                with self._db.savepoint("promote"):
                    self._add_skill(reparsed, SkillOrigin.PROMOTED, f"pattern:{s.pattern.key}",
                                    replace=False, fixtures=fixtures)
            except (FrankenbotError, ValueError) as e:
                notes.append(f"pattern {s.pattern.key} not promoted: {e}")
                continue
            except self._db.errors as e:
                if not self._db.is_unique_violation(e):
                    raise
                notes.append(f"pattern {s.pattern.key} not promoted: already in the library")
                continue
            self._db.execute("UPDATE patterns SET skill = ? WHERE key = ?",
                             (name, s.pattern.key))
            catalog = catalog.with_skills([self.get_skill_unlocked(name).signature()])
            promoted.append(name)
        return tuple(promoted)

    def get_skill_unlocked(self, name: str) -> SkillRecord:
        row = self._skill_row(name)
        if row is None:
            raise MemoryStoreError(f"no skill named {name!r}")
        return _skill_from_row(row)

    def episodes(self, limit: int = 100, successful_only: bool = False
                 ) -> tuple[StoredEpisode, ...]:
        """Most recent episodes first."""
        where = "WHERE success = 1" if successful_only else ""
        rows = self._query(f"SELECT * FROM episodes {where} ORDER BY id DESC LIMIT ?", (limit,))
        return tuple(_episode_from_row(r) for r in rows)

    def episode_count(self) -> int:
        return int(self._query("SELECT count(*) FROM episodes")[0][0])

    def patterns(self) -> tuple[promotion.PatternStats, ...]:
        """Mined pattern statistics (for inspection and the benchmark)."""
        rows = self._query("SELECT key, seen, successes FROM patterns ORDER BY successes DESC")
        return tuple(promotion.PatternStats(promotion.Pattern.from_key(r["key"]), r["seen"],
                                            r["successes"]) for r in rows)

    # --------------------------------------------------------------------------- experience

    def experience_for(self, kind: str, primitive: str = "", limit: int = 5
                       ) -> tuple[ExperienceSummary, ...]:
        """Past recoveries of this anomaly kind (optionally during this primitive), best first.

        Tier 2 consults this: each entry is one (recovery action, tier) with how often it was
        tried and how often it recovered. With ``primitive`` given, exact matches come first,
        then the kind's experience with other primitives.
        """
        rows = self._query(
            "SELECT kind, primitive, action, tier, count(*) AS tries,"
            f" {_RECOVERED} AS recovered FROM experience WHERE kind = ?"
            " GROUP BY kind, primitive, action, tier", (kind,))
        out = [ExperienceSummary(r["kind"], r["primitive"], r["action"], int(r["tier"]),
                                 int(r["tries"]), int(r["recovered"] or 0)) for r in rows]
        out.sort(key=lambda e: (bool(primitive) and e.primitive != primitive, -e.success_rate,
                                -e.tries, e.tier, e.action))
        return tuple(out[:limit])

    def _experience_lines(self, limit: int) -> list[str]:
        rows = self._query(
            "SELECT kind, primitive, action, tier, count(*) AS tries,"
            f" {_RECOVERED} AS recovered FROM experience"
            " GROUP BY kind, primitive, action, tier ORDER BY tries DESC, kind LIMIT ?", (limit,))
        return [ExperienceSummary(r["kind"], r["primitive"], r["action"], int(r["tier"]),
                                  int(r["tries"]), int(r["recovered"] or 0)).line() for r in rows]

    # ---------------------------------------------------------------------------- retrieval

    def start_loading_embedder(self) -> threading.Thread | None:
        """Load the embedding model on a background thread (a node must not block on it).

        Until it is ready, retrieval that would wait for it uses the lexical scorer instead.
        """
        if self._embedder is not None or self._embedder_failed:
            return None
        self.wait_for_model = False
        thread = threading.Thread(target=self.embedder, kwargs={"block": True},
                                  name="memory-embedder-load", daemon=True)
        thread.start()
        return thread

    def embedder(self, block: bool | None = None) -> Embedder | None:
        """The embedding model, loading it on first use; None when disabled or unloadable.

        With ``block`` False (default: ``wait_for_model``) a load in progress on another thread
        gives None rather than waiting for it.
        """
        if self._embedder is not None or self._embedder_failed:
            return self._embedder
        wait = self.wait_for_model if block is None else block
        if not self._embedder_lock.acquire(blocking=wait):
            return None
        try:
            if self._embedder is None and not self._embedder_failed:
                try:
                    self._embedder = TransformerEmbedder.from_directory(
                        Path(self.config.embedding_model_dir)
                        if self.config.embedding_model_dir else None, self.model_threads)
                except MemoryStoreError as e:
                    log.warning("embedding retrieval off, using lexical: %s", e)
                    self._embedder_failed = True
        finally:
            self._embedder_lock.release()
        return self._embedder

    def _embed_quietly(self, texts: Sequence[str]) -> np.ndarray | None:
        emb = self.embedder()
        if emb is None:
            return None
        try:
            return emb.embed(texts)
        except Exception as e:  # a model failing at run time must not lose the episode
            log.warning("embedding failed, falling back to lexical retrieval: %s", e)
            return None

    def retrieve(self, instruction: str, limit: int) -> tuple[tuple[Exemplar, ...], str]:
        """Best successful past episodes for ``instruction`` and the method used."""
        rows = self._query("SELECT id, instruction, program FROM episodes WHERE success = 1"
                           " ORDER BY id")
        # Identical instruction+program pairs add nothing: keep the newest of each.
        unique: dict[tuple[str, str], Any] = {}
        for r in rows:
            unique.pop((r["instruction"], r["program"]), None)
            unique[(r["instruction"], r["program"])] = r
        rows = sorted(unique.values(), key=lambda r: r["id"])
        if not rows or limit <= 0:
            return (), "embedding" if self.embedder() is not None else "lexical"
        scores: list[float] | None = None
        method = "lexical"
        emb = self.embedder()
        if emb is not None:
            scores = self._embedding_scores(emb, instruction, rows)
            if scores is not None:
                method = "embedding"
        if scores is None:
            scores = Bm25.build([r["instruction"] for r in rows]).scores(instruction)
        floor = MIN_EMBEDDING_SCORE if method == "embedding" else MIN_LEXICAL_SCORE
        picked = rank(scores, limit, floor)
        return tuple(Exemplar(rows[i]["id"], rows[i]["instruction"], rows[i]["program"],
                              scores[i]) for i in picked), method

    def _embedding_scores(self, emb: Embedder, instruction: str,
                          rows: list[Any]) -> list[float] | None:
        ids = [r["id"] for r in rows]
        have = {r["episode_id"]: np.frombuffer(r["vector"], dtype=np.float32) for r in self._query(
            "SELECT episode_id, vector FROM embeddings WHERE model = ?", (emb.name,))}
        missing = [r for r in rows if r["id"] not in have]
        try:
            query = emb.embed([instruction])[0]
            if missing:
                vecs = emb.embed([r["instruction"] for r in missing])
                for r, v in zip(missing, vecs, strict=True):
                    have[r["id"]] = v
                try:
                    with self._tx("caching embeddings"):
                        self._db.executemany(
                            "INSERT INTO embeddings (episode_id, model, vector) VALUES (?,?,?)"
                            " ON CONFLICT (episode_id, model) DO UPDATE SET"
                            " vector = excluded.vector",
                            [(r["id"], emb.name, have[r["id"]].astype(np.float32).tobytes())
                             for r in missing])
                except MemoryStoreError as e:  # a cache; retrieval still works without it
                    log.warning("could not cache embeddings: %s", e)
        except Exception as e:
            log.warning("embedding retrieval failed, using lexical: %s", e)
            return None
        return cosine_scores(query, np.stack([have[i] for i in ids]))

    def get_context(self, instruction: str, token_budget: int = 0,
                    max_exemplars: int = -1) -> MemoryContext:
        """Skills, exemplars and anomaly experience for a prompt, within ``token_budget``.

        Budget (estimated with ``tokens.estimate_tokens``) is spent in priority order: skills
        (signature line ``name(p: type)  -- description``, as the planner's prompt lists them;
        skills whose names or descriptions share words with the instruction first),
        then exemplars (instruction + program text, most similar first), then experience lines.
        A part that does not fit is skipped and counted in ``dropped``; smaller later parts may
        still fit. ``token_budget`` 0 and ``max_exemplars`` < 0 mean the configured defaults.
        """
        if token_budget < 0:
            raise MemoryStoreError(f"token_budget must be >= 0 (0 = default), got {token_budget}")
        budget = token_budget or self.config.token_budget
        n_ex = self.config.max_exemplars if max_exemplars < 0 else max_exemplars
        used = 0
        dropped = {"skills": 0, "exemplars": 0, "experience": 0}
        skills: list[SkillRecord] = []
        for s in _rank_skills(self.offered_skills(), instruction):
            cost = skill_tokens(s)
            if used + cost <= budget:
                skills.append(s)
                used += cost
            else:
                dropped["skills"] += 1
        exemplars: list[Exemplar] = []
        found, method = self.retrieve(instruction, n_ex)
        for ex in found:
            cost = exemplar_tokens(ex)
            if used + cost <= budget:
                exemplars.append(ex)
                used += cost
            else:
                dropped["exemplars"] += 1
        experience: list[str] = []
        for line in self._experience_lines(limit=10):
            cost = estimate_tokens(line)
            if used + cost <= budget:
                experience.append(line)
                used += cost
            else:
                dropped["experience"] += 1
        return MemoryContext(tuple(skills), tuple(exemplars), tuple(experience), used, method,
                             dropped)


def skill_tokens(skill: SkillRecord) -> int:
    """Prompt cost of a skill: its signature line with description.

    The planner lists skills like primitives (bodies only with its ``prompt_skill_bodies``, in
    which case its own character budget still bounds the prompt), so only that line is charged.
    """
    return estimate_tokens(skill.signature().render())


def exemplar_tokens(ex: Exemplar) -> int:
    """Prompt cost of an exemplar: instruction plus program text."""
    return estimate_tokens(ex.instruction) + estimate_tokens(ex.program)


def skill_key(skill: SkillDef) -> str:
    """Dedup identity of a skill: body up to parameter renaming."""
    return promotion.canonical_key(skill, language.print_skill(promotion.renamed(skill)))


def _rank_skills(skills: Sequence[SkillRecord], instruction: str) -> list[SkillRecord]:
    from frankenbot.memory.retrieval import words

    q = set(words(instruction.replace("_", " ")))

    def overlap(s: SkillRecord) -> int:
        return len(q & set(words(f"{s.name.replace('_', ' ')} {s.description}")))

    # Stable: equal overlap keeps library order (seeds first, then by age).
    return sorted(skills, key=lambda s: -overlap(s))


def _trace_entries(trace_json: str, notes: list[str]) -> list[tuple[str, str, str]] | None:
    """(path, event, status) of an executor trace; None when there is none or it is unreadable."""
    if not trace_json or trace_json.strip() in ("", "[]"):
        return None
    try:
        data = json.loads(trace_json)
        entries = [(str(d["path"]), str(d["event"]), str(d["status"])) for d in data]
    except (ValueError, TypeError, KeyError) as e:
        notes.append(f"trace unreadable, outcome taken from the episode: {e}")
        return None
    return entries or None


def _bindings(program: Program, catalog: Catalog, min_len: int, max_len: int
              ) -> dict[str, tuple[str, ...]]:
    """Pattern key -> object ids bound to its parameters in this program (last occurrence)."""
    out: dict[str, tuple[str, ...]] = {}
    for window, external, _paths in promotion.windows_of(program, catalog, min_len, max_len):
        got = promotion.generalise_with_binding(window, external)
        if got is not None:
            out[got[0].key] = got[1]
    return out


def _calls_of(skill: SkillDef) -> Iterator[Call]:
    from frankenbot.program.tree import iter_block

    for _path, node in iter_block(skill.body, "skill"):
        if isinstance(node, Call):
            yield node


def _skill_from_row(r: Any) -> SkillRecord:
    return SkillRecord(
        name=r["name"], params=tuple((n, t) for n, t in json.loads(r["params_json"])),
        description=r["description"], body=r["body"], origin=r["origin"], uses=r["uses"],
        successes=r["successes"], source=r["source"], created=r["created"],
        robot_id=r["robot_id"], fixtures=tuple(json.loads(r["fixtures_json"])))


def _episode_from_row(r: Any) -> StoredEpisode:
    anomalies = tuple(EpisodeAnomaly(**a) for a in json.loads(r["anomalies_json"]))
    rec = EpisodeRecord(
        instruction=r["instruction"], program=r["program"], success=bool(r["success"]),
        outcome=r["outcome"], task_id=r["task_id"], anomalies=anomalies,
        vlm_calls=r["vlm_calls"], repair_calls=r["repair_calls"],
        planning_time=r["planning_time"], execution_time=r["execution_time"],
        trace_json=r["trace_json"], robot_id=r["robot_id"])
    return StoredEpisode(int(r["id"]), rec, r["created"])

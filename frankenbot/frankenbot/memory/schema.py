"""The memory database's schema, its identity and its migrations: one mechanism, both engines.

Identity is the backend's (SQLite's ``application_id`` header field, PostgreSQL's
``frankenbot_meta`` application row): a foreign database is recognised and never written. The
schema version lives in one place on both engines, the ``frankenbot_meta`` table
(``schema_version``); files written before it existed carry it in SQLite's ``user_version``,
read once by ``Backend.legacy_version`` and moved by migration 3. Migrations are an ordered
list of scripts written once with type slots (``memory/sql.py`` fills them per engine);
``ensure_schema`` applies the missing ones, each in its own write transaction that re-reads
the version under the writers' lock (so robots starting together migrate once, and a crash
mid-migration leaves the previous version intact). A database from a newer FrankenBot is
refused rather than guessed at.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from frankenbot.errors import MemoryStoreError

if TYPE_CHECKING:  # the backends import this module
    from frankenbot.memory.backend import Backend

APPLICATION_ID = 0x46424D45  # "FBME": FrankenBot memory
SQLITE_MAGIC = b"SQLite format 3\x00"

META = "frankenbot_meta"
META_DDL = f"CREATE TABLE IF NOT EXISTS {META} (key TEXT PRIMARY KEY, value TEXT NOT NULL)"

# v2 (fleet memory): which robot recorded an episode and learnt a skill, with which fixtures;
# one skill per body (the dedup rule, now a constraint, so two writers cannot both add it).
MIGRATION_V2 = """
    ALTER TABLE episodes ADD COLUMN robot_id TEXT NOT NULL DEFAULT '';
    ALTER TABLE skills ADD COLUMN robot_id TEXT NOT NULL DEFAULT '';
    ALTER TABLE skills ADD COLUMN fixtures_json TEXT NOT NULL DEFAULT '[]';
    DROP INDEX skills_canon;
    CREATE UNIQUE INDEX skills_canon_key ON skills(canon_key);
    CREATE INDEX episodes_robot ON episodes(robot_id)
    """

# Index i holds the script that takes the schema from version i to version i + 1.
MIGRATIONS: tuple[str, ...] = (
    # v1: skills, episodes, anomaly experience, mined patterns.
    """
    CREATE TABLE skills (
        name        TEXT PRIMARY KEY,
        params_json TEXT NOT NULL,          -- [[name, type], ...]
        description TEXT NOT NULL,
        body        TEXT NOT NULL,          -- canonical `skill ... {{ ... }}` text
        canon_key   TEXT NOT NULL,          -- body up to parameter renaming, for dedup
        origin      TEXT NOT NULL CHECK (origin IN ('seed', 'promoted', 'imported')),
        uses        INTEGER NOT NULL DEFAULT 0,
        successes   INTEGER NOT NULL DEFAULT 0,
        source      TEXT NOT NULL DEFAULT '',
        created     {real} NOT NULL
    );
    CREATE INDEX skills_canon ON skills(canon_key);
    CREATE TABLE episodes (
        id              {serial_pk},
        task_id         TEXT NOT NULL DEFAULT '',
        instruction     TEXT NOT NULL,
        program         TEXT NOT NULL,
        success         INTEGER NOT NULL,
        outcome         TEXT NOT NULL DEFAULT '',
        anomalies_json  TEXT NOT NULL DEFAULT '[]',
        vlm_calls       INTEGER NOT NULL DEFAULT 0,
        repair_calls    INTEGER NOT NULL DEFAULT 0,
        planning_time   {real} NOT NULL DEFAULT 0,
        execution_time  {real} NOT NULL DEFAULT 0,
        trace_json      TEXT NOT NULL DEFAULT '[]',
        created         {real} NOT NULL
    );
    CREATE TABLE embeddings (
        episode_id  {ref} NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        model       TEXT NOT NULL,
        vector      {blob} NOT NULL,          -- float32, L2-normalised
        PRIMARY KEY (episode_id, model)
    );
    CREATE TABLE experience (
        id          {serial_pk},
        episode_id  {ref} NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        kind        TEXT NOT NULL,
        primitive   TEXT NOT NULL DEFAULT '',
        situation   TEXT NOT NULL DEFAULT '',
        action      TEXT NOT NULL DEFAULT '',
        tier        INTEGER NOT NULL DEFAULT 0,
        outcome     TEXT NOT NULL DEFAULT '',
        latency     {real} NOT NULL DEFAULT -1
    );
    CREATE INDEX experience_situation ON experience(kind, primitive);
    CREATE TABLE patterns (
        key         TEXT PRIMARY KEY,       -- generalised call sequence, parameters renamed
        length      INTEGER NOT NULL,
        calls_json  TEXT NOT NULL,          -- the generalised calls (see promotion.Pattern)
        seen        INTEGER NOT NULL DEFAULT 0,   -- episodes containing it
        successes   INTEGER NOT NULL DEFAULT 0,   -- ... that succeeded
        skill       TEXT                    -- skill it was promoted to / deduplicated against
    );
    """,
    MIGRATION_V2,
    # v3: the schema version moves into frankenbot_meta on both engines (SQLite's
    # user_version is only read to find it in files written before)
    META_DDL,
)
SCHEMA_VERSION = len(MIGRATIONS)


def check_header(path: Path) -> None:
    """Refuse a non-empty file that is not SQLite at all, before SQLite may touch it."""
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as e:
        raise MemoryStoreError(f"cannot read memory database {path}: {e}") from e
    if head and head != SQLITE_MAGIC:
        raise MemoryStoreError(
            f"{path} is not a FrankenBot memory database (not an SQLite file: header"
            f" {head[:16]!r});"
            " refusing to use or overwrite it. Point memory's db_path elsewhere or move the file.")


def stored_version(db: "Backend") -> int:
    """The schema version the database records (0: empty)."""
    if META in db.tables():
        rows = db.query(f"SELECT value FROM {META} WHERE key = 'schema_version'")
        if rows:
            return int(rows[0][0])
    return db.legacy_version()


def ensure_schema(db: "Backend") -> int:
    """Check identity and version; create or migrate. Returns the version found on open."""
    db.check_identity()
    version = stored_version(db)
    if version > SCHEMA_VERSION:
        raise MemoryStoreError(
            f"memory database {db.where} has schema version {version}, newer than this"
            f" FrankenBot's {SCHEMA_VERSION}; upgrade FrankenBot or use another database.")
    for v in range(version, SCHEMA_VERSION):
        db.begin_write()
        try:
            if stored_version(db) == v:  # a concurrent opener may have got there first
                for statement in db.dialect.ddl(MIGRATIONS[v]).split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.mark_identity()
                db.execute(META_DDL)
                db.execute(f"INSERT INTO {META} (key, value) VALUES ('schema_version', ?)"
                           " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           (str(v + 1),))
            db.commit()
        except BaseException:
            db.rollback()
            raise
    return version

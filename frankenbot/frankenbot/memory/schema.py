"""The memory database's schema, its identity and its migrations.

A FrankenBot memory file is marked with SQLite's ``application_id`` (so a foreign SQLite file is
recognised and never touched) and carries its schema version in ``user_version``. Migrations are an
ordered list of SQL scripts; opening a file applies the missing ones in one transaction each, so a
crash mid-migration leaves the previous version intact. A file from a newer FrankenBot is refused
rather than guessed at.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from frankenbot.errors import MemoryStoreError

APPLICATION_ID = 0x46424D45  # "FBME": FrankenBot memory
SQLITE_MAGIC = b"SQLite format 3\x00"

# v2 (fleet memory): which robot recorded an episode and learnt a skill, with which fixtures;
# one skill per body (the dedup rule, now a constraint, so two writers cannot both add it).
# Plain SQL that SQLite and PostgreSQL both accept (postgres.py reuses it).
MIGRATIONS_V2_ON = """
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
        body        TEXT NOT NULL,          -- canonical `skill ... { ... }` text
        canon_key   TEXT NOT NULL,          -- body up to parameter renaming, for dedup
        origin      TEXT NOT NULL CHECK (origin IN ('seed', 'promoted', 'imported')),
        uses        INTEGER NOT NULL DEFAULT 0,
        successes   INTEGER NOT NULL DEFAULT 0,
        source      TEXT NOT NULL DEFAULT '',
        created     REAL NOT NULL
    );
    CREATE INDEX skills_canon ON skills(canon_key);
    CREATE TABLE episodes (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id         TEXT NOT NULL DEFAULT '',
        instruction     TEXT NOT NULL,
        program         TEXT NOT NULL,
        success         INTEGER NOT NULL,
        outcome         TEXT NOT NULL DEFAULT '',
        anomalies_json  TEXT NOT NULL DEFAULT '[]',
        vlm_calls       INTEGER NOT NULL DEFAULT 0,
        repair_calls    INTEGER NOT NULL DEFAULT 0,
        planning_time   REAL NOT NULL DEFAULT 0,
        execution_time  REAL NOT NULL DEFAULT 0,
        trace_json      TEXT NOT NULL DEFAULT '[]',
        created         REAL NOT NULL
    );
    CREATE TABLE embeddings (
        episode_id  INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        model       TEXT NOT NULL,
        vector      BLOB NOT NULL,          -- float32, L2-normalised
        PRIMARY KEY (episode_id, model)
    );
    CREATE TABLE experience (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        episode_id  INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        kind        TEXT NOT NULL,
        primitive   TEXT NOT NULL DEFAULT '',
        situation   TEXT NOT NULL DEFAULT '',
        action      TEXT NOT NULL DEFAULT '',
        tier        INTEGER NOT NULL DEFAULT 0,
        outcome     TEXT NOT NULL DEFAULT '',
        latency     REAL NOT NULL DEFAULT -1
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
    MIGRATIONS_V2_ON,
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


def ensure_schema(conn: sqlite3.Connection, path: Path) -> int:
    """Check identity and version; create or migrate. Returns the schema version found on open."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    n_objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app_id != APPLICATION_ID and (app_id != 0 or n_objects > 0 or version != 0):
        raise MemoryStoreError(
            f"{path} is an SQLite database of another application (application_id={app_id:#x},"
            f" {n_objects} schema objects); refusing to use or overwrite it."
            " Point memory's db_path elsewhere.")
    if version > SCHEMA_VERSION:
        raise MemoryStoreError(
            f"{path} has memory schema version {version}, newer than this FrankenBot's"
            f" {SCHEMA_VERSION}; upgrade FrankenBot or use another db_path.")
    for v in range(version, SCHEMA_VERSION):
        _migrate_step(conn, v)
    return version


def _migrate_step(conn: sqlite3.Connection, v: int) -> None:
    """Apply migration ``v`` atomically; a concurrent opener that got there first wins."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == v:
            for statement in MIGRATIONS[v].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {v + 1}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise

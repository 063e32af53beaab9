"""Where the memory lives: one interface over SQLite (embedded default) and PostgreSQL (fleets).

The store speaks one SQL (``?`` parameters, ``ON CONFLICT`` upserts, ``RETURNING``) that both
engines accept; each backend's ``Dialect`` (``memory/sql.py``) hands it to its driver. A backend
owns the connection, the write transaction, the database's identity (``schema.py`` runs the one
version and migration mechanism over it), and the translation of engine errors into
``MemoryStoreError``. Writers are
serialised per database: SQLite by ``BEGIN IMMEDIATE`` (one writer per file), PostgreSQL by a
transaction-scoped advisory lock, so promotion reads the pattern counts and inserts the skill
with nobody in between, on one robot or many. Readers never wait for writers on either.

URLs: ``sqlite:///absolute/path.sqlite3`` (also ``sqlite:////absolute/...``;
``sqlite:///~/m.sqlite3`` expands the home), ``sqlite:relative/path.sqlite3``, or
``postgresql://user@host:port/dbname`` (any libpq URL, or ``postgres://``). A plain path is taken
as an SQLite file.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

from frankenbot.errors import MemoryStoreError
from frankenbot.memory.sql import Dialect, sqlite_dialect

BUSY_TIMEOUT_S = 10.0
SQLITE = "sqlite"
POSTGRESQL = "postgresql"


def parse_db_url(url: str) -> tuple[str, str]:
    """(dialect, target): target is a file path for SQLite, the libpq URL for PostgreSQL."""
    text = url.strip()
    if not text:
        raise MemoryStoreError("memory db_url is empty")
    scheme, sep, rest = text.partition(":")
    if not sep or "/" in scheme or len(scheme) < 2:  # a plain path (or a Windows drive letter)
        return SQLITE, str(Path(text).expanduser())
    scheme = scheme.lower()
    if scheme == "sqlite":
        path = rest[2:] if rest.startswith("//") else rest  # sqlite:///abs -> /abs
        if path.startswith("/~"):
            path = path[1:]  # sqlite:///~/m.sqlite3 -> ~/m.sqlite3
        elif path.startswith("//"):
            path = "/" + path.lstrip("/")  # sqlite:////abs (SQLAlchemy's absolute form)
        if not path:
            raise MemoryStoreError(f"memory db_url {url!r} names no file (sqlite:///path)")
        return SQLITE, str(Path(path).expanduser())
    if scheme in ("postgresql", "postgres"):
        if not urlsplit(text).path.strip("/") and "dbname=" not in text:
            raise MemoryStoreError(f"memory db_url {url!r} names no database"
                                   " (postgresql://user@host:port/dbname)")
        return POSTGRESQL, text
    raise MemoryStoreError(f"memory db_url {url!r}: unknown scheme {scheme!r}; use"
                           " sqlite:///path or postgresql://user@host:port/dbname")


def redact(url: str) -> str:
    """The URL without its password, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


class Backend(ABC):
    """One open database: connection, write transactions, schema, error translation.

    Not thread-safe by itself; the store guards it with its lock.
    """

    dialect: Dialect
    where: str  # what error messages and logs call this database (password redacted)

    @property
    def engine(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.dialect.name

    @abstractmethod
    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        """Run one statement; returns a cursor (``fetchone``, ``fetchall``, ``rowcount``)."""

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        for row in rows:
            self.execute(sql, row)

    @abstractmethod
    def tables(self) -> set[str]:
        """The names of the database's tables."""

    @abstractmethod
    def check_identity(self) -> None:
        """Refuse (MemoryStoreError) a database that belongs to another application."""

    @abstractmethod
    def mark_identity(self) -> None:
        """Mark the database as FrankenBot's (inside the first migration's transaction)."""

    def legacy_version(self) -> int:
        """The schema version of a database written before ``frankenbot_meta`` held it."""
        return 0

    def query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """Rows (indexable by column name and by position)."""
        return list(self.execute(sql, params).fetchall())

    @property
    @abstractmethod
    def raw(self) -> Any:
        """The driver's connection (engine-specific inspection in tests and tools)."""

    @property
    @abstractmethod
    def errors(self) -> tuple[type[BaseException], ...]:
        """The driver's exception types (translated by ``error``)."""

    @abstractmethod
    def error(self, e: BaseException, doing: str) -> MemoryStoreError:
        """A clear MemoryStoreError for a driver error (disk full and corruption named)."""

    @abstractmethod
    def is_unique_violation(self, e: BaseException) -> bool:
        """True when ``e`` is a unique-constraint conflict (another writer got there first)."""

    @abstractmethod
    def begin_write(self) -> None:
        """Start a transaction that excludes every other writer of this database."""

    @abstractmethod
    def in_transaction(self) -> bool: ...

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction():
            self.execute("ROLLBACK")

    @contextmanager
    def savepoint(self, name: str) -> Iterator[None]:
        """A nested all-or-nothing step inside the write transaction."""
        self.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            if self.in_transaction():
                self.execute(f"ROLLBACK TO SAVEPOINT {name}")
                self.execute(f"RELEASE SAVEPOINT {name}")
            raise
        self.execute(f"RELEASE SAVEPOINT {name}")

    @abstractmethod
    def close(self) -> None: ...


class SqliteBackend(Backend):
    """One SQLite file in WAL mode with ``synchronous=FULL`` (see store.py for durability)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, read_only: str = "") -> None:
        self.conn = conn
        self.path = path
        self.where = str(path)
        self.read_only = read_only  # why only a read-only open was possible ('' = writable)
        self.dialect = sqlite_dialect()

    @classmethod
    def open(cls, path: Path) -> "SqliteBackend":
        """Open read-write; an existing memory that cannot be written opens read-only."""
        try:
            return cls(cls._connect(path), path)
        except MemoryStoreError as e:
            if not _is_read_only_place(path):
                raise
            # serve what is there; the store refuses every write
            return cls(_connect_read_only(path), path, read_only=str(e))

    @classmethod
    def _connect(cls, path: Path) -> sqlite3.Connection:
        from frankenbot.memory.schema import check_header, ensure_schema

        check_header(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise MemoryStoreError(
                f"cannot create the directory for memory database {path}: {e}") from e
        try:
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as e:
            raise sqlite_error(e, path, "opening") from e
        conn.row_factory = sqlite3.Row
        try:
            # Identity first (reads only), so a foreign or corrupt file is never written.
            if path.stat().st_size > 0:
                result = conn.execute("PRAGMA quick_check").fetchone()[0]
                if result != "ok":
                    raise MemoryStoreError(
                        f"memory database {path} is corrupt (quick_check: {result}); it was"
                        " left untouched. Move it aside to start a new memory.")
            ensure_schema(cls(conn, path))
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as e:
            conn.close()
            raise sqlite_error(e, path, "opening") from e
        except BaseException:
            conn.close()
            raise
        return conn

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        return self.conn.execute(sql, params)  # the store's SQL is SQLite's as written

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self.conn.executemany(sql, rows)

    def tables(self) -> set[str]:
        return {r[0] for r in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}

    def check_identity(self) -> None:
        from frankenbot.memory.schema import APPLICATION_ID

        app_id = self.conn.execute("PRAGMA application_id").fetchone()[0]
        n_objects = self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id != APPLICATION_ID and (app_id != 0 or n_objects > 0
                                         or self.legacy_version() != 0):
            raise MemoryStoreError(
                f"{self.path} is an SQLite database of another application (application_id="
                f"{app_id:#x}, {n_objects} schema objects); refusing to use or overwrite it."
                " Point memory's db_path elsewhere.")

    def mark_identity(self) -> None:
        from frankenbot.memory.schema import APPLICATION_ID

        self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def legacy_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    @property
    def raw(self) -> sqlite3.Connection:
        return self.conn

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)

    def error(self, e: BaseException, doing: str) -> MemoryStoreError:
        assert isinstance(e, sqlite3.Error)
        return sqlite_error(e, self.path, doing)

    def is_unique_violation(self, e: BaseException) -> bool:
        return isinstance(e, sqlite3.IntegrityError) and getattr(
            e, "sqlite_errorcode", None) in (sqlite3.SQLITE_CONSTRAINT_UNIQUE,
                                             sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)

    def begin_write(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def close(self) -> None:
        self.conn.close()


def sqlite_error(e: sqlite3.Error, path: Path, doing: str) -> MemoryStoreError:
    """Translate an SQLite error into a clear MemoryStoreError (disk full and corruption named)."""
    code = getattr(e, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_FULL:
        return MemoryStoreError(f"memory database {path} is full (disk full or size limit) while"
                                f" {doing}; nothing of this operation was stored")
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return MemoryStoreError(f"memory database {path} is corrupt or not a database ({e});"
                                " it was left untouched")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
        return MemoryStoreError(f"cannot write memory database {path} while {doing}: {e}")
    return MemoryStoreError(f"memory database {path}: {e} (while {doing})")


def _is_read_only_place(path: Path) -> bool:
    """True when ``path`` exists as a non-empty file that this process may not write."""
    import os

    try:
        if path.stat().st_size == 0:
            return False
        ro_fs = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False
    return ro_fs or not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK)


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """Open an existing memory that cannot be written (read-only file or file system).

    ``immutable`` (on a read-only file system, or when no WAL content is pending): SQLite then
    needs no -shm file, which cannot be created there. It also ignores a -wal file left by a
    crash, so on a read-only file system episodes committed only to such a WAL are not visible
    until it is writable again (they are not lost: the WAL stays on disk and is replayed by the
    next read-write open).
    """
    import os
    from urllib.parse import quote

    from frankenbot.memory.schema import (
        APPLICATION_ID,
        SCHEMA_VERSION,
        check_header,
        stored_version,
    )

    check_header(path)
    ro_fs = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    wal = path.with_name(path.name + "-wal")
    pending = wal.is_file() and wal.stat().st_size > 0
    # immutable: no -shm needed (none can be created here); only when no WAL content would
    # be skipped, or when the file system itself is read-only (then nobody can replay it)
    immutable = ro_fs or not pending
    uri = f"file:{quote(str(path.resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        conn.row_factory = sqlite3.Row
        result = conn.execute("PRAGMA quick_check").fetchone()[0]
        version = stored_version(SqliteBackend(conn, path))
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.Error as e:
        raise sqlite_error(e, path, "opening read-only") from e
    if app_id != APPLICATION_ID:
        conn.close()
        raise MemoryStoreError(f"{path} is not a FrankenBot memory database "
                               f"(application_id={app_id:#x})")
    if result != "ok" or version != SCHEMA_VERSION:
        conn.close()
        raise MemoryStoreError(f"memory database {path} is read-only and "
                               + (f"corrupt (quick_check: {result})" if result != "ok" else
                                  f"at schema version {version}, not {SCHEMA_VERSION} (it "
                                  "cannot be migrated read-only)"))
    return conn


def open_backend(url: str) -> Backend:
    """Open (creating or migrating) the database a URL names."""
    dialect, target = parse_db_url(url)
    if dialect == SQLITE:
        return SqliteBackend.open(Path(target))
    from frankenbot.memory.postgres import PostgresBackend

    return PostgresBackend.open(target)

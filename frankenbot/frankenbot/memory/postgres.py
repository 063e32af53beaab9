"""The PostgreSQL memory backend: one database shared by a fleet of robots (psycopg 3).

Identity lives in the ``frankenbot_meta`` table (PostgreSQL has no ``application_id``): a
database with tables but no application row of ours belongs to someone else and is never
written. The version and the migrations are schema.py's (the same mechanism as SQLite's), the
statements and column types PostgreSQL's through ``memory/sql.py``'s dialect, and migrations run
under the same advisory lock as writes, so robots starting together migrate once.

Writes: ``BEGIN`` then ``pg_advisory_xact_lock(WRITE_LOCK)``. Under READ COMMITTED each statement
after the lock sees every earlier writer's commit, so a promotion decided inside the transaction
is decided on complete counts, the way SQLite's ``BEGIN IMMEDIATE`` gives it on one file. The lock
goes with the transaction (commit, rollback or a dropped connection), so a killed robot never
leaves it held.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from frankenbot.errors import MemoryStoreError
from frankenbot.memory.backend import BUSY_TIMEOUT_S, Backend, redact
from frankenbot.memory.schema import APPLICATION_ID, META, ensure_schema
from frankenbot.memory.sql import postgres_dialect

# pg_advisory_xact_lock key of memory writes: the application id, so it cannot meet another
# application's lock on a shared server by accident.
WRITE_LOCK = APPLICATION_ID
APPLICATION = "frankenbot-memory"


class PgRow:
    """A result row indexable by column name (like sqlite3.Row) and by position."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: Sequence[Any]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, key: str | int) -> Any:
        return self._values[self._index[key]] if isinstance(key, str) else self._values[key]

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: Any) -> Callable[[Sequence[Any]], Any]:
    desc = cursor.description
    if desc is None:
        return tuple
    index = {c.name: i for i, c in enumerate(desc)}
    return lambda values: PgRow(index, values)


class PostgresBackend(Backend):
    """A psycopg 3 connection in autocommit mode; transactions are explicit BEGIN/COMMIT."""

    def __init__(self, conn: Any, url: str) -> None:
        self.conn = conn
        self.url = url
        self.where = redact(url)
        self.dialect = postgres_dialect()

    @classmethod
    def open(cls, url: str) -> "PostgresBackend":
        try:
            import psycopg
        except ImportError as e:  # pragma: no cover - psycopg is in requirements/base.txt
            raise MemoryStoreError(
                "memory db_url is PostgreSQL but psycopg is not installed"
                " (pip install 'psycopg[binary]')") from e
        try:
            conn = psycopg.connect(url, autocommit=True, row_factory=_row_factory,
                                   connect_timeout=int(BUSY_TIMEOUT_S),
                                   application_name=APPLICATION)
        except psycopg.Error as e:
            raise MemoryStoreError(
                f"cannot connect to memory database {redact(url)}: {str(e).strip()}") from e
        backend = cls(conn, url)
        try:
            ensure_schema(backend)
        except psycopg.Error as e:
            conn.close()
            raise backend.error(e, "opening") from e
        except BaseException:
            conn.close()
            raise
        return backend

    # ----------------------------------------------------------------------------- identity

    def tables(self) -> set[str]:
        return {r[0] for r in self.query(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema()")}

    def check_identity(self) -> None:
        """An empty database is ours to take; one with tables must carry our application row."""
        tables = self.tables()
        if not tables:
            return
        ours = META in tables and self.query(
            f"SELECT 1 FROM {META} WHERE key = 'application' AND value = ?", (APPLICATION,))
        if not ours:
            raise MemoryStoreError(
                f"{self.where} is a PostgreSQL database of another application ({len(tables)}"
                f" tables, e.g. {sorted(tables)[:3]}); refusing to use or overwrite it."
                " Point memory's db_url at an empty database.")

    def mark_identity(self) -> None:
        self.execute(f"CREATE TABLE IF NOT EXISTS {META} (key TEXT PRIMARY KEY,"
                     " value TEXT NOT NULL)")
        self.execute(f"INSERT INTO {META} (key, value) VALUES ('application', ?)"
                     " ON CONFLICT(key) DO NOTHING", (APPLICATION,))

    # ---------------------------------------------------------------------------- statements

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        return self.conn.execute(self.dialect.statement(sql), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(self.dialect.statement(sql), rows)

    @property
    def raw(self) -> Any:
        return self.conn

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error,)

    def error(self, e: BaseException, doing: str) -> MemoryStoreError:
        from psycopg import errors

        text = str(e).strip()
        if isinstance(e, (errors.DiskFull, errors.OutOfMemory)):
            return MemoryStoreError(f"memory database {self.where} is full while {doing};"
                                    f" nothing of this operation was stored ({text})")
        if isinstance(e, errors.OperationalError):
            return MemoryStoreError(f"memory database {self.where} unreachable while {doing}:"
                                    f" {text}")
        if isinstance(e, errors.InsufficientPrivilege):
            return MemoryStoreError(f"cannot write memory database {self.where} while {doing}:"
                                    f" {text}")
        return MemoryStoreError(f"memory database {self.where}: {text} (while {doing})")

    def is_unique_violation(self, e: BaseException) -> bool:
        from psycopg import errors

        return isinstance(e, errors.UniqueViolation)

    def begin_write(self) -> None:
        self.execute("BEGIN")
        self.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))

    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.conn.close()

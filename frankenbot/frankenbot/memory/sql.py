"""The SQL the store speaks, as each backend's driver receives it.

The store writes its statements once, with ``?`` parameters and the SQL both engines accept
(``ON CONFLICT`` upserts, ``RETURNING``); the schema is written once with type slots
(``{serial_pk}``, ``{ref}``, ``{real}``, ``{blob}``; literal braces doubled). A ``Dialect`` per
backend turns them into what its driver takes: SQLite's ``?`` as they are, psycopg's ``%s`` for
every parameter *outside* string literals, quoted names and comments (a lexer, not a text
replacement: a ``?`` inside ``'...'`` stays a character), with the literal ``%`` doubled as
psycopg requires; and the column types of the engine (``BIGSERIAL`` and ``BYTEA`` on
PostgreSQL). Rendered statements are
cached, so each distinct statement is lexed once per connection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from frankenbot.errors import MemoryStoreError


def split_parameters(sql: str) -> list[str]:
    """``sql`` cut at its ``?`` parameters (those outside literals, quoted names, comments)."""
    parts: list[str] = []
    start = i = 0
    n = len(sql)
    while i < n:
        c = sql[i]
        if c in ("'", '"'):  # a string literal or a quoted name; a doubled quote is escaped
            j = i + 1
            while True:
                k = sql.find(c, j)
                if k < 0:
                    raise MemoryStoreError(f"unterminated {c} in SQL: {sql!r}")
                if k + 1 < n and sql[k + 1] == c:
                    j = k + 2
                    continue
                i = k
                break
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            if end < 0:
                raise MemoryStoreError(f"unterminated comment in SQL: {sql!r}")
            i = end + 1
        elif c == "?":
            parts.append(sql[start:i])
            start = i + 1
        i += 1
    parts.append(sql[start:])
    return parts


@dataclass
class Dialect:
    """How one engine's driver takes the store's statements and the schema's types."""

    name: str
    parameter: str  # what a ``?`` becomes
    double_percent: bool  # the driver reads ``%`` as a format character (psycopg)
    types: Mapping[str, str]  # schema type slot -> the engine's column type
    _cache: dict[str, str] = field(default_factory=dict, repr=False)

    def statement(self, sql: str) -> str:
        done = self._cache.get(sql)
        if done is None:
            parts = split_parameters(sql)
            if self.double_percent:
                parts = [p.replace("%", "%%") for p in parts]
            done = self._cache[sql] = self.parameter.join(parts)
        return done

    def ddl(self, template: str) -> str:
        """A schema script with its type slots filled in for this engine."""
        return template.format_map(self.types)


def sqlite_dialect() -> Dialect:
    return Dialect("sqlite", "?", False, {
        "serial_pk": "INTEGER PRIMARY KEY AUTOINCREMENT", "ref": "INTEGER", "real": "REAL",
        "blob": "BLOB"})


def postgres_dialect() -> Dialect:
    return Dialect("postgresql", "%s", True, {
        "serial_pk": "BIGSERIAL PRIMARY KEY", "ref": "BIGINT", "real": "DOUBLE PRECISION",
        "blob": "BYTEA"})

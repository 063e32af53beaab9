"""Diagnostics: one problem found in a program, and how to show a list of them.

The same list is rendered two ways: for people (``line:col: error[code]: message`` with the
source line and a caret) and compactly for the planner's single repair prompt (one line each).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """``severity`` is ``error`` (the program must not run) or ``warning`` (it may)."""

    severity: str
    code: str
    line: int
    column: int
    message: str
    hint: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diags)


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    return sorted(diags, key=lambda d: (d.line, d.column, d.severity != ERROR, d.code))


def render_diagnostics(diags: Sequence[Diagnostic], compact: bool = False,
                       source: str | None = None) -> str:
    """Text for a list of diagnostics.

    ``compact``: one line each, ``L3:5 error unknown-object: ... (hint: ...)``, for prompts.
    Otherwise a readable block per diagnostic; with ``source`` the offending line is quoted
    with a caret under the column.
    """
    if not diags:
        return "" if compact else "no problems found"
    lines: list[str] = []
    src_lines = source.splitlines() if source is not None else []
    for d in sort_diagnostics(diags):
        if compact:
            hint = f" (hint: {d.hint})" if d.hint else ""
            lines.append(f"L{d.line}:{d.column} {d.severity} {d.code}: {d.message}{hint}")
            continue
        lines.append(f"{d.line}:{d.column}: {d.severity}[{d.code}]: {d.message}")
        if 1 <= d.line <= len(src_lines):
            text = src_lines[d.line - 1].rstrip()
            lines.append(f"    {text}")
            lines.append("    " + " " * max(0, d.column - 1) + "^")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    if not compact:
        n_err = sum(d.is_error for d in diags)
        n_warn = len(diags) - n_err
        lines.append(f"{n_err} error(s), {n_warn} warning(s)")
    return "\n".join(lines)


def diagnostics_to_json(diags: Sequence[Diagnostic]) -> str:
    return json.dumps([d.to_dict() for d in sort_diagnostics(diags)], indent=2)

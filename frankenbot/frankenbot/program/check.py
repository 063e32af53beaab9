"""One call for planner, memory and the CLI: parse + validate, never raising for bad input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from frankenbot.program.catalog import Catalog
from frankenbot.program.diagnostics import ERROR, Diagnostic, has_errors
from frankenbot.program.errors import ProgramSyntaxError
from frankenbot.program.parser import parse_program
from frankenbot.program.tree import Program
from frankenbot.program.validator import validate


@dataclass(frozen=True)
class CheckResult:
    """``program`` is None when the text did not parse (the syntax error is a diagnostic)."""

    program: Program | None
    diagnostics: tuple[Diagnostic, ...]
    stripped: tuple[str, ...] = ()
    source: str = ""

    @property
    def ok(self) -> bool:
        """Parsed and no errors (warnings allowed)."""
        return self.program is not None and not has_errors(self.diagnostics)


def syntax_diagnostic(e: ProgramSyntaxError) -> Diagnostic:
    return Diagnostic(ERROR, "syntax", e.line, e.column, e.message, e.hint)


def check_text(text: str, catalog: Catalog,
               object_ids: Iterable[str] | None = None) -> CheckResult:
    """Parse and validate ``text``; every problem comes back as a diagnostic."""
    try:
        parsed = parse_program(text)
    except ProgramSyntaxError as e:
        return CheckResult(None, (syntax_diagnostic(e),))
    diags = validate(parsed.program, catalog, object_ids)
    return CheckResult(parsed.program, tuple(diags), parsed.stripped, parsed.source)

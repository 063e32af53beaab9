"""Memory's one doorway to the program language (parser, printer, validator).

Keeping every use of ``frankenbot.program`` behind these few functions means the store and the
promotion code deal only in trees and in ``ProgramError``s with positions.
"""

from __future__ import annotations

from frankenbot.errors import ProgramError
from frankenbot.program.catalog import Catalog
from frankenbot.program.parser import parse_program, parse_skills
from frankenbot.program.printer import print_skill as _print_skill
from frankenbot.program.tree import Program, SkillDef
from frankenbot.program.validator import validate_skill


class SkillInvalid(ProgramError):
    """A skill parsed but the validator rejected it; ``line``/``column`` locate the first error."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        self.line = line
        self.column = column
        super().__init__(message)


def parse_library(text: str) -> tuple[SkillDef, ...]:
    """Skills of a library text; raises ProgramSyntaxError (line, column) when it does not parse."""
    return parse_skills(text)


def parse_task(text: str) -> Program:
    """The task program in ``text`` (chat noise tolerated); raises ProgramSyntaxError."""
    return parse_program(text).program


def print_skill(skill: SkillDef) -> str:
    """Canonical text of one skill definition."""
    return _print_skill(skill)


def check_skill(skill: SkillDef, catalog: Catalog) -> None:
    """Validate a skill against ``catalog`` (primitives, predicates, other skills).

    Raises ``SkillInvalid`` carrying every error message and the first error's position.
    """
    errors = [d for d in validate_skill(skill, catalog) if d.is_error]
    if errors:
        text = "; ".join(f"{d.line}:{d.column} {d.message}" for d in errors)
        raise SkillInvalid(f"skill {skill.name!r} is invalid: {text}", errors[0].line,
                           errors[0].column)

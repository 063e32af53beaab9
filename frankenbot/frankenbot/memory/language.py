"""Memory's one doorway to the program language (parser, printer, validator).

Keeping every use of ``frankenbot.program`` behind these few functions means the store and the
promotion code deal only in trees and in ``ProgramError``s with positions.
"""

from __future__ import annotations

from frankenbot.errors import ProgramError
from frankenbot.program.catalog import Catalog
from frankenbot.program.parser import parse_program, parse_skills
from frankenbot.program.printer import print_skill as _print_skill
from frankenbot.program.tree import Call, Main, Program, SkillDef


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
    try:
        from frankenbot.program.validator import validate
    except ModuleNotFoundError as e:
        if e.name != "frankenbot.program.validator":
            raise
        _check_calls(skill, catalog)  # the language's validator has not landed yet
        return
    program = Program(f"skill {skill.name}", Main(()), (), (skill,))
    diagnostics = [d for d in validate(program, catalog, ()) if _is_error(d)]
    if diagnostics:
        first = diagnostics[0]
        text = "; ".join(_render(d) for d in diagnostics)
        raise SkillInvalid(f"skill {skill.name!r} is invalid: {text}",
                           getattr(first, "line", 0), getattr(first, "column", 0))


def _is_error(d: object) -> bool:
    sev = getattr(d, "severity", "error")
    return str(getattr(sev, "value", sev)).lower() == "error"


def _render(d: object) -> str:
    line, col = getattr(d, "line", 0), getattr(d, "column", 0)
    msg = getattr(d, "message", str(d))
    return f"{line}:{col} {msg}" if line else str(msg)


def _check_calls(skill: SkillDef, catalog: Catalog) -> None:
    """Structural check of a skill's calls: known callee, known and complete arguments, types."""
    from frankenbot.program.catalog import ParamType, SignatureKind
    from frankenbot.program.tree import Ident, iter_block

    params = {p.name: p.type for p in skill.params}
    for _path, node in iter_block(skill.body, "skill"):
        if not isinstance(node, Call):
            continue
        sig = catalog.get(node.name)
        where = (node.span.line, node.span.column)
        if sig is None or sig.kind == SignatureKind.PREDICATE or node.name == skill.name:
            raise SkillInvalid(f"skill {skill.name!r} calls unknown {node.name!r}", *where)
        given = {a.name for a in node.args}
        for a in node.args:
            p = sig.param(a.name)
            if p is None:
                raise SkillInvalid(f"{node.name}() has no argument {a.name!r}", *where)
            v = a.value
            kind = params.get(v.name) if isinstance(v, Ident) else None
            if isinstance(v, Ident) and kind is None:
                raise SkillInvalid(f"{v.name!r} is not a parameter of skill {skill.name!r}",
                                   *where)
            actual = kind or ("number" if isinstance(v, float) else "string")
            if ParamType(actual) != p.type:
                raise SkillInvalid(f"{node.name}({a.name}=...) expects {p.type.value},"
                                   f" got {actual}", *where)
        missing = [p.name for p in sig.params if p.required and p.name not in given]
        if missing:
            raise SkillInvalid(f"{node.name}() is missing {', '.join(missing)}", *where)

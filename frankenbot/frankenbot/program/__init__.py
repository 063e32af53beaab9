"""The FrankenBot program language: grammar, parser, tree, validator, printer, interpreter.

Public API (see docs/LANGUAGE.md):
- ``parse_program(text) -> ParseResult`` (``.program``, ``.stripped``), ``parse_skills(text)``,
  ``ProgramSyntaxError`` (``.line``, ``.column``, ``.message``, ``.hint``);
- ``validate(program, catalog, object_ids) -> list[Diagnostic]``, ``render_diagnostics``;
- ``check_text(text, catalog, object_ids) -> CheckResult`` (never raises for bad input);
- ``print_program``, ``print_skill``; ``skill_signature``, ``catalog_with``;
- tree nodes (``Program``, ``Main``, ``Monitor``, ``SkillDef``, ``Call``, ``If``, ...),
  ``iter_nodes``, ``count_lines``; ``grammar_text(dialect)``.
The interpreter lives in ``frankenbot.program.interpreter`` and predicates in
``frankenbot.program.predicates`` (imported lazily by their users).
"""

from frankenbot.program.catalog import Catalog, Signature, SignatureKind, default_catalog
from frankenbot.program.check import CheckResult, check_text
from frankenbot.program.diagnostics import (
    ERROR,
    WARNING,
    Diagnostic,
    diagnostics_to_json,
    has_errors,
    render_diagnostics,
)
from frankenbot.program.errors import ProgramSyntaxError
from frankenbot.program.parser import (
    KEYWORDS,
    ParseResult,
    grammar_text,
    parse_program,
    parse_skills,
)
from frankenbot.program.printer import (
    print_block,
    print_call,
    print_cond,
    print_program,
    print_skill,
)
from frankenbot.program.tree import (
    And,
    Arg,
    Call,
    Cond,
    Exit,
    Goto,
    Ident,
    If,
    Label,
    Main,
    Monitor,
    Not,
    Or,
    Param,
    Pred,
    Program,
    Repeat,
    Scope,
    SkillDef,
    Span,
    Stmt,
    Then,
    ThenKind,
    While,
    count_lines,
    find_node,
    iter_nodes,
    iter_preds,
)
from frankenbot.program.validator import catalog_with, skill_signature, validate, validate_skill

__all__ = [
    "ERROR", "KEYWORDS", "WARNING", "And", "Arg", "Call", "Catalog", "CheckResult", "Cond",
    "Diagnostic", "Exit", "Goto", "Ident", "If", "Label", "Main", "Monitor", "Not", "Or",
    "Param", "ParseResult", "Pred", "Program", "ProgramSyntaxError", "Repeat", "Scope", "Signature",
    "SignatureKind", "SkillDef", "Span", "Stmt", "Then", "ThenKind", "While", "catalog_with",
    "check_text", "count_lines", "default_catalog", "diagnostics_to_json", "find_node",
    "grammar_text", "has_errors", "iter_nodes", "iter_preds", "parse_program", "parse_skills",
    "print_block", "print_call", "print_cond", "print_program", "print_skill",
    "render_diagnostics", "skill_signature", "validate", "validate_skill",
]

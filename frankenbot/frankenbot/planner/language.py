"""The planner's one door into the program language: check a text, explain why it is invalid.

Everything the planner needs from ``frankenbot.program`` goes through here, so the repair loop,
the offline planner's self-check and the CLI agree on what "valid" means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from frankenbot.program.catalog import Catalog
from frankenbot.program.check import check_text
from frankenbot.program.diagnostics import render_diagnostics
from frankenbot.program.parser import grammar_text
from frankenbot.program.tree import Call, Exit, Program, iter_block
from frankenbot.state import Scene


@dataclass(frozen=True)
class Checked:
    """Outcome of parsing + validating one answer."""

    program: Program | None  # None unless valid
    diagnostics: str  # compact validator text for the repair prompt ("" when clean)
    readable: str  # the same for people
    stripped: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.program is not None


def check(text: str, catalog: Catalog, object_ids: Iterable[str]) -> Checked:
    """Parse and validate ``text`` (chat noise allowed) against ``catalog`` and the scene's ids."""
    result = check_text(text, catalog, tuple(object_ids))
    diags = tuple(result.diagnostics)
    program = result.program if result.ok else None
    return Checked(program, "" if result.ok else render_diagnostics(diags, compact=True),
                   render_diagnostics(diags, compact=False, source=text) if diags else "",
                   tuple(result.stripped))


def print_text(program: Program) -> str:
    from frankenbot.program.printer import print_program

    return print_program(program)


def refusal_reason(program: Program) -> str | None:
    """The reason when a program only refuses (``main`` calls nothing and exits with failure)."""
    nodes = [n for _path, n in iter_block(program.main.body, "main")]
    if any(isinstance(n, Call) for n in nodes):
        return None
    exits = [n for n in nodes if isinstance(n, Exit)]
    if exits and not exits[0].success:
        return exits[0].reason or "no reason given"
    return None


GENERATION_MAX_SPACE = 24  # whitespace characters between two tokens in sent BNF grammars
_SKIP_WITH_COMMENTS = "SKIP: /([ \\t\\r\\n]|#[^\\n]*)+/"
_SKIP_WHITESPACE = "SKIP: /[ \\t\\r\\n]+/"


def program_grammar(dialect: str) -> str:
    """The task grammar for constrained decoding: ``lark``, ``llguidance``, ``gbnf`` (llama.cpp)
    or ``ebnf`` (xgrammar, SGLang); the last two are exported from the same Lark text.

    Comments are dropped from what a constrained model may write: they carry nothing for the
    robot, and a small model under a grammar that allows them can spend its whole token budget
    on comment lines. Every text this narrower grammar accepts, the parser accepts too. If the
    language's skip rule ever changes shape, the grammar is sent unchanged.
    """
    if dialect in ("gbnf", "ebnf"):
        from frankenbot.program.grammar_export import export_grammar

        return export_grammar(dialect, "task", program_grammar("lark"),
                              max_space=GENERATION_MAX_SPACE)
    text = grammar_text(dialect)
    lines = text.splitlines()
    if _SKIP_WITH_COMMENTS in lines:
        lines[lines.index(_SKIP_WITH_COMMENTS)] = _SKIP_WHITESPACE
        return "\n".join(lines) + "\n"
    return text


GRAMMAR_DIALECTS = ("lark", "llguidance", "gbnf", "ebnf")


class RequestGrammars:
    """The program grammar specialised to one planning request, per dialect, made on first use.

    Object-id positions may only hold the scene's ids (the validator accepts no others; with
    ``shapes``, id -> shape, only the ids of shapes the parameter takes), calls
    only the catalog's primitives and the request's skills with their own parameters, and
    predicates only the catalog's (``program.grammar_export.specialise_lark``, from the same
    comment-free Lark text as ``program_grammar``). ``get(dialect)`` returns "" when the
    grammar cannot be specialised (``problem`` says why); the client then sends the generic
    grammar."""

    def __init__(self, catalog: Catalog, object_ids: Iterable[str],
                 shapes: dict[str, str] | None = None) -> None:
        self._callees = catalog.primitives + catalog.skills
        self._predicates = catalog.predicates
        shapes = shapes or {}
        # id -> shape; a shape narrows the parameters the id may fill
        self._shapes = {i: shapes.get(i, "unknown") for i in sorted(set(object_ids))}
        self._lark: str | None = None  # the specialised Lark text, made once
        self._texts: dict[str, str] = {}
        self.problem = ""

    @classmethod
    def for_scene(cls, catalog: Catalog, scene: Scene) -> "RequestGrammars":
        """The grammars of a request on ``scene``: its ids, each with its perceived shape."""
        return cls(catalog, scene.ids(), {o.object_id: o.shape for o in scene.objects})

    def get(self, dialect: str) -> str:
        if dialect not in GRAMMAR_DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(GRAMMAR_DIALECTS)}")
        if dialect not in self._texts:
            self._texts[dialect] = self._make(dialect)
        return self._texts[dialect]

    def _make(self, dialect: str) -> str:
        from frankenbot.program.grammar_export import (
            GrammarExportError,
            export_grammar,
            specialise_lark,
        )

        try:
            if self._lark is None:
                self._lark = specialise_lark(self._shapes, self._callees, self._predicates,
                                             program_grammar("lark"))
            if dialect in ("gbnf", "ebnf"):
                return export_grammar(dialect, "task", self._lark, max_space=GENERATION_MAX_SPACE)
        except GrammarExportError as e:
            self.problem = str(e)
            return ""
        return self._lark  # lark and llguidance: the file is written in their common subset

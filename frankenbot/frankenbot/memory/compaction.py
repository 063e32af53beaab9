"""Rewrite a program to call library skills where it spells out a skill's body.

A VLM reads the skill list in its prompt and calls skills itself; a deterministic planner (the
offline planner) writes primitives only. This pass gives both the same benefit from the library:
wherever a block of ``main`` contains, as consecutive statements, exactly the body of a library
skill (same calls, conditions and literals, objects consistently bound to the skill's parameters,
labels owned by the window and targeted from nowhere else), those statements are replaced by one
call of the skill. Behaviour is unchanged: the interpreter runs the skill's body with the same
arguments (its labels and jumps stay inside the skill's frame), and ``during`` scopes still see
the primitives running inside it. Longer skills are tried first, and passes repeat until nothing
changes (skills may call skills); monitors are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from frankenbot.memory import promotion
from frankenbot.program.catalog import Catalog
from frankenbot.program.tree import (
    Arg,
    Call,
    Ident,
    Label,
    Program,
    SkillDef,
    Stmt,
    Transformer,
    iter_calls,
)

MAX_PASSES = 16


@dataclass(frozen=True)
class _LibrarySkill:
    name: str
    key: str
    length: int
    order: tuple[str, ...]  # skill parameter name bound to p0, p1, ...
    declared: tuple[str, ...]  # skill parameter names as declared (argument order of the call)


def library_patterns(skills: Sequence[SkillDef]) -> list[_LibrarySkill]:
    """Skills usable for compaction, longest first (then by name, for determinism)."""
    out = []
    for s in skills:
        got = promotion.generalise_with_binding(s.body)
        if got is None:
            continue
        pattern, binding = got
        if pattern.n_params != len(s.params) or len(pattern) < 2:
            continue
        if any(p.type != "object" for p in s.params):
            continue  # number/string parameters would need literal matching per call site
        out.append(_LibrarySkill(s.name, pattern.key, len(pattern), binding,
                                 tuple(p.name for p in s.params)))
    out.sort(key=lambda f: (-f.length, f.name))
    return out


def compact(program: Program, skills: Sequence[SkillDef], catalog: Catalog) -> Program:
    """``program`` with spelled-out skill bodies replaced by skill calls (see module docstring)."""
    library = library_patterns(skills)
    if not library:
        return program
    lengths = sorted({f.length for f in library}, reverse=True)
    by_key = {f.key: f for f in library}
    refs = promotion.label_refs(program)

    def match(window: tuple[Stmt, ...]) -> Call | None:
        if not all(_known(s, catalog) for s in window):
            return None
        inside = promotion._label_refs_in(window)
        external = frozenset(s.name for s in window if isinstance(s, Label)
                             and refs[s.name] > inside.get(s.name, 0))
        got = promotion.generalise_with_binding(window, external)
        if got is None:
            return None
        pattern, objects = got
        skill = by_key.get(pattern.key)
        if skill is None:
            return None
        bound = dict(zip(skill.order, objects, strict=True))
        return Call(skill.name, tuple(Arg(p, Ident(bound[p])) for p in skill.declared),
                    window[0].span)

    class Compactor(Transformer):
        """Windows that spell out a skill's body -> one call; nested blocks the same."""

        def block(self, stmts: Iterable[Stmt]) -> tuple[Stmt, ...]:
            stmts = tuple(stmts)
            out: list[Stmt] = []
            i = 0
            while i < len(stmts):
                for n in lengths:
                    call = match(stmts[i:i + n]) if i + n <= len(stmts) else None
                    if call is not None:
                        out.append(call)
                        i += n
                        break
                else:
                    out.extend(self.expand(stmts[i]))
                    i += 1
            return tuple(out)

    # Repeat until nothing changes: a skill may wrap another (``pick_and_place_checked`` calls
    # ``pick_and_place``), so one replacement can enable the next. Each pass that changes
    # something removes statements, so this ends.
    for _ in range(MAX_PASSES):
        new = Compactor().program(program)
        if new == program:
            break
        program = new
    return program


def _known(s: Stmt, catalog: Catalog) -> bool:
    """Calls in the window must name catalog entries (a local skill could shadow nothing)."""
    return all(catalog.get(c.name) is not None for c in iter_calls((s,)))

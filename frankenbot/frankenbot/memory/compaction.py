"""Rewrite a program to call library skills where it spells out a skill's calls.

A VLM reads the skill list in its prompt and calls skills itself; a deterministic planner (the
offline planner) writes primitives only. This pass gives both the same benefit from the library:
wherever a block of ``main`` contains, as consecutive calls, exactly the body of a library skill
whose body is a flat call sequence (same calls, same literals, objects consistently bound to the
skill's parameters), those calls are replaced by one call of the skill. Behaviour is unchanged:
the interpreter runs the skill's body with the same arguments, and ``during`` scopes still see
the primitives running inside the skill. Longer skills are tried first; labels, conditions,
jumps and monitors are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from frankenbot.memory import promotion
from frankenbot.program.catalog import Catalog
from frankenbot.program.tree import Arg, Call, Ident, If, Program, Repeat, SkillDef, Stmt, While


@dataclass(frozen=True)
class _FlatSkill:
    name: str
    key: str
    order: tuple[str, ...]  # skill parameter name for each pattern parameter index
    declared: tuple[str, ...]  # skill parameter names as declared (argument order of the call)


def flat_skills(skills: Sequence[SkillDef]) -> list[_FlatSkill]:
    """Library skills usable for compaction, longest first (then by name, for determinism)."""
    out = []
    for s in skills:
        pattern = promotion.skill_pattern(s)
        if pattern is None or pattern.n_params != len(s.params) or len(pattern) < 2:
            continue
        if any(p.type != "object" for p in s.params):
            continue  # number/string parameters would need literal matching per call site
        order = _param_order(s)
        out.append((len(pattern), _FlatSkill(s.name, pattern.key, order,
                                             tuple(p.name for p in s.params))))
    out.sort(key=lambda t: (-t[0], t[1].name))
    return [f for _, f in out]


def _param_order(skill: SkillDef) -> tuple[str, ...]:
    """Skill parameter names in the order ``promotion.generalise`` numbers them."""
    seen: list[str] = []
    for call in skill.body:
        if isinstance(call, Call):
            for a in sorted(call.args, key=lambda a: a.name):
                if isinstance(a.value, Ident) and a.value.name not in seen:
                    seen.append(a.value.name)
    return tuple(seen)


def _objects_in_order(calls: Sequence[Call]) -> list[str]:
    seen: list[str] = []
    for call in calls:
        for a in sorted(call.args, key=lambda a: a.name):
            if isinstance(a.value, Ident) and a.value.name not in seen:
                seen.append(a.value.name)
    return seen


def compact(program: Program, skills: Sequence[SkillDef], catalog: Catalog) -> Program:
    """``program`` with spelled-out skill bodies replaced by skill calls (see module docstring)."""
    flats = flat_skills(skills)
    if not flats:
        return program
    lengths = sorted({len(promotion.Pattern.from_key(f.key)) for f in flats}, reverse=True)
    by_key = {f.key: f for f in flats}

    def block(stmts: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        i = 0
        while i < len(stmts):
            replaced = False
            for n in lengths:
                window = stmts[i:i + n]
                if len(window) < n or not all(
                        isinstance(s, Call) and catalog.get(s.name) is not None for s in window):
                    continue
                calls = [s for s in window if isinstance(s, Call)]
                pattern = promotion.generalise(calls)
                flat = by_key.get(pattern.key) if pattern is not None else None
                if flat is None:
                    continue
                objs = _objects_in_order(calls)
                bound = dict(zip(flat.order, objs, strict=True))
                args = tuple(Arg(pname, Ident(bound[pname])) for pname in flat.declared)
                out.append(Call(flat.name, args, window[0].span))
                i += n
                replaced = True
                break
            if replaced:
                continue
            s = stmts[i]
            if isinstance(s, If):
                s = replace(s, then=block(s.then), orelse=block(s.orelse))
            elif isinstance(s, (Repeat, While)):
                s = replace(s, body=block(s.body))
            out.append(s)
            i += 1
        return tuple(out)

    return replace(program, main=replace(program.main, body=block(program.main.body)))

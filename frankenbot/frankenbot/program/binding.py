"""Resolving calls: which signature and skill body a name means, and argument binding.

Skill parameters are plain values substituted into the body's calls and conditions; nothing is
evaluated. Arguments are re-checked against the catalog at run time (names, types, ranges,
defaults) because escalators can insert calls the validator never saw.
"""

from __future__ import annotations

from typing import Mapping

from frankenbot.ports import Value
from frankenbot.program.catalog import Catalog, ParamType, Signature, SignatureKind
from frankenbot.program.tree import Arg, Call, Ident, Program, SkillDef
from frankenbot.program.validator import skill_signature


class CallResolver:
    """Names -> signatures and skill definitions for one program (its own skills first, then
    the catalog's library skills, whose canonical bodies are parsed once and cached)."""

    def __init__(self, program: Program, catalog: Catalog) -> None:
        self._program = program
        self._catalog = catalog
        self._skills: dict[str, SkillDef] = {}
        self._local_sigs = {s.name: skill_signature(s) for s in program.skills}

    def signature(self, name: str) -> Signature | None:
        local = self._local_sigs.get(name)
        return local if local is not None else self._catalog.get(name)

    def skill_def(self, name: str) -> SkillDef | None:
        local = self._program.skill(name)
        if local is not None:
            return local
        cached = self._skills.get(name)
        if cached is None:
            sig = self._catalog.get(name)
            if sig is None or sig.kind != SignatureKind.SKILL or not sig.body:
                return None
            from frankenbot.program.parser import parse_skills

            defs = [d for d in parse_skills(sig.body) if d.name == name]
            if not defs:
                return None
            cached = self._skills[name] = defs[0]
        return cached


def bind_args(call: Call, sig: Signature, scope: Mapping[str, Value]) -> dict[str, Value] | str:
    """Argument values with skill parameters (``scope``) substituted and defaults filled in,
    or the reason the call is malformed."""
    values: dict[str, Value] = {}
    for a in call.args:
        p = sig.param(a.name)
        if p is None:
            return f"{call.name} has no parameter {a.name!r}"
        v = a.value
        if isinstance(v, Ident):
            v = scope.get(v.name, v.name)
        if p.type == ParamType.NUMBER:
            if not isinstance(v, float):
                return f"{call.name}({a.name}=...) needs a number, got {v!r}"
            if (p.minimum is not None and v < p.minimum) or (
                    p.maximum is not None and v > p.maximum):
                return f"{call.name}({a.name}={v:g}) is out of range"
        elif not isinstance(v, str):
            return f"{call.name}({a.name}=...) needs {p.type.value}, got {v!r}"
        values[a.name] = v
    for p in sig.params:
        if p.name not in values:
            if p.default is None:
                return f"{call.name} is missing {p.name!r}"
            values[p.name] = p.default
    return values


def bound_call(call: Call, sig: Signature, values: Mapping[str, Value]) -> Call:
    """The call as it actually ran: skill parameters replaced by their values."""
    args = []
    for a in call.args:
        p, v = sig.param(a.name), values.get(a.name)
        if p is None or v is None:
            continue
        args.append(Arg(a.name, Ident(v) if p.type == ParamType.OBJECT and isinstance(v, str)
                        else v, a.span))
    return Call(call.name, tuple(args), call.span)

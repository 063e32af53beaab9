"""Skill promotion: mine repeated call sequences from episodes and turn them into skills.

The rule, in order:

1. *Runs*: in every block of a program's ``main`` (nested blocks included, monitor handlers and
   local skills excluded), a run is a maximal stretch of consecutive calls of catalog primitives
   or library skills. Anything else (if, loop, label, goto, exit) ends a run.
2. *Windows*: every contiguous window of a run with ``min_len <= length <= max_len``.
3. *Generalisation*: object ids become parameters, numbered by first appearance (the same id twice
   is the same parameter); numbers and strings stay literal. A window is kept only if it is
   *connected*: every call names an object and the calls, linked by shared objects, form one
   group (``open_drawer(d); pick(a); place_in(a, d)`` is one; ``place_in(a, bowl); pick(b)``
   joins two unrelated manipulations and is not a skill).
4. *Counting*: per pattern, ``seen`` = episodes containing it, ``successes`` = successful ones
   (each episode counts once per pattern).
5. *Selection*: a pattern is promoted when ``successes >= k`` and ``successes / seen >= r``, it is
   not already in the library up to parameter renaming (dedup), and it is *closed*: no longer
   eligible pattern containing it has the same number of successes (the shorter one would then
   never occur on its own and adds nothing).
6. *Validation*: the skill is printed, re-parsed and validated against the catalog by the caller
   before it is stored, so only skills that the validator accepts enter the library.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from frankenbot.program.catalog import Catalog, SignatureKind
from frankenbot.program.tree import (
    Arg,
    Call,
    Ident,
    If,
    Param,
    Program,
    Repeat,
    SkillDef,
    Stmt,
    While,
)

RESERVED = frozenset(
    "task main if else repeat while max goto exit success failure monitor when during then"
    " resume retry escalate skill object number string not and or".split())
MAX_NAME_LEN = 40


@dataclass(frozen=True)
class PatternArg:
    """One argument of a generalised call: a parameter index or a literal value."""

    name: str
    param: int | None = None  # index into Pattern.params when the value was an object id
    literal: float | str | None = None


@dataclass(frozen=True)
class PatternCall:
    name: str
    args: tuple[PatternArg, ...]


@dataclass(frozen=True)
class Pattern:
    """A generalised call sequence; ``key`` identifies it up to parameter renaming."""

    calls: tuple[PatternCall, ...]
    n_params: int

    @property
    def key(self) -> str:
        return json.dumps(
            [[c.name, [[a.name, a.param, a.literal] for a in c.args]] for c in self.calls],
            separators=(",", ":"))

    @classmethod
    def from_key(cls, key: str) -> "Pattern":
        data = json.loads(key)
        calls = tuple(
            PatternCall(name, tuple(PatternArg(n, p, lit) for n, p, lit in args))
            for name, args in data)
        n = 1 + max((a.param for c in calls for a in c.args if a.param is not None), default=-1)
        return cls(calls, n)

    def __len__(self) -> int:
        return len(self.calls)

    def windows(self, min_len: int) -> Iterator["Pattern"]:
        """Every contiguous sub-pattern of length >= min_len, shorter than this one."""
        n = len(self.calls)
        for length in range(min_len, n):
            for start in range(0, n - length + 1):
                p = generalise_pattern(self.calls[start:start + length])
                if p is not None:
                    yield p


def _value_key(v: Ident | float | str) -> tuple[str, object]:
    if isinstance(v, Ident):
        return ("obj", v.name)
    return ("lit", v)


def generalise(calls: Sequence[Call]) -> Pattern | None:
    """Object ids -> parameters by first appearance; None when the calls are not connected."""
    if not _connected(calls):
        return None
    params: dict[str, int] = {}
    out = []
    for call in calls:
        args = []
        for a in sorted(call.args, key=lambda a: a.name):
            if isinstance(a.value, Ident):
                idx = params.setdefault(a.value.name, len(params))
                args.append(PatternArg(a.name, param=idx))
            else:
                args.append(PatternArg(a.name, literal=a.value))
        out.append(PatternCall(call.name, tuple(args)))
    return Pattern(tuple(out), len(params))


def _connected(calls: Sequence[Call]) -> bool:
    """True when the calls, linked by the objects they share, form one connected group."""
    groups: list[set[str]] = []
    for call in calls:
        objs = {a.value.name for a in call.args if isinstance(a.value, Ident)}
        if not objs:
            return False
        merged = set(objs)
        for g in [g for g in groups if g & objs]:
            merged |= g
            groups.remove(g)
        groups.append(merged)
    return len(groups) == 1


def generalise_pattern(calls: Sequence[PatternCall]) -> Pattern | None:
    """Re-number the parameters of a slice of a pattern (same connectivity rule)."""
    as_calls = [
        Call(c.name, tuple(
            Arg(a.name, Ident(f"p{a.param}") if a.param is not None else a.literal)  # type: ignore[arg-type]
            for a in c.args))
        for c in calls]
    return generalise(as_calls)


def _blocks(stmts: tuple[Stmt, ...]) -> Iterator[tuple[Stmt, ...]]:
    yield stmts
    for s in stmts:
        if isinstance(s, If):
            yield from _blocks(s.then)
            yield from _blocks(s.orelse)
        elif isinstance(s, (Repeat, While)):
            yield from _blocks(s.body)


def runs(program: Program, catalog: Catalog) -> list[tuple[Call, ...]]:
    """Maximal stretches of consecutive primitive/skill calls in every block of main."""
    callable_kinds = (SignatureKind.PRIMITIVE, SignatureKind.SKILL)
    local = {s.name for s in program.skills}
    out: list[tuple[Call, ...]] = []
    for block in _blocks(program.main.body):
        current: list[Call] = []
        for s in block:
            sig = catalog.get(s.name) if isinstance(s, Call) else None
            if isinstance(s, Call) and sig is not None and sig.kind in callable_kinds \
                    and s.name not in local:
                current.append(s)
                continue
            if current:
                out.append(tuple(current))
            current = []
        if current:
            out.append(tuple(current))
    return out


def patterns_in(program: Program, catalog: Catalog, min_len: int, max_len: int) -> set[Pattern]:
    """The distinct connected generalised windows of a program (see the module docstring)."""
    found: set[Pattern] = set()
    for run in runs(program, catalog):
        for length in range(min_len, min(max_len, len(run)) + 1):
            for start in range(0, len(run) - length + 1):
                p = generalise(run[start:start + length])
                if p is not None:
                    found.add(p)
    return found


def skill_pattern(skill: SkillDef) -> Pattern | None:
    """The pattern of a skill whose body is a flat call sequence (None for other bodies)."""
    if not skill.body or not all(isinstance(s, Call) for s in skill.body):
        return None
    return generalise([s for s in skill.body if isinstance(s, Call)])


def canonical_key(skill: SkillDef, printed_body: str) -> str:
    """Identity of a skill up to parameter renaming: its pattern key, else renamed body text.

    ``printed_body`` is the canonical text of the skill with parameters renamed ``p0, p1, ...``
    by first use (see ``renamed``); it is used for bodies that are not a flat call sequence.
    """
    p = skill_pattern(skill)
    if p is not None and p.n_params == len(skill.params):
        return p.key
    return "text:" + printed_body


def renamed(skill: SkillDef) -> SkillDef:
    """The skill with name ``_``, no description and parameters ``p0..`` by first use."""
    order: dict[str, str] = {}
    names = {p.name for p in skill.params}

    def visit_value(v: Ident | float | str) -> Ident | float | str:
        if isinstance(v, Ident) and v.name in names:
            return Ident(order.setdefault(v.name, f"p{len(order)}"))
        return v

    def visit(stmts: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Call):
                out.append(Call(s.name, tuple(Arg(a.name, visit_value(a.value)) for a in s.args)))
            elif isinstance(s, If):
                out.append(If(_rename_cond(s.cond, names, order), visit(s.then), visit(s.orelse)))
            elif isinstance(s, Repeat):
                out.append(Repeat(s.count, visit(s.body)))
            elif isinstance(s, While):
                out.append(While(_rename_cond(s.cond, names, order), s.bound, visit(s.body)))
            else:
                out.append(s)
        return tuple(out)

    body = visit(skill.body)
    for p in skill.params:  # unused parameters still count, after the used ones
        order.setdefault(p.name, f"p{len(order)}")
    params = sorted((Param(order[p.name], p.type) for p in skill.params), key=lambda p: p.name)
    return SkillDef("_", tuple(params), "", body)


def _rename_cond(cond, names: set[str], order: dict[str, str]):  # type: ignore[no-untyped-def]
    from frankenbot.program.tree import And, Not, Or, Pred

    if isinstance(cond, Pred):
        args = tuple(
            Ident(order.setdefault(a.name, f"p{len(order)}"))
            if isinstance(a, Ident) and a.name in names else a for a in cond.args)
        return Pred(cond.name, args)
    if isinstance(cond, Not):
        return Not(_rename_cond(cond.operand, names, order))
    ops = tuple(_rename_cond(c, names, order) for c in cond.operands)
    return And(ops) if isinstance(cond, And) else Or(ops)


@dataclass(frozen=True)
class PatternStats:
    pattern: Pattern
    seen: int
    successes: int

    @property
    def success_rate(self) -> float:
        return self.successes / self.seen if self.seen else 0.0


def select(stats: Iterable[PatternStats], library_keys: set[str], min_support: int,
           min_success_rate: float, min_len: int) -> list[PatternStats]:
    """Patterns to promote now: eligible, not in the library, closed (module docstring, step 5)."""
    eligible = [s for s in stats
                if s.successes >= min_support and s.success_rate >= min_success_rate]
    by_key = {s.pattern.key: s for s in eligible}
    shadowed: set[str] = set()
    for s in eligible:
        for w in s.pattern.windows(min_len):
            sub = by_key.get(w.key)
            if sub is not None and sub.successes == s.successes:
                shadowed.add(w.key)
    chosen = [s for s in eligible if s.pattern.key not in shadowed
              and s.pattern.key not in library_keys]
    # Longest first, then most used: deterministic order for naming.
    chosen.sort(key=lambda s: (-len(s.pattern), -s.successes, s.pattern.key))
    return chosen


def _role_names(pattern: Pattern, catalog: Catalog) -> list[str]:
    """Parameter names from the argument each object first fills (obj, container, target...)."""
    names: list[str | None] = [None] * pattern.n_params
    for c in pattern.calls:
        for a in c.args:
            if a.param is not None and names[a.param] is None:
                names[a.param] = a.name
    out: list[str] = []
    for i, n in enumerate(names):
        base = n or f"p{i}"
        name, k = base, 2
        while name in out or name in RESERVED or catalog.get(name) is not None:
            name, k = f"{base}{k}", k + 1
        out.append(name)
    return out


def skill_name(pattern: Pattern, taken: set[str]) -> str:
    """``pick_then_place_in``; long ones ``open_drawer_to_close_drawer_4``; unique in ``taken``."""
    parts = [c.name for c in pattern.calls]
    base = "_then_".join(parts)
    if len(base) > MAX_NAME_LEN:
        base = f"{parts[0]}_to_{parts[-1]}_{len(parts)}"[:MAX_NAME_LEN]
    name, k = base, 2
    while name in taken or name in RESERVED:
        name, k = f"{base}_{k}", k + 1
    return name


def to_skill(pattern: Pattern, name: str, catalog: Catalog, seen: int, successes: int) -> SkillDef:
    """The skill definition for a pattern: typed object parameters, the calls as its body."""
    pnames = _role_names(pattern, catalog)
    body = []
    for c in pattern.calls:
        sig = catalog.get(c.name)
        order = [p.name for p in sig.params] if sig is not None else []
        args = sorted(c.args, key=lambda a: order.index(a.name) if a.name in order else len(order))
        body.append(Call(c.name, tuple(
            Arg(a.name, Ident(pnames[a.param]) if a.param is not None else a.literal)  # type: ignore[arg-type]
            for a in args)))
    steps = ", ".join(c.name for c in pattern.calls)
    desc = f"learned: {steps} (succeeded in {successes} of {seen} episodes)"
    return SkillDef(name, tuple(Param(n, "object") for n in pnames), desc, tuple(body))

"""Skill promotion: mine repeated statement sequences from episodes and turn them into skills.

The rule, in order:

1. *Segments*: in every block of a program's ``main`` (nested blocks included; monitor handlers
   and local skills excluded) a segment is a maximal stretch of *minable* statements: calls of
   catalog primitives or library skills, labels, gotos, and ``if`` statements whose branches hold
   only such calls and gotos. Anything else (exit, loops, deeper ifs, unknown calls) ends it.
2. *Windows*: every contiguous window of a segment with ``min_len <= length <= max_len``
   statements. A window must be self-contained: each goto in it targets a label in it, each label
   in it is targeted from inside it and from nowhere else in the program (main or monitors), and
   it holds at least one call. So the window means the same thing wherever it is pasted.
3. *Generalisation*: object ids (in call arguments and predicate arguments) become parameters
   ``p0, p1, ...`` by first appearance (call arguments in name order), labels become ``L0, L1,
   ...``; numbers and strings stay literal. A window is kept only if it is *connected*: its calls
   and conditions, linked by the objects they share, form one group, and each of them names an
   object (``place_in(a, bowl); pick(b)`` joins two unrelated manipulations and is not a skill).
4. *Counting*: per pattern, ``seen`` = episodes containing it, ``successes`` = successful ones
   (each episode counts once per pattern).
5. *Selection*: a pattern is promoted when ``successes >= k`` and ``successes / seen >= r``, it is
   not already in the library up to parameter renaming (dedup), and it is *closed*: no longer
   eligible pattern containing it has the same number of successes (the shorter one would then
   never occur on its own and adds nothing).
6. *Validation*: the skill is printed, re-parsed and validated against the catalog by the caller
   before it is stored, so only skills that the validator accepts enter the library.

A pattern's key is the canonical text of its generalised statements, so "same body up to
parameter (and label) renaming" is plain string equality.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from frankenbot.program.catalog import Catalog, SignatureKind
from frankenbot.program.printer import print_block
from frankenbot.program.tree import (
    MAIN,
    Arg,
    Call,
    Goto,
    Ident,
    If,
    Label,
    Param,
    Program,
    SkillDef,
    Stmt,
    Transformer,
    cond_idents,
    iter_block,
    iter_blocks,
    iter_calls,
    iter_preds,
    stmt_path,
    within,
)

RESERVED = frozenset(
    "task main if else repeat while max goto exit success failure monitor when during then"
    " resume retry escalate skill object number string not and or".split())
MAX_NAME_LEN = 40
_PARAM_RE = re.compile(r"\bp(\d+)\b")


@dataclass(frozen=True)
class Pattern:
    """Generalised statements (objects ``p<i>``, labels ``L<i>``) and their canonical text."""

    stmts: tuple[Stmt, ...] = field(compare=False)
    n_params: int = field(compare=False)
    key: str

    @classmethod
    def from_key(cls, key: str) -> "Pattern":
        """Rebuild a pattern from its stored key (the canonical text); cached, keys are pure."""
        return _pattern_from_key(key)

    def __len__(self) -> int:
        return len(self.stmts)

    @property
    def calls(self) -> tuple[Call, ...]:
        return tuple(iter_calls(self.stmts))

    def windows(self, min_len: int) -> Iterator["Pattern"]:
        """Every self-contained, connected sub-window of length >= min_len, shorter than this."""
        n = len(self.stmts)
        refs = _label_refs_in(self.stmts)
        for length in range(min_len, n):
            for start in range(0, n - length + 1):
                window = self.stmts[start:start + length]
                inside = _label_refs_in(window)
                external = {lab for lab in refs if refs[lab] > inside.get(lab, 0)}
                p = generalise(window, frozenset(external))
                if p is not None:
                    yield p


@functools.lru_cache(maxsize=4096)
def _pattern_from_key(key: str) -> Pattern:
    from frankenbot.program.parser import parse_skills

    n = 1 + max((int(m) for m in _PARAM_RE.findall(key)), default=-1)
    params = ", ".join(f"p{i}: object" for i in range(n))
    (skill,) = parse_skills(f"skill _k({params}) {{\n{key}\n}}\n")
    return Pattern(skill.body, n, key)


@functools.lru_cache(maxsize=4096)
def _windows_of_key(key: str, min_len: int) -> tuple[Pattern, ...]:
    return tuple(_pattern_from_key(key).windows(min_len))


# ------------------------------------------------------------------------------ generalisation

def _label_refs_in(stmts: tuple[Stmt, ...]) -> Counter[str]:
    return Counter(s.label for _path, s in iter_block(stmts, "") if isinstance(s, Goto))


def _simple_if(s: If) -> bool:
    return all(isinstance(x, (Call, Goto)) for x in (*s.then, *s.orelse))


def _objects(s: Stmt) -> set[str]:
    """The object ids a call or an if (its condition and its calls) names."""
    objs = {a.value.name for c in iter_calls((s,)) for a in c.args if isinstance(a.value, Ident)}
    if isinstance(s, If):
        objs |= {i.name for i in cond_idents(s.cond)}
    return objs


def _connected(stmts: Sequence[Stmt]) -> bool:
    """Calls and ifs each name an object, and shared objects link them into one group."""
    groups: list[set[str]] = []
    for s in stmts:
        if isinstance(s, (Label, Goto)):
            continue
        objs = _objects(s)
        if not objs:
            return False
        merged = set(objs)
        for g in [g for g in groups if g & objs]:
            merged |= g
            groups.remove(g)
        groups.append(merged)
    return len(groups) == 1


class _Renamer(Transformer):
    """Objects -> p<i> and labels -> L<i>, both by first appearance; call arguments in name
    order; spans dropped (a pattern is text, not a place in a source)."""

    def __init__(self) -> None:
        self.objects: dict[str, str] = {}
        self.labels: dict[str, str] = {}

    def value(self, v: Ident | float | str) -> Ident | float | str:
        if isinstance(v, Ident):
            return Ident(self.objects.setdefault(v.name, f"p{len(self.objects)}"))
        return v

    def label(self, name: str) -> str:
        return self.labels.setdefault(name, f"L{len(self.labels)}")

    def call(self, call: Call) -> Call:
        args = sorted(call.args, key=lambda a: a.name)
        return Call(call.name, tuple(Arg(a.name, self.value(a.value)) for a in args))


def _minable(s: Stmt) -> bool:
    return isinstance(s, (Call, Label, Goto)) or (isinstance(s, If) and _simple_if(s))


def generalise_with_binding(stmts: Sequence[Stmt], external: frozenset[str] = frozenset()
                            ) -> tuple[Pattern, tuple[str, ...]] | None:
    """The window's pattern and the object ids bound to p0, p1, ...; None when not eligible."""
    if not stmts or not all(_minable(s) for s in stmts):
        return None
    labels = [s.name for s in stmts if isinstance(s, Label)]
    targets = _label_refs_in(tuple(stmts))
    if len(set(labels)) != len(labels) or set(targets) - set(labels) \
            or set(labels) - set(targets) or set(labels) & external:
        return None
    if not any(True for _ in iter_calls(stmts)) or not _connected(stmts):
        return None
    r = _Renamer()
    out = r.block(stmts)
    binding = tuple(sorted(r.objects, key=lambda k: int(r.objects[k][1:])))
    return Pattern(out, len(r.objects), print_block(out)), binding


def generalise(stmts: Sequence[Stmt], external: frozenset[str] = frozenset()) -> Pattern | None:
    """The window's pattern (see the module docstring), or None."""
    got = generalise_with_binding(stmts, external)
    return got[0] if got is not None else None


# --------------------------------------------------------------------------------- mining

def label_refs(program: Program) -> Counter[str]:
    """How often each label is targeted anywhere: gotos in main and handlers, monitor thens."""
    refs = _label_refs_in(program.main.body)
    for m in program.monitors:
        refs.update(_label_refs_in(m.handler))
        if m.then.label:
            refs[m.then.label] += 1
    return refs


def _minable_in(program: Program, catalog: Catalog) -> Callable[[Stmt], bool]:
    callable_kinds = (SignatureKind.PRIMITIVE, SignatureKind.SKILL)
    local = {s.name for s in program.skills}

    def ok_call(c: Call) -> bool:
        sig = catalog.get(c.name)
        return sig is not None and sig.kind in callable_kinds and c.name not in local

    def ok(s: Stmt) -> bool:
        if isinstance(s, Call):
            return ok_call(s)
        if isinstance(s, If):
            return _simple_if(s) and all(ok_call(c) for c in iter_calls((s,)))
        return isinstance(s, (Label, Goto))

    return ok


def _block_segments(block: tuple[Stmt, ...], ok: Callable[[Stmt], bool]
                    ) -> list[tuple[int, tuple[Stmt, ...]]]:
    """(start index, segment) for the maximal minable stretches of one block."""
    out: list[tuple[int, tuple[Stmt, ...]]] = []
    start = None
    for i, s in enumerate((*block, None)):
        if s is not None and ok(s):
            start = i if start is None else start
        elif start is not None:
            out.append((start, block[start:i]))
            start = None
    return out


def segments(program: Program, catalog: Catalog) -> list[tuple[Stmt, ...]]:
    """Maximal stretches of minable statements in every block of main."""
    ok = _minable_in(program, catalog)
    return [seg for _path, block in iter_blocks(program.main.body)
            for _i, seg in _block_segments(block, ok)]


def runs(program: Program, catalog: Catalog) -> list[tuple[Stmt, ...]]:
    """Alias of ``segments`` (the stretches promotion mines)."""
    return segments(program, catalog)


def windows_of(program: Program, catalog: Catalog, min_len: int, max_len: int
               ) -> Iterator[tuple[tuple[Stmt, ...], frozenset[str], tuple[str, ...]]]:
    """(window, labels in it targeted from outside it, node paths of its statements)."""
    refs = label_refs(program)
    ok = _minable_in(program, catalog)
    for prefix, block in iter_blocks(program.main.body, MAIN):
        for i, seg in _block_segments(block, ok):
            for length in range(min_len, min(max_len, len(seg)) + 1):
                for start in range(0, len(seg) - length + 1):
                    window = seg[start:start + length]
                    inside = _label_refs_in(window)
                    external = frozenset(s.name for s in window if isinstance(s, Label)
                                         and refs[s.name] > inside.get(s.name, 0))
                    paths = tuple(stmt_path(prefix, i + start + k) for k in range(length))
                    yield window, external, paths


def occurrences_in(program: Program, catalog: Catalog, min_len: int, max_len: int
                   ) -> list[tuple[Pattern, tuple[str, ...], tuple[str, ...]]]:
    """(pattern, statement paths, paths of its top-level calls) for every eligible window."""
    out = []
    for window, external, paths in windows_of(program, catalog, min_len, max_len):
        p = generalise(window, external)
        if p is not None:
            calls = tuple(path for path, s in zip(paths, window, strict=True)
                          if isinstance(s, Call))
            out.append((p, paths, calls))
    return out


def patterns_in(program: Program, catalog: Catalog, min_len: int, max_len: int) -> set[Pattern]:
    """The distinct eligible generalised windows of a program (see the module docstring)."""
    return {p for p, _paths, _calls in occurrences_in(program, catalog, min_len, max_len)}


OK, FAILED, NOT_RUN = "ok", "failed", "not_run"


def window_outcome(paths: Sequence[str], call_paths: Sequence[str],
                   trace: Sequence[tuple[str, str, str]]) -> str:
    """How one occurrence fared in an executed program, from its trace.

    ``trace`` holds (path, event, status) entries. ``failed``: some node of the window (or of
    a skill it called) left with status failure; ``ok``: every top-level call of the window
    left with success; otherwise ``not_run`` (the run never got there, or a branch skipped it).
    """
    def inside(p: str) -> bool:
        return any(within(p, w) for w in paths)

    left_ok = set()
    for path, event, status in trace:
        if not inside(path):
            continue
        if event == "leave" and status == "failure":
            return FAILED
        if event == "leave" and status == "success":
            left_ok.add(path)
    return OK if call_paths and all(c in left_ok for c in call_paths) else NOT_RUN


def skill_pattern(skill: SkillDef) -> Pattern | None:
    """The pattern of a skill's body when it is one minable window (None for other bodies)."""
    return generalise(skill.body)


def canonical_key(skill: SkillDef, printed_body: str) -> str:
    """Identity of a skill up to parameter renaming: its pattern key, else renamed body text.

    ``printed_body`` is the canonical text of the skill with parameters renamed ``p0, p1, ...``
    by first use (see ``renamed``); it is used for bodies that are not one minable window.
    """
    p = skill_pattern(skill)
    if p is not None and p.n_params == len(skill.params):
        return p.key
    return "text:" + printed_body


class _ParamRenamer(Transformer):
    """A skill's parameters -> p0, p1, ... by first use (other identifiers kept)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.order: dict[str, str] = {}

    def value(self, v: Ident | float | str) -> Ident | float | str:
        if isinstance(v, Ident) and v.name in self.names:
            return Ident(self.order.setdefault(v.name, f"p{len(self.order)}"))
        return v


def renamed(skill: SkillDef) -> SkillDef:
    """The skill with name ``_``, no description and parameters ``p0..`` by first use."""
    renamer = _ParamRenamer({p.name for p in skill.params})
    order = renamer.order
    body = renamer.block(skill.body)
    for p in skill.params:  # unused parameters still count, after the used ones
        order.setdefault(p.name, f"p{len(order)}")
    params = sorted((Param(order[p.name], p.type) for p in skill.params), key=lambda p: p.name)
    return SkillDef("_", tuple(params), "", body)


# ------------------------------------------------------------------------------- selection

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
        for w in _windows_of_key(s.pattern.key, min_len):
            sub = by_key.get(w.key)
            if sub is not None and sub.successes == s.successes:
                shadowed.add(w.key)
    chosen = [s for s in eligible if s.pattern.key not in shadowed
              and s.pattern.key not in library_keys]
    # Longest first, then most used: deterministic order for naming.
    chosen.sort(key=lambda s: (-len(s.pattern), -s.successes, s.pattern.key))
    return chosen


# ---------------------------------------------------------------------------- to a skill

class _Instantiate(Transformer):
    """A pattern as a skill body: p<i> -> parameter names, labels -> again, again2, ...,
    call arguments in the catalog's parameter order."""

    def __init__(self, objects: dict[str, str], catalog: Catalog) -> None:
        self.objects = objects
        self.catalog = catalog
        self.labels: dict[str, str] = {}

    def value(self, v: Ident | float | str) -> Ident | float | str:
        return Ident(self.objects[v.name]) if isinstance(v, Ident) else v

    def label(self, name: str) -> str:
        return self.labels.setdefault(name, "again" if not self.labels
                                      else f"again{len(self.labels) + 1}")

    def call(self, call: Call) -> Call:
        sig = self.catalog.get(call.name)
        order = [p.name for p in sig.params] if sig is not None else []
        args = sorted(call.args, key=lambda a: order.index(a.name) if a.name in order
                      else len(order))
        return Call(call.name, tuple(Arg(a.name, self.value(a.value)) for a in args))

def _role_names(pattern: Pattern, catalog: Catalog) -> list[str]:
    """Parameter names from the argument each object first fills (obj, container, target...)."""
    names: list[str | None] = [None] * pattern.n_params

    def note(ident: object, role: str) -> None:
        if isinstance(ident, Ident):
            i = int(ident.name[1:])
            if names[i] is None:
                names[i] = role

    for _path, s in iter_block(pattern.stmts, ""):  # source order: a condition before its branches
        if isinstance(s, Call):
            for a in s.args:
                note(a.value, a.name)
        elif isinstance(s, If):
            for p in iter_preds(s.cond):
                sig = catalog.get(p.name)
                for k, arg in enumerate(p.args):
                    role = sig.params[k].name if sig and k < len(sig.params) else f"p{k}"
                    note(arg, role)
    out: list[str] = []
    for i, n in enumerate(names):
        base = n or f"p{i}"
        name, k = base, 2
        while name in out or name in RESERVED or catalog.get(name) is not None:
            name, k = f"{base}{k}", k + 1
        out.append(name)
    return out


def skill_name(pattern: Pattern, taken: set[str]) -> str:
    """``pick_then_place_in`` (``_checked`` when it verifies); unique in ``taken``."""
    parts = [c.name for c in pattern.stmts if isinstance(c, Call)] or ["step"]
    checked = any(isinstance(s, If) for s in pattern.stmts)
    suffix = "_checked" if checked and not parts[-1].endswith("_checked") else ""
    n = len(parts)
    options = ["_then_".join(parts) + suffix, f"{parts[0]}_to_{parts[-1]}{suffix}",
               f"{parts[0]}_{n}_steps{suffix}", f"{parts[0]}_{n}_steps", f"learned_{n}_steps"]
    base = next(o for o in options if len(o) <= MAX_NAME_LEN or o == options[-1])
    name, k = base, 2
    while name in taken or name in RESERVED:
        name, k = f"{base}_{k}", k + 1
    return name


def to_skill(pattern: Pattern, name: str, catalog: Catalog, seen: int, successes: int) -> SkillDef:
    """The skill definition for a pattern: typed object parameters, the statements as body."""
    pnames = _role_names(pattern, catalog)
    body = _Instantiate({f"p{i}": n for i, n in enumerate(pnames)}, catalog).block(pattern.stmts)
    # Declare parameters in the order a reader meets them in the body.
    met: list[str] = []
    for c in iter_calls(body):
        met += [a.value.name for a in c.args if isinstance(a.value, Ident)]
    for s in body:
        if isinstance(s, If):
            met += [i.name for i in cond_idents(s.cond)]
    pnames = sorted(pnames, key=lambda n: met.index(n) if n in met else len(met))
    steps = ", ".join(c.name for c in pattern.stmts if isinstance(c, Call))
    check = " with its check" if any(isinstance(s, If) for s in pattern.stmts) else ""
    desc = f"learned: {steps}{check} (succeeded in {successes} of {seen} episodes)"
    return SkillDef(name, tuple(Param(n, "object") for n in pnames), desc, body)

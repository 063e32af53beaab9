"""The program tree: immutable node types for the HET (main), the MAH scaffold and skills.

Every node carries a source ``Span`` that is excluded from equality, so a tree parsed from the
printer's canonical text compares equal to the original (the round-trip property). Paths are not
stored in nodes; ``iter_nodes`` derives them (``main/2``, ``main/4/then/0``, ``monitor:dropped/0``,
``skill:put_twice/1``) so hand-built trees and parsed trees behave the same. Walking and
rewriting live here too, once: ``blocks_of`` / ``iter_block`` / ``iter_calls`` to read a tree,
``Transformer`` (and ``Substitution``, ``SkillInliner``) to rebuild one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator, Mapping, Union

Value = Union[str, float, "Ident"]


@dataclass(frozen=True)
class Span:
    """1-based line and column of a node's first and last character in the source text."""

    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0


NO_SPAN = Span()


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True)
class Ident:
    """An identifier used as a value: an object id, or a skill parameter inside a skill body."""

    name: str

    def __str__(self) -> str:
        return self.name


# ----------------------------------------------------------------------------------- predicates


@dataclass(frozen=True)
class Pred:
    """A catalog predicate with positional arguments: ``in(red_block, green_bowl)``."""

    name: str
    args: tuple[Ident | float, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Not:
    operand: "Cond"
    span: Span = _span()


@dataclass(frozen=True)
class And:
    operands: tuple["Cond", ...]
    span: Span = _span()


@dataclass(frozen=True)
class Or:
    operands: tuple["Cond", ...]
    span: Span = _span()


Cond = Union[Pred, Not, And, Or]


def iter_preds(cond: Cond) -> Iterator[Pred]:
    """All predicate leaves of a condition, left to right."""
    if isinstance(cond, Pred):
        yield cond
    elif isinstance(cond, Not):
        yield from iter_preds(cond.operand)
    else:
        for op in cond.operands:
            yield from iter_preds(op)


# ----------------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Arg:
    """A named argument ``name=value``; value is an Ident, a number (float) or a string (str)."""

    name: str
    value: Ident | float | str
    span: Span = _span()


@dataclass(frozen=True)
class Call:
    """A call of a primitive or a skill with named arguments."""

    name: str
    args: tuple[Arg, ...] = ()
    span: Span = _span()

    def arg(self, name: str) -> Arg | None:
        for a in self.args:
            if a.name == name:
                return a
        return None


@dataclass(frozen=True)
class If:
    cond: Cond
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Repeat:
    count: int
    body: tuple["Stmt", ...]
    span: Span = _span()


@dataclass(frozen=True)
class While:
    """``while P max N { ... }``; ``bound`` None only when the text omitted it (invalid)."""

    cond: Cond
    bound: int | None
    body: tuple["Stmt", ...]
    span: Span = _span()


@dataclass(frozen=True)
class Label:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Goto:
    """``goto L max N``; the budget is required when the jump can loop (a backward jump)."""

    label: str
    budget: int | None = None
    span: Span = _span()


@dataclass(frozen=True)
class Exit:
    success: bool
    reason: str = ""
    span: Span = _span()


Stmt = Union[Call, If, Repeat, While, Label, Goto, Exit]


# ---------------------------------------------------------------------------- top-level parts


class ThenKind:
    """What a monitor does after its handler: the four outcomes as plain strings."""

    RESUME = "resume"
    RETRY = "retry"
    GOTO = "goto"
    ESCALATE = "escalate"
    ALL = (RESUME, RETRY, GOTO, ESCALATE)


@dataclass(frozen=True)
class Then:
    """``then resume`` | ``then retry L max N`` | ``then goto L`` | ``then escalate``."""

    kind: str = ThenKind.RESUME
    label: str = ""
    budget: int | None = None
    span: Span = _span()


@dataclass(frozen=True)
class Scope:
    """One entry of a monitor's ``during``: a primitive or skill name, optionally with named
    arguments the running call must have (``place_in(obj=red_block)``), so a drop monitor for
    one block stays quiet while another block is placed. Unnamed arguments match anything."""

    name: str
    args: tuple[Arg, ...] = ()
    span: Span = _span()

    def matches(self, name: str, values: Mapping[str, object]) -> bool:
        """Whether a running call ``name`` with bound argument ``values`` is in this scope.

        Object ids are compared by name; numbers by value."""
        if name != self.name:
            return False
        for a in self.args:
            got = values.get(a.name)
            want: object = a.value.name if isinstance(a.value, Ident) else a.value
            if isinstance(want, float) and isinstance(got, (int, float)):
                if float(got) != want:
                    return False
            elif got != want:
                return False
        return True


@dataclass(frozen=True)
class Monitor:
    """A program monitor: condition, optional ``during`` scope, tier-1 handler and outcome.

    ``during`` accepts plain names for hand-built trees; they become argument-less Scopes."""

    name: str
    when: Cond
    during: tuple[Scope, ...] = ()
    handler: tuple[Stmt, ...] = ()
    then: Then = field(default_factory=Then)
    span: Span = _span()

    def __post_init__(self) -> None:
        if any(isinstance(d, str) for d in self.during):
            object.__setattr__(self, "during", tuple(
                Scope(d) if isinstance(d, str) else d for d in self.during))

    @property
    def scope_names(self) -> tuple[str, ...]:
        """The primitive/skill names of ``during``, in order (arguments left out)."""
        return tuple(d.name for d in self.during)


@dataclass(frozen=True)
class Param:
    """A skill parameter; ``type`` is ``object``, ``number`` or ``string``."""

    name: str
    type: str = "object"
    span: Span = _span()


@dataclass(frozen=True)
class SkillDef:
    name: str
    params: tuple[Param, ...] = ()
    description: str = ""
    body: tuple[Stmt, ...] = ()
    span: Span = _span()

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class Main:
    body: tuple[Stmt, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Program:
    """A whole task program: description, main tree, monitors and local skills."""

    description: str
    main: Main
    monitors: tuple[Monitor, ...] = ()
    skills: tuple[SkillDef, ...] = ()
    span: Span = _span()

    def calls(self) -> Iterator[Call]:
        """Every call in main, handlers and skill bodies, in source order."""
        for _path, node in iter_nodes(self):
            if isinstance(node, Call):
                yield node

    def monitor(self, name: str) -> Monitor | None:
        for m in self.monitors:
            if m.name == name:
                return m
        return None

    def skill(self, name: str) -> SkillDef | None:
        for s in self.skills:
            if s.name == name:
                return s
        return None

    def labels(self) -> tuple[str, ...]:
        """Labels at the top level of main (the only place jumps from main may land)."""
        return tuple(s.name for s in self.main.body if isinstance(s, Label))


Node = Union[Stmt, Monitor, SkillDef, Main, Program]


# ------------------------------------------------------------------------------ node paths
# The one path scheme: ``main/2``, ``main/4/then/0``, ``monitor:dropped/0``, ``skill:put_twice/1``.
# The interpreter's trace, the validator, promotion and the anomaly records all build paths here.

MAIN = "main"
BLOCK_KEYS = ("then", "else", "body")  # the nested blocks of If (then, else), Repeat and While


def monitor_path(name: str) -> str:
    return f"monitor:{name}"


def skill_path(name: str) -> str:
    return f"skill:{name}"


def stmt_path(block: str, index: int) -> str:
    """The path of statement ``index`` of the block at ``block``."""
    return f"{block}/{index}"


def block_path(stmt: str, key: str) -> str:
    """The path of the nested block ``key`` (then / else / body) of the statement at ``stmt``."""
    return f"{stmt}/{key}"


def call_frame_path(call: str, skill: str) -> str:
    """At run time: the body of ``skill`` called at ``call`` (``main/2/carry``; its statements
    are ``main/2/carry/0`` ...), so a trace tells apart two calls of one skill."""
    return f"{call}/{skill}"


def insert_path(at: str) -> str:
    """At run time: a call a tier-2 repair inserted at the node ``at``."""
    return f"{at}/insert"


def within(path: str, ancestor: str) -> bool:
    """``path`` is ``ancestor`` or lies inside it (a nested block, a skill it called)."""
    return path == ancestor or path.startswith(ancestor + "/")


# ------------------------------------------------------------------ walking: one traversal

def blocks_of(stmt: Stmt) -> tuple[tuple[str, tuple[Stmt, ...]], ...]:
    """The blocks nested directly in ``stmt``, with their keys: If -> then, else; Repeat and
    While -> body; every other statement -> none."""
    if isinstance(stmt, If):
        return (("then", stmt.then), ("else", stmt.orelse))
    if isinstance(stmt, (Repeat, While)):
        return (("body", stmt.body),)
    return ()


def iter_block(stmts: tuple[Stmt, ...], prefix: str) -> Iterator[tuple[str, Stmt]]:
    """(path, statement) for a block and everything nested in it, depth first, source order."""
    for i, stmt in enumerate(stmts):
        path = stmt_path(prefix, i)
        yield path, stmt
        for key, block in blocks_of(stmt):
            yield from iter_block(block, block_path(path, key))


def iter_blocks(stmts: tuple[Stmt, ...], prefix: str = MAIN
                ) -> Iterator[tuple[str, tuple[Stmt, ...]]]:
    """(path, block) for a block and every block nested in it, depth first."""
    yield prefix, stmts
    for i, stmt in enumerate(stmts):
        for key, block in blocks_of(stmt):
            yield from iter_blocks(block, block_path(stmt_path(prefix, i), key))


def iter_calls(stmts: Iterable[Stmt]) -> Iterator[Call]:
    """Every call in ``stmts`` and their nested blocks, in source order."""
    for stmt in stmts:
        if isinstance(stmt, Call):
            yield stmt
        for _key, block in blocks_of(stmt):
            yield from iter_calls(block)


def iter_nodes(program: Program) -> Iterator[tuple[str, Stmt]]:
    """(path, statement) for every statement of main, the handlers and the skills."""
    yield from iter_block(program.main.body, MAIN)
    for m in program.monitors:
        yield from iter_block(m.handler, monitor_path(m.name))
    for s in program.skills:
        yield from iter_block(s.body, skill_path(s.name))


def find_node(program: Program, path: str) -> Stmt | None:
    """The statement at ``path`` (as produced by ``iter_nodes``), or None."""
    for p, node in iter_nodes(program):
        if p == path:
            return node
    return None


def cond_idents(cond: Cond) -> Iterator[Ident]:
    """The identifiers a condition names, left to right."""
    for pred in iter_preds(cond):
        for a in pred.args:
            if isinstance(a, Ident):
                yield a


# ------------------------------------------------------------- rewriting: one transformer

class Transformer:
    """Rebuilds statements bottom-up, changing what its hooks change (identity by default).

    Override ``value`` (call and predicate arguments), ``label`` (label names and jump
    targets), ``call`` (a whole call) or ``expand`` (one statement -> any number, e.g. an
    inlined skill body or a review's edit). Every consumer that rewrites programs (promotion,
    compaction, the safety review, skill inlining) uses this, so none walks the tree by hand.
    """

    def value(self, v: Ident | float | str) -> Ident | float | str:
        return v

    def label(self, name: str) -> str:
        return name

    def call(self, call: Call) -> Call:
        return Call(call.name, tuple(Arg(a.name, self.value(a.value), a.span)
                                     for a in call.args), call.span)

    def cond(self, cond: Cond) -> Cond:
        if isinstance(cond, Pred):
            args: list[Ident | float] = []
            for a in cond.args:
                v = self.value(a) if isinstance(a, Ident) else a
                args.append(Ident(v) if isinstance(v, str) else v)  # predicates take ids
            return Pred(cond.name, tuple(args), cond.span)
        if isinstance(cond, Not):
            return Not(self.cond(cond.operand), cond.span)
        ops = tuple(self.cond(o) for o in cond.operands)
        return And(ops, cond.span) if isinstance(cond, And) else Or(ops, cond.span)

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, Call):
            return self.call(s)
        if isinstance(s, Label):
            return Label(self.label(s.name), s.span)
        if isinstance(s, Goto):
            return Goto(self.label(s.label), s.budget, s.span)
        if isinstance(s, If):
            return If(self.cond(s.cond), self.block(s.then), self.block(s.orelse), s.span)
        if isinstance(s, Repeat):
            return Repeat(s.count, self.block(s.body), s.span)
        if isinstance(s, While):
            return While(self.cond(s.cond), s.bound, self.block(s.body), s.span)
        return s

    def expand(self, s: Stmt) -> tuple[Stmt, ...]:
        """The statements that replace ``s`` (default: ``s`` rewritten)."""
        return (self.stmt(s),)

    def block(self, stmts: Iterable[Stmt]) -> tuple[Stmt, ...]:
        return tuple(out for s in stmts for out in self.expand(s))

    def program(self, program: Program) -> Program:
        """Main rewritten (handlers and skills are left as they are)."""
        return replace(program, main=replace(program.main, body=self.block(program.main.body)))


class Substitution(Transformer):
    """Identifiers replaced by values (a skill's parameters by a call's arguments)."""

    def __init__(self, values: Mapping[str, Ident | float | str]) -> None:
        self.values = values

    def value(self, v: Ident | float | str) -> Ident | float | str:
        if isinstance(v, Ident) and v.name in self.values:
            return self.values[v.name]
        return v


class SkillInliner(Transformer):
    """Calls of ``skills`` replaced by their bodies with the arguments substituted (nested
    skills too, at most ``depth`` deep), so a pass that judges primitives (the safety review)
    sees what a skill call will do. Labels inside an inlined body are left as they are: the
    result is for analysis, not for execution."""

    def __init__(self, skills: Mapping[str, SkillDef], depth: int = 8) -> None:
        self.skills = skills
        self.depth = depth

    def expand(self, s: Stmt) -> tuple[Stmt, ...]:
        skill = self.skills.get(s.name) if isinstance(s, Call) else None
        if skill is None or self.depth <= 0 or not isinstance(s, Call):
            return (self.stmt(s),)
        values = {a.name: a.value for a in s.args}
        body = Substitution(values).block(skill.body)
        return SkillInliner(self.skills, self.depth - 1).block(body)


def count_lines(program: Program) -> int:
    """Program size in statements plus structural lines, as the canonical printer lays it out.

    Memory's program-size metric: the number of non-blank lines of ``print_program(program)``.
    """
    from frankenbot.program.printer import print_program  # local: printer imports this module

    return sum(1 for line in print_program(program).splitlines() if line.strip())


def block_depth(stmts: tuple[Stmt, ...]) -> int:
    """Nesting depth of a block (1 for a flat block, 0 for an empty one)."""
    return max((1 + max((block_depth(b) for _k, b in blocks_of(s)), default=0)
                for s in stmts), default=0)

"""The program tree: immutable node types for the HET (main), the MAH scaffold and skills.

Every node carries a source ``Span`` that is excluded from equality, so a tree parsed from the
printer's canonical text compares equal to the original (the round-trip property). Paths are not
stored in nodes; ``iter_nodes`` derives them (``main/2``, ``main/4/then/0``, ``monitor:dropped/0``,
``skill:put_twice/1``) so hand-built trees and parsed trees behave the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Union

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
    return field(default=NO_SPAN, compare=False, repr=False)  # type: ignore[return-value]


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


def iter_block(stmts: tuple[Stmt, ...], prefix: str) -> Iterator[tuple[str, Stmt]]:
    """(path, statement) for a block and everything nested in it, depth first, source order."""
    for i, stmt in enumerate(stmts):
        path = f"{prefix}/{i}"
        yield path, stmt
        if isinstance(stmt, If):
            yield from iter_block(stmt.then, f"{path}/then")
            yield from iter_block(stmt.orelse, f"{path}/else")
        elif isinstance(stmt, (Repeat, While)):
            yield from iter_block(stmt.body, f"{path}/body")


def iter_nodes(program: Program) -> Iterator[tuple[str, Stmt]]:
    """(path, statement) for every statement of main, the handlers and the skills."""
    yield from iter_block(program.main.body, "main")
    for m in program.monitors:
        yield from iter_block(m.handler, f"monitor:{m.name}")
    for s in program.skills:
        yield from iter_block(s.body, f"skill:{s.name}")


def find_node(program: Program, path: str) -> Stmt | None:
    """The statement at ``path`` (as produced by ``iter_nodes``), or None."""
    for p, node in iter_nodes(program):
        if p == path:
            return node
    return None


def count_lines(program: Program) -> int:
    """Program size in statements plus structural lines, as the canonical printer lays it out.

    Memory's program-size metric: the number of non-blank lines of ``print_program(program)``.
    """
    from frankenbot.program.printer import print_program  # local: printer imports this module

    return sum(1 for line in print_program(program).splitlines() if line.strip())


def block_depth(stmts: tuple[Stmt, ...]) -> int:
    """Nesting depth of a block (1 for a flat block, 0 for an empty one)."""
    depth = 0
    for s in stmts:
        if isinstance(s, If):
            d = 1 + max(block_depth(s.then), block_depth(s.orelse))
        elif isinstance(s, (Repeat, While)):
            d = 1 + block_depth(s.body)
        else:
            d = 1
        depth = max(depth, d)
    return depth

"""Canonical text for trees: one statement per line, two-space indent, fixed spacing.

The printer is the inverse of the parser (``parse_program(print_program(t)).program == t``), so
memory stores skills in canonical form, traces show nodes as program text, and the planner can
show a repaired program back to the model.
"""

from __future__ import annotations

import math
from decimal import Decimal

from frankenbot.program.tree import (
    And,
    Call,
    Cond,
    Exit,
    Goto,
    Ident,
    If,
    Label,
    Monitor,
    Not,
    Or,
    Pred,
    Program,
    Repeat,
    Scope,
    SkillDef,
    Stmt,
    Then,
    ThenKind,
    While,
)

INDENT = "  "


def quote(text: str) -> str:
    """A double-quoted string literal; the language escapes only ``\\``, ``"`` and newline."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def format_number(x: float) -> str:
    """Shortest text that reads back as the same float (``0.5``, ``3``, ``-0.25``)."""
    if not math.isfinite(x):
        raise ValueError(f"numbers in programs must be finite, got {x!r}")
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    text = repr(float(x))
    if "e" in text or "E" in text:  # the grammar has no exponent form: expand it exactly
        text = format(Decimal(text), "f")
    return text


def format_value(v: Ident | float | str) -> str:
    if isinstance(v, Ident):
        return v.name
    if isinstance(v, str):
        return quote(v)
    return format_number(float(v))


def print_call(call: Call) -> str:
    args = ", ".join(f"{a.name}={format_value(a.value)}" for a in call.args)
    return f"{call.name}({args})"


def print_scope(scope: Scope) -> str:
    """``place_in`` or ``place_in(obj=red_block)`` (no parentheses without arguments)."""
    if not scope.args:
        return scope.name
    args = ", ".join(f"{a.name}={format_value(a.value)}" for a in scope.args)
    return f"{scope.name}({args})"


def print_cond(cond: Cond) -> str:
    """Conditions with the fewest parentheses that keep the tree shape (not > and > or)."""
    return _cond(cond, 0)


def _cond(cond: Cond, outer: int) -> str:
    # precedence levels: or = 1, and = 2, not = 3, atom = 4
    if isinstance(cond, Pred):
        if not cond.args and cond.name:
            return cond.name
        return f"{cond.name}({', '.join(format_value(a) for a in cond.args)})"
    if isinstance(cond, Not):
        text, level = "not " + _cond(cond.operand, 3), 3
    elif isinstance(cond, And):
        text, level = " and ".join(_cond(c, 3) for c in cond.operands), 2
    else:
        assert isinstance(cond, Or)
        text, level = " or ".join(_cond(c, 2) for c in cond.operands), 1
    return f"({text})" if level < outer else text


def print_stmt_head(stmt: Stmt) -> str:
    """One line for a statement (compound statements without their bodies): trace text."""
    if isinstance(stmt, Call):
        return print_call(stmt)
    if isinstance(stmt, If):
        return f"if {print_cond(stmt.cond)}"
    if isinstance(stmt, Repeat):
        return f"repeat {stmt.count}"
    if isinstance(stmt, While):
        bound = f" max {stmt.bound}" if stmt.bound is not None else ""
        return f"while {print_cond(stmt.cond)}{bound}"
    if isinstance(stmt, Label):
        return f"{stmt.name}:"
    if isinstance(stmt, Goto):
        return f"goto {stmt.label}" + (f" max {stmt.budget}" if stmt.budget is not None else "")
    if isinstance(stmt, Exit):
        kind = "success" if stmt.success else "failure"
        return f"exit {kind}" + (f" {quote(stmt.reason)}" if stmt.reason else "")
    raise TypeError(f"not a statement: {stmt!r}")


def _block(stmts: tuple[Stmt, ...], depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    for s in stmts:
        if isinstance(s, If):
            _if(s, depth, out, pad)
        elif isinstance(s, (Repeat, While)):
            out.append(f"{pad}{print_stmt_head(s)} {{")
            _block(s.body, depth + 1, out)
            out.append(f"{pad}}}")
        else:
            out.append(pad + print_stmt_head(s))


def _if(s: If, depth: int, out: list[str], head_pad: str) -> None:
    pad = INDENT * depth
    out.append(f"{head_pad}if {print_cond(s.cond)} {{")
    _block(s.then, depth + 1, out)
    if not s.orelse:
        out.append(f"{pad}}}")
    elif len(s.orelse) == 1 and isinstance(s.orelse[0], If):
        out.append(f"{pad}}} else ")
        # join "} else " and the nested "if ... {" on one line
        nested: list[str] = []
        _if(s.orelse[0], depth, nested, "")
        out[-1] += nested[0]
        out.extend(nested[1:])
    else:
        out.append(f"{pad}}} else {{")
        _block(s.orelse, depth + 1, out)
        out.append(f"{pad}}}")


def print_then(then: Then) -> str:
    if then.kind == ThenKind.RETRY:
        budget = f" max {then.budget}" if then.budget is not None else ""
        return f"then retry {then.label}{budget}"
    if then.kind == ThenKind.GOTO:
        return f"then goto {then.label}"
    return f"then {then.kind}"


def _monitor(m: Monitor, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    during = f" during {', '.join(print_scope(d) for d in m.during)}" if m.during else ""
    out.append(f"{pad}monitor {m.name} when {print_cond(m.when)}{during} {{")
    _block(m.handler, depth + 1, out)
    out.append(INDENT * (depth + 1) + print_then(m.then))
    out.append(f"{pad}}}")


def _skill(s: SkillDef, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    params = ", ".join(f"{p.name}: {p.type}" for p in s.params)
    desc = f" {quote(s.description)}" if s.description else ""
    out.append(f"{pad}skill {s.name}({params}){desc} {{")
    _block(s.body, depth + 1, out)
    out.append(f"{pad}}}")


def print_program(program: Program) -> str:
    """Canonical text of a whole program (ends with a newline)."""
    out = [f"task {quote(program.description)} {{", f"{INDENT}main {{"]
    _block(program.main.body, 2, out)
    out.append(f"{INDENT}}}")
    for m in program.monitors:
        _monitor(m, 1, out)
    for s in program.skills:
        _skill(s, 1, out)
    out.append("}")
    return "\n".join(out) + "\n"


def print_skill(skill: SkillDef) -> str:
    """Canonical text of one top-level skill definition (a library entry; ends with a newline)."""
    out: list[str] = []
    _skill(skill, 0, out)
    return "\n".join(out) + "\n"


def print_block(stmts: tuple[Stmt, ...], depth: int = 0) -> str:
    out: list[str] = []
    _block(stmts, depth, out)
    return "\n".join(out)

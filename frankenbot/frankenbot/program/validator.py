"""Static checks of a parsed program against a catalog and a scene's object ids.

A program that passes with no errors can only call whitelisted primitives and skills with
well-typed, in-range arguments, only jumps to labels that exist, and cannot loop without a bound.
Each problem is a Diagnostic with a stable code (listed in ``CODES``), a position and a hint,
because the planner feeds them back to the model for its single repair attempt.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from frankenbot.program.catalog import Catalog, ParamType, Signature, SignatureKind
from frankenbot.program.catalog import Param as SigParam
from frankenbot.program.diagnostics import ERROR, WARNING, Diagnostic, sort_diagnostics
from frankenbot.program.parser import KEYWORDS
from frankenbot.program.tree import (
    MAIN,
    Call,
    Cond,
    Exit,
    Goto,
    Ident,
    If,
    Label,
    Main,
    Monitor,
    Program,
    Repeat,
    Scope,
    SkillDef,
    Span,
    Stmt,
    ThenKind,
    While,
    iter_block,
    iter_preds,
    skill_path,
)

# Size limits: generous for any real task, small enough to keep runs and prompts bounded.
MAX_STATEMENTS = 300
MAX_DEPTH = 8  # nested blocks inside main, a handler or a skill
MAX_MONITORS = 16
MAX_SKILLS = 16
MAX_REPEAT = 50  # repeat N
MAX_LOOP_BOUND = 50  # while ... max N
MAX_JUMP_BUDGET = 20  # goto L max N, then retry L max N

CODES: dict[str, str] = {
    "unknown-callee": "a call names no primitive or skill",
    "not-callable": "a predicate is called like a primitive",
    "unknown-arg": "a call passes an argument the callee does not have",
    "duplicate-arg": "an argument is given twice",
    "missing-arg": "a required argument is missing",
    "arg-type": "an argument has the wrong type",
    "arg-range": "a number is outside the parameter's range",
    "unknown-object": "an object id is not in the scene",
    "shape-mismatch": "an object's kind does not fit the parameter (warning)",
    "unknown-predicate": "a condition names no predicate",
    "predicate-arity": "a predicate gets the wrong number of arguments",
    "undefined-label": "a goto/retry names a label that does not exist",
    "duplicate-label": "a label is defined twice",
    "nested-label": "a label is not at the top level of main or a skill",
    "unused-label": "a label nothing jumps to (warning)",
    "goto-needs-budget": "a backward goto (a loop) without `max N`",
    "retry-needs-budget": "a monitor's retry without `max N`",
    "unbounded-loop": "a while loop without `max N`",
    "bad-count": "a loop count or budget below 1",
    "jump-in-handler": "a label or goto inside a monitor handler",
    "unreachable": "statements that can never run (warning)",
    "unknown-scope": "a monitor's `during` names no primitive or skill",
    "scope-never-runs": "a monitor's `during` names something main never calls (warning)",
    "duplicate-monitor": "two monitors share a name",
    "duplicate-skill": "two skills share a name",
    "skill-shadows": "a skill is named like a primitive or predicate",
    "skill-overrides": "a local skill replaces a library skill (warning)",
    "duplicate-param": "a skill parameter is declared twice",
    "unused-param": "a skill parameter is never used (warning)",
    "skill-recursion": "skills call each other in a cycle",
    "reserved-name": "a keyword is used as a name",
    "size-limit": "the program is larger or deeper than allowed",
    "empty-main": "main has no statements (warning)",
}


@dataclass
class _Scope:
    """Where a block sits: main, a monitor handler, or a skill body (with its parameters)."""

    kind: str  # "main" | "handler" | "skill"
    labels: dict[str, int] = field(default_factory=dict)  # label -> top-level index
    params: Mapping[str, str] = field(default_factory=dict)  # skill param -> type
    used_params: set[str] = field(default_factory=set)
    used_labels: set[str] = field(default_factory=set)


def skill_signature(skill: SkillDef) -> Signature:
    """The catalog entry for a skill definition: typed parameters and canonical body text."""
    from frankenbot.program.printer import print_skill

    params = []
    for p in skill.params:
        try:
            ptype = ParamType(p.type)
        except ValueError:
            ptype = ParamType.OBJECT
        params.append(SigParam(p.name, ptype))
    return Signature(skill.name, SignatureKind.SKILL, tuple(params), skill.description,
                     print_skill(skill))


def catalog_with(catalog: Catalog, skills: Iterable[SkillDef]) -> Catalog:
    """A copy of ``catalog`` with library skills added (raises ValueError on shadowing)."""
    return catalog.with_skills(skill_signature(s) for s in skills)


class _Validator:
    def __init__(self, program: Program, catalog: Catalog, object_ids: Iterable[str] | None):
        self.p = program
        self.cat = catalog
        self.objects = None if object_ids is None else frozenset(object_ids)
        self.out: list[Diagnostic] = []
        self.local = {s.name: s for s in program.skills}

    # ----------------------------------------------------------------------------- helpers
    def add(self, sev: str, code: str, span: Span, msg: str, hint: str = "") -> None:
        self.out.append(Diagnostic(sev, code, span.line, span.column, msg, hint))

    def err(self, code: str, span: Span, msg: str, hint: str = "") -> None:
        self.add(ERROR, code, span, msg, hint)

    def warn(self, code: str, span: Span, msg: str, hint: str = "") -> None:
        self.add(WARNING, code, span, msg, hint)

    @staticmethod
    def _close(name: str, options: Iterable[str]) -> str:
        m = difflib.get_close_matches(name, list(options), n=3, cutoff=0.6)
        return f"did you mean {' or '.join(m)}?" if m else ""

    def callables(self) -> list[str]:
        names = [s.name for s in self.cat.primitives] + [s.name for s in self.cat.skills]
        return names + list(self.local)

    def check_name(self, name: str, span: Span, what: str) -> None:
        if name in KEYWORDS:
            self.err("reserved-name", span, f"`{name}` is a keyword and cannot name a {what}",
                     "choose another name")

    # ------------------------------------------------------------------------------ values
    def check_object(self, name: str, span: Span, scope: _Scope, shapes: tuple[str, ...],
                     where: str) -> None:
        if name in scope.params:
            scope.used_params.add(name)
            if scope.params[name] != "object":
                self.err("arg-type", span,
                         f"{where}: parameter `{name}` is a {scope.params[name]}, "
                         "an object is expected")
            return
        if self.objects is not None and name not in self.objects:
            hint = self._close(name, self.objects) or (
                "known objects: " + ", ".join(sorted(self.objects)[:12]) if self.objects
                else "the scene is empty; detect objects first")
            self.err("unknown-object", span, f"{where}: unknown object `{name}`", hint)
            return
        if shapes:
            base = name.rstrip("0123456789").rstrip("_").rsplit("_", 1)[-1]
            from frankenbot.state import SHAPES

            if base in SHAPES and base not in shapes and base != "unknown":
                self.warn("shape-mismatch", span,
                          f"{where}: `{name}` looks like a {base}; expected "
                          + " or ".join(shapes))

    def check_value(self, value: Ident | float | str, sp: SigParam, span: Span, scope: _Scope,
                    where: str) -> None:
        if sp.type == ParamType.OBJECT:
            if not isinstance(value, Ident):
                self.err("arg-type", span, f"{where} expects an object id, got {value!r}",
                         "write the id bare, without quotes: obj=red_block")
                return
            self.check_object(value.name, span, scope, sp.shapes, where)
        elif sp.type == ParamType.NUMBER:
            if isinstance(value, Ident):
                if scope.params.get(value.name) == "number":
                    scope.used_params.add(value.name)
                    return
                self.err("arg-type", span, f"{where} expects a number, got `{value.name}`")
                return
            if isinstance(value, str):
                self.err("arg-type", span, f"{where} expects a number, got a string",
                         "write numbers without quotes: seconds=0.5")
                return
            x = float(value)
            if (sp.minimum is not None and x < sp.minimum) or (
                    sp.maximum is not None and x > sp.maximum):
                self.err("arg-range", span,
                         f"{where} = {x:g} is outside [{sp.minimum:g}, {sp.maximum:g}]",
                         sp.hint)
        else:
            if isinstance(value, Ident):
                if scope.params.get(value.name) == "string":
                    scope.used_params.add(value.name)
                    return
                self.err("arg-type", span, f"{where} expects a \"string\", got `{value.name}`")
            elif not isinstance(value, str):
                self.err("arg-type", span, f"{where} expects a \"string\", got {value!r}")

    # ------------------------------------------------------------------------------- calls
    def signature_of(self, name: str) -> Signature | None:
        if name in self.local:
            return skill_signature(self.local[name])
        return self.cat.get(name)

    def check_call(self, call: Call, scope: _Scope) -> None:
        sig = self.signature_of(call.name)
        if sig is None:
            self.err("unknown-callee", call.span, f"unknown primitive or skill `{call.name}`",
                     self._close(call.name, self.callables()) or
                     "available: " + ", ".join(sorted(self.callables())))
            return
        if sig.kind == SignatureKind.PREDICATE:
            self.err("not-callable", call.span, f"`{call.name}` is a predicate, not an action",
                     f"use it in a condition: if {call.name}(...) {{ ... }}")
            return
        seen: set[str] = set()
        for a in call.args:
            sp = sig.param(a.name)
            if a.name in seen:
                self.err("duplicate-arg", a.span, f"{call.name}: argument `{a.name}` given twice")
                continue
            seen.add(a.name)
            if sp is None:
                names = ", ".join(p.name for p in sig.params) or "none"
                self.err("unknown-arg", a.span, f"{call.name} has no parameter `{a.name}`",
                         f"parameters: {names}")
                continue
            self.check_value(a.value, sp, a.span, scope, f"{call.name}({a.name}=...)")
        for sp in sig.params:
            if sp.required and sp.name not in seen:
                self.err("missing-arg", call.span,
                         f"{call.name} needs `{sp.name}` ({sp.type.value})",
                         f"call it as {sig.render().split('  --')[0]}")

    def check_scope_args(self, m: Monitor, sc: Scope, sig: Signature, scope: _Scope) -> None:
        """``during place_in(obj=red_block)``: the arguments must be parameters of the callee,
        each given once, with values of the right type (object ids known to the scene)."""
        seen: set[str] = set()
        for a in sc.args:
            where = f"monitor {m.name}: during {sc.name}({a.name}=...)"
            if a.name in seen:
                self.err("duplicate-arg", a.span, f"{where}: argument `{a.name}` given twice")
                continue
            seen.add(a.name)
            sp = sig.param(a.name)
            if sp is None:
                names = ", ".join(p.name for p in sig.params) or "none"
                self.err("unknown-arg", a.span,
                         f"monitor {m.name}: {sc.name} has no parameter `{a.name}`",
                         f"parameters: {names}")
                continue
            self.check_value(a.value, sp, a.span, scope, where)

    def check_cond(self, cond: Cond, scope: _Scope) -> None:
        for pred in iter_preds(cond):
            sig = self.cat.get(pred.name)
            if sig is None or sig.kind != SignatureKind.PREDICATE:
                preds = [s.name for s in self.cat.predicates]
                self.err("unknown-predicate", pred.span, f"unknown predicate `{pred.name}`",
                         self._close(pred.name, preds) or "predicates: " + ", ".join(preds))
                continue
            if len(pred.args) != len(sig.params):
                self.err("predicate-arity", pred.span,
                         f"{pred.name} takes {len(sig.params)} argument(s), "
                         f"got {len(pred.args)}", f"write {sig.render().split('  --')[0]}")
                continue
            for value, sp in zip(pred.args, sig.params, strict=True):
                self.check_value(value, sp, pred.span, scope, f"{pred.name}({sp.name})")

    # ------------------------------------------------------------------------------ blocks
    def collect_labels(self, stmts: tuple[Stmt, ...], scope: _Scope, prefix: str) -> None:
        for i, s in enumerate(stmts):
            if isinstance(s, Label):
                self.check_name(s.name, s.span, "label")
                if s.name in scope.labels:
                    self.err("duplicate-label", s.span, f"label `{s.name}` is defined twice")
                else:
                    scope.labels[s.name] = i
        for path, s in iter_block(stmts, prefix):
            if isinstance(s, Label) and path.count("/") > 1:
                self.err("nested-label", s.span,
                         f"label `{s.name}` is inside a block; labels must be at the top level",
                         "move the label out of the if/loop")

    def check_block(self, stmts: tuple[Stmt, ...], scope: _Scope, top: int | None,
                    depth: int) -> None:
        """``top``: index of the enclosing top-level statement (None while at top level)."""
        if depth > MAX_DEPTH:
            s = stmts[0] if stmts else None
            self.err("size-limit", s.span if s is not None else Span(),
                     f"blocks nested deeper than {MAX_DEPTH}", "flatten with labels or skills")
            return
        dead = False
        for i, s in enumerate(stmts):
            here = i if top is None else top
            if dead and not isinstance(s, Label):
                self.warn("unreachable", s.span, "this statement can never run",
                          "remove it, or put a label before it and jump there")
                dead = False  # report once per dead run
                continue
            if isinstance(s, Label):
                dead = False
                if scope.kind == "handler":
                    self.err("jump-in-handler", s.span, "labels are not allowed in a handler")
            elif isinstance(s, Call):
                self.check_call(s, scope)
            elif isinstance(s, If):
                self.check_cond(s.cond, scope)
                self.check_block(s.then, scope, here, depth + 1)
                self.check_block(s.orelse, scope, here, depth + 1)
            elif isinstance(s, Repeat):
                if s.count < 1:
                    self.err("bad-count", s.span, f"repeat {s.count} runs nothing",
                             "use a count of at least 1")
                elif s.count > MAX_REPEAT:
                    self.err("size-limit", s.span, f"repeat {s.count} is over {MAX_REPEAT}")
                self.check_block(s.body, scope, here, depth + 1)
            elif isinstance(s, While):
                self.check_cond(s.cond, scope)
                if s.bound is None:
                    self.err("unbounded-loop", s.span, "while loop without a bound",
                             "add `max N`: while not holding(x) max 3 { ... }")
                elif s.bound < 1:
                    self.err("bad-count", s.span, f"while ... max {s.bound} runs nothing")
                elif s.bound > MAX_LOOP_BOUND:
                    self.err("size-limit", s.span, f"max {s.bound} is over {MAX_LOOP_BOUND}")
                self.check_block(s.body, scope, here, depth + 1)
            elif isinstance(s, Goto):
                self.check_goto(s, scope, here)
                dead = s.budget is None  # a spent budget falls through to the next statement
            elif isinstance(s, Exit):
                dead = True

    def check_goto(self, g: Goto, scope: _Scope, here: int) -> None:
        if scope.kind == "handler":
            self.err("jump-in-handler", g.span, "goto is not allowed in a handler",
                     f"end the handler with `then goto {g.label}` or `then retry {g.label} max 1`")
            return
        target = scope.labels.get(g.label)
        scope.used_labels.add(g.label)
        if target is None:
            self.err("undefined-label", g.span, f"goto to undefined label `{g.label}`",
                     self._close(g.label, scope.labels) or
                     (f"labels here: {', '.join(scope.labels)}" if scope.labels
                      else f"put `{g.label}:` on its own line where the jump should land"))
            return
        if g.budget is None:
            if target <= here:
                self.err("goto-needs-budget", g.span,
                         f"goto {g.label} jumps backwards and can loop forever",
                         f"give it a budget: goto {g.label} max 2")
        elif g.budget < 1:
            self.err("bad-count", g.span, f"goto budget {g.budget} allows no jump")
        elif g.budget > MAX_JUMP_BUDGET:
            self.err("size-limit", g.span, f"budget {g.budget} is over {MAX_JUMP_BUDGET}")

    # ---------------------------------------------------------------------------- sections
    def check_monitor(self, m: Monitor, main_scope: _Scope, main_calls: set[str]) -> None:
        self.check_name(m.name, m.span, "monitor")
        scope = _Scope("handler")
        self.check_cond(m.when, scope)
        for sc in m.during:
            name = sc.name
            span = sc.span if sc.span.line else m.span
            sig = self.signature_of(name)
            if sig is None or sig.kind == SignatureKind.PREDICATE:
                self.err("unknown-scope", span,
                         f"monitor {m.name}: `during {name}` names no primitive or skill",
                         self._close(name, self.callables()))
                continue
            if name not in main_calls:
                self.warn("scope-never-runs", span,
                          f"monitor {m.name}: main never calls `{name}`, so it never fires")
            self.check_scope_args(m, sc, sig, scope)
        self.check_block(m.handler, scope, None, 1)
        t = m.then
        if t.kind in (ThenKind.RETRY, ThenKind.GOTO):
            main_scope.used_labels.add(t.label)
            if t.label not in main_scope.labels:
                self.err("undefined-label", t.span if t.span.line else m.span,
                         f"monitor {m.name}: `then {t.kind} {t.label}` names no label of main",
                         self._close(t.label, main_scope.labels) or
                         f"put `{t.label}:` at the top level of main")
        if t.kind == ThenKind.RETRY:
            if t.budget is None:
                self.err("retry-needs-budget", t.span if t.span.line else m.span,
                         f"monitor {m.name}: retry without a budget",
                         f"write `then retry {t.label} max 1`")
            elif t.budget < 1:
                self.err("bad-count", t.span, f"retry budget {t.budget} allows no retry")
            elif t.budget > MAX_JUMP_BUDGET:
                self.err("size-limit", t.span, f"budget {t.budget} is over {MAX_JUMP_BUDGET}")

    def check_skill(self, s: SkillDef) -> None:
        self.check_name(s.name, s.span, "skill")
        old = self.cat.get(s.name)
        if old is not None and old.kind != SignatureKind.SKILL:
            self.err("skill-shadows", s.span,
                     f"skill `{s.name}` has the name of a {old.kind.value}", "rename the skill")
        elif old is not None:
            self.warn("skill-overrides", s.span,
                      f"skill `{s.name}` replaces the library skill of that name")
        params: dict[str, str] = {}
        for p in s.params:
            self.check_name(p.name, p.span, "parameter")
            if p.name in params:
                self.err("duplicate-param", p.span, f"skill {s.name}: `{p.name}` declared twice")
            params[p.name] = p.type
        scope = _Scope("skill", params=params)
        self.collect_labels(s.body, scope, skill_path(s.name))
        self.check_block(s.body, scope, None, 1)
        for p in s.params:
            if p.name not in scope.used_params:
                self.warn("unused-param", p.span, f"skill {s.name}: `{p.name}` is never used")
        self.report_unused_labels(s.body, scope)

    def report_unused_labels(self, stmts: tuple[Stmt, ...], scope: _Scope) -> None:
        for st in stmts:
            if isinstance(st, Label) and st.name not in scope.used_labels:
                self.warn("unused-label", st.span, f"nothing jumps to label `{st.name}`")

    def check_recursion(self) -> None:
        graph = {name: {c.name for _p, c in iter_block(s.body, "") if isinstance(c, Call)}
                 for name, s in self.local.items()}
        state: dict[str, int] = {}

        def visit(n: str, stack: list[str]) -> list[str] | None:
            state[n] = 1
            for m in sorted(graph.get(n, ())):
                if m not in graph:
                    continue
                if state.get(m) == 1:
                    return stack + [n, m]
                if m not in state:
                    cyc = visit(m, stack + [n])
                    if cyc:
                        return cyc
            state[n] = 2
            return None

        for name in sorted(graph):
            if name not in state:
                cycle = visit(name, [])
                if cycle:
                    self.err("skill-recursion", self.local[cycle[-1]].span,
                             "skills call each other in a cycle: " + " -> ".join(cycle),
                             "skills must not call themselves; use a bounded loop")
                    return

    def run(self) -> list[Diagnostic]:
        p = self.p
        n_stmts = sum(1 for _ in _all_stmts(p))
        if n_stmts > MAX_STATEMENTS:
            self.err("size-limit", p.span, f"{n_stmts} statements, more than {MAX_STATEMENTS}",
                     "use skills and loops to shorten the program")
        if len(p.monitors) > MAX_MONITORS:
            self.err("size-limit", p.span, f"{len(p.monitors)} monitors, over {MAX_MONITORS}")
        if len(p.skills) > MAX_SKILLS:
            self.err("size-limit", p.span, f"{len(p.skills)} skills, over {MAX_SKILLS}")
        if not p.main.body:
            self.warn("empty-main", p.main.span, "main does nothing",
                      "add the calls that do the task")
        seen_skills: set[str] = set()
        for s in p.skills:
            if s.name in seen_skills:
                self.err("duplicate-skill", s.span, f"skill `{s.name}` is defined twice")
            seen_skills.add(s.name)
        main_scope = _Scope("main")
        self.collect_labels(p.main.body, main_scope, MAIN)
        self.check_block(p.main.body, main_scope, None, 1)
        main_calls = {c.name for _path, c in iter_block(p.main.body, "main")
                      if isinstance(c, Call)}
        # skills called from main run their own calls too: they are in scope for `during`
        frontier = list(main_calls)
        while frontier:
            name = frontier.pop()
            sk = self.local.get(name)
            if sk is None:
                continue
            for _path, c in iter_block(sk.body, ""):
                if isinstance(c, Call) and c.name not in main_calls:
                    main_calls.add(c.name)
                    frontier.append(c.name)
        seen_monitors: set[str] = set()
        for m in p.monitors:
            if m.name in seen_monitors:
                self.err("duplicate-monitor", m.span, f"monitor `{m.name}` is defined twice")
            seen_monitors.add(m.name)
            self.check_monitor(m, main_scope, main_calls)
        self.report_unused_labels(p.main.body, main_scope)
        for s in p.skills:
            self.check_skill(s)
        self.check_recursion()
        return sort_diagnostics(self.out)


def _all_stmts(p: Program) -> Iterable[Stmt]:
    for _path, s in iter_block(p.main.body, "main"):
        yield s
    for m in p.monitors:
        for _path, s in iter_block(m.handler, "h"):
            yield s
    for sk in p.skills:
        for _path, s in iter_block(sk.body, "s"):
            yield s


def validate(program: Program, catalog: Catalog,
             object_ids: Iterable[str] | None = None) -> list[Diagnostic]:
    """Every problem in ``program``, sorted by position. ``object_ids=None`` skips the scene
    check (the planner passes the perceived ids; memory validates skills without a scene)."""
    return _Validator(program, catalog, object_ids).run()


def validate_skill(skill: SkillDef, catalog: Catalog) -> list[Diagnostic]:
    """Problems in one library skill on its own (objects are its parameters, no scene check)."""
    v = _Validator(Program("", Main(), (), (skill,)), catalog, None)
    v.check_skill(skill)
    v.check_recursion()
    return sort_diagnostics(v.out)

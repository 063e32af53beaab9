"""Property: every run of a valid program ends, within its budgets, without an internal error,
whatever the primitives return and whatever the escalator decides."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frankenbot.common import AnomalyKind, ExitStatus, FailureCode
from frankenbot.ports import PrimitiveResult
from frankenbot.program import (
    Arg,
    Call,
    Exit,
    Goto,
    Ident,
    If,
    Label,
    Main,
    Monitor,
    Not,
    Pred,
    Program,
    Repeat,
    Then,
    ThenKind,
    While,
    default_catalog,
    validate,
)
from frankenbot.program.escalation import (
    Abort,
    GotoLabel,
    InsertCall,
    MonitorEvent,
    RetryNode,
    SkipNode,
)
from frankenbot.program.interpreter import Interpreter
from frankenbot.state import RobotSnapshot, WorldSnapshot

OBJ = st.sampled_from(["red_block", "green_bowl"]).map(Ident)
LABELS = ("a", "b")
calls = st.one_of(
    st.builds(lambda o: Call("pick", (Arg("obj", o),)), OBJ),
    st.just(Call("home")),
    st.builds(lambda o: Call("detect", (Arg("obj", o),)), OBJ),
)
preds = st.one_of(st.just(Pred("gripper_open")),
                  st.builds(lambda o: Pred("holding", (o,)), OBJ),
                  st.builds(lambda o: Pred("visible", (o,)), OBJ))
conds = st.one_of(preds, preds.map(Not))
small = st.one_of(calls, st.builds(Goto, st.sampled_from(LABELS), st.integers(1, 3)),
                  st.builds(Exit, st.booleans(), st.just("why")))
stmts = st.recursive(small, lambda inner: st.one_of(
    st.builds(If, conds, st.lists(inner, max_size=3).map(tuple),
              st.lists(inner, max_size=2).map(tuple)),
    st.builds(Repeat, st.integers(1, 3), st.lists(inner, max_size=3).map(tuple)),
    st.builds(While, conds, st.integers(1, 3), st.lists(inner, max_size=3).map(tuple)),
), max_leaves=8)


@st.composite
def programs(draw):
    body = [Label("a")] + draw(st.lists(stmts, max_size=5)) + [Label("b")] + draw(
        st.lists(stmts, max_size=4))
    then = draw(st.sampled_from([Then(ThenKind.RESUME), Then(ThenKind.ESCALATE),
                                 Then(ThenKind.RETRY, "a", 1), Then(ThenKind.GOTO, "b")]))
    mon = Monitor("m", Not(Pred("holding", (Ident("red_block"),))), ("pick",),
                  tuple(draw(st.lists(calls, max_size=2))), then)
    return Program("t", Main(tuple(body)), (mon,))


class RandomExecutor:
    def __init__(self, rng: random.Random, interp_ref: list) -> None:
        self.rng, self.interp_ref, self.calls = rng, interp_ref, 0

    def execute(self, name, args, cancel):
        self.calls += 1
        if self.rng.random() < 0.15 and self.interp_ref:  # a monitor fires mid-primitive
            builtin = self.rng.random() < 0.5
            kind = AnomalyKind.GRASP_LOST if builtin else AnomalyKind.PROGRAM_MONITOR
            self.interp_ref[0].deliver(MonitorEvent("grasp" if builtin else "m", kind,
                                                    "", 0.0, builtin))
        if cancel.cancelled:
            return PrimitiveResult.failure(FailureCode.PREEMPTED, cancel.reason)
        if self.rng.random() < 0.2:
            return PrimitiveResult.failure(
                self.rng.choice([FailureCode.GRASP_FAILED, FailureCode.NOT_FOUND,
                                 FailureCode.ABORTED, FailureCode.UNREACHABLE]), "random")
        return PrimitiveResult.success()


class RandomEscalator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def escalate(self, ctx):
        return self.rng.choice([RetryNode(), SkipNode(), GotoLabel("a"), GotoLabel("b"),
                                InsertCall(Call("home")), Abort("random abort")])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**32 - 1), st.booleans())
def test_valid_programs_always_end_cleanly_within_budgets(program, seed, with_escalator):
    catalog = default_catalog()
    assert not [d for d in validate(program, catalog, None) if d.is_error]
    rng = random.Random(seed)
    ref: list = []
    snap_holding = WorldSnapshot(RobotSnapshot(gripper_width=0.04, held_object="red_block"))
    snap_empty = WorldSnapshot()
    interp = Interpreter(program, catalog, RandomExecutor(rng, ref),
                         snapshot=lambda: rng.choice([snap_holding, snap_empty]),
                         escalator=RandomEscalator(rng) if with_escalator else None,
                         step_budget=200)
    ref.append(interp)
    result = interp.run()
    assert result.status != ExitStatus.ERROR, result.reason
    assert result.steps <= 201
    assert result.trace[-1].event == "leave" and result.trace[-1].path == "main"
    assert interp.monitors_active(0.0) == []

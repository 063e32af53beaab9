"""Property: parse(print(tree)) == tree for generated trees (spans are not compared).

Generating recursive trees costs hypothesis ~50 ms each on these machines, so the normal run
uses a modest count; FRANKENBOT_PROPERTY_EXAMPLES=5000 (for example) runs a long campaign.
"""

from __future__ import annotations

import os
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frankenbot.program import (
    KEYWORDS,
    And,
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
    Or,
    Param,
    Pred,
    Program,
    Repeat,
    SkillDef,
    Then,
    ThenKind,
    While,
    parse_program,
    parse_skills,
    print_program,
    print_skill,
)

_HEAD = string.ascii_letters + "_"
names = st.builds(lambda h, t: h + t, st.sampled_from(_HEAD),
                  st.text(_HEAD + string.digits, max_size=8)).filter(lambda n: n not in KEYWORDS)
numbers = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
counts = st.integers(min_value=0, max_value=10**6)

preds = st.builds(Pred, names, st.lists(st.one_of(names.map(Ident), numbers),
                                        max_size=3).map(tuple))
conds = st.recursive(
    preds,
    lambda inner: st.one_of(
        st.builds(Not, inner),
        st.builds(And, st.lists(inner, min_size=2, max_size=3).map(tuple)),
        st.builds(Or, st.lists(inner, min_size=2, max_size=3).map(tuple)),
    ),
    max_leaves=6,
)
values = st.one_of(names.map(Ident), numbers, texts)
calls = st.builds(Call, names, st.lists(st.builds(Arg, names, values), max_size=3).map(tuple))
simple = st.one_of(
    calls,
    st.builds(Label, names),
    st.builds(Goto, names, st.one_of(st.none(), counts)),
    st.builds(Exit, st.booleans(), texts),
)


def _compound(inner):
    block = st.lists(inner, max_size=3).map(tuple)
    return st.one_of(
        st.builds(If, conds, block, block),
        st.builds(Repeat, counts, block),
        st.builds(While, conds, st.one_of(st.none(), counts), block),
    )


stmts = st.recursive(simple, _compound, max_leaves=12)
blocks = st.lists(stmts, max_size=6).map(tuple)
thens = st.one_of(
    st.just(Then(ThenKind.RESUME)), st.just(Then(ThenKind.ESCALATE)),
    st.builds(Then, st.just(ThenKind.RETRY), names, st.one_of(st.none(), counts)),
    st.builds(Then, st.just(ThenKind.GOTO), names),
)
monitors = st.builds(Monitor, names, conds, st.lists(names, max_size=2).map(tuple),
                     st.lists(stmts, max_size=3).map(tuple), thens)
params = st.builds(Param, names, st.sampled_from(["object", "number", "string"]))
skills = st.builds(SkillDef, names, st.lists(params, max_size=3).map(tuple), texts, blocks)
EXAMPLES = int(os.environ.get("FRANKENBOT_PROPERTY_EXAMPLES", "120"))

programs = st.builds(Program, texts, st.builds(Main, blocks),
                     st.lists(monitors, max_size=2).map(tuple),
                     st.lists(skills, max_size=2).map(tuple))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_printing_then_parsing_gives_back_the_same_program(program):
    text = print_program(program)
    assert parse_program(text).program == program


@settings(max_examples=max(1, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(skills, min_size=1, max_size=3).map(tuple))
def test_printing_then_parsing_a_library_gives_back_the_same_skills(lib):
    text = "\n".join(print_skill(s) for s in lib)
    assert parse_skills(text) == lib


@settings(max_examples=max(1, EXAMPLES // 3), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.sampled_from(["", "Here it is:\n", "```\n", "Sure!\n```fb\n"]),
       st.sampled_from(["", "\n```", "\n```\nDone.", "\nHope this helps " + string.punctuation]))
def test_programs_survive_chat_wrapping(program, before, after):
    text = print_program(program)
    assert parse_program(before + text + after).program == program

"""Parser: every construct, extraction from chat noise, syntax errors with positions and hints."""

from __future__ import annotations

import pytest

from frankenbot.program import (
    And,
    Call,
    Exit,
    Goto,
    Ident,
    If,
    Label,
    Not,
    Or,
    Pred,
    ProgramSyntaxError,
    Repeat,
    ThenKind,
    While,
    parse_program,
    parse_skills,
    print_program,
)

EXAMPLE = '''task "put the red block in the green bowl" {
  main {
    start:
    pick(obj=red_block)
    place_in(obj=red_block, container=green_bowl)
    if not in(red_block, green_bowl) { goto start max 2 } else { home() }
    repeat 3 { wait(seconds=0.5) }
    while not holding(red_block) max 3 { pick(obj=red_block) }
    pick_and_place(obj=blue_block, target=red_bowl)      # a library skill call, same syntax
    exit success
  }
  monitor dropped when not holding(red_block) during place_in {
    pick(obj=red_block)
    then resume
  }
  monitor bowl_moved when not visible(green_bowl) {
    detect(obj=green_bowl)
    then retry start max 1          # or: then goto LABEL | then escalate | then resume
  }
  skill put_twice(obj: object, container: object) "pick and place an object into a container" {
    pick(obj=obj)
    place_in(obj=obj, container=container)
  }
}
'''


def test_every_construct_of_the_reference_example_parses_to_the_expected_tree():
    p = parse_program(EXAMPLE).program
    body = p.main.body
    assert p.description == "put the red block in the green bowl"
    assert body[0] == Label("start")
    assert body[1] == Call("pick", (body[1].args[0],)) and body[1].args[0].value == Ident(
        "red_block")
    assert isinstance(body[3], If) and body[3].cond == Not(
        Pred("in", (Ident("red_block"), Ident("green_bowl"))))
    assert body[3].then == (Goto("start", 2),) and body[3].orelse == (Call("home"),)
    assert isinstance(body[4], Repeat) and body[4].count == 3
    assert body[4].body[0].args[0].value == 0.5
    assert isinstance(body[5], While) and body[5].bound == 3
    assert body[6].name == "pick_and_place"
    assert body[7] == Exit(True)
    dropped, moved = p.monitors
    assert dropped.scope_names == ("place_in",) and dropped.then.kind == ThenKind.RESUME
    assert moved.during == () and moved.then.kind == ThenKind.RETRY
    assert (moved.then.label, moved.then.budget) == ("start", 1)
    (skill,) = p.skills
    assert [(q.name, q.type) for q in skill.params] == [("obj", "object"),
                                                          ("container", "object")]
    assert skill.description.startswith("pick and place")


def test_spans_point_at_the_source_line_and_column():
    p = parse_program(EXAMPLE).program
    assert (p.main.body[1].span.line, p.main.body[1].span.column) == (4, 5)
    assert p.monitors[0].span.line == 12


def test_conditions_respect_not_and_or_precedence_and_parentheses():
    text = ('task "t" { main { if gripper_open or not holding(a) and visible(b) { home() } '
            'if not (visible(a) or visible(b)) { home() } } }')
    first, second = parse_program(text).program.main.body
    assert first.cond == Or((Pred("gripper_open"),
                             And((Not(Pred("holding", (Ident("a"),))),
                                  Pred("visible", (Ident("b"),))))))
    assert second.cond == Not(Or((Pred("visible", (Ident("a"),)), Pred("visible", (Ident("b"),)))))


def test_exit_failure_with_reason_and_escaped_string():
    p = parse_program('task "say \\"hi\\"" { main { exit failure "no \\"bowl\\"" } }').program
    assert p.description == 'say "hi"'
    assert p.main.body[0] == Exit(False, 'no "bowl"')


def test_else_if_chain_and_then_variants():
    text = '''task "t" { main { a: if holding(x) { home() } else if visible(x) { detect(obj=x) }
      else { exit failure "gone" } }
      monitor m1 when gripper_open { then escalate }
      monitor m2 when gripper_open { home() then goto a }
      monitor m3 when gripper_open { home() } }'''
    p = parse_program(text).program
    stmt = p.main.body[1]
    assert isinstance(stmt.orelse[0], If) and len(stmt.orelse) == 1
    kinds = [(m.then.kind, m.then.label) for m in p.monitors]
    assert kinds == [("escalate", ""), ("goto", "a"), ("resume", "")]


def test_numbers_negative_and_decimal():
    p = parse_program('task "t" { main { place_at(obj=x, x=-0.25, y=3) } }').program
    assert [a.value for a in p.main.body[0].args] == [Ident("x"), -0.25, 3.0]


def test_extracts_program_from_prose_fences_crlf_and_smart_quotes():
    noisy = ("Sure! Here is the plan.\r\n```frankenbot\r\n"
             + EXAMPLE.replace('"put the red', '\u201cput the red', 1)
             .replace('green bowl" {', 'green bowl\u201d {', 1).replace("\n", "\r\n")
             + "```\r\nLet me know if you need more.\r\n")
    res = parse_program(noisy)
    assert res.program == parse_program(EXAMPLE).program
    joined = " | ".join(res.stripped)
    assert "Sure! Here is the plan." in joined
    assert "Let me know" in joined
    assert "smart quotes" in joined and "CRLF" in joined
    assert "```frankenbot" in joined


def test_of_several_blocks_the_last_one_that_parses_wins():
    draft = 'task "draft" { main { pick(obj=red_block }'
    good = 'task "final" { main { pick(obj=red_block) } }'
    older = 'task "older" { main { home() } }'
    res = parse_program(f"First try:\n{older}\nOops:\n```\n{draft}\n```\nFixed:\n```\n{good}\n```")
    assert res.program.description == "final"
    res = parse_program(f"{good}\n\nand a broken one\n{draft}")
    assert res.program.description == "final"


def test_error_positions_refer_to_the_original_chat_text():
    text = 'Here you go:\n\n```\ntask "x" {\n  main {\n    pick(obj=)\n  }\n}\n```\n'
    with pytest.raises(ProgramSyntaxError) as e:
        parse_program(text)
    assert (e.value.line, e.value.column) == (6, 14)


@pytest.mark.parametrize("text, hint_part", [
    ('task "x" { main { pick("red_block") } }', "named arguments"),
    ('task "x" { main { if holding(x): { home() } } }', "braces"),
    ('task "x" { main { pick(obj=x) }', "not closed"),
    ("task 'x' { main { } }", "double quotes"),
    ('task "x" { main { if holding(obj=x) { home() } } }', "positional"),
    ('task "x" { main { if holding(x) && visible(x) { home() } } }', "and"),
])
def test_common_mistakes_get_a_hint(text, hint_part):
    with pytest.raises(ProgramSyntaxError) as e:
        parse_program(text)
    assert hint_part in e.value.hint
    assert e.value.line >= 1 and e.value.column >= 1


def test_garbage_and_empty_text_raise_the_syntax_error():
    for text in ["", "hello there", "{}", "task", "```\n```", "task \"x\" { }"]:
        with pytest.raises(ProgramSyntaxError):
            parse_program(text)


def test_deep_nesting_is_refused_cleanly():
    deep = 'task "x" { main { ' + "if gripper_open { " * 40 + "home()" + " }" * 40 + " } }"
    with pytest.raises(ProgramSyntaxError, match="nesting"):
        parse_program(deep)
    nots = 'task "x" { main { if ' + "not " * 50 + "gripper_open { home() } } }"
    with pytest.raises(ProgramSyntaxError, match="not"):
        parse_program(nots)


def test_skill_library_parses_several_definitions():
    lib = '''# seed skills
skill pick_and_place(obj: object, target: object) "pick an object and put it in a container" {
  pick(obj=obj)
  place_in(obj=obj, container=target)
}
skill wait_a_bit(seconds: number) { wait(seconds=seconds) }
'''
    skills = parse_skills(lib)
    assert [s.name for s in skills] == ["pick_and_place", "wait_a_bit"]
    assert skills[1].params[0].type == "number" and skills[1].description == ""
    with pytest.raises(ProgramSyntaxError):
        parse_skills('task "x" { main { } }')


def test_printed_program_parses_back_to_the_same_tree():
    p = parse_program(EXAMPLE).program
    assert parse_program(print_program(p)).program == p

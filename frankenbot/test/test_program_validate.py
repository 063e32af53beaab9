"""Validator: each diagnostic code fires on a minimal program, and valid programs stay clean."""

from __future__ import annotations

import pytest

from frankenbot.program import (
    CheckResult,
    catalog_with,
    check_text,
    default_catalog,
    parse_program,
    parse_skills,
    render_diagnostics,
    skill_signature,
    validate,
    validate_skill,
)
from frankenbot.program.catalog import SignatureKind
from frankenbot.program.validator import CODES

OBJECTS = ["red_block", "green_block", "blue_block", "green_bowl", "red_bowl", "gray_bin",
           "drawer", "zone"]


def codes(text: str, objects=OBJECTS, catalog=None) -> list[str]:
    program = parse_program(text).program
    return [d.code for d in validate(program, catalog or default_catalog(), objects)]


def main(body: str, extra: str = "") -> str:
    return f'task "t" {{\n  main {{\n{body}\n  }}\n{extra}\n}}\n'


CASES = [
    ("unknown-callee", main("    pikc(obj=red_block)")),
    ("not-callable", main("    holding(obj=red_block)")),
    ("unknown-arg", main("    pick(obj=red_block, speed=2)")),
    ("duplicate-arg", main("    pick(obj=red_block, obj=red_block)")),
    ("missing-arg", main("    place_in(obj=red_block)")),
    ("arg-type", main('    pick(obj="red_block")')),
    ("arg-type", main("    wait(seconds=red_block)")),
    ("arg-range", main("    wait(seconds=90)")),
    ("unknown-object", main("    pick(obj=pink_elephant)")),
    ("shape-mismatch", main("    place_in(obj=red_block, container=blue_block)")),
    ("unknown-predicate", main("    if grasped(red_block) { home() }")),
    ("predicate-arity", main("    if in(red_block) { home() }")),
    ("undefined-label", main("    goto nowhere")),
    ("duplicate-label", main("    a:\n    home()\n    a:\n    goto a max 1")),
    ("nested-label", main("    if gripper_open { a: home() }")),
    ("unused-label", main("    a:\n    home()")),
    ("goto-needs-budget", main("    a:\n    home()\n    goto a")),
    ("retry-needs-budget", main("    a:\n    home()",
                                "  monitor m when gripper_open { then retry a }")),
    ("unbounded-loop", main("    while not holding(red_block) { pick(obj=red_block) }")),
    ("bad-count", main("    repeat 0 { home() }")),
    ("jump-in-handler", main("    a:\n    home()",
                             "  monitor m when gripper_open { goto a then resume }")),
    ("unreachable", main("    exit success\n    home()")),
    ("unknown-scope", main("    home()", "  monitor m when gripper_open during dance { }")),
    ("scope-never-runs", main("    home()", "  monitor m when gripper_open during pick { }")),
    ("duplicate-monitor", main("    home()", "  monitor m when gripper_open { }\n"
                                             "  monitor m when gripper_open { }")),
    ("duplicate-skill", main("    home()", "  skill s() { home() }\n  skill s() { home() }")),
    ("skill-shadows", main("    home()", "  skill pick(obj: object) { detect(obj=obj) }")),
    ("duplicate-param", main("    home()", "  skill s(a: object, a: object) { pick(obj=a) }")),
    ("unused-param", main("    s(a=red_block)", "  skill s(a: object) { home() }")),
    ("skill-recursion", main("    s1()", "  skill s1() { s2() }\n  skill s2() { s1() }")),
    ("reserved-name", main("    max:\n    goto max max 1")),
    ("size-limit", main("    repeat 500 { home() }")),
    ("size-limit", main("    home()\n" * 320)),
    ("empty-main", main("")),
]


@pytest.mark.parametrize("code, text", CASES, ids=[f"{c}-{i}" for i, (c, _t) in enumerate(CASES)])
def test_each_problem_gets_its_code(code, text):
    assert code in codes(text)


def test_every_documented_code_has_a_case():
    assert {c for c, _t in CASES} == set(CODES) - {"skill-overrides"}


def test_reference_program_is_valid_with_its_library_skill():
    text = main("    start:\n    pick(obj=red_block)\n"
                "    place_in(obj=red_block, container=green_bowl)\n"
                "    if not in(red_block, green_bowl) { goto start max 2 } else { home() }\n"
                "    put_in(obj=blue_block, container=red_bowl)\n    exit success",
                "  monitor dropped when not holding(red_block) during place_in {\n"
                "    pick(obj=red_block)\n    then resume\n  }")
    assert codes(text) == ["unknown-callee"]
    lib = parse_skills('skill put_in(obj: object, container: object) "put it in" '
                       '{ pick(obj=obj) place_in(obj=obj, container=container) }')
    cat = catalog_with(default_catalog(), lib)
    assert codes(text, catalog=cat) == []
    sig = cat.get("put_in")
    assert sig.kind == SignatureKind.SKILL and "place_in(obj=obj" in sig.body
    assert skill_signature(lib[0]) == sig


def test_skill_parameters_are_not_scene_objects_and_forward_jumps_need_no_budget():
    text = main("    s(a=red_block, n=0.5)\n    goto done\n    home()\n    done:\n    exit success",
                "  skill s(a: object, n: number) { pick(obj=a) wait(seconds=n) }")
    diags = validate(parse_program(text).program, default_catalog(), OBJECTS)
    assert [d.code for d in diags] == ["unreachable"]  # home() after the goto, a warning
    assert not diags[0].is_error


def test_object_check_is_skipped_without_a_scene():
    assert codes(main("    pick(obj=pink_elephant)"), objects=None) == []


def test_diagnostics_carry_positions_hints_and_render_both_ways():
    text = main("    pick(obj=red_blok)")
    diags = validate(parse_program(text).program, default_catalog(), OBJECTS)
    (d,) = diags
    assert (d.line, d.column, d.severity) == (3, 10, "error")
    assert "red_block" in d.hint
    human = render_diagnostics(diags, source=text)
    assert "3:10: error[unknown-object]" in human and "^" in human
    compact = render_diagnostics(diags, compact=True)
    assert compact.startswith("L3:10 error unknown-object:") and "\n" not in compact


def test_check_text_never_raises_and_reports_syntax_errors_as_diagnostics():
    bad = check_text("this is not a program {", default_catalog(), OBJECTS)
    assert isinstance(bad, CheckResult) and bad.program is None and not bad.ok
    assert bad.diagnostics[0].code == "syntax"
    good = check_text("Plan:\n" + main("    home()"), default_catalog(), OBJECTS)
    assert good.ok and good.stripped


def test_validate_skill_checks_a_library_entry_alone():
    (skill,) = parse_skills("skill s(obj: object) { pick(obj=obj) wait(seconds=obj) }")
    assert [d.code for d in validate_skill(skill, default_catalog())] == ["arg-type"]

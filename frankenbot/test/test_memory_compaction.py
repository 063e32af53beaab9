"""Compaction onto library skills, and the benchmark's bookkeeping on a short task sequence."""

from __future__ import annotations

from pathlib import Path

from frankenbot.eval import memory_bench as benchmark
from frankenbot.memory.compaction import compact
from frankenbot.program.catalog import default_catalog
from frankenbot.program.parser import parse_program, parse_skills
from frankenbot.program.printer import print_program
from frankenbot.program.validator import validate

SKILLS = parse_skills(
    'skill pick_and_place(obj: object, container: object) "p" {\n  pick(obj=obj)\n'
    '  place_in(obj=obj, container=container)\n}\n'
    'skill put_in_drawer(obj: object, drawer: object) "d" {\n  open_drawer(drawer=drawer)\n'
    '  pick(obj=obj)\n  place_in(obj=obj, container=drawer)\n  close_drawer(drawer=drawer)\n}\n'
    'skill raise_it(obj: object) "l" {\n  pick(obj=obj)\n  move_above(obj=obj, height=0.2)\n}\n')
CATALOG = default_catalog().with_skills(
    __import__("frankenbot.program.validator", fromlist=["x"]).skill_signature(s) for s in SKILLS)


def program(body: str) -> str:
    return f'task "t" {{\n  main {{\n{body}\n  }}\n' \
        '  monitor dropped when not holding(a) during place_in {\n    pick(obj=a)\n' \
        '    then resume\n  }\n}\n'


def test_spelled_out_skill_bodies_become_skill_calls() -> None:
    p = parse_program(program(
        "    start:\n    pick(obj=a)\n    place_in(obj=a, container=bowl)\n"
        "    if not in(a, bowl) { goto start max 2 }\n"
        "    open_drawer(drawer=drawer)\n    pick(obj=b)\n    place_in(obj=b, container=drawer)\n"
        "    close_drawer(drawer=drawer)\n    exit success")).program
    out = compact(p, SKILLS, CATALOG)
    text = print_program(out)
    assert "pick_and_place(obj=a, container=bowl)" in text
    assert "put_in_drawer(obj=b, drawer=drawer)" in text  # the longer skill wins
    assert "start:" in text and "goto start max 2" in text
    assert out.monitors == p.monitors
    assert not [d for d in validate(out, CATALOG, ["a", "b", "bowl", "drawer"]) if d.is_error]


def test_inconsistent_bindings_and_other_literals_are_left_alone() -> None:
    p = parse_program(program(
        "    pick(obj=a)\n    place_in(obj=b, container=bowl)\n"
        "    pick(obj=c)\n    move_above(obj=c, height=0.3)")).program
    assert compact(p, SKILLS, CATALOG) == p


def test_nested_blocks_are_compacted() -> None:
    p = parse_program(program(
        "    if not in(a, bowl) {\n      pick(obj=a)\n      place_in(obj=a, container=bowl)\n"
        "    }")).program
    assert "pick_and_place(obj=a, container=bowl)" in print_program(compact(p, SKILLS, CATALOG))


def test_benchmark_learned_arm_promotes_and_then_uses_skills(tmp_path: Path) -> None:
    rows, info = benchmark.run(12, db_dir=tmp_path, min_support=2)
    summary = benchmark.summarise(rows, info)
    assert len(rows) == 12
    learned = "pick_then_place_in_checked"
    assert learned in summary["promoted"]["learned"]  # type: ignore[index]
    first = next(r.index for r in rows if learned in r.arms["learned"].promoted)
    later = [r for r in rows[first + 1:] if r.family in ("put_in_bowl", "sort_by_colour")]
    assert later and all(r.arms["learned"].skill_calls > 0 for r in later)
    assert all(r.arms["learned"].lines < r.arms["none"].lines for r in later)
    for r in rows:
        assert r.arms["seeds"].lines <= r.arms["none"].lines
        assert {a.planning_calls for a in r.arms.values()} == {1}
        assert all(a.success for a in r.arms.values())
    assert summary["seeds"]["prompt_tokens_mean"] > summary["none"]["prompt_tokens_mean"]  # type: ignore[index]


def test_benchmark_failed_runs_are_recorded_as_failures_and_never_promote(tmp_path: Path) -> None:
    def program_fails(family, seed, program, catalog):  # type: ignore[no-untyped-def]
        return True, False, "the oracle would say yes, but the program exited failure", "[]"

    rows, info = benchmark.run(8, executor=program_fails, db_dir=tmp_path, min_support=2)
    assert all(a.success for r in rows for a in r.arms.values())  # the report counts the oracle
    # memory saw only the program's failures: nothing promoted although the oracle agreed
    assert not [s for s in info["libraries"]["learned"] if s.origin == "promoted"]


def test_memory_never_learns_the_oracles_verdict(tmp_path: Path) -> None:
    def oracle_says_no(family, seed, program, catalog):  # type: ignore[no-untyped-def]
        return False, True, "the program succeeded by its own checks; the oracle disagrees", "[]"

    rows, info = benchmark.run(12, executor=oracle_says_no, db_dir=tmp_path, min_support=2)
    assert not any(a.success for r in rows for a in r.arms.values())
    # promotion follows the program's own outcome, which is all a robot knows
    assert [s for s in info["libraries"]["learned"] if s.origin == "promoted"]


def test_check_and_retry_idiom_compacts_onto_a_skill_that_wraps_a_skill() -> None:
    checked = parse_skills(
        'skill pap_checked(obj: object, container: object) "c" {\n  again:\n'
        '  pick_and_place(obj=obj, container=container)\n'
        '  if not in(obj, container) {\n    goto again max 2\n  }\n}\n')
    skills = (*SKILLS, *checked)
    from frankenbot.program.validator import skill_signature

    catalog = CATALOG.with_skills(skill_signature(s) for s in checked)
    p = parse_program(program(
        "    s1:\n    pick(obj=a)\n    place_in(obj=a, container=bowl)\n"
        "    if not in(a, bowl) { goto s1 max 2 }\n"
        "    s2:\n    pick(obj=b)\n    place_in(obj=b, container=bowl)\n"
        "    if not in(b, bowl) { goto s2 max 2 }\n    exit success")).program
    out = compact(p, skills, catalog)
    assert [getattr(s, "name", "") for s in out.main.body] == [
        "pap_checked", "pap_checked", ""]
    assert print_program(out).count("pap_checked(obj=") == 2


def test_label_used_by_a_monitor_keeps_its_window_uncompacted() -> None:
    checked = parse_skills(
        'skill pc(obj: object) "c" {\n  again:\n  pick(obj=obj)\n'
        '  if not holding(obj) {\n    goto again max 2\n  }\n}\n')
    from frankenbot.program.validator import skill_signature

    catalog = CATALOG.with_skills(skill_signature(s) for s in checked)
    text = ('task "t" {\n  main {\n    s1:\n    pick(obj=a)\n'
            '    if not holding(a) { goto s1 max 2 }\n  }\n'
            '  monitor m when not visible(a) {\n    detect(obj=a)\n    then retry s1 max 1\n'
            '  }\n}\n')
    p = parse_program(text).program
    assert compact(p, checked, catalog) == p

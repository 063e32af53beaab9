"""Skill promotion: thresholds, generalisation of objects to parameters, dedup, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from frankenbot.memory import promotion
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import EpisodeRecord
from frankenbot.memory.store import MemoryStore
from frankenbot.program.catalog import default_catalog
from frankenbot.program.parser import parse_program, parse_skills
from frankenbot.program.tree import Label

CATALOG = default_catalog()


def task(*lines: str, name: str = "t") -> str:
    body = "\n".join(f"    {line}" for line in lines)
    return f'task "{name}" {{\n  main {{\n{body}\n    exit success\n  }}\n}}\n'


DRAWER = ("open_drawer(drawer=drawer)", "pick(obj={o})",
          "place_in(obj={o}, container=drawer)", "close_drawer(drawer=drawer)")


def drawer_task(obj: str) -> str:
    return task(*(line.format(o=obj) for line in DRAWER), "home()")


def store_with(where: Path | str, **cfg: object) -> MemoryStore:
    """A store in a folder (SQLite file m.db) or at a URL (``memory_url``: both backends)."""
    config = MemoryConfig(use_embeddings=False, load_seeds=False, **cfg)  # type: ignore[arg-type]
    return MemoryStore.open(where if isinstance(where, str) else where / "m.db", config)


def record(store: MemoryStore, program: str, success: bool = True) -> tuple[str, ...]:
    return store.record_episode(EpisodeRecord("put it in the drawer", program, success)).promoted


def test_generalise_turns_object_ids_into_parameters_by_first_appearance() -> None:
    prog = parse_program(task("pick(obj=red_block)",
                              "place_in(obj=red_block, container=green_bowl)")).program
    (run,) = promotion.runs(prog, CATALOG)
    pattern = promotion.generalise(run)
    assert pattern is not None and pattern.n_params == 2
    other = parse_program(task("pick(obj=blue_block)",
                               "place_in(obj=blue_block, container=bin)")).program
    assert promotion.generalise(promotion.runs(other, CATALOG)[0]) == pattern
    same_obj = parse_program(task("pick(obj=bin)", "place_in(obj=bin, container=bin)")).program
    assert promotion.generalise(promotion.runs(same_obj, CATALOG)[0]) != pattern


def test_numbers_stay_literal_in_patterns() -> None:
    a = parse_program(task("move_above(obj=a, height=0.1)", "pick(obj=a)")).program
    b = parse_program(task("move_above(obj=b, height=0.2)", "pick(obj=b)")).program
    pa = promotion.generalise(promotion.runs(a, CATALOG)[0])
    pb = promotion.generalise(promotion.runs(b, CATALOG)[0])
    assert pa is not None and pb is not None and pa != pb


def test_unconnected_windows_are_not_patterns() -> None:
    prog = parse_program(task("place_in(obj=a, container=bowl)", "pick(obj=b)")).program
    assert promotion.generalise(promotion.runs(prog, CATALOG)[0]) is None


def _kinds(stmts) -> list[str]:  # type: ignore[no-untyped-def]
    return [getattr(x, "name", type(x).__name__.lower()) if not isinstance(x, Label)
            else "label" for x in stmts]


def test_segments_stop_at_exits_and_loops_and_include_nested_blocks() -> None:
    prog = parse_program(task(
        "pick(obj=a)", "place_in(obj=a, container=bowl)", "start:",
        "if not in(a, bowl) { goto start max 2 }",
        "repeat 2 { pick(obj=b) place_in(obj=b, container=bowl) }", "pick(obj=c)")).program
    segs = [_kinds(seg) for seg in promotion.segments(prog, CATALOG)]
    assert segs == [["pick", "place_in", "label", "if"], ["pick"], ["goto"],
                    ["pick", "place_in"]]


def checked_task(obj: str, monitor: str = "") -> str:
    body = "\n".join(f"    {line}" for line in (
        "s1:", f"pick(obj={obj})", f"place_in(obj={obj}, container=bowl)",
        f"if not in({obj}, bowl) {{ goto s1 max 2 }}", "exit success"))
    return f'task "t" {{\n  main {{\n{body}\n  }}\n{monitor}}}\n'


def test_check_and_retry_idiom_is_promoted_as_one_skill(memory_url: str) -> None:
    with store_with(memory_url, min_support=2, max_pattern_length=6) as store:
        record(store, checked_task("a"))
        (name,) = record(store, checked_task("b"))
        skill = store.get_skill(name)
        assert skill is not None and name == "pick_then_place_in_checked"
        (parsed,) = parse_skills(skill.body)
        assert _kinds(parsed.body) == ["label", "pick", "place_in", "if"]
        assert "goto again max 2" in skill.body and "if not in(obj, container)" in skill.body


def test_window_whose_label_is_targeted_from_outside_is_not_mined() -> None:
    monitor = ("  monitor m when not holding(a) during place_in {\n    pick(obj=a)\n"
               "    then retry s1 max 1\n  }\n")
    prog = parse_program(checked_task("a", monitor)).program
    found = promotion.patterns_in(prog, CATALOG, 2, 6)
    assert all("L0:" not in p.key for p in found)  # no window may own the label s1
    assert any(p.key.startswith("pick(obj=p0)") for p in found)


def test_promotes_at_k_successes_not_before(memory_url: str) -> None:
    with store_with(memory_url, min_support=3, min_success_rate=0.8) as store:
        assert record(store, drawer_task("red_block")) == ()
        assert record(store, drawer_task("blue_block")) == ()
        promoted = record(store, drawer_task("green_block"))
        assert len(promoted) == 1
        skill = store.get_skill(promoted[0])
    assert skill is not None and skill.origin == "promoted"
    assert skill.params == (("drawer", "object"), ("obj", "object"))
    (parsed,) = parse_skills(skill.body)
    assert [c.name for c in parsed.body] == ["open_drawer", "pick", "place_in", "close_drawer"]


def test_success_rate_below_r_blocks_promotion(memory_url: str) -> None:
    with store_with(memory_url, min_support=2, min_success_rate=0.75) as store:
        for obj in ("a", "b"):
            assert record(store, drawer_task(obj), success=False) == ()
        assert record(store, drawer_task("c")) == ()  # 1 success
        assert record(store, drawer_task("d")) == ()  # 2/4 = 0.5 < 0.75
        assert record(store, drawer_task("e")) == ()  # 3/5
        assert record(store, drawer_task("f")) == ()  # 4/6
        assert record(store, drawer_task("g")) == ()  # 5/7 = 0.71
        assert record(store, drawer_task("h")) != ()  # 6/8 = 0.75


def test_failed_episodes_alone_never_promote(memory_url: str) -> None:
    with store_with(memory_url, min_support=2, min_success_rate=0.0) as store:
        for obj in "abcdef":
            assert record(store, drawer_task(obj), success=False) == ()
        assert store.list_skills() == ()


def test_closed_pattern_wins_over_its_sub_sequences(memory_url: str) -> None:
    # open/pick/place/close always occur together: only the whole sequence is promoted.
    with store_with(memory_url, min_support=2) as store:
        record(store, drawer_task("a"))
        promoted = record(store, drawer_task("b"))
        assert len(promoted) == 1
        assert len(store.list_skills()) == 1


def test_promoted_skill_is_immediately_in_the_catalog_and_used(memory_url: str) -> None:
    with store_with(memory_url, min_support=2) as store:
        record(store, drawer_task("a"))
        (name,) = record(store, drawer_task("b"))
        catalog = store.catalog(CATALOG)
        sig = catalog.get(name)
        assert sig is not None and sig.kind.value == "skill" and sig.body.startswith("skill ")
        call = f"{name}(obj=c, drawer=drawer)"
        record(store, task(call))
        skill = store.get_skill(name)
    assert skill is not None and skill.uses == 1 and skill.successes == 1


def test_dedup_against_seed_skill_up_to_parameter_renaming(memory_url: str) -> None:
    with store_with(memory_url, min_support=2) as store:
        store.add_skill_text(
            'skill stow(thing: object, d: object) "stow" {\n  open_drawer(drawer=d)\n'
            '  pick(obj=thing)\n  place_in(obj=thing, container=d)\n  close_drawer(drawer=d)\n}\n',
            "seed")
        for obj in "abc":
            assert record(store, drawer_task(obj)) == ()
        assert [s.name for s in store.list_skills()] == ["stow"]


def test_dedup_refuses_a_renamed_copy_on_import(memory_url: str) -> None:
    from frankenbot.errors import MemoryStoreError

    with store_with(memory_url) as store:
        store.add_skill_text('skill a(x: object, y: object) "a" {\n  pick(obj=x)\n'
                             '  place_on(obj=x, target=y)\n}\n', "seed")
        with pytest.raises(MemoryStoreError, match="duplicates library skill 'a'"):
            store.add_skill_text('skill b(p: object, q: object) "b" {\n  pick(obj=p)\n'
                                 '  place_on(obj=p, target=q)\n}\n', "imported")


def test_invalid_skill_is_refused(memory_url: str) -> None:
    from frankenbot.errors import ProgramError

    with store_with(memory_url) as store:
        with pytest.raises(ProgramError):
            store.add_skill_text('skill bad(x: object) "b" {\n  fly(obj=x)\n}\n', "imported")
        with pytest.raises(ProgramError):
            store.add_skill_text('skill bad(x: object) "b" {\n  place_at(obj=x, x=x, y=0.1)\n}\n',
                                 "imported")
        assert store.list_skills() == ()


def test_skill_names_are_readable_and_unique() -> None:
    prog = parse_program(task("pick(obj=a)", "place_in(obj=a, container=b)")).program
    pattern = promotion.generalise(promotion.runs(prog, CATALOG)[0])
    assert pattern is not None
    assert promotion.skill_name(pattern, set()) == "pick_then_place_in"
    assert promotion.skill_name(pattern, {"pick_then_place_in"}) == "pick_then_place_in_2"


def test_promoted_skill_that_stops_working_is_no_longer_offered(memory_url: str) -> None:
    with store_with(memory_url, min_support=2, min_success_rate=0.75) as store:
        record(store, drawer_task("a"))
        (name,) = record(store, drawer_task("b"))
        call = task(f"{name}(obj=c, drawer=drawer)")
        record(store, call)
        assert name in [s.name for s in store.get_context("drawer", 10_000, 0).skills]
        record(store, call, success=False)
        record(store, call, success=False)  # 1 of 3 uses succeeded < 0.75
        assert name not in [s.name for s in store.get_context("drawer", 10_000, 0).skills]
        assert store.catalog().get(name) is not None  # still callable


def test_bad_episode_fields_are_refused() -> None:
    from frankenbot.errors import MemoryStoreError

    with pytest.raises(MemoryStoreError, match="vlm_calls"):
        EpisodeRecord("x", "y", True, vlm_calls=-1)
    with pytest.raises(MemoryStoreError, match="planning_time"):
        EpisodeRecord("x", "y", True, planning_time=float("nan"))


def test_removed_skill_is_not_promoted_again_and_callees_are_protected(memory_url: str) -> None:
    from frankenbot.errors import MemoryStoreError

    with store_with(memory_url, min_support=2) as store:
        store.add_skill_text('skill inner(o: object) "i" {\n  detect(obj=o)\n  pick(obj=o)\n}\n'
                             'skill outer(o: object, b: object) "o" {\n  inner(o=o)\n'
                             '  place_in(obj=o, container=b)\n}\n', "imported")
        with pytest.raises(MemoryStoreError, match="called by outer"):
            store.remove_skill("inner")
        record(store, drawer_task("a"))
        (name,) = record(store, drawer_task("b"))
        assert store.remove_skill(name)
        assert record(store, drawer_task("c")) == ()
        assert store.get_skill(name) is None


def _trace(*entries: tuple[str, str, str]) -> str:
    import json

    return json.dumps([{"t": float(i), "path": p, "node": "", "line": 0, "event": e,
                        "status": s} for i, (p, e, s) in enumerate(entries)])


def test_trace_attributes_a_failure_to_the_sequence_that_failed_only(tmp_path: Path) -> None:
    # main: pick a, place_in a bowl, pick b (fails); the first pair ran fine.
    program = task("pick(obj=a)", "place_in(obj=a, container=bowl)", "pick(obj=b)",
                   "place_in(obj=b, container=bowl)")
    trace = _trace(("main/0", "leave", "success"), ("main/1", "leave", "success"),
                   ("main/2", "leave", "failure"))
    with store_with(tmp_path, min_support=2, min_success_rate=0.9) as store:
        for _ in range(2):
            store.record_episode(EpisodeRecord("x", program, False, trace_json=trace))
        stats = {p.pattern.key: (p.seen, p.successes) for p in store.patterns()}
        # The pair ran fine for a and failed for b: one vote per episode, the worst one.
        assert stats["pick(obj=p0)\nplace_in(container=p1, obj=p0)"] == (2, 0)
    (tmp_path / "other").mkdir()
    with store_with(tmp_path / "other", min_support=2, min_success_rate=0.9) as store:
        partial = _trace(("main/0", "leave", "success"), ("main/1", "leave", "success"))
        for _ in range(2):  # the run stopped after the first pair: the rest never ran
            store.record_episode(EpisodeRecord("x", task("pick(obj=a)",
                                 "place_in(obj=a, container=bowl)", "detect(obj=b)",
                                 "pick(obj=b)"), False, trace_json=partial))
        stats = {p.pattern.key: (p.seen, p.successes) for p in store.patterns()}
        assert stats == {"pick(obj=p0)\nplace_in(container=p1, obj=p0)": (2, 2)}
        assert [s.origin for s in store.list_skills()] == ["promoted"]

"""The offline planner's understanding stage, scored on the language development set.

The set (``fixtures/language/``) is hand-written phrasings of every sim family plus
multi-step ones, and refusals, each bound to a sampled development scene with the frames it must
produce. Frame accuracy must be at least 98%, refusals exact (100%), and no wrong program: every
plan written is a right one. The held-out fifth is scored the same way but was never tuned on.
"""

from __future__ import annotations

import pytest

from frankenbot.eval.language_bench import run_all, score
from frankenbot.eval.language_set import build, load
from frankenbot.eval.taskset import standard_scene
from frankenbot.planner.frames import ObjectNotResolved, Refusal, UnsafeInstruction
from frankenbot.planner.offline import plan_offline
from frankenbot.planner.understanding import understand
from frankenbot.sim.tasks import TASK_FAMILIES


@pytest.fixture(scope="module")
def results():
    return run_all()


def test_the_stored_set_is_what_the_sources_build():
    """dev_set.jsonl is the filled form of phrasings.tsv and refusals.tsv (rebuild it with
    ``python -m frankenbot.eval.language_set`` after editing them)."""
    assert build() == load()


def test_the_set_is_big_and_covers_every_family_on_development_seeds():
    cases = load()
    phrasings = [c for c in cases if not c.refusal]
    refusals = [c for c in cases if c.refusal]
    assert len(phrasings) >= 400 and len(refusals) >= 60
    assert {c.family for c in phrasings} == set(TASK_FAMILIES)
    assert {c.refusal for c in refusals} == {"unsafe", "out_of_scope", "impossible", "ambiguous"}
    assert all(c.seed < 10_000 for c in cases)
    held = [c for c in cases if c.split == "held_out"]
    assert 0.15 <= len(held) / len(cases) <= 0.25


def test_frame_accuracy_on_the_development_part_is_at_least_98_percent(results):
    s = score([r for r in results if r.case.split == "dev"])
    wrong = [f"{r.case.text!r}: {r.got or r.message}" for r in results
             if r.case.split == "dev" and not r.case.refusal and not r.correct]
    assert s.frame_accuracy >= 0.98, wrong


def test_refusals_are_exact(results):
    wrong = [f"{r.case.text!r} ({r.case.refusal}): {r.refusal_kind or r.got} {r.message}"
             for r in results if r.case.refusal and not r.correct]
    assert not wrong


def test_no_wrong_program_is_ever_written(results):
    """Precision: every plan (refusal cases included) is the expected one."""
    wrong = [f"{r.case.text!r}: got {r.got}, want {r.case.expect or 'a refusal'}"
             for r in results if r.planned and not r.correct]
    assert not wrong


def test_held_out_part_is_scored_too(results):
    s = score([r for r in results if r.case.split == "held_out"])
    assert s.phrasings >= 80 and s.refusals >= 10
    assert s.precision == 1.0  # a held-out miss may refuse, never move wrongly


def test_same_input_always_gives_the_same_program():
    scene = standard_scene()
    text = ("would you kindly hoist the crimson cube and deposit it into the green bowl, "
            "then go home")
    assert plan_offline(text, scene) == plan_offline(text, scene)


def test_multi_step_instructions_make_one_program_in_order():
    scene = standard_scene()
    text = plan_offline("put the red block in the green bowl, then stack the blue block on the "
                        "yellow block, and afterwards open the drawer", scene)
    a = text.index("place_in(obj=red_block, container=green_bowl)")
    b = text.index("place_on(obj=blue_block, target=yellow_block)")
    c = text.index("open_drawer(drawer=drawer)")
    assert a < b < c
    u = understand("pick up the yellow block. Before that, open the drawer.", scene)
    assert [f.task for f in u.frames] == ["open_drawer", "pick_up"]


def test_ambiguity_asks_with_the_candidates():
    scene = standard_scene()
    with pytest.raises(ObjectNotResolved) as e:
        understand("put the block in the red bowl", scene)
    assert e.value.kind == "ambiguous"
    assert "which block: blue, green, red or yellow?" in str(e.value)


def test_refusals_say_why_and_offer_a_reading():
    scene = standard_scene()
    with pytest.raises(ObjectNotResolved) as e:
        understand("push the red block into the green bowl", scene)
    assert e.value.kind == "impossible"
    assert "did you mean: put the red block in the green bowl?" in str(e.value)
    with pytest.raises(UnsafeInstruction):
        understand("throw the red block at me", scene)
    with pytest.raises(Refusal) as r:
        understand("make me a sandwich", scene)
    assert r.value.kind == "out_of_scope" and "not understood" in str(r.value)


def test_near_colours_map_to_the_scene_and_ask_when_two_are_near():
    scene = standard_scene()
    u = understand("pick up the crimson cube", scene)
    assert u.frames[0].render() == "pick_up(obj=red_block)"
    # "teal" is near cyan, green and blue: the scene has a green and a blue block, so it asks
    with pytest.raises(ObjectNotResolved, match="which block"):
        understand("pick up the teal block", scene)


def test_a_missing_language_package_falls_back_to_rules(monkeypatch):
    """Without lemminflect and rapidfuzz the stage still understands plain words, and says so."""
    import builtins

    from frankenbot.planner.understanding import words

    real_import = builtins.__import__

    def no_tools(name, *args, **kwargs):
        if name.startswith(("lemminflect", "rapidfuzz")):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tools)
    monkeypatch.setattr(words, "_TOOLS", None)
    monkeypatch.setattr(words, "_LEMMA_CACHE", {})
    u = understand("clear the table by putting all the cubes in the bin", standard_scene())
    assert u.frames[0].render() == "clear_table(target=gray_bin)"  # "cubes": a rule lemma
    u = understand("please put the red block into the green bowl", standard_scene())
    assert u.frames[0].render() == "put_in(obj=red_block, target=green_bowl)"
    assert any("lemminflect is not installed" in n for n in u.notes)
    assert any("rapidfuzz is not installed" in n for n in u.notes)

"""Candidate repairs and the coded (tier-1 / rule baseline) choices."""

from __future__ import annotations

from frankenbot.anomaly.candidates import (
    Call,
    RepairAction,
    Situation,
    generate_candidates,
)
from frankenbot.anomaly.monitors import class_of
from frankenbot.anomaly.repair_rules import TIER1_KINDS, rule_choice, tier1_choice
from frankenbot.common import AnomalyKind

PLACE = Call("place_in", {"obj": "red_block", "container": "green_bowl"})
PICK = Call("pick", {"obj": "red_block"})


def sit(kind: AnomalyKind, call: Call | None = PLACE, **kw) -> Situation:
    return Situation(kind, class_of(kind), "detail", "put the red block in the green bowl", call,
                     "main/2", **kw)


def keys(s: Situation) -> list[str]:
    return [c.key for c in generate_candidates(s)]


def test_candidates_cover_every_edit_kind_with_stable_keys():
    s = sit(AnomalyKind.GRASP_LOST, labels=("start",))
    ks = keys(s)
    assert ks[0] == "retry:place_in(obj=red_block, container=green_bowl)"
    for k in ("insert:detect(obj=red_block)", "insert:detect(obj=green_bowl)",
              "insert:pick(obj=red_block)", "insert:wait(seconds=1)", "goto:start",
              "skip:place_in(obj=red_block, container=green_bowl)", "replan", "abort"):
        assert k in ks
    assert len(ks) == len(set(ks))
    assert keys(s) == ks  # deterministic


def test_candidates_only_use_catalog_primitives():
    from frankenbot.program.catalog import default_catalog

    cat = default_catalog()
    for kind in AnomalyKind:
        for c in generate_candidates(sit(kind, labels=("a", "b"), objects=("blue_block",))):
            if c.call is not None:
                assert cat.get(c.call.name) is not None
                for name in c.call.args:
                    assert cat.get(c.call.name).param(name) is not None


def test_regrasp_only_offered_when_the_object_is_not_held():
    assert "insert:pick(obj=red_block)" not in keys(sit(AnomalyKind.TIMEOUT,
                                                        held_object="red_block"))
    assert "insert:pick(obj=red_block)" in keys(sit(AnomalyKind.GRASP_LOST))


def test_already_tried_repairs_are_not_offered_again():
    s = sit(AnomalyKind.TARGET_OCCUPIED, tried=("insert:wait(seconds=1)",))
    assert "insert:wait(seconds=1)" not in keys(s)
    assert rule_choice(s, generate_candidates(s)).key == "replan"


def test_descriptions_are_short_plain_english_and_the_step_is_in_the_prompt():
    s = sit(AnomalyKind.GRASP_LOST)
    for c in generate_candidates(s):
        assert "(" not in c.description and len(c.description.split()) <= 8
    assert any("putting the red block in the green bowl" in line for line in s.prompt_lines())


def test_tier1_codes_regrasp_redetect_retry_and_wait_for_camera():
    def t1(s: Situation) -> str | None:
        ch = tier1_choice(s, generate_candidates(s))
        return ch.key if ch else None

    assert t1(sit(AnomalyKind.GRASP_LOST)) == "insert:pick(obj=red_block)"
    assert t1(sit(AnomalyKind.OBJECT_MOVED, PICK, objects=("red_block",))) == \
        "insert:detect(obj=red_block)"
    assert t1(sit(AnomalyKind.MOTION_ABORTED, PICK)) == "retry:pick(obj=red_block)"
    assert t1(sit(AnomalyKind.SCENE_STALE, PICK)) == "insert:wait(seconds=1)"
    assert t1(sit(AnomalyKind.GRASP_FAILED, PICK)) == "insert:detect(obj=red_block)"
    for kind in set(AnomalyKind) - TIER1_KINDS:
        assert t1(sit(kind)) is None, kind


def test_rules_send_unpredictable_kinds_to_the_planner():
    for kind in (AnomalyKind.OBJECT_MISSING, AnomalyKind.MOTION_REJECTED):
        s = sit(kind)
        assert rule_choice(s, generate_candidates(s)).action == RepairAction.REPLAN
    s = sit(AnomalyKind.ESTOP)
    assert rule_choice(s, generate_candidates(s)).action == RepairAction.ABORT


def test_toppled_stack_goes_back_to_the_label():
    s = sit(AnomalyKind.PLACE_FAILED, labels=("start",))
    assert rule_choice(s, generate_candidates(s)).key == "goto:start"


def test_a_motion_aborted_again_after_a_retry_restarts_from_home():
    first = sit(AnomalyKind.MOTION_ABORTED, PICK)
    assert tier1_choice(first, generate_candidates(first)).key == "retry:pick(obj=red_block)"
    again = sit(AnomalyKind.MOTION_ABORTED, PICK, tried=("retry:pick(obj=red_block)",))
    from dataclasses import replace

    untried = generate_candidates(replace(again, tried=()))
    assert tier1_choice(again, untried).key == "insert:home()"

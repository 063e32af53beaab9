"""Prompt builder: content, determinism, the size budget and its trimming order."""

from __future__ import annotations

import numpy as np
import pytest

from frankenbot.eval.taskset import standard_scene
from frankenbot.planner.prompt import (
    LANGUAGE_REFERENCE,
    PromptBuilder,
    encode_png,
    image_data_url,
    object_table,
    render_signature,
    repair_message,
)
from frankenbot.planner.request import Exemplar, FailureContext, PlanImage, PlanRequest
from frankenbot.program.catalog import Param, ParamType, Signature, SignatureKind, default_catalog
from frankenbot.program.check import check_text

SKILL = Signature("pick_and_place", SignatureKind.SKILL,
                  (Param("obj", ParamType.OBJECT), Param("dest", ParamType.OBJECT)),
                  "pick an object and put it into a container",
                  "skill pick_and_place(obj: object, dest: object) {\n"
                  "  pick(obj=obj)\n  place_in(obj=obj, container=dest)\n}")


def _request(**kw) -> PlanRequest:
    return PlanRequest("put the red block in the green bowl", standard_scene(), **kw)


def _exemplars(n: int) -> tuple[Exemplar, ...]:
    return tuple(Exemplar(f"put block {i} somewhere", 'task "x" {\n  main {\n'
                          + "    pick(obj=red_block)\n" * 20 + "  }\n}") for i in range(n))


def test_prompt_lists_catalog_objects_skills_exemplars_and_instruction():
    prompt = PromptBuilder(default_catalog()).build(_request(
        skills=(SKILL,), exemplars=_exemplars(1), anomaly_experience=("drop -> regrasp -> ok",)))
    for sig in default_catalog().entries.values():
        assert render_signature(sig) in prompt.system
    assert ("place_in(obj: object, container: object[bowl|plate|bin|basket|tray|drawer|zone])"
            in prompt.system)
    assert "move_above(obj: object, height: number in 0.02..0.4 = 0.1)" in prompt.system
    assert "pick_and_place(obj: object, dest: object)" in prompt.system
    assert "place_in(obj=obj, container=dest)" not in prompt.system  # called by signature
    for oid in standard_scene().ids():
        assert oid in prompt.user_text
    assert "put block 0 somewhere" in prompt.user_text
    assert "drop -> regrasp -> ok" in prompt.user_text
    assert prompt.user_text.rstrip().endswith("Instruction: put the red block in the green bowl")
    assert prompt.trimmed == () and not prompt.over_budget


def test_the_example_in_the_language_reference_is_a_valid_program():
    example = LANGUAGE_REFERENCE[LANGUAGE_REFERENCE.index("Example:") + len("Example:"):]
    result = check_text(example, default_catalog(), standard_scene().ids())
    assert result.ok, result.diagnostics


def test_prompt_is_deterministic():
    a = PromptBuilder(default_catalog()).build(_request(skills=(SKILL,),
                                                        exemplars=_exemplars(3)))
    b = PromptBuilder(default_catalog()).build(_request(skills=(SKILL,),
                                                        exemplars=_exemplars(3)))
    assert a == b and a.messages() == b.messages()


def test_skill_bodies_are_sent_only_when_asked_for():
    request = _request(skills=(SKILL,))
    short = PromptBuilder(default_catalog()).build(request)
    full = PromptBuilder(default_catalog(), skill_bodies=True).build(request)
    assert "place_in(obj=obj, container=dest)" in full.system
    assert "pick_and_place(obj: object, dest: object)" in short.system
    assert len(short.system) < len(full.system)


def test_budget_trims_exemplars_first_then_experience_then_skill_bodies():
    builder = PromptBuilder(default_catalog(), skill_bodies=True)
    full = builder.build(_request(skills=(SKILL,), exemplars=_exemplars(8),
                                  anomaly_experience=("x" * 400,) * 3))
    # what is never trimmed (rules, frame note, catalog, spatial notes, objects, instruction)
    fixed = PromptBuilder(default_catalog(), budget_chars=1000, skill_bodies=True).build(
        _request(skills=(SKILL,))).chars
    budget = fixed + 1500  # room for a few exemplars, not all eight
    assert full.chars > budget
    small = PromptBuilder(default_catalog(), budget_chars=budget, skill_bodies=True).build(
        _request(skills=(SKILL,), exemplars=_exemplars(8), anomaly_experience=("x" * 400,) * 3))
    assert small.chars <= budget
    assert small.trimmed[0] == "exemplar"
    assert "put block 0 somewhere" in small.user_text or "exemplar" in small.trimmed
    # the most relevant exemplar (first) is the last to go
    kept = [i for i in range(8) if f"put block {i} somewhere" in small.user_text]
    assert kept == list(range(len(kept)))
    tiny = PromptBuilder(default_catalog(), budget_chars=1000, skill_bodies=True).build(_request(
        skills=(SKILL,), exemplars=_exemplars(2), anomaly_experience=("e",)))
    assert tiny.trimmed == ("exemplar", "exemplar", "anomaly_experience", "skill_bodies",
                            "skill_docs")
    assert tiny.over_budget  # rules, primitives, objects and instruction are never trimmed
    assert "pick(obj: object" in tiny.system and "green_bowl" in tiny.user_text


def test_budget_below_minimum_is_rejected():
    with pytest.raises(ValueError, match="at least 1000"):
        PromptBuilder(default_catalog(), budget_chars=10)


def test_image_goes_in_as_a_data_url_part():
    rgb = np.zeros((8, 10, 3), dtype=np.uint8)
    rgb[2:4, 3:5] = (255, 0, 0)
    image = encode_png(rgb)
    assert image.mime == "image/png" and image.data.startswith(b"\x89PNG")
    prompt = PromptBuilder(default_catalog()).build(_request(image=image))
    parts = prompt.messages(detail="low")[1]["content"]
    assert parts[1] == {"type": "image_url",
                        "image_url": {"url": image_data_url(image), "detail": "low"}}
    assert image_data_url(image).startswith("data:image/png;base64,iVBOR")


@pytest.mark.parametrize("bad", [np.zeros((4, 4), np.uint8), np.zeros((4, 4, 3), np.float32),
                                 np.zeros((0, 4, 3), np.uint8)])
def test_encode_png_rejects_non_rgb_images(bad):
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        encode_png(bad)


def test_plan_image_rejects_bad_mime_and_empty_data():
    with pytest.raises(ValueError, match="mime"):
        PlanImage(b"x", "image/gif")
    with pytest.raises(ValueError, match="empty"):
        PlanImage(b"")


def test_perception_table_is_used_verbatim_when_given():
    prompt = PromptBuilder(default_catalog()).build(_request(object_table="1 red_block ..."))
    assert "1 red_block ..." in prompt.user_text
    assert object_table(standard_scene()) not in prompt.user_text


def test_replan_prompt_has_the_failure_and_the_old_program():
    failure = FailureContext("task \"old\" { main { exit success } }", "target_occupied: bowl",
                             "main/3/place_in")
    prompt = PromptBuilder(default_catalog()).build(_request(), failure)
    assert "task \"old\"" in prompt.user_text and "target_occupied: bowl" in prompt.user_text
    assert "main/3/place_in" in prompt.user_text


def test_repair_turn_carries_the_answer_and_diagnostics():
    msgs = repair_message("bad answer", "L1:1 error syntax: expected task")
    assert msgs[0] == {"role": "assistant", "content": "bad answer"}
    assert "L1:1 error syntax" in msgs[1]["content"] and msgs[1]["role"] == "user"


def test_empty_scene_is_stated_not_hidden():
    from frankenbot.state import Scene

    prompt = PromptBuilder(default_catalog()).build(PlanRequest("pick up the red block",
                                                                Scene()))
    assert "(no objects perceived)" in prompt.user_text


def test_object_table_has_kind_units_and_the_prompt_states_the_base_frame():
    prompt = PromptBuilder(default_catalog()).build(_request())
    system = " ".join(prompt.system.split())
    table = object_table(standard_scene())
    assert table.splitlines()[0] == "id | kind | label | centre x,y,z cm | size x*y*z cm | note"
    bowl = next(line for line in table.splitlines() if line.startswith("green_bowl |"))
    assert bowl.split(" | ")[1] == "bowl"
    # the frame note: origin, axes, units, and how metres relate to the table's centimetres
    for words in ("origin at the robot's base", "x pointing away from the robot",
                  "y to the robot's left", "z up", "table top is z = 0", "take metres"):
        assert words in system
    assert "in(obj, plate) and on(obj, plate)" in system
    assert "during place_in(obj=red_block)" in system
    assert "each goto statement keeps its own count" in system


def test_the_frame_note_is_never_trimmed():
    prompt = PromptBuilder(default_catalog(), budget_chars=1000).build(
        _request(exemplars=_exemplars(3)))
    assert prompt.over_budget and "Frame and units" in prompt.system


def test_the_language_reference_example_uses_an_argument_scope_and_validates():
    example = LANGUAGE_REFERENCE[LANGUAGE_REFERENCE.index('task "put'):]
    result = check_text(example, default_catalog(), standard_scene().ids())
    assert result.ok, result.diagnostics
    assert result.program.monitors[0].during[0].args[0].value.name == "red_block"

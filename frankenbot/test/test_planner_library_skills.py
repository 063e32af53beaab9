"""Programs that call memory's library skills carry their definitions to the executor."""

from __future__ import annotations

from frankenbot.planner.planner import Planner
from frankenbot.planner.request import PlanRequest
from frankenbot.program.catalog import default_catalog
from frankenbot.program.check import check_text
from frankenbot.program.parser import parse_skills
from frankenbot.program.validator import skill_signature
from frankenbot.state import Scene, SceneObject

SKILL = ('skill pick_and_place(obj: object, container: object) "pick it and put it in" {\n'
         '  pick(obj=obj)\n  place_in(obj=obj, container=container)\n}\n')


def _scene() -> Scene:
    def obj(name: str, shape: str, x: float, s: float) -> SceneObject:
        return SceneObject(name, name.replace("_", " "), shape, name.split("_")[0],
                           (x, 0.1, s / 2), (s, s, s))

    return Scene.of([obj("red_block", "block", 0.4, 0.04), obj("green_bowl", "bowl", 0.55, 0.06)])


def test_offline_plan_with_a_library_skill_is_self_contained() -> None:
    (skill,) = parse_skills(SKILL)
    sig = skill_signature(skill)
    sig = type(sig)(sig.name, sig.kind, sig.params, sig.doc, SKILL)
    out = Planner().plan(PlanRequest("put the red block in the green bowl", _scene(),
                                     skills=(sig,)))
    assert out.ok, out.message
    assert "pick_and_place(obj=red_block, container=green_bowl)" in out.program_text
    assert "skill pick_and_place(" in out.program_text  # the definition travels with it
    # the executor validates with the primitives only, and accepts it
    checked = check_text(out.program_text, default_catalog(), _scene().ids())
    assert checked.ok, checked.diagnostics


def test_without_library_skills_nothing_is_appended() -> None:
    out = Planner().plan(PlanRequest("put the red block in the green bowl", _scene()))
    assert out.ok and "skill " not in out.program_text

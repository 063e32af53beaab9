"""The safety review: approve, edit (carry high, place instead of drop, spot outside a zone) or
refuse, judged on a scene; the second opinion's arbitration; the plan outcome it leaves."""

from __future__ import annotations

from dataclasses import replace

import pytest

from frankenbot.errors import ConfigError
from frankenbot.planner.review import (
    ReviewConfig,
    SafetyReview,
    Zone,
    apply_review,
    review_text,
)
from frankenbot.program import parse_program
from frankenbot.program.catalog import default_catalog
from frankenbot.program.check import check_text
from frankenbot.state import Scene, SceneObject

PUT = ('task "t" { main { s1: pick(obj=red_block) place_in(obj=red_block, container=green_bowl)'
       ' if not in(red_block, green_bowl) { goto s1 max 2 } exit success } }')
BOWL = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.5, -0.2, 0.025),
                   (0.15, 0.15, 0.05))


def blk(oid: str, x: float, y: float, z: float = 0.02) -> SceneObject:
    return SceneObject(oid, oid, "block", oid.split("_")[0], (x, y, z), (0.04, 0.04, 0.04))


TOWER = [blk("yellow_block", 0.52, 0.0, 0.02), blk("orange_block", 0.52, 0.0, 0.06),
         blk("purple_block", 0.52, 0.0, 0.10)]


def test_nothing_near_the_carry_is_skipped_in_auto_and_approved_in_always() -> None:
    scene = Scene.of([blk("red_block", 0.5, 0.2), BOWL, blk("blue_block", 0.3, -0.4)])
    assert review_text(PUT, scene).decision == "skipped"
    v = review_text(PUT, scene, mode="always")
    assert v.decision == "approve" and v.program_text == review_text(PUT, scene).program_text
    assert review_text(PUT, Scene.of([blk("red_block", 0.5, 0.2), BOWL, *TOWER]),
                       mode="never").decision == "skipped"


def test_a_tower_beside_the_carry_path_makes_it_carry_high() -> None:
    scene = Scene.of([blk("red_block", 0.5, 0.2), BOWL, *TOWER])
    v = review_text(PUT, scene)
    assert v.decision == "edit"
    assert "lift(height=0.19)" in v.program_text
    assert "move_above(obj=green_bowl, height=0.14)" in v.program_text
    assert check_text(v.program_text, default_catalog(), scene.ids()).ok
    # a low block beside the path is cleared by the normal carry: approve
    low = Scene.of([blk("red_block", 0.5, 0.2), BOWL, TOWER[0]])
    assert review_text(PUT, low).decision == "approve"
    # too tall to carry over within the lift's range: refuse
    giant = SceneObject("gray_bin", "bin", "bin", "gray", (0.52, 0.0, 0.25), (0.1, 0.1, 0.5))
    v = review_text(PUT, Scene.of([blk("red_block", 0.5, 0.2), BOWL, giant]))
    assert v.decision == "refuse" and "carry_sweep" in v.explain()


def test_a_carry_past_the_cabinet_is_judged_by_its_sides_not_a_circle_round_it() -> None:
    """The drawer cabinet is 20 x 26 cm; a carry 10 cm from its front face keeps the gripper's
    clearance (the bounding circle of the cabinet reaches within 4 cm of that line and made
    the review carry high for nothing); one that grazes the face is carried high."""
    cabinet = SceneObject("drawer", "drawer", "drawer", "brown", (0.72, 0.38, 0.06),
                          (0.2, 0.26, 0.12), is_fixture=True)
    bowl = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.52, 0.55, 0.025),
                       (0.15, 0.15, 0.05))
    clear = Scene.of([blk("red_block", 0.52, 0.15), bowl, cabinet])
    assert review_text(PUT, clear, mode="always").decision == "approve"
    graze = Scene.of([blk("red_block", 0.57, 0.15), replace(bowl, position=(0.57, 0.55, 0.025)),
                      cabinet])
    assert review_text(PUT, graze, mode="always").decision == "edit"


def test_a_drop_from_height_becomes_a_place_or_is_refused() -> None:
    scene = Scene.of([blk("red_block", 0.5, 0.2), BOWL])
    drop = ('task "t" { main { pick(obj=red_block) move_above(obj=green_bowl, height=0.3) '
            'open_gripper() exit success } }')
    v = review_text(drop, scene)
    assert v.decision == "edit" and "place_in(obj=red_block, container=green_bowl)" in (
        v.program_text) and "open_gripper" not in v.program_text
    low = drop.replace("height=0.3", "height=0.02")
    assert review_text(low, scene, mode="always").decision == "approve"
    table = ('task "t" { main { pick(obj=red_block) open_gripper() exit success } }')
    v = review_text(table, scene)
    assert v.decision == "refuse" and "drops red_block" in v.explain()


def test_zones_refuse_a_target_inside_and_move_a_free_spot_out() -> None:
    scene = Scene.of([blk("red_block", 0.5, 0.2), BOWL])
    zone = Zone("keepout", "forbidden", (0.40, 0.60), (-0.30, -0.10))
    cfg = ReviewConfig(zones=(zone,))
    v = review_text(PUT, scene, cfg)
    assert v.decision == "refuse" and "keepout" in v.explain()
    at = 'task "t" { main { pick(obj=red_block) place_at(obj=red_block, x=0.45, y=-0.02) } }'
    v = review_text(at, scene, ReviewConfig(zones=(Zone("k", "fragile", (0.4, 0.5),
                                                          (-0.05, 0.0)),)))
    assert v.decision == "edit"
    (call,) = [c for c in parse_program(v.program_text).program.main.body
               if getattr(c, "name", "") == "place_at"]
    x, y = (float(a.value) for a in call.args[1:])
    assert not (0.4 - 0.03 <= x <= 0.5 + 0.03 and -0.05 - 0.03 <= y <= 0.03)
    with pytest.raises(ConfigError, match="kind"):
        Zone("z", "lava", (0, 1), (0, 1))
    with pytest.raises(ConfigError, match="review: unknown setting max_dorp"):
        ReviewConfig.from_mapping({"review": {"max_dorp": 1}})


def test_stacks_too_tall_and_pushes_through_objects_are_refused() -> None:
    tower = TOWER
    scene = Scene.of([blk("red_block", 0.4, 0.2), *tower])
    stack = 'task "t" { main { pick(obj=red_block) place_on(obj=red_block, target=purple_block) } }'
    v = review_text(stack, scene)
    assert v.decision == "refuse" and "stack" in v.explain()
    zone = SceneObject("zone", "zone", "zone", "cyan", (0.52, 0.2, 0.0005), (0.1, 0.1, 0.001))
    push = 'task "t" { main { push_to(obj=red_block, target=zone) } }'
    scene = Scene.of([blk("red_block", 0.3, 0.2), blk("blue_block", 0.41, 0.2), zone])
    assert review_text(push, scene).decision == "refuse"


def test_second_opinion_refuses_only_when_grounded_and_counts_its_call() -> None:
    scene = Scene.of([blk("red_block", 0.5, 0.2), BOWL, *TOWER])
    asked: list[str] = []

    def grounded(prompt: str) -> tuple[str, int]:
        asked.append(prompt)
        return '{"verdict": "refuse", "reason": "the purple_block tower may be hit"}', 1

    v = SafetyReview(ReviewConfig(), grounded).review(parse_program(PUT).program, scene)
    assert v.decision == "refuse" and v.vlm_calls == 1 and "purple_block" in asked[0]
    vague = SafetyReview(ReviewConfig(), lambda p: ('{"verdict": "refuse", "reason": "risky"}',
                                                    1))
    v = vague.review(parse_program(PUT).program, scene)
    assert v.decision == "edit" and "not grounded" in v.second_opinion
    garbled = SafetyReview(ReviewConfig(), lambda p: ("no idea", 1))
    assert garbled.review(parse_program(PUT).program, scene).decision == "edit"


def test_apply_review_leaves_a_refused_plan_not_ok_and_an_edited_one_parsed() -> None:
    from frankenbot.planner.request import PlanOutcome

    program = parse_program(PUT).program
    plan = PlanOutcome(True, PUT, program, "ok", vlm_calls=1)
    edited, verdict = apply_review(plan, Scene.of([blk("red_block", 0.5, 0.2), BOWL, *TOWER]),
                                   SafetyReview())
    assert edited.ok and verdict.decision == "edit" and "lift" in edited.program_text
    assert edited.program is not program
    zone = ReviewConfig(zones=(Zone("keepout", "forbidden", (0.4, 0.6), (-0.3, -0.1)),))
    refused, _ = apply_review(plan, Scene.of([blk("red_block", 0.5, 0.2), BOWL]),
                              SafetyReview(zone))
    assert not refused.ok and "keepout" in refused.message


def test_the_benchmarks_tower_stands_clear_of_everything_or_is_not_built() -> None:
    """The review benchmark's tower variant: 3 cm beside the carry line, touching nothing
    (a stack against a bowl's rim slid by itself and was counted as a push), else no tower."""
    import math
    from types import SimpleNamespace

    from frankenbot.eval.review_bench import CLEARANCE, _tower_spot

    def state(x, y, size):
        return SimpleNamespace(position=(x, y, 0.02), size=size)

    block, bowl = (0.04, 0.04, 0.04), (0.15, 0.15, 0.05)
    far = {"red_block": state(0.35, -0.25, block), "green_bowl": state(0.55, 0.2, bowl),
           "blue_block": state(0.46, -0.02, block)}
    spot = _tower_spot("red_block", "green_bowl", far)
    assert spot is not None
    radius = 0.04 * math.sqrt(0.5)
    for name, s in far.items():
        gap = math.dist(spot, s.position[:2]) - radius - max(s.size[:2]) / 2
        assert gap > CLEARANCE - 1e-9, (name, gap)
    near = {"red_block": state(0.61, -0.10, block), "green_bowl": state(0.47, -0.11, bowl)}
    assert _tower_spot("red_block", "green_bowl", near) is None


def test_what_a_skill_call_does_is_reviewed_like_main() -> None:
    """A plan that puts its carry in a skill (the offline planner with library skills, a VLM
    using memory's skills) is judged by the skill's body: a zone target inside is refused, a
    carry past a tower is carried high."""
    via_skill = ('task "t" { main { carry(obj=red_block, dest=green_bowl) exit success }\n'
                 'skill carry(obj: object, dest: object) { pick(obj=obj) '
                 'place_in(obj=obj, container=dest) } }')
    zone = ReviewConfig(zones=(Zone("keepout", "forbidden", (0.4, 0.6), (-0.3, -0.1)),))
    v = review_text(via_skill, Scene.of([blk("red_block", 0.5, 0.2), BOWL]), zone, "always")
    assert v.decision == "refuse" and "keepout" in v.explain()
    tower = Scene.of([blk("red_block", 0.5, 0.2), BOWL, *TOWER])
    v = review_text(via_skill, tower)
    assert v.decision == "edit" and "lift(height=0.19)" in v.program_text
    assert check_text(v.program_text, default_catalog(), tower.ids()).ok


def test_a_place_into_a_cabinet_drawer_comes_down_in_front_not_over_the_cabinet() -> None:
    """The bottom drawer of a 36 cm cabinet: the object goes into the pulled-out box in front of
    the cabinet, so the carry is not judged over the cabinet's top (which would need the
    gripper higher than it may go and refused every such task)."""
    import math

    yaw = math.pi / 2  # the cabinet faces -y, towards the robot's side of the table
    cabinet = SceneObject("cabinet", "cabinet", "cabinet", "brown", (0.42, 0.52, 0.18),
                          (0.26, 0.30, 0.36), yaw, is_fixture=True)
    drawers = [SceneObject(f"{n}_drawer", f"{n} drawer", "drawer", "", (0.42, 0.512, z),
                           (0.244, 0.272, 0.10), yaw, is_fixture=True, opening=0.0)
               for n, z in (("bottom", 0.068), ("middle", 0.18), ("top", 0.292))]
    put = ('task "t" { main { open_drawer(drawer=bottom_drawer) pick(obj=red_block) '
           'place_in(obj=red_block, container=bottom_drawer) exit success } }')
    scene = Scene.of([blk("red_block", 0.40, 0.05), cabinet, *drawers])
    v = review_text(put, scene, mode="always")
    assert v.decision == "approve", v.explain()
    # the same carry to a spot behind the cabinet still has to clear it
    behind = ('task "t" { main { pick(obj=red_block) place_at(obj=red_block, x=0.42, y=0.75) '
              'exit success } }')
    v = review_text(behind, scene, mode="always")
    assert "carry_sweep" in v.explain()


def test_a_high_carry_into_a_drawer_lifts_but_never_hovers_over_the_drawer() -> None:
    """A carry that must go high (a tall can in the way) into the top drawer: lifted after the
    pick, but not sent to hover over the drawer's centre, which lies over the cabinet's housing
    at a height the held object would hit it (the arm was stopped there)."""
    import math

    yaw = math.pi / 2
    cabinet = SceneObject("cabinet", "cabinet", "cabinet", "brown", (0.42, 0.52, 0.18),
                          (0.26, 0.30, 0.36), yaw, is_fixture=True)
    top = SceneObject("top_drawer", "top drawer", "drawer", "", (0.42, 0.40, 0.292),
                      (0.244, 0.272, 0.10), yaw, is_fixture=True, opening=0.16)
    can = SceneObject("red_can", "red can", "can", "red", (0.41, 0.22, 0.10), (0.07, 0.07, 0.2))
    put = ('task "t" { main { pick(obj=red_block) '
           'place_in(obj=red_block, container=top_drawer) exit success } }')
    scene = Scene.of([blk("red_block", 0.40, 0.05), cabinet, top, can])
    v = review_text(put, scene, mode="always")
    assert v.decision == "edit" and "lift(height=" in v.program_text, v.explain()
    assert "move_above" not in v.program_text
    # over a bowl the carry still comes down to hover over it
    bowl_put = put.replace("top_drawer", "green_bowl")
    in_way = replace(can, position=(0.45, -0.075, 0.10))
    v = review_text(bowl_put, Scene.of([blk("red_block", 0.40, 0.05), in_way, BOWL]),
                    mode="always")
    assert "move_above(obj=green_bowl" in v.program_text, v.explain()


def test_an_object_put_on_a_cabinet_top_is_no_stack_of_the_cabinets_height() -> None:
    """The cabinet's 36 cm top is furniture to stand a bowl on, not the base of a tower taller
    than the stacking limit (every 'put the bowl on top of the cabinet' was refused)."""
    cabinet = SceneObject("cabinet", "cabinet", "cabinet", "brown", (0.42, 0.52, 0.18),
                          (0.26, 0.30, 0.36), is_fixture=True)
    put = ('task "t" { main { pick(obj=red_block) place_on(obj=red_block, target=cabinet) '
           'exit success } }')
    v = review_text(put, Scene.of([blk("red_block", 0.40, 0.20), cabinet]), mode="always")
    assert "stack" not in v.explain() and v.decision != "refuse", v.explain()
    tall = SceneObject("gray_box", "gray box", "box", "gray", (0.42, 0.52, 0.18),
                       (0.10, 0.10, 0.36))
    put_box = put.replace("target=cabinet", "target=gray_box")
    v = review_text(put_box, Scene.of([blk("red_block", 0.40, 0.20), tall]), mode="always")
    assert v.decision == "refuse" and "stack" in v.explain()


def test_a_carry_beside_a_tall_reference_does_not_hover_over_it() -> None:
    """Lifted high for a low neighbour on the way, the mug is put left of a 15 cm carton: the
    program must not hover over the carton at the carry height (the mug hung into it)."""
    mug = SceneObject("blue_mug", "blue mug", "mug", "blue", (0.59, 0.156, 0.041),
                      (0.086, 0.063, 0.081))
    carton = SceneObject("white_carton", "white carton", "carton", "white", (0.451, -0.079, 0.075),
                         (0.071, 0.066, 0.15))
    other = SceneObject("yellow_mug", "yellow mug", "mug", "yellow", (0.53, 0.11, 0.04),
                        (0.068, 0.058, 0.079))
    put = ('task "t" { main { pick(obj=blue_mug) '
           'place_left_of(obj=blue_mug, ref=white_carton) exit success } }')
    v = review_text(put, Scene.of([mug, carton, other]), mode="always")
    assert v.decision == "edit" and "lift(height=" in v.program_text, v.explain()
    assert "move_above" not in v.program_text, v.program_text

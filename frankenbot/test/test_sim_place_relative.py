"""The place_relative family: seeded sampling and the oracle's reading of the relations."""

from __future__ import annotations

import pytest

from frankenbot.planner.frames import ObjectNotResolved
from frankenbot.planner.offline import plan_offline
from frankenbot.planner.relative import relative_frame
from frankenbot.sim import layout
from frankenbot.sim.tasks import (
    RELATIVE_RELATIONS,
    ObjectState,
    OracleView,
    TaskInstance,
    check,
    instruction_templates,
    sample_task,
)
from frankenbot.state import Scene, SceneObject


def _state(name: str, x: float, y: float, held: bool = False) -> ObjectState:
    spec = layout.OBJECT_BY_NAME[name]
    return ObjectState(name, spec.shape, spec.colour, (x, y, spec.size[2] / 2),
                       (1.0, 0.0, 0.0, 0.0), spec.size, 0.0, held)


def _task(relation: str, refs: tuple[str, ...], starts: tuple[tuple[float, float], ...]
          ) -> TaskInstance:
    return TaskInstance("place_relative", "t", "", {
        "object": "red_block", "relation": relation, "refs": refs, "ref_start": starts})


def test_sampling_is_seeded_and_every_relation_is_reachable() -> None:
    seen = set()
    for seed in range(30):
        a, b = sample_task("place_relative", seed), sample_task("place_relative", seed)
        assert a == b
        seen.add(a.task.params["relation"])
        scene = Scene.of([SceneObject(
            p.name, p.name.replace("_", " "), layout.OBJECT_BY_NAME[p.name].shape,
            layout.OBJECT_BY_NAME[p.name].colour, (p.x, p.y, 0.02),
            layout.OBJECT_BY_NAME[p.name].size) for p in a.placements])
        frame = relative_frame(a.task.instruction, scene)  # the offline planner reads it
        assert frame is not None and frame.role("obj") == a.task.params["object"]
        assert [v for k, v in frame.roles if k != "obj"] == list(a.task.params["refs"])
    assert seen == set(RELATIVE_RELATIONS)
    assert len(instruction_templates("place_relative")) == len(RELATIVE_RELATIONS)


def test_oracle_judges_relation_closeness_and_unmoved_references() -> None:
    start = ((0.5, 0.0),)
    bowl = _state("green_bowl", 0.5, 0.0)
    view = OracleView({"red_block": _state("red_block", 0.5, 0.14), "green_bowl": bowl}, 0.0)
    assert check(_task("left_of", ("green_bowl",), start), view)[0]
    assert not check(_task("right_of", ("green_bowl",), start), view)[0]
    assert check(_task("near", ("green_bowl",), start), view)[0]
    far = OracleView({"red_block": _state("red_block", 0.5, 0.35), "green_bowl": bowl}, 0.0)
    assert not check(_task("left_of", ("green_bowl",), start), far)[0]  # left, not beside
    held = OracleView({"red_block": _state("red_block", 0.5, 0.14, held=True),
                       "green_bowl": bowl}, 0.0)
    assert not check(_task("left_of", ("green_bowl",), start), held)[0]
    pushed = OracleView({"red_block": _state("red_block", 0.5, 0.17),
                         "green_bowl": _state("green_bowl", 0.5, 0.04)}, 0.0)
    ok, lines = check(_task("left_of", ("green_bowl",), start), pushed)
    assert not ok and any("green_bowl moved" in ln and ln.startswith("NO") for ln in lines)
    two = ((0.4, 0.0), (0.6, 0.1))
    mid = OracleView({"red_block": _state("red_block", 0.5, 0.05),
                      "green_bowl": _state("green_bowl", 0.4, 0.0),
                      "blue_block": _state("blue_block", 0.6, 0.1)}, 0.0)
    assert check(_task("between", ("green_bowl", "blue_block"), two), mid)[0]


def test_offline_planner_writes_relative_placements_for_relative_instructions() -> None:
    def o(oid: str, shape: str, x: float, y: float) -> SceneObject:
        return SceneObject(oid, oid, shape, oid.split("_")[0], (x, y, 0.02), (0.04, 0.04, 0.04))

    scene = Scene.of([o("red_block", "block", 0.4, 0.0), o("green_block", "block", 0.5, 0.1),
                      o("green_bowl", "bowl", 0.5, -0.15)])
    text = plan_offline("put the red block left of the bowl", scene)
    assert "place_left_of(obj=red_block, ref=green_bowl)" in text
    assert "if not left_of(red_block, green_bowl)" in text
    text = plan_offline("place the red block in front of the green block", scene)
    assert "place_in_front_of(obj=red_block, ref=green_block)" in text
    text = plan_offline("put the red block between the green block and the green bowl", scene)
    assert "place_between(obj=red_block, a=green_block, b=green_bowl)" in text
    assert "place_in(" in plan_offline("put the red block in the green bowl", scene)


def test_a_push_to_a_side_is_pushed_along_the_table_and_a_failed_check_is_no_success() -> None:
    def o(oid: str, shape: str, x: float, y: float) -> SceneObject:
        return SceneObject(oid, oid, shape, oid.split("_")[0], (x, y, 0.02), (0.04, 0.04, 0.04))

    scene = Scene.of([o("red_block", "block", 0.4, 0.0), o("green_block", "block", 0.5, 0.1)])
    text = plan_offline("slide the red block to the front of the green block", scene)
    assert "push_in_front_of(obj=red_block, ref=green_block)" in text
    assert "pick(" not in text and "monitor" not in text  # nothing is held, nothing can drop
    # the verification loop's budget used up, the program ends in failure, never in success
    lines = [line.strip() for line in text.splitlines()]
    check = lines.index("if not in_front_of(red_block, green_block) { goto s1 max 2 }")
    assert lines[check + 1].startswith("if not in_front_of(red_block, green_block) { exit "
                                       "failure")
    with pytest.raises(ObjectNotResolved, match="side of an object"):
        relative_frame("push the red block between the green block and the zone", Scene.of([
            *scene.objects, o("zone", "zone", 0.3, -0.3)]))


def test_a_round_object_that_turned_still_rests_on_the_table() -> None:
    """The oracle's resting height follows the shape: an apple or ball that turned while put
    down is as tall as before (a box turned 45 degrees about x would not be), a lemon is an
    ellipsoid, and a box that fell over is as low as it is wide."""
    import math

    from frankenbot.sim.tasks import bottom_z

    half = math.sqrt(0.5)
    turned = (half, half, 0.0, 0.0)  # 90 degrees about x
    tilted = (math.cos(math.pi / 8), math.sin(math.pi / 8), 0.0, 0.0)  # 45 degrees about x
    for name in ("red_apple", "blue_ball"):
        spec = layout.OBJECT_BY_NAME[name]
        ball = ObjectState(name, spec.shape, spec.colour, (0.5, 0.0, spec.size[2] / 2), tilted,
                           spec.size, 0.0, False)
        assert bottom_z(ball) == pytest.approx(0.0)
    lemon = layout.OBJECT_BY_NAME["yellow_lemon"]  # 8.4 cm long, 6 cm thick
    on_end = ObjectState("yellow_lemon", "lemon", "yellow", (0.5, 0.0, 0.042),
                         (half, 0.0, half, 0.0), lemon.size, 0.0, False)  # stood on its tip
    assert bottom_z(on_end) == pytest.approx(0.0, abs=1e-9)
    box = layout.OBJECT_BY_NAME["blue_box"]  # 8.5 x 5.2 x 3.5 cm
    on_side = ObjectState("blue_box", "box", "blue", (0.5, 0.0, box.size[1] / 2), turned,
                          box.size, 0.0, False)
    assert bottom_z(on_side) == pytest.approx(0.0, abs=1e-9)
    corner = ObjectState("blue_box", "box", "blue", (0.5, 0.0, box.size[2] / 2), tilted,
                         box.size, 0.0, False)
    assert bottom_z(corner) < -0.005  # a box balanced on its edge is no longer flat down

"""Look-alikes told apart by a landmark: "the bowl next to the mug", "between A and B", "in the
middle of the table", "the middle bowl", "on the cabinet" / "in its top drawer"; and the
furniture itself as a destination ("on top of the cabinet")."""

from __future__ import annotations

import math

import pytest

from frankenbot.planner.frames import ObjectNotResolved, render_frames
from frankenbot.planner.understanding import understand
from frankenbot.program import predicates
from frankenbot.state import Scene, SceneObject, WorldSnapshot

BOWL = (0.10, 0.10, 0.05)


def bowl(oid: str, x: float, y: float, z: float = 0.025) -> SceneObject:
    return SceneObject(oid, "green bowl", "bowl", "green", (x, y, z), BOWL)


def thing(oid: str, shape: str, colour: str, x: float, y: float,
          size=(0.08, 0.08, 0.08)) -> SceneObject:
    return SceneObject(oid, f"{colour} {shape}", shape, colour, (x, y, size[2] / 2), size)


def table(*objs: SceneObject) -> Scene:
    return Scene.of([thing("red_plate", "plate", "red", 0.35, -0.30, (0.16, 0.16, 0.012)),
                     *objs])


def picked(text: str, scene: Scene) -> str:
    out = render_frames(understand(text, scene).frames)
    return out.split("obj=")[1].split(",")[0].rstrip(")")


# two green bowls everywhere below: the landmark alone decides which one is meant
def test_next_to_beside_and_near_mean_the_look_alike_nearest_the_landmark():
    scene = table(bowl("green_bowl", 0.30, 0.15), bowl("green_bowl_2", 0.60, 0.10),
                  thing("white_mug", "mug", "white", 0.62, 0.24),
                  thing("blue_box", "box", "blue", 0.28, 0.30))
    for words, want in (("next to the white mug", "green_bowl_2"),
                        ("beside the blue box", "green_bowl"),
                        ("that is near the mug", "green_bowl_2"),
                        ("right by the box", "green_bowl")):
        assert picked(f"pick up the green bowl {words} and put it on the red plate",
                      scene) == want, words


def test_between_means_the_look_alike_nearest_the_middle_of_the_two_landmarks():
    scene = table(bowl("green_bowl", 0.45, 0.05), bowl("green_bowl_2", 0.30, 0.25),
                  thing("white_mug", "mug", "white", 0.62, 0.06),
                  thing("blue_box", "box", "blue", 0.30, 0.05))
    assert picked("grab the green bowl between the blue box and the white mug and set it "
                  "on the red plate", scene) == "green_bowl"
    # the landmarks themselves are never the object meant
    with pytest.raises(ObjectNotResolved):
        understand("pick up the box between the blue box and the white mug", scene)


def test_the_middle_of_the_table_is_the_middle_of_everything_on_it():
    scene = table(bowl("green_bowl", 0.48, 0.02), bowl("green_bowl_2", 0.65, 0.30),
                  thing("white_mug", "mug", "white", 0.60, -0.30),
                  thing("blue_box", "box", "blue", 0.30, 0.30))
    for words in ("from the middle of the table", "at the centre of the table",
                  "from table center", "in the center"):
        assert picked(f"lift the green bowl {words} and put it on the red plate",
                      scene) == "green_bowl", words


def test_the_middle_one_of_a_row_and_a_tie_is_asked_about():
    row = table(bowl("green_bowl", 0.40, -0.10), bowl("green_bowl_2", 0.40, 0.05),
                bowl("green_bowl_3", 0.40, 0.20))
    assert picked("put the middle green bowl on the red plate", row) == "green_bowl_2"
    pair = table(bowl("green_bowl", 0.40, -0.10), bowl("green_bowl_2", 0.40, 0.10))
    with pytest.raises(ObjectNotResolved, match="ambiguous|which"):
        understand("put the middle green bowl on the red plate", pair)


def test_a_pick_with_a_relation_reads_where_the_object_is_not_where_it_goes():
    scene = table(bowl("green_bowl", 0.30, 0.15), bowl("green_bowl_2", 0.60, 0.10, 0.105),
                  thing("blue_box", "box", "blue", 0.60, 0.10))
    assert picked("pick up the green bowl on the blue box and put it on the red plate",
                  scene) == "green_bowl_2"
    # no relation in the object phrase: still two bowls to choose from
    with pytest.raises(ObjectNotResolved, match="ambiguous"):
        understand("pick up the green bowl and put it on the blue box", scene)


def _cabinet(top_opening: float) -> list[SceneObject]:
    """A three-drawer cabinet at (0.42, 0.52) facing the robot (front towards -y: yaw 90 deg),
    as the planner sees it without a fixture map: furniture and drawers with their opening."""
    yaw = math.pi / 2
    out = [SceneObject("cabinet", "cabinet", "cabinet", "brown", (0.42, 0.52, 0.18),
                       (0.26, 0.30, 0.36), yaw, is_fixture=True)]
    for name, z, opening in (("bottom", 0.068, 0.0), ("middle", 0.18, 0.0),
                             ("top", 0.292, top_opening)):
        out.append(SceneObject(f"{name}_drawer", f"{name} drawer", "drawer", "", (0.42, 0.512, z),
                               (0.244, 0.272, 0.10), yaw, is_fixture=True, opening=opening))
    return out


def test_in_the_top_drawer_and_on_the_cabinet_tell_two_bowls_apart():
    in_drawer = bowl("green_bowl", 0.43, 0.38, 0.273)  # in the top drawer, pulled out 14 cm
    on_top = bowl("green_bowl_2", 0.36, 0.49, 0.385)  # on the cabinet, above the drawer
    scene = table(in_drawer, on_top, *_cabinet(0.144))
    assert picked("pick up the green bowl in the top drawer of the cabinet and put it on the "
                  "red plate", scene) == "green_bowl"
    assert picked("pick up the green bowl on the cabinet and put it on the red plate",
                  scene) == "green_bowl_2"
    objs = {o.object_id: o for o in scene.objects}
    snap = WorldSnapshot(scene=scene)
    assert predicates.inside(snap, objs, "green_bowl", "top_drawer")
    assert not predicates.inside(snap, objs, "green_bowl_2", "top_drawer")


def test_on_top_of_the_cabinet_is_the_furniture_while_open_the_cabinet_is_a_drawer():
    scene = table(bowl("green_bowl", 0.40, 0.10), *_cabinet(0.0))
    assert render_frames(understand("put the green bowl on top of the cabinet", scene).frames
                         ) == "stack(obj=green_bowl, target=cabinet)"
    with pytest.raises(ObjectNotResolved, match="which drawer"):
        understand("open the cabinet", scene)


def test_a_pick_said_with_a_word_of_place_picks_the_object_there_not_onto_it():
    """One bowl, on the cabinet: "pick up the bowl on the cabinet and ..." picks it from there
    (never "put it on the cabinet"); "lift the bowl onto the cabinet" still moves it there."""
    scene = table(bowl("green_bowl", 0.36, 0.49, 0.385), *_cabinet(0.0))
    assert picked("pick up the green bowl on the cabinet and put it on the red plate",
                  scene) == "green_bowl"
    assert render_frames(understand("pick up the green bowl on the cabinet", scene).frames
                         ) == "pick_up(obj=green_bowl)"
    low = table(bowl("green_bowl", 0.40, 0.10), *_cabinet(0.0))
    assert render_frames(understand("lift the green bowl onto the cabinet", low).frames
                         ) == "stack(obj=green_bowl, target=cabinet)"

"""A block in (or against) the bowl of its own colour: real MuJoCo renders through the pipeline.

Clustering is per colour group, so such a block shares the bowl's component; perception must
still report it as its own object, where it is, with ``in(block, bowl)`` holding on the
perceived scene (sort_by_colour's check after each place_in), and keep the bowl intact.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from frankenbot import resources
from frankenbot.eval.perception_eval import camera_of_world
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.catalogue import ObjectCatalogue, enrol
from frankenbot.perception.colour import rgb_to_hsv
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.containers import fit_outline_circle
from frankenbot.perception.geometry import Detection, ShapeRules, measure, split_stack
from frankenbot.perception.pipeline import PerceptionPipeline, default_catalogue
from frankenbot.perception.recognition import GRAZED, PART, recognise
from frankenbot.perception.segmentation import Cluster
from frankenbot.perception.signature import Signature
from frankenbot.program.predicates import evaluate_predicate
from frankenbot.program.tree import Ident, Pred
from frankenbot.state import Scene, SceneObject, WorldSnapshot

sim_world = pytest.importorskip("frankenbot.sim.world")
from frankenbot.sim import layout, objects  # noqa: E402

BOWL_FLOOR = 0.006  # the sim bowl's bottom disc (sim/model.py)


@pytest.fixture(scope="module")
def world():
    w = sim_world.SimWorld(seed=0)
    yield w
    w.close()


def _perceive(world) -> Scene:
    pipeline = PerceptionPipeline(camera_of_world(world),
                                  FixtureMap.load(resources.fixtures_path()))
    rgb, depth = world.render_rgbd()
    return pipeline.process(rgb, depth, world.time, world.joint_positions())


def _place(world, name: str, xy: tuple[float, float], z: float, yaw: float) -> None:
    world._set_pose(name, (*xy, z), yaw)  # test-only: pose the object directly
    world.advance(0.5)  # let it settle


def _put_in_bowl(world, block: str, bowl: str, offset: tuple[float, float], yaw: float) -> None:
    bx, by, _ = world.object_states()[bowl].position
    _place(world, block, (bx + offset[0], by + offset[1]),
           BOWL_FLOOR + layout.BLOCK_SIZE / 2 + 0.001, yaw)


def _the(scene: Scene, shape: str, colour: str) -> list[SceneObject]:
    return [o for o in scene.objects if not o.is_fixture and (o.shape, o.colour) == (shape, colour)]


def _inside(scene: Scene, obj: str, container: str) -> bool:
    return evaluate_predicate(Pred("in", (Ident(obj), Ident(container))),
                              WorldSnapshot(scene=scene))


@pytest.mark.parametrize("colour, offset, yaw", [
    ("green", (0.0, 0.0), 0.0),
    ("red", (-0.015, 0.015), 0.4),  # against the far wall, seen over the rim
    ("blue", (0.016, -0.012), -0.3),  # against the near wall, its lower half hidden by it
])
def test_block_in_its_own_colour_bowl_is_its_own_object_and_in_the_bowl(world, colour, offset,
                                                                       yaw):
    world.reset("sort_by_colour", 0)  # three bowls (green, blue, red) and their blocks
    block, bowl = f"{colour}_block", f"{colour}_bowl"
    _put_in_bowl(world, block, bowl, offset, yaw)
    truth = world.object_states()
    assert math.dist(truth[block].position[:2], truth[bowl].position[:2]) < 0.03  # staged in

    scene = _perceive(world)
    blocks, bowls = _the(scene, "block", colour), _the(scene, "bowl", colour)
    assert len(blocks) == 1 and len(bowls) == 1, scene.objects
    seen_block, seen_bowl = blocks[0], bowls[0]
    assert math.dist(seen_block.position, truth[block].position) < 0.006, seen_block
    assert math.dist(seen_bowl.position, truth[bowl].position) < 0.006, seen_bowl
    assert seen_bowl.size[0] == pytest.approx(2 * layout.BOWL_RADIUS, abs=0.006)
    assert _inside(scene, seen_block.object_id, seen_bowl.object_id)
    # and the other colours are as they were: one block and one bowl each
    for other in set(layout.BOWL_COLOURS) - {colour}:
        assert len(_the(scene, "block", other)) == len(_the(scene, "bowl", other)) == 1


@pytest.mark.parametrize("colour, angle", [
    ("blue", 0.0),  # on the camera's side of the bowl
    ("green", math.radians(163.0)),  # behind it, partly hidden by the bowl
])
def test_block_touching_its_own_colour_bowl_on_the_table_is_two_objects(world, colour, angle):
    world.reset("sort_by_colour", 0)  # three bowls (green, blue, red) and their blocks
    bx, by, _ = world.object_states()[f"{colour}_bowl"].position
    r = layout.BOWL_RADIUS + layout.BLOCK_SIZE / 2 + 0.001  # 1 mm from touching
    _place(world, f"{colour}_block", (bx + r * math.cos(angle), by + r * math.sin(angle)),
           layout.BLOCK_SIZE / 2 + 0.0005, angle)
    truth = world.object_states()

    scene = _perceive(world)
    blocks, bowls = _the(scene, "block", colour), _the(scene, "bowl", colour)
    assert len(blocks) == 1 and len(bowls) == 1, scene.objects
    assert math.dist(blocks[0].position, truth[f"{colour}_block"].position) < 0.008
    assert math.dist(bowls[0].position, truth[f"{colour}_bowl"].position) < 0.006
    assert bowls[0].size[0] == pytest.approx(2 * layout.BOWL_RADIUS, abs=0.006)
    assert not _inside(scene, blocks[0].object_id, bowls[0].object_id)


def test_block_in_a_bowl_of_another_colour_still_is_in_it(world):
    world.reset("sort_by_colour", 0)  # three bowls (green, blue, red) and their blocks
    _put_in_bowl(world, "red_block", "green_bowl", (0.0, 0.0), 0.2)
    truth = world.object_states()
    scene = _perceive(world)
    (red,), (green,) = _the(scene, "block", "red"), _the(scene, "bowl", "green")
    assert math.dist(red.position, truth["red_block"].position) < 0.006
    assert math.dist(green.position, truth["green_bowl"].position) < 0.006
    assert _inside(scene, red.object_id, green.object_id)


def _ring(centre: tuple[float, float], r_in: float, r_out: float, start: float, stop: float,
          n: int = 4000) -> np.ndarray:
    rng = np.random.default_rng(1)
    a = rng.uniform(start, stop, n)
    r = np.sqrt(rng.uniform(r_in**2, r_out**2, n))
    return np.c_[centre[0] + r * np.cos(a), centre[1] + r * np.sin(a)]


def test_outline_circle_of_a_full_ring_and_none_for_an_arc():
    cfg = PerceptionConfig()
    full = _ring((0.4, -0.1), 0.0, 0.075, 0.0, 2 * math.pi)
    circle = fit_outline_circle(full, cfg)
    assert circle is not None
    assert math.dist(circle.centre, (0.4, -0.1)) < 0.002
    assert circle.radius == pytest.approx(0.075, abs=0.003)
    # A bowl with a block against it: the bump is ignored.
    bump = np.random.default_rng(2).uniform((0.475, -0.12), (0.515, -0.08), (600, 2))
    with_block = fit_outline_circle(np.vstack([full, bump]), cfg)
    assert with_block is not None and math.dist(with_block.centre, (0.4, -0.1)) < 0.003
    # Half a bowl (the arm in front of the rest) fits many circles: none is trusted.
    assert fit_outline_circle(_ring((0.4, -0.1), 0.0, 0.075, 0.0, math.pi), cfg) is None
    # A rectangle (a bin) is not round.
    box = np.random.default_rng(3).uniform((0.0, 0.0), (0.20, 0.26), (4000, 2))
    assert fit_outline_circle(box, cfg) is None


def test_a_tall_sliver_is_not_split_into_a_stack_but_a_tower_is():
    sliver = Detection("block", "red", (0.5, 0.0, 0.15), (0.01, 0.01, 0.04), 0.0, 0.9, 30)
    assert split_stack(sliver) == [sliver]
    tower = Detection("block", "red", (0.5, 0.0, 0.04), (0.04, 0.04, 0.08), 0.0, 0.9, 300)
    levels = split_stack(tower)
    assert [round(d.position[2], 3) for d in levels] == [0.02, 0.06]


def test_a_tall_narrow_thing_seen_in_part_is_no_tower_of_blocks():
    """A tower is one cluster no category matches, split into cubes; a bottle half hidden
    behind another shows a strip as narrow as a block and three times as tall: seen in part,
    it stays one unknown object, not three blocks."""
    rng = np.random.default_rng(5)
    cube = Signature(0.04, 0.04, 0.04, 0.9, 0.93, 0.0, 0.93)
    base = np.asarray(cube.values())
    block = enrol("block", "red_block", "red", [Signature(*(base + rng.normal(0, 0.002, 7)))
                                                 for _ in range(12)])
    cat = ObjectCatalogue((block,))
    strip = Detection("unknown", "red", (0.5, 0.0, 0.06), (0.04, 0.04, 0.12), 0.0, 0.9, 300,
                      signature=replace(cube, height=0.12))
    assert [d.shape for d in recognise(strip, cat, ShapeRules(), None)] == ["block"] * 3
    hidden = recognise(strip, cat, ShapeRules(), None, PART)
    assert [d.shape for d in hidden] == ["unknown"]


def test_a_grazed_object_is_read_whole_and_in_part_only_where_nothing_matches_it_whole():
    """A neighbour that cuts a little off an outline (a chord of a bowl) leaves it matching
    no prototype whole: read as seen in part, it is the enrolled thing of its colour; what
    matches whole stays whole, and a tower of cubes a little bordered is still a tower."""
    rng = np.random.default_rng(7)
    bowl_sig = Signature(0.15, 0.15, 0.05, 0.78, 0.3, 0.6, 0.8)
    cube = Signature(0.04, 0.04, 0.04, 0.9, 0.93, 0.0, 0.93)
    noisy = [lambda s: Signature(*(np.asarray(s.values()) + rng.normal(0, 0.002, 7)))]
    cat = ObjectCatalogue((
        enrol("bowl", "white_bowl", "white", [noisy[0](bowl_sig) for _ in range(12)]),
        enrol("block", "red_block", "red", [noisy[0](cube) for _ in range(12)])))
    cut = replace(bowl_sig, width=0.12, fill=0.62)  # a chord gone: narrow, its fill low
    det = Detection("unknown", "white", (0.5, 0.0, 0.025), (0.15, 0.12, 0.05), 0.0, 0.9, 900,
                    signature=cut)
    assert [d.shape for d in recognise(det, cat, ShapeRules(), None)] == ["unknown"]
    grazed = recognise(det, cat, ShapeRules(), None, GRAZED)
    assert [(d.shape, d.as_part) for d in grazed] == [("bowl", True)]
    whole = replace(det, size=(0.15, 0.15, 0.05), signature=bowl_sig)
    assert [(d.shape, d.as_part) for d in recognise(whole, cat, ShapeRules(), None, GRAZED)
            ] == [("bowl", False)]
    tower = Detection("unknown", "red", (0.5, 0.0, 0.04), (0.04, 0.04, 0.08), 0.0, 0.9, 300,
                      signature=replace(cube, height=0.08))
    assert [d.shape for d in recognise(tower, cat, ShapeRules(), None, GRAZED)] == ["block"] * 2


def _bowl_cluster(start_deg: float, stop_deg: float, floor_from: float = 0.0) -> Cluster:
    """Top-down samples of a sim bowl's rim, and its floor from ``floor_from`` out to the wall,
    between two angles (a synthetic view)."""
    rng = np.random.default_rng(4)
    a = np.radians(rng.uniform(start_deg, stop_deg, 3000))
    r = np.where(np.arange(a.size) % 3 == 0,
                 rng.uniform(floor_from, layout.BOWL_INNER_RADIUS, a.size),
                 rng.uniform(layout.BOWL_INNER_RADIUS, layout.BOWL_RADIUS, a.size))
    h = np.where(r < layout.BOWL_INNER_RADIUS, BOWL_FLOOR, layout.BOWL_HEIGHT)
    pts = np.c_[0.5 + r * np.cos(a), 0.1 + r * np.sin(a), h]
    hsv = rgb_to_hsv(np.tile(np.array([[30, 170, 50]], dtype=np.uint8), (a.size, 1)))
    return Cluster(pts, h, hsv, np.zeros((a.size, 2), dtype=np.int64), 0)


def test_an_arc_of_a_bowl_left_visible_by_the_arm_is_no_bowl():
    whole = measure(_bowl_cluster(0.0, 360.0))
    assert (whole.shape, whole.colour) == ("bowl", "green")
    assert math.dist(whole.position[:2], (0.5, 0.1)) < 0.003
    # The band of rim and floor the arm left visible: 11.5 cm long, 5 cm wide.
    arc = measure(_bowl_cluster(-50.0, 50.0, floor_from=0.035))
    assert arc.size[0] > 0.1 and arc.size[1] < 0.06
    assert arc.shape == "unknown"


@pytest.mark.parametrize("angle", [math.radians(100.0), math.radians(-60.0)])
def test_a_mug_touching_a_plate_of_its_colour_is_a_mug_beside_a_plate(world, angle):
    """A white mug against a white plate on the table made one white component that was
    neither (scene 12566 of the perception eval): the plate's round outline keeps what
    touches it from outside apart, as a bowl's does."""
    world.reset(None, 7)
    for other in list(world.object_states()):
        world.remove_object(other)
    plate, mug = objects.OBJECT_BY_NAME["white_plate_2"], objects.OBJECT_BY_NAME["white_mug"]
    px, py = 0.55, -0.1
    r = plate.size[0] / 2 + mug.size[1] / 2 + 0.002  # the mug's body 2 mm from the rim
    world.add_object("white_plate_2", (px, py, plate.size[2] / 2 + 0.001), 0.0)
    world.add_object("white_mug", (px + r * math.cos(angle), py + r * math.sin(angle),
                                   mug.size[2] / 2 + 0.001), angle + math.pi / 2)
    world.advance(0.5)
    pipeline = PerceptionPipeline(camera_of_world(world),
                                  FixtureMap.load(resources.fixtures_path()),
                                  catalogue=default_catalogue())
    for _ in range(2):
        world.advance(0.1)
        rgb, depth = world.render_rgbd()
        scene = pipeline.process(rgb, depth, world.time, world.joint_positions())
    truth = world.object_states()
    plates, mugs = _the(scene, "plate", "white"), _the(scene, "mug", "white")
    assert len(plates) == 1 and len(mugs) == 1, scene.objects
    assert math.dist(plates[0].position, truth["white_plate_2"].position) < 0.01
    assert math.dist(mugs[0].position[:2], truth["white_mug"].position[:2]) < 0.02

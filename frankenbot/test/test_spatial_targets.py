"""Pixel targets and spatial relations without a simulator: catalog ranges with a hint, the
relations' convention, free spots, and the depth back-projection (synthetic depth)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from frankenbot import spatial
from frankenbot.errors import PerceptionError
from frankenbot.perception.camera import load_camera
from frankenbot.perception.pixels import DepthPixelResolver
from frankenbot.program.catalog import default_catalog
from frankenbot.program.check import check_text
from frankenbot.program.predicates import evaluate_predicate
from frankenbot.program.tree import Ident, Pred
from frankenbot.resources import config_path
from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot

PIXEL_TASK = ('task "pixel" { main { pick(obj=red_block) '
              'place_at_pixel(obj=red_block, u=%s, v=%s) exit success } }')


def block(oid: str, x: float, y: float, z: float = 0.02) -> SceneObject:
    return SceneObject(oid, oid, "block", oid.split("_")[0], (x, y, z), (0.04, 0.04, 0.04))


def bowl(oid: str, x: float, y: float) -> SceneObject:
    return SceneObject(oid, oid, "bowl", oid.split("_")[0], (x, y, 0.025), (0.15, 0.15, 0.05))


def snap(*objects: SceneObject) -> WorldSnapshot:
    return WorldSnapshot(RobotSnapshot(), Scene.of(objects), {})


def P(name: str, *args: str) -> Pred:
    return Pred(name, tuple(Ident(a) for a in args))


def test_check_accepts_the_pixel_task_and_rejects_out_of_range_pixels_with_a_hint() -> None:
    assert check_text(PIXEL_TASK % (320, 300), default_catalog()).ok
    for u, v in ((640, 300), (320, 480), (-1, 10)):
        res = check_text(PIXEL_TASK % (u, v), default_catalog())
        assert not res.ok
        (d,) = [d for d in res.diagnostics if d.code == "arg-range"]
        assert "640x480" in d.hint and "ruler" in d.hint
    small = default_catalog(image_size=(320, 240))
    assert not check_text(PIXEL_TASK % (320, 100), small).ok  # the range follows the image


def test_spatial_predicates_and_placements_are_typed_in_the_catalog() -> None:
    text = ('task "rel" { main { pick(obj=red_block)\n'
            '  if free_spot_near(green_bowl) { place_left_of(obj=red_block, ref=green_bowl) }\n'
            '  else { place_between(obj=red_block, a=green_bowl, b=blue_block) }\n'
            '  if not left_of(red_block, green_bowl) { exit failure }\n  exit success } }')
    assert check_text(text, default_catalog()).ok
    bad = text.replace("left_of(red_block, green_bowl)", "left_of(red_block)")
    assert not check_text(bad, default_catalog()).ok
    gap = text.replace("ref=green_bowl)", "ref=green_bowl, gap=0.5)")
    assert not check_text(gap, default_catalog()).ok


def test_relations_follow_the_documented_convention() -> None:
    ref = block("green_block", 0.5, 0.0)
    cases = {"left_of": (0.5, 0.1), "right_of": (0.5, -0.1), "behind": (0.6, 0.0),
             "in_front_of": (0.4, 0.0)}
    for rel, (x, y) in cases.items():
        s = snap(block("red_block", x, y), ref)
        for other in cases:
            assert evaluate_predicate(P(other, "red_block", "green_block"), s) is (other == rel)
    # outside the 90-degree cone: neither left nor behind
    s = snap(block("red_block", 0.6, 0.1), ref)
    assert evaluate_predicate(P("left_of", "red_block", "green_block"), s)  # on the diagonal
    s = snap(block("red_block", 0.62, 0.05), ref)
    assert not evaluate_predicate(P("left_of", "red_block", "green_block"), s)
    assert evaluate_predicate(P("behind", "red_block", "green_block"), s)
    # in the cone but far: footprints more than REL_MAX_GAP apart hold no relation
    far = 0.5 + 2 * 0.0283 + spatial.REL_MAX_GAP + 0.01
    s = snap(block("red_block", far, 0.0), ref)
    assert not evaluate_predicate(P("behind", "red_block", "green_block"), s)
    assert spatial.relation_holds("behind", (far, 0.0), (0.5, 0.0))  # without footprints
    s = snap(block("red_block", 0.5, 0.0), block("a_block", 0.4, -0.1), block("b_block", 0.6, 0.1))
    assert evaluate_predicate(P("between", "red_block", "a_block", "b_block"), s)
    s = snap(block("red_block", 0.5, 0.1), block("a_block", 0.4, -0.1), block("b_block", 0.6, 0.1))
    assert not evaluate_predicate(P("between", "red_block", "a_block", "b_block"), s)
    assert not evaluate_predicate(P("left_of", "red_block", "missing"), s)


def test_spots_keep_clear_of_other_objects_and_the_region() -> None:
    ref = bowl("green_bowl", 0.5, 0.0)
    spot = spatial.spot_beside("left_of", ref, (0.04, 0.04, 0.04), [ref])
    assert spatial.relation_holds("left_of", (spot.x, spot.y), (0.5, 0.0))
    assert math.hypot(spot.x - 0.5, spot.y) == pytest.approx(0.075 + 0.0283 + 0.03, abs=1e-3)
    blocker = block("blue_block", spot.x, spot.y)
    moved = spatial.spot_beside("left_of", ref, (0.04, 0.04, 0.04), [ref, blocker])
    assert spatial.clearance_at(moved.x, moved.y, 0.0283, [blocker]) >= spatial.SPOT_CLEARANCE
    assert spatial.relation_holds("left_of", (moved.x, moved.y), (0.5, 0.0))
    edge = bowl("red_bowl", 0.5, 0.45)  # left of it is off the placement region
    with pytest.raises(spatial.NoFreeSpot, match="reachable table region"):
        spatial.spot_beside("left_of", edge, (0.04, 0.04, 0.04), [edge])
    a, b = block("a_block", 0.45, 0.0), block("b_block", 0.45, 0.07)  # 3 cm apart: no room
    with pytest.raises(spatial.NoFreeSpot, match="between"):
        spatial.spot_between(a, b, (0.04, 0.04, 0.04), [a, b])
    grid = [(x, y) for x in np.arange(0.2, 0.85, 0.06) for y in np.arange(-0.35, 0.36, 0.06)
            if math.hypot(x - 0.5, y) > 0.11]  # blocks 2 cm apart all around the bowl
    crowd = [ref] + [block(f"b{i}_block", x, y) for i, (x, y) in enumerate(grid)]
    assert not evaluate_predicate(P("free_spot_near", "green_bowl"), snap(*crowd))
    assert evaluate_predicate(P("free_spot_near", "green_bowl"), snap(ref))


def test_a_crowded_side_gives_a_close_spot_or_none_never_a_far_one() -> None:
    """Blocks on the near candidates push the spot out and sideways, but never past
    REL_MAX_GAP - PLACE_GAP_MARGIN between the footprints (the relation would not hold once
    placed): then it is NoFreeSpot, and nothing moves."""
    ref = block("blue_block", 0.5, 0.0)
    held = (0.04, 0.04, 0.04)
    limit = spatial.REL_MAX_GAP - spatial.PLACE_GAP_MARGIN
    r = spatial.footprint_radius(held)
    # a block on the first choice, 10 cm right of the reference: the spot goes sideways
    wall = [block("w_block", 0.5, -0.1)]
    spot = spatial.spot_beside("right_of", ref, held, [ref, *wall])
    reach = math.hypot(spot.x - 0.5, spot.y) - 2 * r
    assert spatial.DEFAULT_GAP - 1e-6 <= reach <= limit + 1e-6
    for w in wall:
        assert spatial.clearance_at(spot.x, spot.y, r, [w]) >= spatial.SPOT_CLEARANCE
    # every candidate within the limit is taken: no spot, even though the table further out
    # is free (the old search went 10 cm further and claimed a relation that did not hold)
    ring = [block(f"r{i}_block", 0.5 + dx, -dy) for i, (dx, dy) in enumerate(
        (dx, dy) for dx in np.arange(-0.09, 0.091, 0.045) for dy in (0.075, 0.12))]
    with pytest.raises(spatial.NoFreeSpot, match="within 7 cm"):
        spatial.spot_beside("right_of", ref, held, [ref, *ring])
    # asked for a wider gap, the search starts there
    wide = spatial.spot_beside("right_of", ref, held, [ref], gap=0.09)
    assert math.hypot(wide.x - 0.5, wide.y) - 2 * r == pytest.approx(0.09, abs=1e-6)


def test_a_thing_that_rolls_is_put_nearer_the_relations_direction() -> None:
    """With the straight-out spot taken, a block may go well out of line (the relation holds
    to a tangent of 1); a lemon-sized thing that rolls on after its release goes no further
    out of line than half that: here nowhere (BLOCKED: nothing moves), with the way clear
    straight out."""
    ref = block("blue_block", 0.5, 0.0)
    held = (0.045, 0.04, 0.045)

    def out_of_line(spot: spatial.Spot) -> float:
        return abs(spot.x - ref.position[0]) / -(spot.y - ref.position[1])  # right_of: -y

    wall = [block("w_block", 0.5, -0.09)]
    assert spatial.ROLLING_SPOT_CONE < out_of_line(
        spatial.spot_beside("right_of", ref, held, [ref, *wall])) <= spatial.SPOT_CONE + 1e-9
    with pytest.raises(spatial.NoFreeSpot):
        spatial.spot_beside("right_of", ref, held, [ref, *wall], rolls=True)
    assert out_of_line(spatial.spot_beside("right_of", ref, held, [ref], rolls=True)) < 1e-9


def test_a_third_object_near_the_line_moves_the_between_spot_off_it_not_away():
    """A block lying beside the segment, near its middle, takes every spot on the line; a spot
    up to BETWEEN_SPOT_OFFSET off the line on the other side is free, and the relation holds
    there (it allows BETWEEN_MAX_OFFSET)."""
    a, c = bowl("green_bowl", 0.477, -0.056), block("purple_block", 0.344, 0.148)
    near_line = block("orange_block", 0.415, 0.105)  # 3.6 cm off the line, at t ~ 0.69
    held = (0.04, 0.04, 0.04)
    spot = spatial.spot_between(a, c, held, [a, c, near_line])
    r = spatial.footprint_radius(held)
    assert spatial.clearance_at(spot.x, spot.y, r, [near_line]) >= spatial.SPOT_CLEARANCE
    assert spatial.clearance_at(spot.x, spot.y, r, [a, c]) >= spatial.SPOT_CLEARANCE
    assert spatial.relation_holds("between", (spot.x, spot.y), a.position[:2], c.position[:2])
    off = spatial.segment_point_distance((spot.x, spot.y), a.position[:2], c.position[:2])
    assert 0.0 < off <= spatial.BETWEEN_SPOT_OFFSET + 1e-9
    # a clear line still gets the midpoint
    mid = spatial.spot_between(a, c, held, [a, c])
    assert (mid.x, mid.y) == pytest.approx(((0.477 + 0.344) / 2, (-0.056 + 0.148) / 2))


def _table_depth(resolver: DepthPixelResolver, table_z: float = 0.0) -> np.ndarray:
    """Depth (m) of a plane z = table_z seen by the camera: the synthetic frame."""
    cam = resolver.camera
    k = cam.intrinsics
    uu, vv = np.meshgrid(np.arange(k.width), np.arange(k.height))
    rays = np.stack([(uu - k.cx) / k.fx, (vv - k.cy) / k.fy, np.ones_like(uu, float)], -1)
    r = cam.matrix[:3, :3]
    dirs = rays @ r.T
    t = (table_z - cam.matrix[2, 3]) / dirs[..., 2]
    return np.where(t > 0, t, np.nan).astype(np.float32)


def test_resolver_back_projects_pixels_onto_the_surface_the_depth_shows() -> None:
    res = DepthPixelResolver(load_camera(config_path("camera.yaml")))
    with pytest.raises(PerceptionError, match="no depth frame"):
        res.resolve(320, 300)
    depth = _table_depth(res)
    res.feed(depth, 1.0)
    u, v = res.pixel_of((0.45, -0.05, 0.0))
    t = res.resolve(u, v)
    assert t.position == pytest.approx((0.45, -0.05, 0.0), abs=2e-3)
    holes = depth.copy()
    holes[int(v) - 4:int(v) + 5, int(u) - 4:int(u) + 5] = np.nan
    res.feed(holes, 2.0, None)
    with pytest.raises(PerceptionError, match="depth is missing"):
        res.resolve(u, v)
    with pytest.raises(PerceptionError, match="outside the 640x480"):
        res.resolve(640, 10)


def test_resolver_reads_a_pixel_the_arm_covers_from_an_earlier_frame() -> None:
    res = DepthPixelResolver(load_camera(config_path("camera.yaml")), history_period=0.0)
    home = (0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0)
    depth = _table_depth(res)
    res.feed(depth, 1.0, home)
    # a later frame where the surface at the pixel is the gripper (20 cm up, on the skeleton)
    from frankenbot.perception.self_filter import arm_segments

    tip = arm_segments(home)[-1][-1]
    u, v = res.pixel_of(tip)  # the pixel sees the fingertips now, the table before
    m = res.camera.matrix
    tip_depth = float(((np.asarray(tip) - m[:3, 3]) @ m[:3, :3])[2])
    covered = depth.copy()
    covered[int(v) - 3:int(v) + 4, int(u) - 3:int(u) + 4] = tip_depth
    res.feed(covered, 2.0, home)
    t = res.resolve(u, v)
    assert t.age == pytest.approx(1.0)
    assert t.position[2] == pytest.approx(0.0, abs=3e-3)


def test_set_of_mark_image_carries_a_pixel_ruler() -> None:
    from frankenbot.perception.annotate import annotate

    camera = load_camera(config_path("camera.yaml"))
    rgb = np.full((480, 640, 3), 90, dtype=np.uint8)
    with_ruler, _ = annotate(rgb, Scene.of([]), camera)
    plain, _ = annotate(rgb, Scene.of([]), camera, ruler=0)
    assert np.array_equal(plain, rgb)
    assert not np.array_equal(with_ruler[:, 80], rgb[:, 80])  # grid line at u = 80
    assert not np.array_equal(with_ruler[0:12, 70:90], rgb[0:12, 70:90])  # its label on top
    assert np.array_equal(with_ruler[200:230, 300:310], rgb[200:230, 300:310])  # between lines


def test_footprint_gap_measures_to_the_rectangle_not_its_bounding_circle() -> None:
    from frankenbot.state import SceneObject

    cabinet = SceneObject("drawer", "drawer", "drawer", "brown", (0.0, 0.0, 0.06),
                          (0.2, 0.26, 0.12))
    # beside the long face, 3 cm off: the bounding circle (r 0.164) would say it overlaps
    assert spatial.footprint_gap(cabinet, (0.13, -0.3), (0.13, 0.3)) == pytest.approx(0.03)
    assert spatial.footprint_gap(cabinet, (-0.3, 0.0), (0.3, 0.05)) == 0.0  # crosses it
    assert spatial.footprint_gap(cabinet, (0.0, 0.05), (0.01, 0.06)) == 0.0  # inside it
    # off a corner: the corner is nearest
    assert spatial.footprint_gap(cabinet, (0.2, 0.2), (0.3, 0.3)) == pytest.approx(
        math.hypot(0.1, 0.07))
    # yawed a quarter turn, its long side now runs along x
    turned = SceneObject("drawer", "drawer", "drawer", "brown", (0.0, 0.0, 0.06),
                         (0.2, 0.26, 0.12), yaw=math.pi / 2)
    assert spatial.footprint_gap(turned, (0.16, -0.3), (0.16, 0.3)) == pytest.approx(0.03)
    assert spatial.footprint_gap(turned, (0.12, -0.3), (0.12, 0.3)) == 0.0
    bowl = SceneObject("green_bowl", "green bowl", "bowl", "green", (0.0, 0.0, 0.025),
                       (0.15, 0.15, 0.05))
    assert spatial.footprint_gap(bowl, (0.1, -0.2), (0.1, 0.2)) == pytest.approx(0.025)


def test_a_spot_beside_a_wide_box_is_out_from_its_face_not_its_bounding_circle() -> None:
    stove = SceneObject("stove", "stove", "stove", "black", (0.62, -0.30, 0.015),
                        (0.26, 0.30, 0.03), is_fixture=True)
    plate = (0.18, 0.18, 0.012)
    spot = spatial.spot_beside("in_front_of", stove, plate, [stove])
    face_gap = (0.62 - 0.13) - spot.x - spatial.footprint_radius(plate)
    assert spot.y == pytest.approx(-0.30, abs=0.02)
    assert spatial.DEFAULT_GAP - 0.005 <= face_gap <= spatial.REL_MAX_GAP - 0.03


def test_a_push_goes_straight_or_around_what_is_in_the_way_or_not_at_all() -> None:
    pushed = block("red_block", 0.40, 0.20)
    assert spatial.push_route(pushed, (0.40, -0.10), [pushed]) == [(0.40, -0.10)]
    wall = SceneObject("gray_box", "gray box", "box", "gray", (0.40, 0.05, 0.03),
                       (0.10, 0.04, 0.06))
    legs = spatial.push_route(pushed, (0.40, -0.10), [pushed, wall])
    assert len(legs) >= 2 and legs[-1] == (0.40, -0.10)
    r = spatial.footprint_radius(pushed.size) + spatial.PUSH_CLEARANCE
    for a, b in zip([(0.40, 0.20), *legs[:-1]], legs, strict=True):  # every leg clears the box
        assert spatial.footprint_gap(wall, a, b) >= r - 1e-9
    fence = [SceneObject(f"gray_box_{i}", "gray box", "box", "gray", (0.20 + 0.1 * i, 0.05, 0.03),
                         (0.10, 0.04, 0.06)) for i in range(7)]
    with pytest.raises(spatial.NoFreeSpot, match="no push path"):
        spatial.push_route(pushed, (0.40, -0.10), [pushed, *fence])


def test_a_plate_is_pushed_in_front_of_a_stove_past_a_box_from_the_robots_side() -> None:
    """The way to the stove's front past a box runs between the box and the robot: the
    gripper then comes down behind the plate nearer the base than a placement may go."""
    plate = SceneObject("white_plate", "white plate", "plate", "white", (0.372, 0.001, 0.006),
                        (0.174, 0.172, 0.012))
    box = SceneObject("blue_box", "blue box", "box", "blue", (0.41, -0.172, 0.017),
                      (0.084, 0.055, 0.034), yaw=1.016)
    stove = SceneObject("stove", "stove", "stove", "black", (0.62, -0.33, 0.015),
                        (0.26, 0.30, 0.03), is_fixture=True)
    scene = [plate, box, stove]
    spot = spatial.spot_beside("in_front_of", stove, plate.size, scene, held_id="white_plate")
    legs = spatial.push_route(plate, (spot.x, spot.y), scene)
    assert legs[-1] == (spot.x, spot.y) and len(legs) >= 2
    assert min(x for x, _ in legs) < spatial.Region().x[0] + 0.1  # round the box's near side
    r = spatial.footprint_radius(plate.size, plate.shape) + spatial.PUSH_CLEARANCE
    for a, b in zip([plate.position[:2], *legs[:-1]], legs, strict=True):
        assert spatial.footprint_gap(box, a, b) >= r - 1e-9
    # where it then stands is in front of the stove as the program's predicate reads it
    there = SceneObject("white_plate", "white plate", "plate", "white", (*legs[-1], 0.006),
                        plate.size)
    assert spatial.objects_related("in_front_of", there, stove)
    assert not spatial.objects_related("in_front_of", plate, stove)


def test_a_long_thin_neighbour_blocks_only_its_own_footprint() -> None:
    """A 13 x 2 cm marker lying along a plate's right side, 19 cm from its centre: as its
    6.8 cm bounding circle it took the spot right of the plate for a block; its rectangle
    leaves the spot straight out free, clear of it by the spot clearance. Turned across that
    side, it takes the spot, and the search goes round it. Too little room for a mug either
    way: the failure names the marker (a recovery may move it)."""
    plate = SceneObject("pink_plate", "pink plate", "plate", "pink", (0.48, -0.01, 0.006),
                        (0.157, 0.154, 0.012))
    along = SceneObject("orange_marker", "orange marker", "marker", "orange",
                        (0.517, -0.2, 0.008), (0.134, 0.02, 0.016), yaw=0.0)
    held = (0.04, 0.04, 0.04)
    r = spatial.footprint_radius(held)
    spot = spatial.spot_beside("right_of", plate, held, [plate, along])
    assert spot.x == pytest.approx(0.48) and spatial.relation_holds(
        "right_of", (spot.x, spot.y), plate.position[:2])
    assert spatial.clearance_at(spot.x, spot.y, r, [along]) >= spatial.SPOT_CLEARANCE
    assert math.hypot(spot.x - 0.517, spot.y + 0.2) < r + spatial.object_radius(along)
    across = replace(along, position=(0.48, -0.2, 0.008), yaw=math.pi / 2)
    moved = spatial.spot_beside("right_of", plate, held, [plate, across])
    assert spatial.clearance_at(moved.x, moved.y, r, [across]) >= spatial.SPOT_CLEARANCE
    assert abs(moved.x - 0.48) > 0.01  # off the straight-out line the marker lies across
    with pytest.raises(spatial.NoFreeSpot, match="orange_marker") as caught:
        spatial.spot_beside("right_of", plate, (0.085, 0.062, 0.081), [plate, along])
    assert caught.value.blockers == ("orange_marker",)

"""Tracker: an object merged with a same-coloured container keeps its id (no sim)."""

from dataclasses import replace

import pytest

from frankenbot.perception.geometry import Detection
from frankenbot.perception.tracker import Tracker


def det(shape, colour, pos, size):
    return Detection(shape, colour, pos, size, 0.0, 0.9, 500)


BOWL = det("bowl", "blue", (0.40, -0.05, 0.025), (0.15, 0.15, 0.05))
BLOCK_HELD = det("block", "blue", (0.40, -0.04, 0.12), (0.04, 0.04, 0.04))


def test_block_released_into_same_colour_bowl_keeps_its_track_resting_inside():
    tr = Tracker(memory_s=8.0)
    tr.update([BOWL, BLOCK_HELD], 1.0)
    # released: the block merges into the bowl's segment; the camera sees past where it was
    tracks = tr.update([BOWL], 1.2, vacated={"blue_block"})
    block = next(t for t in tracks if t.object_id == "blue_block")
    assert block.detection.position[:2] == (0.40, -0.04)
    assert abs(block.detection.position[2] - 0.02) < 1e-9  # resting on the bowl's bottom
    assert block.last_seen == 1.0  # not itself seen: it still fades out after memory_s
    assert not any(t.object_id == "blue_block" for t in tr.update([BOWL], 9.5, {"blue_block"}))


def test_vacated_block_beside_a_bowl_of_another_colour_is_forgotten():
    tr = Tracker()
    red_bowl = det("bowl", "red", (0.40, -0.05, 0.025), (0.15, 0.15, 0.05))
    tr.update([red_bowl, BLOCK_HELD], 1.0)
    tracks = tr.update([red_bowl], 1.2, vacated={"blue_block"})
    assert [t.object_id for t in tracks] == ["red_bowl"]


def test_a_new_block_never_inherits_the_id_of_a_bowl_that_vanished_nearby():
    tr = Tracker(memory_s=8.0)
    tr.update([BOWL], 1.0)
    block = det("block", "blue", (0.45, -0.02, 0.02), (0.04, 0.04, 0.04))  # the bowl is gone
    tracks = {t.object_id: t for t in tr.update([block], 1.2)}
    assert tracks["blue_block"].detection.shape == "block"
    assert tracks["blue_bowl"].detection.shape == "bowl"  # remembered, not taken over
    half_seen = det("unknown", "blue", (0.41, -0.05, 0.02), (0.08, 0.15, 0.05))
    tracks = {t.object_id: t for t in tr.update([half_seen, block], 1.4)}
    assert set(tracks) == {"blue_block", "blue_bowl"}  # an unclear view still matches the bowl
    assert tracks["blue_bowl"].last_seen == 1.4


def test_joint_history_gives_the_arm_where_the_image_shows_it():
    from frankenbot.perception.self_filter import JointHistory

    h = JointHistory(horizon_s=1.0)
    assert h.at(0.0) is None and h.latest() is None
    for i in range(11):  # 0..1 s at 10 Hz, joint 0 sweeping 0 -> 1 rad
        h.add(i * 0.1, (i * 0.1, 0, 0, 0, 0, 0))
    assert h.at(0.25)[0] == pytest.approx(0.25)  # between samples: interpolated
    assert h.at(5.0)[0] == pytest.approx(1.0)  # newer than every sample: the newest
    h.add(1.5, (1.5, 0, 0, 0, 0, 0))
    assert h.at(0.05) is None  # older than the horizon kept: unknown, not a guess
    h.add(0.2, (9, 0, 0, 0, 0, 0))  # the clock went back (sim reset): history restarts
    assert h.latest()[0] == 9 and h.at(0.1) is None


def test_a_settled_track_is_remembered_lower_down_and_keeps_its_id():
    t = Tracker()
    t.update([Detection("block", "green", (0.57, 0.38, 0.10), (0.04, 0.04, 0.04), 0.0, 0.9, 80)],
             0.0)
    t.settle({"green_block": 0.04})
    (track,) = t.tracks
    assert track.object_id == "green_block" and track.detection.position == (0.57, 0.38, 0.04)


def test_a_category_is_what_most_frames_voted_and_a_young_track_takes_its_name():
    tr = Tracker()
    box = det("box", "brown", (0.47, 0.15, 0.02), (0.09, 0.055, 0.04))
    first = tr.update([det("unknown", "brown", box.position, box.size)], 1.0)
    assert [t.object_id for t in first] == ["unknown"]
    tracks = tr.update([box], 1.1)
    tracks = tr.update([box], 1.2)
    assert [(t.object_id, t.detection.shape) for t in tracks] == [("brown_box", "box")]
    # established: a half-hidden frame that matches nothing does not rename it
    for k in range(3):
        tracks = tr.update([det("unknown", "brown", box.position, box.size)], 1.3 + 0.1 * k)
    assert [(t.object_id, t.detection.shape) for t in tracks] == [("brown_box", "box")]


def test_unknown_objects_are_numbered_and_labelled_by_size_and_colour():
    tr = Tracker()
    frame = [det("unknown", "gray", (0.4, 0.0, 0.02), (0.05, 0.04, 0.03)),
             det("unknown", "red", (0.6, 0.1, 0.04), (0.12, 0.06, 0.08))]
    tr.update(frame, 1.0)
    assert tr.scene_objects(1.0) == []  # an unknown object waits for a second frame
    tr.update(frame, 1.1)
    objs = {o.object_id: o.label for o in tr.scene_objects(1.1)}
    assert objs == {"unknown": "small gray object", "unknown_2": "medium red object"}


def test_an_object_let_go_into_shade_keeps_its_id_and_colour_when_it_reads_darker():
    tr = Tracker(memory_s=8.0)
    red = det("block", "red", (0.50, 0.10, 0.20), (0.04, 0.04, 0.04))
    can = det("can", "red", (0.40, -0.05, 0.05), (0.066, 0.066, 0.1))
    for k in range(3):
        tr.update([red, can], 1.0 + 0.1 * k)
    tr.settle({"red_block": 0.06})  # let go into an open drawer
    # in the drawer's shade it reads brown, a little off where it was let go
    brown = det("block", "brown", (0.52, 0.11, 0.05), (0.04, 0.04, 0.04))
    tracks = tr.update([brown, can], 1.5, vacated={"red_block"})
    ids = sorted(t.object_id for t in tracks)
    assert ids == ["red_block", "red_can"]
    block = next(t for t in tracks if t.object_id == "red_block")
    assert block.detection.colour == "red" and block.last_seen == 1.5
    assert block.detection.position[0] == pytest.approx(0.52)


def test_an_object_whose_colour_flickers_into_the_next_hue_stays_one_object():
    """A bright orange marker reads yellow in some frames (its lit ridge clips): where it
    lies, in its category, the neighbouring hue is the same marker, from its first frame on.
    A yellow marker beside it, or a yellow block where it lies, is another object."""
    tr = Tracker(memory_s=8.0)
    orange = det("marker", "orange", (0.52, -0.01, 0.009), (0.13, 0.018, 0.018))
    tr.update([orange], 1.0)
    lit = det("marker", "yellow", (0.521, -0.009, 0.009), (0.137, 0.018, 0.017))
    for k in range(2):
        tracks = tr.update([lit], 1.1 + 0.1 * k)
    assert [(t.object_id, t.hits, t.detection.colour) for t in tracks] == [
        ("orange_marker", 3, "orange")]
    beside = det("marker", "yellow", (0.52, 0.05, 0.009), (0.13, 0.018, 0.018))
    block = det("block", "yellow", (0.52, -0.01, 0.02), (0.04, 0.04, 0.04))
    tracks = tr.update([orange, beside, block], 1.4)
    assert sorted(t.object_id for t in tracks) == ["orange_marker", "yellow_block",
                                                   "yellow_marker"]
    purple = det("marker", "purple", (0.52, -0.01, 0.009), (0.13, 0.018, 0.018))
    assert "purple_marker" in [t.object_id for t in tr.update([purple], 1.5)]


def test_a_darker_object_elsewhere_or_beside_the_seen_one_is_a_new_object():
    tr = Tracker(memory_s=8.0)
    red = det("block", "red", (0.50, 0.10, 0.02), (0.04, 0.04, 0.04))
    for k in range(3):
        tr.update([red], 1.0 + 0.1 * k)
    # the red block still in view: a brown block beside it is another object
    brown = det("block", "brown", (0.55, 0.10, 0.02), (0.04, 0.04, 0.04))
    assert sorted(t.object_id for t in tr.update([red, brown], 1.4)) == [
        "brown_block", "red_block"]
    tr2 = Tracker(memory_s=8.0)
    for k in range(3):
        tr2.update([red], 1.0 + 0.1 * k)
    far = det("block", "brown", (0.30, -0.20, 0.02), (0.04, 0.04, 0.04))  # 0.3 m away
    assert "brown_block" in [t.object_id for t in tr2.update([far], 1.4)]
    # the gripper's black fingers beside a block it hides are no shade of it, nor is an
    # unknown brown blob (a piece of a wooden drawer) a red block
    tr4 = Tracker(memory_s=8.0)
    for k in range(3):
        tr4.update([red], 1.0 + 0.1 * k)
    fingers = det("unknown", "black", (0.52, 0.10, 0.05), (0.02, 0.08, 0.05))
    blob = det("unknown", "brown", (0.48, 0.10, 0.02), (0.05, 0.05, 0.02))
    black_block = det("block", "black", (0.50, 0.12, 0.02), (0.04, 0.04, 0.04))
    tracks = tr4.update([fingers, blob, black_block], 1.4)
    red_track = next(t for t in tracks if t.object_id == "red_block")
    assert red_track.last_seen == pytest.approx(1.2)  # not seen in this frame
    # a blue block is no shade of red, however close
    tr3 = Tracker(memory_s=8.0)
    for k in range(3):
        tr3.update([red], 1.0 + 0.1 * k)
    blue = det("block", "blue", (0.51, 0.10, 0.02), (0.04, 0.04, 0.04))
    assert "blue_block" in [t.object_id for t in tr3.update([blue], 1.4, {"red_block"})]


def _lifted(z):
    return det("block", "blue", (0.40, 0.01, z), (0.04, 0.04, 0.04))


def test_a_block_the_fingers_cut_in_two_as_it_is_lifted_keeps_its_name():
    """One frame shows the lifted block's lower piece where it stood and its upper piece in
    the fingers; the next ones only the block in the fingers: one block, not "blue or blue"."""
    tr = Tracker()
    for k in range(4):
        tr.update([_lifted(0.02)], 1.0 + 0.1 * k)
    tracks = tr.update([_lifted(0.017), _lifted(0.051)], 1.5)
    assert sorted(t.object_id for t in tracks) == ["blue_block", "blue_block_2"]
    tracks = tr.update([_lifted(0.07)], 1.6)
    assert [t.object_id for t in tracks] == ["blue_block"]
    assert tracks[0].detection.position[2] == pytest.approx(0.07)
    carried = det("block", "blue", (0.40, -0.14, 0.14), (0.04, 0.04, 0.04))
    assert [t.object_id for t in tr.update([carried], 1.8)] == ["blue_block"]


def test_two_blocks_of_one_colour_stacked_stay_two():
    tr = Tracker()
    for k in range(4):
        tr.update([_lifted(0.02)], 1.0 + 0.1 * k)
    tr.update([_lifted(0.02), _lifted(0.06)], 1.5)
    for k in range(3):  # both seen in the frames after
        tracks = tr.update([_lifted(0.02), _lifted(0.06)], 1.6 + 0.1 * k)
    by_id = {t.object_id: t.detection.position[2] for t in tracks}
    assert by_id == {"blue_block": pytest.approx(0.02), "blue_block_2": pytest.approx(0.06)}


@pytest.mark.parametrize(("named", "as_part", "reported"),
                         [("carton", False, "carton"), ("box", True, "unknown")])
def test_a_frame_that_names_it_outvotes_two_unknown_ones_unless_only_as_a_part(
        named, as_part, reported):
    """Two unknown frames (half a vote each) and one frame that names the object tie; a
    whole match wins the tie, a match only as a part of something bigger (half a vote: a
    block seen in part fits a box) does not."""
    from dataclasses import replace

    tr = Tracker()
    thing = det("unknown", "white", (0.30, 0.05, 0.075), (0.065, 0.065, 0.15))
    tr.update([thing], 1.0)
    tr.update([thing], 1.1)
    tracks = tr.update([replace(thing, shape=named, as_part=as_part)], 1.2)
    assert [t.detection.shape for t in tracks] == [reported]


def test_one_part_only_frame_against_one_unknown_frame_stays_unknown() -> None:
    """A held-out block named part of a box in its first frame and unknown in the next: a
    half vote each, and a part is not enough to name it; two part frames against two
    unknown ones (a whole frame's worth each) name it."""
    from dataclasses import replace

    tr = Tracker()
    thing = det("unknown", "blue", (0.45, 0.04, 0.02), (0.045, 0.04, 0.038))
    tracks = tr.update([replace(thing, shape="box", as_part=True)], 1.0)
    assert [t.detection.shape for t in tracks] == ["box"]
    tracks = tr.update([thing], 1.1)
    assert [t.detection.shape for t in tracks] == ["unknown"]
    tracks = tr.update([replace(thing, shape="box", as_part=True)], 1.2)
    tracks = tr.update([thing], 1.3)
    assert [t.detection.shape for t in tracks] == ["box"]


def test_a_remembered_ghost_at_a_seen_objects_place_goes_and_a_neighbour_stays():
    # an orange marker half in the arm's shadow read brown too, for three frames: a brown
    # marker track, established, at the orange one's place
    orange = det("marker", "orange", (0.552, -0.079, 0.008), (0.134, 0.017, 0.016))
    shaded = det("marker", "brown", (0.552, -0.079, 0.008), (0.133, 0.017, 0.016))
    beside = det("marker", "brown", (0.552, -0.03, 0.008), (0.133, 0.017, 0.016))
    tr = Tracker(memory_s=8.0)
    for k in range(3):
        tr.update([orange], 1.0 + 0.2 * k)
    for k in range(3):
        tr.update([orange, shaded], 2.0 + 0.2 * k)
    assert {t.object_id for t in tr.tracks} == {"orange_marker", "brown_marker"}
    ids = {t.object_id for t in tr.update([orange], 3.0)}
    assert ids == {"orange_marker"}  # the shadow is gone, and so is its ghost
    # a real brown marker 5 cm beside it, hidden for a while, is remembered
    tr = Tracker(memory_s=8.0)
    for k in range(3):
        tr.update([orange, beside], 1.0 + 0.2 * k)
    assert {t.object_id for t in tr.update([orange], 2.0)} == {"orange_marker", "brown_marker"}
    # so is one of its category stacked on it, or a small one of it in a big one
    top = det("block", "red", (0.5, 0.1, 0.06), (0.04, 0.04, 0.04))
    under = det("block", "blue", (0.5, 0.1, 0.02), (0.04, 0.04, 0.04))
    big = det("bowl", "blue", (0.4, 0.2, 0.03), (0.16, 0.16, 0.06))
    small = det("bowl", "red", (0.4, 0.2, 0.03), (0.09, 0.09, 0.04))
    tr = Tracker(memory_s=8.0)
    for k in range(3):
        tr.update([under, top, big, small], 1.0 + 0.2 * k)
    kept = {t.object_id for t in tr.update([top, big], 2.0)}
    assert kept == {"red_block", "blue_block", "blue_bowl", "red_bowl"}


def test_a_whole_seen_again_only_in_part_keeps_its_place():
    # scene 12852: a basket seen whole twice, then its far wall dropped out of a frame and
    # the rest read as part of a basket 8 cm off; the track stays where the whole was
    whole = det("basket", "brown", (0.391, 0.032, 0.043), (0.251, 0.18, 0.087))
    part = replace(det("basket", "brown", (0.336, 0.086, 0.042), (0.171, 0.128, 0.083)),
                   as_part=True)
    tr = Tracker(memory_s=8.0)
    tr.update([whole], 1.0)
    tr.update([whole], 1.2)
    (track,) = tr.update([part], 1.4)
    assert track.hits == 3 and track.detection.position == whole.position
    assert track.detection.size == whole.size
    # a part outside the whole's footprint is a move
    away = replace(part, position=(0.55, 0.2, 0.042))
    (track,) = tr.update([away], 1.6)
    assert track.detection.position == away.position
    # and a whole seen again whole where the part was moves too
    moved = replace(whole, position=(0.36, 0.06, 0.043))
    (track,) = tr.update([moved], 1.8)
    assert track.detection.position == moved.position

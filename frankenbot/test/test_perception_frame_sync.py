"""Which camera frames perception processes (perception/frame_sync.py), without ROS."""

from __future__ import annotations

from frankenbot.perception import frame_sync as fs


def _sync(**kw) -> fs.FrameSync[str]:
    return fs.FrameSync(**{"rate": 10.0, "sync_tolerance": 0.02, "max_latency": 0.5, **kw})


def test_depth_is_paired_with_the_colour_frame_closest_in_stamp() -> None:
    sync = _sync()
    for t in (1.0, 1.1, 1.2):
        sync.colour(t, f"rgb{t}")
    sync.depth(1.105, "depth", arrival=10.0)
    pair = sync.take(now=10.1)
    assert pair is not None and pair.colour == "rgb1.1" and pair.stamp == 1.105
    assert sync.take(now=10.1) is None  # taken once


def test_a_depth_frame_waits_for_its_colour_and_a_late_one_is_dropped() -> None:
    sync = _sync()
    sync.depth(2.0, "d", arrival=5.0)
    assert sync.take(now=5.0) is None  # colour not in yet: not consumed
    sync.colour(2.01, "c")
    assert sync.take(now=5.1) is not None
    sync.depth(2.1, "d2", arrival=5.0)
    sync.colour(2.1, "c2")
    assert sync.take(now=6.0) is None  # waited past max_latency
    counts = sync.take_counts()
    assert counts["late"] == 1 and counts["depth"] == 2 and counts["colour"] == 2
    assert sync.take_counts()["late"] == 0


def test_a_depth_frame_replaced_before_it_was_taken_counts_as_unpaired() -> None:
    sync = _sync()
    sync.depth(1.0, "a", arrival=0.0)
    sync.depth(1.1, "b", arrival=0.0)
    assert sync.take_counts()["unpaired"] == 1


def test_the_rate_cap_skips_a_faster_camera_and_keeps_a_jittery_one() -> None:
    sync = _sync(rate=10.0)
    sync.processed(1.0)
    assert sync.admit(1.033) == fs.TOO_SOON
    assert sync.admit(1.08) == fs.PROCESS
    assert sync.take_counts()["too_soon"] == 1


def test_frames_of_the_scene_before_a_reset_are_skipped() -> None:
    sync = _sync(rate=0.0)
    sync.processed(50.0)
    sync.reset(after=55.0)
    assert sync.admit(54.0) == fs.OLD_SCENE  # taken before the reset
    assert sync.admit(55.5) == fs.PROCESS  # the new scene's first frame
    sync.reset(after=55.0)
    assert sync.admit(1.0) == fs.PROCESS  # far older: the camera's clock restarted

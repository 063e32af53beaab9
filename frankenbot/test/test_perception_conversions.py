"""Message <-> perception type conversions (no DDS needed, real message classes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.errors import PerceptionError
from frankenbot.state import Scene, SceneObject

pytest.importorskip("sensor_msgs.msg")
pytest.importorskip("frankenbot_interfaces.msg")

from frankenbot.nodes import scene_msgs as rc


def _scene() -> Scene:
    return Scene.of([
        SceneObject("red_block", "red block", "block", "red", (0.4, -0.1, 0.02),
                    (0.04, 0.04, 0.04), yaw=0.7, confidence=0.9, last_seen=12.25),
        SceneObject("drawer", "drawer", "drawer", "brown", (0.72, 0.38, 0.06), (0.2, 0.26, 0.12),
                    is_fixture=True, last_seen=12.25)], stamp=12.25, stale=True)


def test_scene_round_trips_through_the_message():
    msg = rc.scene_to_msg(_scene(), latency_s=0.04)
    assert msg.header.frame_id == "base_link" and msg.stale and abs(msg.latency - 0.04) < 1e-6
    back = rc.scene_from_msg(msg)
    assert back.stamp == 12.25 and back.stale and back.ids() == ("red_block", "drawer")
    red = back.get("red_block")
    assert red.position == (0.4, -0.1, 0.02) and math.isclose(red.yaw, 0.7, abs_tol=1e-9)
    assert math.isclose(red.confidence, 0.9, abs_tol=1e-6) and red.last_seen == 12.25
    assert back.get("drawer").is_fixture


def test_markers_have_a_box_and_a_label_per_object():
    markers = rc.scene_markers(_scene())
    assert len(markers.markers) == 1 + 2 * 2  # delete-all + (cube, text) per object
    texts = [m.text for m in markers.markers if m.text]
    assert texts == ["red_block", "drawer"]


@pytest.mark.parametrize("encoding", ["rgb8", "bgr8", "rgba8"])
def test_colour_images_decode_to_rgb_with_row_padding(encoding):
    from sensor_msgs.msg import Image

    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    chans = {"rgb8": rgb, "bgr8": rgb[..., ::-1],
             "rgba8": np.concatenate([rgb, np.full((4, 5, 1), 255, np.uint8)], axis=2)}[encoding]
    padded = np.zeros((4, chans.shape[1] * chans.shape[2] + 3), np.uint8)
    padded[:, :chans.shape[1] * chans.shape[2]] = chans.reshape(4, -1)
    msg = Image(height=4, width=5, encoding=encoding, step=padded.shape[1],
                data=padded.tobytes())
    assert np.array_equal(rc.rgb_from_image_msg(msg), rgb)


def test_depth_images_decode_millimetres_and_metres():
    from sensor_msgs.msg import Image

    mm = np.array([[0, 500], [1200, 65535]], dtype=np.uint16)
    msg = Image(height=2, width=2, encoding="16UC1", step=4, data=mm.tobytes())
    assert np.array_equal(rc.depth_from_image_msg(msg), mm)
    m = np.array([[np.nan, 0.5], [1.2, np.inf]], dtype=np.float32)
    msg = Image(height=2, width=2, encoding="32FC1", step=8, data=m.tobytes())
    out = rc.depth_from_image_msg(msg)
    assert out.dtype == np.float32 and out[0, 1] == np.float32(0.5) and np.isnan(out[0, 0])


def test_bad_image_messages_raise_clear_errors():
    from sensor_msgs.msg import CameraInfo, Image

    with pytest.raises(PerceptionError, match="encoding"):
        rc.rgb_from_image_msg(Image(height=1, width=1, encoding="yuv422", step=2, data=b"ab"))
    with pytest.raises(PerceptionError, match="bytes"):
        rc.depth_from_image_msg(Image(height=2, width=2, encoding="16UC1", step=4, data=b"ab"))
    with pytest.raises(PerceptionError, match="K"):
        rc.intrinsics_from_camera_info(CameraInfo(width=640, height=480))
    info = CameraInfo(width=640, height=480, k=[600.0, 0, 320, 0, 600.0, 240, 0, 0, 1])
    assert rc.intrinsics_from_camera_info(info).fx == 600.0


def test_annotated_image_message_is_rgb8():
    img = np.zeros((3, 4, 3), np.uint8)
    msg = rc.image_msg_from_rgb(img, 1.5, "cam")
    assert (msg.encoding, msg.step, msg.header.frame_id) == ("rgb8", 12, "cam")
    assert np.array_equal(rc.rgb_from_image_msg(msg), img)


def test_images_decode_as_read_only_views_of_the_message_buffer():
    """rgb8 and 16UC1 without padding: no copy (issue 16), and nothing can write the frame."""
    import array

    from sensor_msgs.msg import Image

    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    msg = Image(height=4, width=5, encoding="rgb8", step=15)
    msg.data = array.array("B", rgb.tobytes())
    out = rc.rgb_from_image_msg(msg)
    assert np.array_equal(out, rgb) and not out.flags.writeable
    assert np.shares_memory(out, np.frombuffer(msg.data, np.uint8))
    depth = np.arange(20, dtype=np.uint16).reshape(4, 5) * 7
    dmsg = Image(height=4, width=5, encoding="16UC1", step=10)
    dmsg.data = array.array("B", depth.astype("<u2").tobytes())
    dout = rc.depth_from_image_msg(dmsg)
    assert np.array_equal(dout, depth) and dout.dtype == np.uint16
    assert np.shares_memory(dout, np.frombuffer(dmsg.data, np.uint8))


def test_frames_closer_than_the_rate_allows_are_skipped():
    from frankenbot.perception.frame_sync import too_soon

    assert not too_soon(1.0, None, 10.0)  # the first frame
    assert not too_soon(1.1, 1.0, 10.0) and not too_soon(1.08, 1.0, 10.0)  # 10 Hz, jitter
    assert too_soon(1.033, 1.0, 10.0) and too_soon(1.066, 1.0, 10.0)  # 30 Hz camera
    assert not too_soon(1.1, 1.0, 0.0)  # no cap
    assert not too_soon(0.5, 1.0, 10.0)  # older: the clock check decides, not the cap

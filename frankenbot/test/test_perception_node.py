"""The perception node over real DDS: a separate process fed camera topics by this test."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
import yaml

from frankenbot.eval import synthetic_frames as syn

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")


def camera_pose_entries(matrix: np.ndarray) -> dict:
    """camera.yaml's pose keys for a 4x4 optical-frame pose (translation + quaternion xyzw)."""
    from scipy.spatial.transform import Rotation

    m = np.asarray(matrix, dtype=float)
    return {"translation": m[:3, 3].tolist(),
            "quaternion": Rotation.from_matrix(m[:3, :3]).as_quat().tolist()}


def _image(arr: np.ndarray, encoding: str, stamp, frame: str = "camera_color_optical_frame"):
    from sensor_msgs.msg import Image

    msg = Image()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    msg.height, msg.width = arr.shape[:2]
    msg.encoding = encoding
    msg.step = arr.strides[0]
    msg.data = np.ascontiguousarray(arr).tobytes()
    return msg


def _info(camera, stamp):
    from sensor_msgs.msg import CameraInfo

    k = camera.intrinsics
    msg = CameraInfo()
    msg.header.stamp = stamp
    msg.header.frame_id = "camera_color_optical_frame"
    msg.width, msg.height = k.width, k.height
    msg.k = [k.fx, 0.0, k.cx, 0.0, k.fy, k.cy, 0.0, 0.0, 1.0]
    return msg


@pytest.fixture
def camera():
    return syn.default_camera(320, 240)


@pytest.fixture
def node_proc(tmp_path, camera, spawn_process, python_exe):
    cam_file = tmp_path / "camera.yaml"
    k = camera.intrinsics
    cam_file.write_text(yaml.safe_dump({
        "intrinsics": {"fx": k.fx, "fy": k.fy, "cx": k.cx, "cy": k.cy, "width": k.width,
                       "height": k.height},
        **camera_pose_entries(camera.matrix)}))
    fixtures = tmp_path / "fixtures.yaml"
    fixtures.write_text(yaml.safe_dump({"fixtures": [
        {"id": "zone", "shape": "zone", "colour": "cyan", "position": [0.4, -0.45, 0.0],
         "size": [0.14, 0.14, 0.001]}]}))
    return spawn_process([python_exe, "-m", "frankenbot.nodes.perception_node", "--ros-args",
                          "-p", f"camera_config:={cam_file}", "-p", f"fixtures_path:={fixtures}",
                          "-p", "rate:=20.0", "-p", "stale_timeout:=0.6", "-p", "stride:=1"])


class _Harness:
    def __init__(self, context):
        from sensor_msgs.msg import CameraInfo, Image

        from frankenbot_interfaces.msg import SceneObjects

        self.node = rclpy.create_node("perception_test_feeder", context=context)
        qos = rclpy.qos.qos_profile_sensor_data
        self.rgb_pub = self.node.create_publisher(Image, "/camera/camera/color/image_raw", qos)
        self.depth_pub = self.node.create_publisher(
            Image, "/camera/camera/aligned_depth_to_color/image_raw", qos)
        self.info_pub = self.node.create_publisher(CameraInfo,
                                                   "/camera/camera/color/camera_info", qos)
        self.scenes: list = []
        self.node.create_subscription(SceneObjects, "/frankenbot/scene", self.scenes.append, 10)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)

    def feed(self, camera, rgb, depth, depth_encoding="16UC1", info=True):
        stamp = self.node.get_clock().now().to_msg()
        if info:
            self.info_pub.publish(_info(camera, stamp))
        self.rgb_pub.publish(_image(rgb, "rgb8", stamp))
        self.depth_pub.publish(_image(depth, depth_encoding, stamp))

    def run_until(self, predicate, timeout, feed=None):
        deadline = time.monotonic() + timeout
        next_feed = 0.0
        while time.monotonic() < deadline:
            if feed is not None and time.monotonic() >= next_feed:
                feed()
                next_feed = time.monotonic() + 0.1
            self.executor.spin_once(timeout_sec=0.02)
            if predicate():
                return True
        return False

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()


def _scene_ids(msg) -> set[str]:
    return {o.id for o in msg.objects}


def test_node_publishes_tracked_scene_then_goes_stale_when_frames_stop(ros_context, node_proc,
                                                                          camera):
    boxes = [syn.Box((0.45, 0.10, 0.02), (0.04, 0.04, 0.04), (217, 26, 26), 0.3),
             syn.Box((0.55, -0.05, 0.02), (0.04, 0.04, 0.04), (26, 64, 230))]
    rgb, depth = syn.render(camera, boxes)
    h = _Harness(ros_context)
    try:
        ok = h.run_until(lambda: any({"red_block", "blue_block"} <= _scene_ids(m)
                                     and not m.stale for m in h.scenes), 30.0,
                         feed=lambda: h.feed(camera, rgb, depth))
        assert ok, f"no fresh scene with both blocks; got {[_scene_ids(m) for m in h.scenes]}"
        msg = next(m for m in reversed(h.scenes) if not m.stale)
        red = next(o for o in msg.objects if o.id == "red_block")
        assert abs(red.pose.position.x - 0.45) < 0.006 and abs(red.pose.position.y - 0.10) < 0.006
        assert msg.header.frame_id == "base_link" and msg.latency >= 0.0
        assert any(o.id == "zone" and o.is_fixture for o in msg.objects)
        # Frames stop: the node keeps publishing, now stale, with the last objects.
        h.scenes.clear()
        assert h.run_until(lambda: any(m.stale for m in h.scenes), 5.0)
        assert "red_block" in _scene_ids(next(m for m in h.scenes if m.stale))
        assert node_proc.poll() is None
    finally:
        h.close()


def _resolve(h, u, v, timeout=10.0):
    from frankenbot_interfaces.srv import ResolvePixel

    client = h.node.create_client(ResolvePixel, "/frankenbot_perception/resolve_pixel")
    assert h.run_until(lambda: client.service_is_ready(), 20.0), "no resolve_pixel service"
    future = client.call_async(ResolvePixel.Request(u=float(u), v=float(v)))
    assert h.run_until(future.done, timeout), "resolve_pixel did not answer"
    h.node.destroy_client(client)
    return future.result()


def test_node_resolves_pixels_with_the_depth_it_processed(ros_context, node_proc, camera):
    """~/resolve_pixel (the executor's pixel primitives over ROS): a pixel on a block's top and
    one on the table come back as the base-frame points they show; a pixel outside the image
    or before any frame is refused with the reason."""
    top = (0.45, 0.10, 0.04)
    rgb, depth = syn.render(camera, [syn.Box((0.45, 0.10, 0.02), (0.04, 0.04, 0.04),
                                             (217, 26, 26))])
    h = _Harness(ros_context)
    try:
        early = _resolve(h, 160, 120)
        assert not early.ok and "no depth frame" in early.message
        assert h.run_until(lambda: any(not m.stale and "red_block" in _scene_ids(m)
                                       for m in h.scenes), 30.0,
                           feed=lambda: h.feed(camera, rgb, depth))
        for point in (top, (0.55, -0.08, 0.0)):
            u, v = camera.project(np.asarray([point]))[0]
            res = _resolve(h, u, v)
            assert res.ok, res.message
            got = (res.target.x, res.target.y, res.target.z)
            assert np.allclose(got, point, atol=0.006), (point, got)
            assert (res.width, res.height) == (camera.intrinsics.width, camera.intrinsics.height)
            assert res.depth > 0.0 and res.frame_age >= 0.0
        outside = _resolve(h, camera.intrinsics.width + 5, 10)
        assert not outside.ok and "outside" in outside.message
        assert node_proc.poll() is None
    finally:
        h.close()


def test_node_survives_bad_frames_and_accepts_float_metres(ros_context, node_proc, camera):
    rgb, depth = syn.render(camera, [syn.Box((0.5, 0.0, 0.02), (0.04, 0.04, 0.04),
                                             (26, 64, 230))])
    h = _Harness(ros_context)
    try:
        # The node is up and, with no frames yet, says its scene is stale.
        assert h.run_until(lambda: bool(h.scenes), 30.0)
        assert all(m.stale for m in h.scenes)
        # No camera_info, then size mismatch, then NaN depth: never a fresh scene, never a crash.
        h.run_until(lambda: False, 1.5, feed=lambda: h.feed(camera, rgb, depth, info=False))
        h.run_until(lambda: False, 1.0, feed=lambda: h.feed(camera, rgb[:100], depth[:100]))
        nan = np.full(depth.shape, np.nan, dtype=np.float32)
        h.run_until(lambda: False, 1.0, feed=lambda: h.feed(camera, rgb, nan, "32FC1"))
        assert node_proc.poll() is None
        assert h.scenes and all(m.stale for m in h.scenes)
        metres = np.where(depth > 0, depth / 1000.0, np.nan).astype(np.float32)
        assert h.run_until(lambda: any(not m.stale and "blue_block" in _scene_ids(m)
                                       for m in h.scenes), 20.0,
                           feed=lambda: h.feed(camera, rgb, metres, "32FC1"))
    finally:
        h.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.slow
def test_node_against_sim_node_publishes_the_sims_objects(ros_context, spawn_process,
                                                          python_exe, package_root):
    """Two real processes (sim node, perception node) over DDS; truth from an identical world."""
    pytest.importorskip("frankenbot.nodes.sim_node")
    from frankenbot.eval.perception_eval import match, truth_of_world
    from frankenbot.nodes.scene_msgs import scene_from_msg
    from frankenbot.sim.world import SimWorld

    task, seed = "sort_by_colour", 4
    spawn_process([python_exe, "-m", "frankenbot.nodes.sim_node", "--ros-args",
                   "-p", f"task:={task}", "-p", f"seed:={seed}", "-p", "camera_rate:=5.0"])
    spawn_process([python_exe, "-m", "frankenbot.nodes.perception_node", "--ros-args",
                   "--params-file", str(package_root / "config" / "sim.yaml"),
                   "-p", "rate:=5.0"])
    with SimWorld(seed=seed, task=task) as world:
        truth = truth_of_world(world)
    h = _Harness(ros_context)
    try:
        def has_all() -> bool:
            fresh = [m for m in h.scenes if not m.stale]
            return bool(fresh) and len(match([o for o in scene_from_msg(fresh[-1]).objects
                                              if not o.is_fixture], truth, 0.02)) == len(truth)

        assert h.run_until(has_all, 150.0), (
            f"truth {[t.name for t in truth]}; last scene "
            f"{[(o.id, o.stale) for o in (h.scenes[-1].objects if h.scenes else [])]}")
        scene = scene_from_msg([m for m in h.scenes if not m.stale][-1])
        dets = [o for o in scene.objects if not o.is_fixture]
        assert len(dets) == len(truth)  # nothing extra (the arm is filtered out)
        for i, j in match(dets, truth, 0.02):
            assert (dets[i].colour, dets[i].shape) == (truth[j].colour, truth[j].shape)
        assert scene.get("drawer") is not None and scene.get("drawer").is_fixture
    finally:
        h.close()


@pytest.mark.slow
def test_node_takes_the_sims_fixture_map_and_measures_the_fixtures_state(
        ros_context, spawn_process, python_exe, package_root):
    """The sim publishes its scene's fixture map (a cabinet, latched JSON); the perception
    node (started with the one-drawer map of scene_fixtures.yaml) replaces its map with it and
    reports the cabinet's drawers with their openings as the camera shows them."""
    pytest.importorskip("frankenbot.nodes.sim_node")
    from frankenbot.nodes.scene_msgs import scene_from_msg
    from frankenbot.sim.world import SimWorld

    task, seed = "close_cabinet_drawer", 5
    spawn_process([python_exe, "-m", "frankenbot.nodes.sim_node", "--ros-args",
                   "-p", f"task:={task}", "-p", f"seed:={seed}", "-p", "camera_rate:=5.0"])
    spawn_process([python_exe, "-m", "frankenbot.nodes.perception_node", "--ros-args",
                   "--params-file", str(package_root / "config" / "sim.yaml"),
                   "-p", "rate:=5.0"])
    with SimWorld(seed=seed, task=task) as world:
        states = world.fixture_states()
    h = _Harness(ros_context)
    try:
        def measured() -> bool:
            fresh = [m for m in h.scenes if not m.stale]
            if not fresh:
                return False
            scene = scene_from_msg(fresh[-1])
            return all(scene.get(p) is not None and scene.get(p).opening is not None
                       for p in states)

        assert h.run_until(measured, 150.0), [o.id for o in (h.scenes[-1].objects
                                                              if h.scenes else [])]
        scene = scene_from_msg([m for m in h.scenes if not m.stale][-1])
        for pid, value in states.items():
            assert abs(scene.get(pid).opening - value) < 0.02, (pid, value)
        assert scene.get("cabinet") is not None and scene.get("drawer") is None
        assert all(o.shape not in ("drawer", "handle") for o in scene.objects
                   if not o.is_fixture)
    finally:
        h.close()


def test_node_with_missing_detector_checkpoint_exits_with_a_clear_error(python_exe, tmp_path):
    import subprocess

    proc = subprocess.run([python_exe, "-m", "frankenbot.nodes.perception_node", "--ros-args",
                           "-p", "detector_backend:=owlv2", "-p",
                           f"detector_model:={tmp_path / 'none'}"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "no OWLv2 checkpoint" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr

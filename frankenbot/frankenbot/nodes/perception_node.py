"""``frankenbot_perception``: RealSense (or sim, or Gazebo) RGB-D -> /frankenbot/scene.

Subscribes (sensor QoS: best effort; the images keep only the newest message):
  /camera/camera/color/image_raw (sensor_msgs/Image, rgb8/bgr8)
  /camera/camera/aligned_depth_to_color/image_raw (sensor_msgs/Image, 16UC1 mm or 32FC1 m)
  /camera/camera/color/camera_info (sensor_msgs/CameraInfo)
  /joint_states (sensor_msgs/JointState; optional, feeds the robot self filter)
  ``fixture_map_topic`` (std_msgs/String, latched; the sim's /frankenbot_sim/fixture_map): the
      scene's fixture map as JSON (``frankenbot.fixture_map``); each one replaces the map
      (until the first, or without the parameter, the map is ``fixtures_path``)
Publishes:
  /frankenbot/scene (frankenbot_interfaces/msg/SceneObjects), one per processed frame; ``stale``
      is true (checked at ``rate``) when no usable frame arrived within ``stale_timeout`` (the
      executor treats that as an anomaly)
  /frankenbot/scene_markers (visualization_msgs/MarkerArray)
  /frankenbot/annotated_image (sensor_msgs/Image rgb8, set-of-mark image)
Services
  ~/reset (std_srvs/Trigger): forget every tracked object (the table was rearranged by hand);
      frames stamped up to the latest received one are not used afterwards
  ~/resolve_pixel (frankenbot_interfaces/srv/ResolvePixel): the base-frame point a pixel of
      the set-of-mark image sees, back-projected with the processed depth frames and the
      node's camera model (``perception.pixels.DepthPixelResolver``); the executor's pixel
      primitives (``place_at_pixel`` ...) ask it, so one node owns the camera
Resets also come from ``reset_topic`` (std_msgs/Header; the sim publishes one when it loads a
  new scene): tracks are forgotten and frames stamped before header.stamp are skipped, so an
  object of a vanished scene never lends its id to a new object nearby.
Parameters: ``perception.config.PerceptionNodeSettings`` (rate, max_latency, sync_tolerance,
  camera_config, fixtures_path, fixture_map_topic, catalogue_path, detector_*, base_frame,
  publish_annotated, annotated_rate, reset_topic) and every ``PerceptionConfig`` setting under
  its own name (stride, table_height, table_rgb, min_height, max_height, workspace_min,
  workspace_max, stale_timeout, ...), each declared with type, unit and range; the live ones
  (max_latency, sync_tolerance, publish_annotated, annotated_rate, min_height, max_height,
  min_points, min_points_floor, stale_timeout) take effect at the next frame, the rest are
  refused with the reason (restart the node).

Subscription callbacks only hand the messages to ``perception.frame_sync.FrameSync`` (image
queues of depth 1: a frame that waited is never worth more than the next one) and wake the
processing callback through a guard condition, so a frame is processed as soon as its colour
and depth are both in, not at the next tick of a timer (a 10 Hz timer on a 10 Hz camera adds up
to 100 ms and drops frames when the two drift). Processing runs in its own callback group, so a
slow frame never blocks message intake; when it falls behind, only the newest pair is taken.
Which pairs are processed (stamp pairing, the ``rate`` cap, late frames, resets, a camera clock
that jumps back) is FrameSync's decision, ROS-free and tested on its own; the ``rate`` timer
checks for staleness.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import replace
from typing import Any

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_msgs.msg import Header, String
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from frankenbot import resources
from frankenbot.errors import FrankenbotError, PerceptionError
from frankenbot.fixture_map import FixtureMap
from frankenbot.nodes.parameters import NodeSettings
from frankenbot.nodes.robot_msgs import joint_state_problem
from frankenbot.nodes.scene_msgs import (
    depth_from_image_msg,
    fixture_map_from_msg,
    image_msg_from_rgb,
    intrinsics_from_camera_info,
    rgb_from_image_msg,
    scene_markers,
    scene_to_msg,
    time_from_msg,
    time_to_msg,
)
from frankenbot.nodes.spin import SPIN_ENV, run_node
from frankenbot.perception.annotate import annotate
from frankenbot.perception.camera import CameraModel, load_camera
from frankenbot.perception.catalogue import ObjectCatalogue
from frankenbot.perception.config import DEFAULT_QUERIES, PerceptionNodeSettings
from frankenbot.perception.frame_sync import (
    CLOCK_RESTARTED,
    OLD_SCENE,
    REPEATED,
    TOO_SOON,
    FrameSync,
)
from frankenbot.perception.pipeline import PerceptionPipeline
from frankenbot.perception.pixels import DepthPixelResolver
from frankenbot.perception.self_filter import JointHistory
from frankenbot.state import Scene
from frankenbot.transforms import QuatXYZW
from frankenbot_interfaces.msg import SceneObjects
from frankenbot_interfaces.srv import ResolvePixel

UR_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
             "wrist_2_joint", "wrist_3_joint")
COLOR_TOPIC = "camera/camera/color/image_raw"
DEPTH_TOPIC = "camera/camera/aligned_depth_to_color/image_raw"
INFO_TOPIC = "camera/camera/color/camera_info"
STATS_PERIOD_S = 10.0  # s between the intake/processing log lines
IMAGE_QUEUE = 1  # image subscriptions keep only the newest message (see the module docstring)
FRAME_POLL_S = 0.01  # s: the pair check's period where no guard condition can wake it
MAX_IMAGE_PIXELS = 4096 * 4096  # larger frames are not from any supported camera


def _calibrated_table_rgb(path: Any) -> list[float] | None:
    """``table_rgb`` written by ``frankenbot calibrate camera`` into camera.yaml, if any."""
    import yaml

    data = yaml.safe_load(open(path).read()) or {}
    cam = data.get("camera", data) if isinstance(data, dict) else {}
    rgb = cam.get("table_rgb") if isinstance(cam, dict) else None
    return [float(v) for v in rgb] if rgb and len(rgb) == 3 else None


def check_frame(rgb: Any, depth: Any, info: CameraInfo) -> None:
    """Raise PerceptionError when a decoded colour/depth pair and its camera_info disagree.

    The conversions check each image on its own; this checks them together: same size, the
    size camera_info describes, not absurdly large, and some depth at all (an all-zero depth
    image is what a RealSense sends with its laser off or its view blocked).
    """
    import numpy as np

    h, w = rgb.shape[:2]
    if h * w > MAX_IMAGE_PIXELS:
        raise PerceptionError(f"colour image {w}x{h} is larger than any supported camera's")
    if depth.shape[:2] != (h, w):
        raise PerceptionError(f"colour {w}x{h} and depth {depth.shape[1]}x{depth.shape[0]} "
                              "differ in size (depth must be aligned to colour)")
    if (int(info.width), int(info.height)) != (w, h):
        raise PerceptionError(f"camera_info says {info.width}x{info.height}, images are "
                              f"{w}x{h}")
    valid = np.isfinite(depth) & (depth > 0) if depth.dtype.kind == "f" else depth > 0
    if not valid.any():
        raise PerceptionError("depth image has no valid pixel (all zero or NaN)")


class PerceptionNode(Node):
    """Thin ROS adapter around ``PerceptionPipeline`` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("frankenbot_perception")
        self.settings = NodeSettings(self, PerceptionNodeSettings, on_change=self._settings_changed)
        cfg = self.settings.value
        self.rate = cfg.rate
        self.backend = cfg.detector_backend
        self.base_frame = cfg.base_frame
        camera_config, fixtures_path = cfg.camera_config, cfg.fixtures_path
        self._last_annotated = 0.0
        pipeline = cfg.pipeline
        if not all(v > 0 for v in pipeline.table_rgb) and camera_config:
            table_rgb = _calibrated_table_rgb(resources.config_path(camera_config))
            if table_rgb is not None:
                pipeline = replace(pipeline, table_rgb=tuple(table_rgb))
        self.config = pipeline
        self._detector = None
        self._queries = tuple(q.strip() for q in cfg.detector_queries.split(",") if q.strip())
        if self.backend == "owlv2":
            from frankenbot.perception.detector import Owlv2Detector

            self._detector = Owlv2Detector.from_pretrained(cfg.detector_model,
                                                           threshold=cfg.detector_threshold)
        self._extrinsics = (load_camera(resources.config_path(camera_config)).matrix
                            if camera_config else None)
        self._fixtures = (FixtureMap.load(resources.config_path(fixtures_path))
                          if fixtures_path else FixtureMap())
        self._catalogue = (ObjectCatalogue.load(resources.config_path(cfg.catalogue_path))
                           if cfg.catalogue_path else None)
        self._pipeline: PerceptionPipeline | None = None
        self._tf_buffer: Any = None
        if self._extrinsics is None:
            self._init_tf()

        self._msgs_lock = threading.Lock()  # guards the latest messages below
        # which frames to process: colour/depth pairing, rate cap, late frames, resets and
        # camera clock jumps (perception/frame_sync.py)
        self._sync: FrameSync[Image] = FrameSync(rate=cfg.rate,
                                                 sync_tolerance=cfg.sync_tolerance,
                                                 max_latency=cfg.max_latency)
        self._info_msg: CameraInfo | None = None
        self._joint_history = JointHistory()  # the newest sample is the arm's current state
        # depth of the processed frames for ~/resolve_pixel (made with the first camera model)
        self._pixels: DepthPixelResolver | None = None
        self._last_ok = 0.0  # monotonic time of the last successfully processed frame
        self._last_scene = Scene(stale=True)
        self.frames_processed = 0
        self.frames_rejected = 0
        self.resets = 0
        self._stats_at = time.monotonic()
        self._stats_busy = 0.0  # s spent processing since the last stats line
        self._processed_mark = 0

        intake = MutuallyExclusiveCallbackGroup()
        work = MutuallyExclusiveCallbackGroup()
        # Best effort (matches any camera driver's publisher; a lost frame is skipped, never
        # waited for) and only the newest. A best-effort reader of a 1.5 MB frame loses it when
        # its fragments do not fit the publisher's shared-memory segment: FrankenBot's Fast DDS
        # profile (config/fastdds_liveliness.xml) makes that segment large enough.
        newest = QoSProfile(depth=IMAGE_QUEUE, reliability=qos_profile_sensor_data.reliability,
                            history=qos_profile_sensor_data.history)
        self.create_subscription(Image, COLOR_TOPIC, self.color_callback, newest,
                                 callback_group=intake)
        self.create_subscription(Image, DEPTH_TOPIC, self.depth_callback, newest,
                                 callback_group=intake)
        self.create_subscription(CameraInfo, INFO_TOPIC, self.info_callback,
                                 qos_profile_sensor_data, callback_group=intake)
        self.create_subscription(JointState, "joint_states", self.joint_callback, 10,
                                 callback_group=intake)
        self.scene_pub = self.create_publisher(SceneObjects, "frankenbot/scene", 10)
        self.marker_pub = self.create_publisher(MarkerArray, "frankenbot/scene_markers", 10)
        self.image_pub = self.create_publisher(Image, "frankenbot/annotated_image", 2)
        # a new colour or depth image wakes frame_callback at once (in the work group)
        self._frame_ready: Any = None
        if os.environ.get(SPIN_ENV) == "events":
            # rclpy 7.1.6's EventsExecutor has no guard conditions: poll for a pair at 100 Hz
            self.create_timer(FRAME_POLL_S, self.frame_callback, callback_group=work)
        else:
            self._frame_ready = self.create_guard_condition(self.frame_callback,
                                                            callback_group=work)
        self.create_timer(1.0 / max(self.rate, 0.1), self.process_callback, callback_group=work)
        # Resets share the processing group: none can land halfway through a frame.
        self.create_service(Trigger, "~/reset", self.reset_service_callback, callback_group=work)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        if cfg.reset_topic:
            self.create_subscription(Header, cfg.reset_topic, self.reset_topic_callback, latched,
                                     callback_group=work)
        if cfg.fixture_map_topic:  # a map that changes per scene (the sim); the same group
            self.create_subscription(String, cfg.fixture_map_topic, self.fixture_map_callback,
                                     latched, callback_group=work)
        # its own group: a pixel is answered while a frame is being processed
        self.create_service(ResolvePixel, "~/resolve_pixel", self.resolve_pixel_callback,
                            callback_group=MutuallyExclusiveCallbackGroup())
        self.get_logger().info(f"perception up: backend {self.backend}, {self.rate} Hz, "
                               f"camera pose from {camera_config or 'TF'}")

    def _settings_changed(self, cfg: PerceptionNodeSettings) -> None:
        """A live parameter changed (``ros2 param set``): the next frame uses it."""
        self._sync.max_latency = cfg.max_latency
        self._sync.sync_tolerance = cfg.sync_tolerance
        self.config = replace(cfg.pipeline, table_rgb=self.config.table_rgb)
        if self._pipeline is not None:
            self._pipeline.config = self.config

    def _init_tf(self) -> None:
        try:  # tf2_ros exists on a real ROS install only
            from tf2_ros import Buffer, TransformListener
        except ImportError:
            self.get_logger().warn("no camera_config and no tf2_ros: cannot place the camera; "
                                   "the scene stays stale")
            return
        self._tf_buffer = Buffer()
        self._tf_listener = TransformListener(self._tf_buffer, self)

    # ------------------------------------------------------------------ intake (never blocks)
    def color_callback(self, msg: Image) -> None:
        self._sync.colour(time_from_msg(msg.header.stamp), msg)
        if self._frame_ready is not None:
            self._frame_ready.trigger()  # its depth may have come first

    def depth_callback(self, msg: Image) -> None:
        self._sync.depth(time_from_msg(msg.header.stamp), msg, time.monotonic())
        if self._frame_ready is not None:
            self._frame_ready.trigger()

    def info_callback(self, msg: CameraInfo) -> None:
        with self._msgs_lock:
            self._info_msg = msg

    def joint_callback(self, msg: JointState) -> None:
        problem = joint_state_problem(msg, UR_JOINTS)
        if problem:  # the self filter then works without the arm (never with a wrong one)
            self.get_logger().warning(f"/joint_states message rejected ({problem}); the self "
                                      "filter ignores the arm until a valid one",
                                      throttle_duration_sec=2.0)
            with self._msgs_lock:
                self._joint_history.clear()
            return
        pos = dict(zip(msg.name, msg.position, strict=True))
        joints = tuple(float(pos[j]) for j in UR_JOINTS)
        with self._msgs_lock:
            self._joint_history.add(time_from_msg(msg.header.stamp), joints)

    # ------------------------------------------------------------------ processing
    def _camera(self, info: CameraInfo) -> CameraModel | None:
        intr = intrinsics_from_camera_info(info)
        pipe = self._pipeline
        if pipe is not None and pipe.camera.intrinsics == intr:
            return pipe.camera
        extr = self._extrinsics
        if extr is None:
            extr = self._lookup_tf(info.header.frame_id)
            if extr is None:
                return None
        return CameraModel.from_matrix(intr, extr)

    def _lookup_tf(self, optical_frame: str) -> Any:
        if self._tf_buffer is None:
            return None
        import numpy as np
        from rclpy.time import Time

        try:
            t = self._tf_buffer.lookup_transform(self.base_frame, optical_frame, Time())
        except Exception as e:  # tf2 raises several unrelated exception types
            self.get_logger().warn(f"no TF {self.base_frame} <- {optical_frame}: {e}",
                                   throttle_duration_sec=5.0)
            return None
        q, p = t.transform.rotation, t.transform.translation
        m = np.eye(4)
        m[:3, :3] = QuatXYZW(q.x, q.y, q.z, q.w).matrix()
        m[:3, 3] = [p.x, p.y, p.z]
        return m

    def frame_callback(self) -> None:
        """A colour or depth image came in: process the newest pair if it is complete."""
        self._process_newest()

    def process_callback(self) -> None:
        """The ``rate`` timer: a pair the guard condition missed, then the stale check."""
        self._process_newest()
        if time.monotonic() - self._last_ok > self.config.stale_timeout:
            # frames stopped (or every recent frame was unusable): say so, keep the objects
            stale = Scene(objects=self._last_scene.objects, stamp=self._last_scene.stamp,
                          stale=True, frame_id=self.base_frame)
            self.scene_pub.publish(scene_to_msg(stale, 0.0))

    def _process_newest(self) -> None:
        pair = self._sync.take(time.monotonic())
        if pair is not None:
            with self._msgs_lock:
                info, joints = self._info_msg, self._joint_history.latest()
                if joints is not None:
                    # the arm where the image shows it, not where it is now (self_filter.py)
                    joints = self._joint_history.at(pair.stamp) or joints
            t0 = time.monotonic()
            self._process(pair.colour, pair.depth, pair.stamp, info, joints, pair.arrival)
            self._stats_busy += time.monotonic() - t0
        self._log_stats()

    def _log_stats(self) -> None:
        now = time.monotonic()
        if now - self._stats_at < STATS_PERIOD_S:
            return
        dt, self._stats_at = now - self._stats_at, now
        c = self._sync.take_counts()
        busy, self._stats_busy = self._stats_busy, 0.0
        processed, self._processed_mark = (self.frames_processed - self._processed_mark,
                                           self.frames_processed)
        self.get_logger().info(
            f"frames in the last {dt:.0f} s: colour {c['colour']}, depth {c['depth']}, "
            f"processed {processed} ({processed / dt:.1f} Hz, busy {busy / dt:.0%}), "
            f"replaced unprocessed {c['unpaired']}, too late {c['late']}, skipped by rate "
            f"{c['too_soon']}; rejected so far {self.frames_rejected}")

    # ------------------------------------------------------------------ resets
    def fixture_map_callback(self, msg: String) -> None:
        """A new fixture map (JSON): perception measures its fixtures from the next frame."""
        try:
            fmap = fixture_map_from_msg(msg)
        except FrankenbotError as e:
            self.get_logger().error(f"fixture map refused, keeping the old one: {e}")
            return
        self._fixtures = fmap
        if self._pipeline is not None:
            self._pipeline.set_fixture_map(fmap)
        self.get_logger().info("fixture map: " + (", ".join(
            f.fixture_id for f in fmap.fixtures) or "no fixtures"))

    def reset_topic_callback(self, msg: Header) -> None:
        self._reset(time_from_msg(msg.stamp), f"new scene {msg.frame_id or '(unnamed)'}")

    def reset_service_callback(self, request: Any, response: Any) -> Any:
        forgotten = self._reset(self._sync.latest_depth_stamp(), "~/reset called")
        response.success = True
        response.message = f"forgot {forgotten} tracked objects"
        return response

    def _reset(self, after: float | None, why: str) -> int:
        """Forget every track; frames stamped up to ``after`` are not processed any more."""
        forgotten = len(self._pipeline.tracker.tracks) if self._pipeline is not None else 0
        if self._pipeline is not None:
            self._pipeline.reset()
        self._sync.reset(after)
        self._last_scene = Scene(stale=True)
        if self._pixels is not None:
            self._pixels.reset()  # the old scene's depth would point at what is gone
        self.resets += 1
        self.get_logger().info(f"tracks reset ({why}): {forgotten} forgotten")
        return forgotten

    def _process(self, rgb_msg: Image, depth_msg: Image, stamp: float,
                 info: CameraInfo | None, joints: tuple[float, ...] | None,
                 arrival: float) -> None:
        log = self.get_logger()
        try:
            if info is None:
                raise PerceptionError(f"no camera_info received on {INFO_TOPIC}")
            verdict = self._sync.admit(stamp)
            if verdict in (OLD_SCENE, TOO_SOON, REPEATED):
                return  # the old scene, a faster camera than ``rate``, a late or repeated frame
            camera = self._camera(info)
            if camera is None:
                raise PerceptionError("camera pose unknown (no camera_config, no TF)")
            if self._pipeline is None:
                self._pipeline = PerceptionPipeline(camera, self._fixtures, self.config,
                                                    detector=self._detector,
                                                    queries=self._queries or DEFAULT_QUERIES,
                                                    catalogue=self._catalogue)
            elif self._pipeline.camera is not camera:
                self._pipeline.camera = camera
            rgb = rgb_from_image_msg(rgb_msg)
            depth = depth_from_image_msg(depth_msg)
            check_frame(rgb, depth, info)
            if verdict == CLOCK_RESTARTED:  # the tracks' times are void
                log.warning("camera clock jumped back: tracks reset", throttle_duration_sec=2.0)
                self._reset(None, "camera clock jumped back")
            result = self._pipeline.process_frame(rgb, depth, stamp, joints)
            self._sync.processed(stamp)
            self._feed_pixels(camera, depth, stamp, joints)
        except FrankenbotError as e:
            self.frames_rejected += 1
            log.warn(f"frame rejected: {e}", throttle_duration_sec=2.0)
            return
        scene = replace(result.scene, frame_id=self.base_frame)
        self._last_scene = scene
        self._last_ok = time.monotonic()
        self.frames_processed += 1
        self.scene_pub.publish(scene_to_msg(scene, time.monotonic() - arrival))
        if self.marker_pub.get_subscription_count() > 0:  # RViz open: markers each frame
            self.marker_pub.publish(scene_markers(scene, lifetime_s=max(2.0 / self.rate, 0.5)))
        now = time.monotonic()
        cfg = self.settings.value
        if (cfg.publish_annotated and self.image_pub.get_subscription_count() > 0
                and now - self._last_annotated >= 1.0 / cfg.annotated_rate):
            self._last_annotated = now
            image, _ = annotate(rgb, scene, self._pipeline.camera)
            self.image_pub.publish(image_msg_from_rgb(image, stamp, info.header.frame_id))

    # ------------------------------------------------------------------ pixels
    def _feed_pixels(self, camera: CameraModel, depth: Any, stamp: float,
                     joints: tuple[float, ...] | None) -> None:
        pixels = self._pixels
        if pixels is None or pixels.camera is not camera:
            pixels = DepthPixelResolver(camera)  # a new camera model: old depth is void
        pixels.feed(depth, stamp, joints)
        self._pixels = pixels

    def resolve_pixel_callback(self, request: Any, response: Any) -> Any:
        pixels = self._pixels
        if pixels is None:
            response.ok = False
            response.message = ("no depth frame has been processed yet (is the camera "
                                "publishing, and camera_info with it?)")
            return response
        response.width, response.height = pixels.image_size()
        try:
            t = pixels.resolve(float(request.u), float(request.v))
        except PerceptionError as e:
            response.ok, response.message = False, str(e)
            return response
        response.ok = True
        response.target.x, response.target.y, response.target.z = t.position
        response.depth, response.frame_age = t.depth, t.age
        response.stamp = time_to_msg(t.stamp)
        return response


def main(args: list[str] | None = None) -> int:
    return run_node(PerceptionNode, num_threads=3, args=args, callbacks_block=False)


if __name__ == "__main__":
    sys.exit(main())

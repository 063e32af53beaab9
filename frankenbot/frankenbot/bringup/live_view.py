"""The live view: a Foxglove WebSocket server showing what the robot sees, believes and does.

``frankenbot up --foxglove [PORT]`` and ``frankenbot demo --foxglove [PORT]`` run it in the
command-line process, fed by the topic tap (``bringup/tap.py``). Open Foxglove, connect to
``ws://localhost:PORT`` and import ``frankenbot/config/foxglove_layout.json``. Channels:

* ``/camera/color/image``, ``/frankenbot/annotated_image`` (set-of-mark), ``/camera/depth/image``
  and ``/camera/points`` (coloured point cloud from depth, in the optical frame), with the
  camera calibration on ``/camera/calibration``;
* ``/frankenbot/scene``: the perceived objects as 3-D boxes with labels (foxglove SceneUpdate);
* ``/joint_states`` (foxglove JointStates), ``/tf`` (FrameTransforms: base_link -> the UR5e's DH
  frames -> tool0 -> tcp from forward kinematics, and the camera's pose from config/camera.yaml)
  and ``/frankenbot/arm`` (the arm as a line through its joints);
* ``/frankenbot/tree_state``, ``/frankenbot/events``, ``/frankenbot/task_status`` as JSON, and
  ``/frankenbot/log``: one line per phase, active node and anomaly (a Log panel's feed).

The foxglove SDK keeps no latched messages, so the latest tree state, task status and scene are
sent again once a second for viewers that connect late.

Protocol note: foxglove-sdk 0.30 speaks the Foxglove WebSocket protocol v1 under the subprotocol
name ``foxglove.sdk.v1`` (the name ``foxglove.websocket.v1`` is refused at the handshake); current
Foxglove apps offer both names.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from frankenbot.bringup.tap import COLOR_TOPIC, DEPTH_TOPIC, INFO_TOPIC, RateGate, TopicSpec
from frankenbot.errors import ConfigError
from frankenbot.motion.kinematics import UR5eKinematics
from frankenbot.nodes.scene_msgs import COLOUR_RGB
from frankenbot.transforms import quat_from_matrix

DEFAULT_PORT = 8765
BASE_FRAME = "base_link"
ARM_FRAMES = ("ur_dh1", "ur_dh2", "ur_dh3", "ur_dh4", "ur_dh5", "tool0")
# wall-clock rate limits of what the viewer gets (a browser cannot use more)
VIEW_RATES_HZ = {"/joint_states": 20.0, COLOR_TOPIC: 5.0, DEPTH_TOPIC: 2.0, INFO_TOPIC: 1.0,
                 "/frankenbot/annotated_image": 5.0}
POINT_STRIDE = 4  # depth pixels per point cloud point, each way
CHANNEL_TOPICS = ("/camera/color/image", "/frankenbot/annotated_image", "/camera/depth/image",
                  "/camera/points", "/camera/calibration", "/frankenbot/scene", "/joint_states",
                  "/tf", "/frankenbot/arm", "/frankenbot/tree_state", "/frankenbot/events",
                  "/frankenbot/task_status", "/frankenbot/log")

_JSON_OBJECT = {"type": "object"}


def _timestamp(stamp: Any) -> Any:
    from foxglove.messages import Timestamp

    return Timestamp(int(stamp.sec), int(stamp.nanosec))


def _quaternion(rotation: np.ndarray) -> Any:
    from foxglove.messages import Quaternion

    x, y, z, w = quat_from_matrix(rotation).xyzw()
    return Quaternion(x=x, y=y, z=z, w=w)


def _vector(v: Any) -> Any:
    from foxglove.messages import Vector3

    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def image_message(msg: Any) -> Any:
    """sensor_msgs/Image -> foxglove RawImage (same encoding, the bytes as they are)."""
    from foxglove.messages import RawImage

    return RawImage(timestamp=_timestamp(msg.header.stamp), frame_id=msg.header.frame_id,
                    width=int(msg.width), height=int(msg.height), encoding=msg.encoding,
                    step=int(msg.step), data=bytes(msg.data))


def calibration_message(msg: Any) -> Any:
    from foxglove.messages import CameraCalibration

    return CameraCalibration(timestamp=_timestamp(msg.header.stamp),
                             frame_id=msg.header.frame_id, width=int(msg.width),
                             height=int(msg.height), distortion_model=msg.distortion_model,
                             D=[float(v) for v in msg.d], K=[float(v) for v in msg.k],
                             R=[float(v) for v in msg.r], P=[float(v) for v in msg.p])


POINT_DTYPE = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("rgba", "u1", 4)])


def depth_points(depth: Any, info: Any, colour: Any | None,
                 stride: int = POINT_STRIDE) -> np.ndarray:
    """Depth image (16UC1 mm or 32FC1 m) + camera_info -> points in the optical frame
    (``POINT_DTYPE``), coloured from the latest colour frame when its size matches."""
    h, w = int(depth.height), int(depth.width)
    if depth.encoding == "16UC1":
        z = np.frombuffer(bytes(depth.data), dtype=np.uint16).reshape(h, -1)[:, :w] / 1000.0
    elif depth.encoding == "32FC1":
        z = np.frombuffer(bytes(depth.data), dtype=np.float32).reshape(h, -1)[:, :w]
    else:
        raise ConfigError(f"depth encoding {depth.encoding!r} is not 16UC1 or 32FC1")
    k = np.asarray(info.k, dtype=float)
    fx, fy, cx, cy = k[0], k[4], k[2], k[5]
    vs, us = np.mgrid[0:h:stride, 0:w:stride]
    zs = z[::stride, ::stride].astype(np.float32)
    valid = np.isfinite(zs) & (zs > 0.05)
    rgba = np.full((*zs.shape, 4), 200, dtype=np.uint8)
    rgba[..., 3] = 255
    if (colour is not None and colour.encoding == "rgb8"
            and (colour.height, colour.width) == (h, w)):
        img = np.frombuffer(bytes(colour.data), dtype=np.uint8).reshape(h, -1)[:, : w * 3]
        rgba[..., :3] = img.reshape(h, w, 3)[::stride, ::stride]
    points = np.zeros(int(valid.sum()), dtype=POINT_DTYPE)
    points["x"] = ((us - cx) * zs / fx)[valid]
    points["y"] = ((vs - cy) * zs / fy)[valid]
    points["z"] = zs[valid]
    points["rgba"] = rgba[valid]
    return points


def point_cloud_message(depth: Any, info: Any, colour: Any | None,
                        stride: int = POINT_STRIDE) -> Any:
    """``depth_points`` as a foxglove PointCloud (x, y, z float32; red, green, blue, alpha)."""
    from foxglove.messages import PackedElementField, PackedElementFieldNumericType, PointCloud

    points = depth_points(depth, info, colour, stride)
    f32, u8 = PackedElementFieldNumericType.Float32, PackedElementFieldNumericType.Uint8
    fields = [PackedElementField(name=n, offset=4 * i, type=f32) for i, n in enumerate("xyz")]
    fields += [PackedElementField(name=n, offset=12 + i, type=u8)
               for i, n in enumerate(("red", "green", "blue", "alpha"))]
    return PointCloud(timestamp=_timestamp(depth.header.stamp), frame_id=depth.header.frame_id,
                      point_stride=POINT_DTYPE.itemsize, fields=fields, data=points.tobytes())


@dataclass(frozen=True)
class Box:
    """One perceived object as the 3-D view draws it."""

    id: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]  # x, y, z, w
    size: tuple[float, float, float]
    rgba: tuple[float, float, float, float]
    label: str


def scene_boxes(msg: Any) -> list[Box]:
    """SceneObjects -> boxes: colour from the object's colour name, fixtures translucent, all
    dimmed while the scene is stale; the label is the id and the detection confidence."""
    out = []
    for o in msg.objects:
        r, g, b = COLOUR_RGB.get(o.colour, (0.6, 0.6, 0.6))
        alpha = 0.25 if o.is_fixture else (0.35 if msg.stale else 0.85)
        p, q = o.pose.position, o.pose.orientation
        quat = (q.x, q.y, q.z, q.w) if any((q.x, q.y, q.z, q.w)) else (0.0, 0.0, 0.0, 1.0)
        out.append(Box(o.id, (p.x, p.y, p.z), quat, (o.size.x, o.size.y, o.size.z),
                       (r, g, b, alpha), f"{o.id} ({o.confidence:.2f})"))
    return out


def scene_message(msg: Any) -> Any:
    """SceneObjects -> foxglove SceneUpdate: one box and label per object (``scene_boxes``);
    every earlier entity is deleted first, so objects no longer seen disappear."""
    from foxglove.messages import (
        Color,
        CubePrimitive,
        KeyValuePair,
        Pose,
        Quaternion,
        SceneEntity,
        SceneEntityDeletion,
        SceneEntityDeletionType,
        SceneUpdate,
        TextPrimitive,
    )

    stamp = _timestamp(msg.header.stamp)
    frame = msg.header.frame_id or BASE_FRAME
    shapes = {o.id: (o.label, o.shape) for o in msg.objects}
    entities = []
    for box in scene_boxes(msg):
        x, y, z, w = box.orientation
        pose = Pose(position=_vector(box.position), orientation=Quaternion(x=x, y=y, z=z, w=w))
        above = (box.position[0], box.position[1], box.position[2] + box.size[2] / 2 + 0.03)
        label_pose = Pose(position=_vector(above), orientation=Quaternion(w=1.0))
        label, shape = shapes[box.id]
        entities.append(SceneEntity(
            timestamp=stamp, frame_id=frame, id=box.id,
            cubes=[CubePrimitive(pose=pose, size=_vector(box.size), color=Color(
                r=box.rgba[0], g=box.rgba[1], b=box.rgba[2], a=box.rgba[3]))],
            texts=[TextPrimitive(pose=label_pose, billboard=True, font_size=14.0,
                                 scale_invariant=True, color=Color(r=1, g=1, b=1, a=1),
                                 text=box.label)],
            metadata=[KeyValuePair(key="label", value=label),
                      KeyValuePair(key="shape", value=shape)]))
    return SceneUpdate(deletions=[SceneEntityDeletion(timestamp=stamp,
                                                      type=SceneEntityDeletionType.All)],
                       entities=entities)


def arm_chain(kin: UR5eKinematics, joint_names: list[str], positions: list[float]
              ) -> list[tuple[str, str, np.ndarray]] | None:
    """Forward kinematics as a frame chain: (parent, child, child pose in parent) for
    base_link -> ur_dh1..5 -> tool0 -> tcp; None when a joint of the arm is missing."""
    from frankenbot.motion.kinematics import JOINT_NAMES

    by_name = dict(zip(joint_names, positions, strict=False))
    if not all(n in by_name for n in JOINT_NAMES):
        return None
    frames = kin.link_frames(np.array([by_name[n] for n in JOINT_NAMES], dtype=float))
    out = []
    parent, parent_pose = BASE_FRAME, np.eye(4)
    for name, pose in zip((*ARM_FRAMES, "tcp"), frames, strict=True):
        out.append((parent, name, np.linalg.inv(parent_pose) @ pose))
        parent, parent_pose = name, pose
    return out


class ArmFrames:
    """Forward kinematics of a joint state: frame transforms and the arm's polyline."""

    def __init__(self, kinematics: UR5eKinematics | None = None) -> None:
        self.kin = kinematics or UR5eKinematics()

    def transforms(self, joint_names: list[str], positions: list[float], stamp: Any
                   ) -> tuple[Any, Any] | None:
        """(foxglove FrameTransforms of ``arm_chain``, SceneUpdate of the arm's polyline)."""
        from foxglove.messages import (
            Color,
            FrameTransform,
            FrameTransforms,
            LinePrimitive,
            Point3,
            SceneEntity,
            SceneUpdate,
        )

        chain = arm_chain(self.kin, joint_names, positions)
        if chain is None:
            return None
        ts = _timestamp(stamp)
        out = [FrameTransform(timestamp=ts, parent_frame_id=parent, child_frame_id=child,
                              translation=_vector(rel[:3, 3]), rotation=_quaternion(rel[:3, :3]))
               for parent, child, rel in chain]
        points, pose = [Point3(x=0.0, y=0.0, z=0.0)], np.eye(4)
        for _parent, _child, rel in chain:
            pose = pose @ rel
            points.append(Point3(x=float(pose[0, 3]), y=float(pose[1, 3]), z=float(pose[2, 3])))
        arm = SceneUpdate(entities=[SceneEntity(
            timestamp=ts, frame_id=BASE_FRAME, id="ur5e",
            lines=[LinePrimitive(thickness=0.04, points=points,
                                 color=Color(r=0.3, g=0.6, b=0.95, a=0.9))])])
        return FrameTransforms(transforms=out), arm


def camera_transform(camera_yaml: Path | None = None) -> Any | None:
    """base_link -> the camera's optical frame from config/camera.yaml (the sim's; on a robot
    the camera pose comes from TF, which this view does not read: None there)."""
    from foxglove.messages import FrameTransform

    from frankenbot.errors import FrankenbotError
    from frankenbot.perception.camera import load_camera
    from frankenbot.resources import package_root

    path = camera_yaml or package_root() / "config" / "camera.yaml"
    if not path.is_file():
        return None
    try:
        t = np.asarray(load_camera(path).T_base_optical, dtype=float)
        import yaml

        data = (yaml.safe_load(path.read_text()) or {}).get("camera", {})
    except (FrankenbotError, OSError) as e:  # a bad file: no camera frame, said once
        print(f"live view: no camera frame ({e})")
        return None
    return FrameTransform(parent_frame_id=str(data.get("parent", BASE_FRAME)),
                          child_frame_id=str(data.get("frame", "camera_color_optical_frame")),
                          translation=_vector(t[:3, 3]), rotation=_quaternion(t[:3, :3]))


def tree_json(msg: Any) -> dict[str, Any]:
    return {"task_id": msg.task_id, "program_name": msg.program_name, "phase": msg.phase,
            "active_path": msg.active_path, "active_node": msg.active_node,
            "active_line": int(msg.active_line), "steps": int(msg.steps),
            "nodes": [{"path": p, "status": s}
                      for p, s in zip(msg.node_paths, msg.node_statuses, strict=False)]}


def event_json(msg: Any) -> dict[str, Any]:
    return {"task_id": msg.task_id, "event_id": msg.event_id, "kind": msg.kind,
            "anomaly_class": msg.anomaly_class, "tier": int(msg.tier), "source": msg.source,
            "node_path": msg.node_path, "detail": msg.detail, "latency_s": float(msg.latency),
            "action": msg.action, "outcome": msg.outcome}


def status_json(msg: Any) -> dict[str, Any]:
    return {"task_id": msg.task_id, "instruction": msg.instruction, "phase": msg.phase,
            "done": bool(msg.done), "success": bool(msg.success), "outcome": msg.outcome,
            "summary": msg.summary, "planner": msg.planner, "vlm_calls": int(msg.vlm_calls),
            "repair_calls": int(msg.repair_calls), "replans": int(msg.replans),
            "duration_s": float(msg.duration)}


class LiveView:
    """The Foxglove server and its channels; a tap sink (``on_message``)."""

    def __init__(self, port: int = DEFAULT_PORT, host: str = "127.0.0.1",
                 republish_period: float = 1.0) -> None:
        import foxglove
        from foxglove.channels import (
            CameraCalibrationChannel,
            FrameTransformsChannel,
            JointStatesChannel,
            LogChannel,
            PointCloudChannel,
            RawImageChannel,
            SceneUpdateChannel,
        )

        self._ctx = foxglove.Context()
        ctx = self._ctx
        try:
            self.server = foxglove.start_server(name="frankenbot", host=host, port=port,
                                                context=ctx)
        except Exception as e:  # the SDK raises its own error types (port in use, ...)
            raise ConfigError(f"cannot start the Foxglove server on {host}:{port}: {e}") from e
        self.port = int(self.server.port)
        self.image = RawImageChannel("/camera/color/image", context=ctx)
        self.annotated = RawImageChannel("/frankenbot/annotated_image", context=ctx)
        self.depth = RawImageChannel("/camera/depth/image", context=ctx)
        self.points = PointCloudChannel("/camera/points", context=ctx)
        self.calibration = CameraCalibrationChannel("/camera/calibration", context=ctx)
        self.scene = SceneUpdateChannel("/frankenbot/scene", context=ctx)
        self.joints = JointStatesChannel("/joint_states", context=ctx)
        self.tf = FrameTransformsChannel("/tf", context=ctx)
        self.arm = SceneUpdateChannel("/frankenbot/arm", context=ctx)
        self.tree = foxglove.Channel("/frankenbot/tree_state", schema=_JSON_OBJECT, context=ctx)
        self.events = foxglove.Channel("/frankenbot/events", schema=_JSON_OBJECT, context=ctx)
        self.status = foxglove.Channel("/frankenbot/task_status", schema=_JSON_OBJECT,
                                       context=ctx)
        self.log = LogChannel("/frankenbot/log", context=ctx)
        self._gate = RateGate(VIEW_RATES_HZ)
        self._arm = ArmFrames()
        self._camera_tf = camera_transform()
        self._lock = threading.Lock()
        self._latest_colour: Any = None
        self._latest_info: Any = None
        self._retained: dict[str, tuple[Any, Any]] = {}  # channel topic -> (channel, message)
        self._last_tree: tuple[str, str, str] = ("", "", "")
        self._last_status: tuple[str, str] = ("", "")
        self._stop = threading.Event()
        self._period = republish_period
        self._thread = threading.Thread(target=self._republish, name="live-view", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"ws://localhost:{self.port}"

    # ------------------------------------------------------------------ tap sink
    def on_message(self, spec: TopicSpec, cdr: bytes, received_ns: int) -> None:
        handler = self._HANDLERS.get(spec.topic)
        if handler is None or not self._gate.admit(spec.topic):
            return
        from rclpy.serialization import deserialize_message

        try:
            handler(self, deserialize_message(cdr, spec.msg_type))
        except Exception as e:  # a bad message must not take the tap's callback down
            self._log_line(f"live view: cannot show {spec.topic}: {e}", level="WARNING")

    def _retain(self, topic: str, channel: Any, message: Any) -> None:
        with self._lock:
            self._retained[topic] = (channel, message)
        channel.log(message)

    def _on_colour(self, msg: Any) -> None:
        self._latest_colour = msg
        self.image.log(image_message(msg))

    def _on_annotated(self, msg: Any) -> None:
        self._retain("/frankenbot/annotated_image", self.annotated, image_message(msg))

    def _on_depth(self, msg: Any) -> None:
        self.depth.log(image_message(msg))
        if self._latest_info is not None:
            self.points.log(point_cloud_message(msg, self._latest_info, self._latest_colour))

    def _on_info(self, msg: Any) -> None:
        self._latest_info = msg
        self.calibration.log(calibration_message(msg))

    def _on_scene(self, msg: Any) -> None:
        self._retain("/frankenbot/scene", self.scene, scene_message(msg))

    def _on_joints(self, msg: Any) -> None:
        from foxglove.messages import JointState, JointStates

        self.joints.log(JointStates(timestamp=_timestamp(msg.header.stamp), joints=[
            JointState(name=n, position=float(p))
            for n, p in zip(msg.name, msg.position, strict=False)]))
        frames = self._arm.transforms(list(msg.name), list(msg.position), msg.header.stamp)
        if frames is not None:
            transforms, arm = frames
            self.tf.log(transforms)
            self.arm.log(arm)

    def _on_tree(self, msg: Any) -> None:
        self._retain("/frankenbot/tree_state", self.tree, tree_json(msg))
        key = (msg.task_id, msg.phase, msg.active_path)
        if key != self._last_tree:
            self._last_tree = key
            where = f" line {msg.active_line}" if msg.active_line else ""
            self._log_line(f"[{msg.phase}] {msg.active_node or '-'}{where} ({msg.active_path})")

    def _on_event(self, msg: Any) -> None:
        self.events.log(event_json(msg))
        latency = f", {msg.latency * 1000:.0f} ms" if msg.latency >= 0 else ""
        self._log_line(f"anomaly {msg.kind} at {msg.node_path}: tier {msg.tier} -> "
                       f"{msg.action or 'no action'} [{msg.outcome}{latency}]", level="WARNING")

    def _on_status(self, msg: Any) -> None:
        self._retain("/frankenbot/task_status", self.status, status_json(msg))
        key = (msg.task_id, msg.phase)
        if key != self._last_status:
            self._last_status = key
            verdict = f": {msg.outcome} - {msg.summary}" if msg.done else ""
            self._log_line(f"task {msg.task_id} {msg.phase}{verdict}")

    _HANDLERS = {COLOR_TOPIC: _on_colour, "/frankenbot/annotated_image": _on_annotated,
                 DEPTH_TOPIC: _on_depth, INFO_TOPIC: _on_info, "/frankenbot/scene": _on_scene,
                 "/joint_states": _on_joints, "/frankenbot/tree_state": _on_tree,
                 "/frankenbot/events": _on_event, "/frankenbot/task_status": _on_status}

    def _log_line(self, text: str, level: str = "INFO") -> None:
        from foxglove.messages import Log, LogLevel, Timestamp

        self.log.log(Log(timestamp=Timestamp.from_epoch_secs(time.time()),
                         level=getattr(LogLevel, level.capitalize(), LogLevel.Info),
                         message=text, name="frankenbot"))

    # ------------------------------------------------------------------ late viewers
    def _republish(self) -> None:
        """Latched-topic stand-in: resend the latest tree, status, scene, camera pose."""
        while not self._stop.wait(self._period):
            with self._lock:
                retained = list(self._retained.values())
            for channel, message in retained:
                channel.log(message)
            if self._camera_tf is not None:
                from foxglove.messages import FrameTransforms

                self.tf.log(FrameTransforms(transforms=[self._camera_tf]))
            if "/frankenbot/tree_state" not in self._retained:
                self.tree.log({"phase": "idle", "task_id": "", "nodes": []})

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.server.stop()


def parse_port(value: str | None) -> int:
    """``--foxglove`` with no value -> the default port; else a port number."""
    if value is None or value == "":
        return DEFAULT_PORT
    try:
        port = int(value)
    except ValueError as e:
        raise ConfigError(f"--foxglove takes a port number, got {value!r}") from e
    if not 0 <= port <= 65535:
        raise ConfigError(f"--foxglove port must be in 0..65535, got {port}")
    return port


def foxglove_layout() -> dict[str, Any]:
    """The Foxglove layout of the live view (Foxglove's layout-file format: Layouts -> Import
    from file): 3-D scene with the arm, boxes, point cloud and camera frustum; the camera and
    set-of-mark images; the tree state and task status; the log of phases and anomalies; the
    phase as a state transition plot; joint positions over time."""
    three_d = {
        "followTf": BASE_FRAME, "followMode": "follow-pose",
        "scene": {"transforms": {"showLabel": False, "axisScale": 0.5}},
        "cameraState": {"distance": 2.2, "perspective": True, "phi": 55.0, "thetaOffset": 135.0,
                        "target": [0.45, 0.0, 0.1], "targetOffset": [0, 0, 0],
                        "targetOrientation": [0, 0, 0, 1], "fovy": 45, "near": 0.01,
                        "far": 100},
        "topics": {"/frankenbot/scene": {"visible": True},
                   "/frankenbot/arm": {"visible": True},
                   "/camera/points": {"visible": True, "pointSize": 3,
                                      "colorField": "rgba", "colorMode": "rgba-fields"},
                   "/camera/calibration": {"visible": True},
                   "/tf": {"visible": True}},
        "layers": {"grid": {"layerId": "foxglove.Grid", "visible": True, "frameLocked": True,
                            "label": "Grid", "instanceId": "grid", "size": 2,
                            "divisions": 20, "position": [0, 0, 0], "rotation": [0, 0, 0]}},
    }
    config = {
        "3D!scene": three_d,
        "Image!camera": {"imageMode": {"imageTopic": "/camera/color/image",
                                       "calibrationTopic": "/camera/calibration"}},
        "Image!marks": {"imageMode": {"imageTopic": "/frankenbot/annotated_image"}},
        "RawMessages!tree": {"topicPath": "/frankenbot/tree_state", "expansion": "all",
                             "diffEnabled": False},
        "RawMessages!status": {"topicPath": "/frankenbot/task_status", "expansion": "all",
                               "diffEnabled": False},
        "RosOut!log": {"searchTerms": [], "minLogLevel": 1, "topicToRender": "/frankenbot/log"},
        "StateTransitions!phase": {"paths": [
            {"value": "/frankenbot/tree_state.phase", "timestampMethod": "receiveTime"},
            {"value": "/frankenbot/tree_state.active_path", "timestampMethod": "receiveTime"}],
            "isSynced": True},
        "Plot!joints": {"paths": [
            {"value": f"/joint_states.joints[{i}].position", "enabled": True,
             "timestampMethod": "receiveTime"} for i in range(6)],
            "showLegend": True, "isSynced": True, "xAxisVal": "timestamp"},
    }
    layout = {
        "direction": "row", "splitPercentage": 58,
        "first": {"direction": "column", "splitPercentage": 62, "first": "3D!scene",
                  "second": {"direction": "row", "first": "Image!camera",
                             "second": "Image!marks"}},
        "second": {"direction": "column", "splitPercentage": 40,
                   "first": {"direction": "row", "first": "RawMessages!tree",
                             "second": "RawMessages!status"},
                   "second": {"direction": "column", "splitPercentage": 45,
                              "first": "RosOut!log",
                              "second": {"direction": "column", "first": "StateTransitions!phase",
                                         "second": "Plot!joints"}}},
    }
    return {"configById": config, "globalVariables": {}, "userNodes": {},
            "playbackConfig": {"speed": 1}, "layout": layout}


def layout_path() -> Path:
    from frankenbot.resources import package_root

    return package_root() / "config" / "foxglove_layout.json"


def write_layout(path: Path | None = None) -> Path:
    """Write the layout file (the repository keeps it; a test checks it is current)."""
    import json

    path = path or layout_path()
    path.write_text(json.dumps(foxglove_layout(), indent=2) + "\n")
    return path

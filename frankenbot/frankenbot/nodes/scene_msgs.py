"""Conversions between ROS messages and perception's types (Scene, images, camera_info).

Shared by the perception node and by any node that consumes ``/frankenbot/scene`` (executor,
motion): ``scene_from_msg`` turns a SceneObjects message back into a ``Scene``. Message types
are imported inside the functions so importing this module never needs a ROS installation.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from frankenbot.errors import ConfigError, PerceptionError
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.camera import Intrinsics
from frankenbot.state import MAX_POINTS, Scene, SceneObject
from frankenbot.transforms import QuatXYZW, quat_from_yaw


def time_to_msg(seconds: float) -> Any:
    from builtin_interfaces.msg import Time

    sec = math.floor(seconds)
    return Time(sec=int(sec), nanosec=int(round((seconds - sec) * 1e9)) % 1_000_000_000)


def time_from_msg(stamp: Any) -> float:
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


def object_to_msg(obj: SceneObject) -> Any:
    from frankenbot_interfaces.msg import SceneObject as SceneObjectMsg

    msg = SceneObjectMsg()
    msg.id, msg.label, msg.shape, msg.colour = obj.object_id, obj.label, obj.shape, obj.colour
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v)
                                                                    for v in obj.position)
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = quat_from_yaw(obj.yaw).xyzw()
    msg.size.x, msg.size.y, msg.size.z = (float(v) for v in obj.size)
    msg.confidence = float(obj.confidence)
    msg.is_fixture = bool(obj.is_fixture)
    msg.last_seen = time_to_msg(obj.last_seen)
    msg.occluded = bool(obj.occluded)
    msg.has_opening = obj.opening is not None
    msg.opening = 0.0 if obj.opening is None else float(obj.opening)
    msg.on_state = -1 if obj.on is None else int(bool(obj.on))
    msg.points = [float(c) for p in obj.points[:MAX_POINTS] for c in p]
    msg.controls = list(obj.controls)
    return msg


MAX_SCENE_OBJECTS = 256  # more than any table holds: a message with more is not a scene
MAX_COORDINATE_M = 100.0  # |x|, |y|, |z| and sizes beyond this are not objects on a table


def object_problem(msg: Any) -> str:
    """Why a SceneObject message cannot be believed ('' when it can)."""
    p, o, sz = msg.pose.position, msg.pose.orientation, msg.size
    values = {"position": (p.x, p.y, p.z), "orientation": (o.x, o.y, o.z, o.w),
              "size": (sz.x, sz.y, sz.z), "confidence": (msg.confidence,)}
    for name, vals in values.items():
        if not all(math.isfinite(v) for v in vals):
            return f"object {msg.id!r}: {name} {vals} is not finite"
    if any(abs(v) > MAX_COORDINATE_M for v in values["position"] + values["size"]):
        return f"object {msg.id!r}: position/size beyond {MAX_COORDINATE_M} m"
    if any(v < 0.0 for v in values["size"]):
        return f"object {msg.id!r}: negative size {values['size']}"
    if sum(v * v for v in values["orientation"]) < 1e-12:
        return f"object {msg.id!r}: zero quaternion"
    if not msg.id or any(not c.isprintable() for c in msg.id):
        return f"object id {msg.id!r} is empty or has control characters"
    return ""


def object_from_msg(msg: Any) -> SceneObject:
    problem = object_problem(msg)
    if problem:
        raise PerceptionError(f"scene rejected: {problem}")
    p, o = msg.pose.position, msg.pose.orientation
    return SceneObject(object_id=msg.id, label=msg.label, shape=msg.shape, colour=msg.colour,
                       position=(p.x, p.y, p.z), size=(msg.size.x, msg.size.y, msg.size.z),
                       yaw=QuatXYZW(o.x, o.y, o.z, o.w).yaw(),
                       confidence=float(msg.confidence), is_fixture=bool(msg.is_fixture),
                       last_seen=time_from_msg(msg.last_seen),
                       occluded=bool(getattr(msg, "occluded", False)),
                       opening=_opening(msg), on=_on_state(msg), points=_points(msg),
                       controls=tuple(str(c) for c in getattr(msg, "controls", ())))


def _opening(msg: Any) -> float | None:
    if not getattr(msg, "has_opening", False):
        return None
    value = float(msg.opening)
    return value if math.isfinite(value) else None


def _points(msg: Any) -> tuple[tuple[float, float, float], ...]:
    flat = list(getattr(msg, "points", ()))[:3 * MAX_POINTS]
    if len(flat) % 3 or not all(math.isfinite(v) for v in flat):
        raise PerceptionError(f"scene rejected: object {msg.id!r}: points must be finite "
                              "x, y, z triples")
    return tuple((flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3))


def _on_state(msg: Any) -> bool | None:
    value = int(getattr(msg, "on_state", -1))
    return None if value < 0 else bool(value)


def scene_to_msg(scene: Scene, latency_s: float = 0.0) -> Any:
    """Scene -> frankenbot_interfaces/msg/SceneObjects (header stamp = the scene's frame stamp)."""
    from frankenbot_interfaces.msg import SceneObjects

    msg = SceneObjects()
    msg.header.stamp = time_to_msg(scene.stamp)
    msg.header.frame_id = scene.frame_id
    msg.objects = [object_to_msg(o) for o in scene.objects]
    msg.stale = bool(scene.stale)
    msg.latency = float(latency_s)
    return msg


def scene_from_msg(msg: Any) -> Scene:
    """frankenbot_interfaces/msg/SceneObjects -> Scene (for the executor and other consumers).

    Raises PerceptionError for a message that cannot be a scene (a NaN or absurd pose, too many
    objects, duplicate ids, a stamp that is not a time): consumers then keep their last scene,
    marked stale, rather than act on half of one.
    """
    if len(msg.objects) > MAX_SCENE_OBJECTS:
        raise PerceptionError(f"scene rejected: {len(msg.objects)} objects (at most "
                              f"{MAX_SCENE_OBJECTS})")
    ids = [o.id for o in msg.objects]
    if len(set(ids)) != len(ids):
        raise PerceptionError(f"scene rejected: duplicate object ids {sorted(ids)[:10]}")
    if not 0 <= msg.header.stamp.nanosec < 1_000_000_000 or msg.header.stamp.sec < 0:
        raise PerceptionError(f"scene rejected: stamp {msg.header.stamp} is not a time")
    if not math.isfinite(float(msg.latency)):
        raise PerceptionError(f"scene rejected: latency {msg.latency} is not finite")
    return Scene(objects=tuple(object_from_msg(o) for o in msg.objects),
                 stamp=time_from_msg(msg.header.stamp), stale=bool(msg.stale),
                 frame_id=msg.header.frame_id or "base_link")


def _buffer_view(data: Any) -> np.ndarray:
    """A read-only uint8 view of a message's ``data`` (array.array, bytes, memoryview: no copy;
    a list of ints, as a hand-made message may hold: one copy)."""
    try:
        view = np.frombuffer(data, dtype=np.uint8)
    except TypeError:
        view = np.asarray(data, dtype=np.uint8)
    view.flags.writeable = False  # it may be the message's own buffer
    return view


def rgb_from_image_msg(msg: Any) -> np.ndarray:
    """sensor_msgs/Image (rgb8, bgr8, rgba8, bgra8) -> HxWx3 uint8 RGB.

    rgb8 with no row padding comes back as a read-only view of the message's buffer (no copy;
    the ~1 MB copy per frame is what a ROS subscriber pays anyway when it deserialises); other
    layouts are converted into a new array."""
    channels = {"rgb8": 3, "bgr8": 3, "rgba8": 4, "bgra8": 4}.get(msg.encoding)
    if channels is None:
        raise PerceptionError(f"colour image encoding {msg.encoding!r} not supported "
                              "(expected rgb8, bgr8, rgba8 or bgra8)")
    data = _buffer_view(msg.data)
    h, w, step = int(msg.height), int(msg.width), int(msg.step)
    if h <= 0 or w <= 0 or step < w * channels or data.size < h * step:
        raise PerceptionError(f"colour image {w}x{h} step {step} has {data.size} bytes")
    img = data[:h * step].reshape(h, step)[:, :w * channels].reshape(h, w, channels)
    if msg.encoding.startswith("bgr"):
        img = img[..., 2::-1]
    return np.ascontiguousarray(img[..., :3])


def depth_from_image_msg(msg: Any) -> np.ndarray:
    """sensor_msgs/Image 16UC1 (mm) -> uint16, or 32FC1 (m, Gazebo) -> float32 metres (a
    read-only view of the message's buffer when its layout allows, else a new array)."""
    dtypes = {"16UC1": np.dtype(np.uint16), "mono16": np.dtype(np.uint16),
              "32FC1": np.dtype(np.float32)}
    dtype = dtypes.get(msg.encoding)
    if dtype is None:
        raise PerceptionError(f"depth encoding {msg.encoding!r} not supported "
                              "(expected 16UC1 millimetres or 32FC1 metres)")
    if msg.is_bigendian:
        dtype = dtype.newbyteorder(">")
    h, w, step = int(msg.height), int(msg.width), int(msg.step)
    raw = _buffer_view(msg.data)
    if h <= 0 or w <= 0 or step < w * dtype.itemsize or raw.size < h * step:
        raise PerceptionError(f"depth image {w}x{h} step {step} has {raw.size} bytes")
    rows = raw[:h * step].reshape(h, step)[:, :w * dtype.itemsize]
    # little-endian without padding (every camera here): a view of the buffer, no copy
    return np.ascontiguousarray(rows).view(dtype).reshape(h, w).astype(
        dtype.newbyteorder("="), copy=False)


def intrinsics_from_camera_info(msg: Any) -> Intrinsics:
    """sensor_msgs/CameraInfo -> Intrinsics (raises PerceptionError on an empty/invalid K)."""
    k = [float(v) for v in msg.k]
    if len(k) != 9 or not all(math.isfinite(v) for v in k) or k[0] <= 0 or k[4] <= 0:
        raise PerceptionError(f"camera_info has no valid K (zero, negative or non-finite "
                              f"focal length; got {k})")
    if int(msg.width) <= 0 or int(msg.height) <= 0:
        raise PerceptionError(f"camera_info size {msg.width}x{msg.height} is empty")
    return Intrinsics.from_k(k, int(msg.width), int(msg.height))


def image_msg_from_rgb(rgb: np.ndarray, stamp: float, frame_id: str) -> Any:
    from sensor_msgs.msg import Image

    arr = np.ascontiguousarray(rgb, dtype=np.uint8)
    msg = Image()
    msg.header.stamp = time_to_msg(stamp)
    msg.header.frame_id = frame_id
    msg.height, msg.width = int(arr.shape[0]), int(arr.shape[1])
    msg.encoding = "rgb8"
    msg.is_bigendian = 0
    msg.step = int(arr.shape[1] * 3)
    msg.data = arr.tobytes()
    return msg


# display colour of each colour name (RViz markers, the Foxglove live view)
COLOUR_RGB = {"red": (0.85, 0.1, 0.1), "green": (0.1, 0.65, 0.2), "blue": (0.1, 0.25, 0.9),
              "yellow": (0.95, 0.85, 0.1), "orange": (1.0, 0.5, 0.05), "purple": (0.55, 0.15, 0.7),
              "white": (0.95, 0.95, 0.95), "black": (0.1, 0.1, 0.1),
              "gray": (0.5, 0.5, 0.5), "pink": (1.0, 0.5, 0.7), "brown": (0.55, 0.35, 0.2),
              "cyan": (0.1, 0.8, 0.85)}


def scene_markers(scene: Scene, lifetime_s: float = 1.0) -> Any:
    """visualization_msgs/MarkerArray: one cube and one text label per object (RViz)."""
    from builtin_interfaces.msg import Duration
    from visualization_msgs.msg import Marker, MarkerArray

    out = MarkerArray()
    clear = Marker()
    clear.action = Marker.DELETEALL
    out.markers.append(clear)
    for n, obj in enumerate(scene.objects):
        for kind in ("box", "text"):
            m = Marker()
            m.header.frame_id = scene.frame_id
            m.header.stamp = time_to_msg(scene.stamp)
            m.ns = f"frankenbot_scene_{kind}"
            m.id = n
            m.action = Marker.ADD
            m.pose = object_to_msg(obj).pose
            m.lifetime = Duration(sec=int(lifetime_s), nanosec=int((lifetime_s % 1) * 1e9))
            r, g, b = COLOUR_RGB.get(obj.colour, (0.7, 0.7, 0.7))
            if kind == "box":
                m.type = Marker.CUBE
                m.scale.x, m.scale.y, m.scale.z = (max(float(v), 0.002) for v in obj.size)
                m.color.r, m.color.g, m.color.b, m.color.a = r, g, b, 0.6
            else:
                m.type = Marker.TEXT_VIEW_FACING
                m.text = obj.object_id
                m.pose.position.z = float(obj.top_z + 0.03)
                m.scale.z = 0.02
                m.color.r = m.color.g = m.color.b = m.color.a = 1.0
            out.markers.append(m)
    return out


def fixture_map_from_msg(msg: Any) -> FixtureMap:
    """The fixture map a std_msgs/String carries as JSON (the sim's latched ~/fixture_map);
    ConfigError when it is not one."""
    try:
        data = json.loads(msg.data)
    except ValueError as e:
        raise ConfigError(f"fixture map message is not JSON: {e}") from e
    return FixtureMap.from_data(data)

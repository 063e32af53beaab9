"""A tap on a running FrankenBot's topics, feeding recordings and the live view.

One ROS node in the command-line process (``frankenbot up`` / ``demo``) subscribes once to every
topic worth seeing, with serialised (raw) subscriptions: a recording writes the CDR bytes as they
came, unparsed, and only a sink that needs the message's fields (the live view) deserialises it.
Each sink throttles on its own (a recording keeps every joint state but 2 camera frames a
second; the live view shows 20 arm poses a second).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_msgs.msg import Bool, Float64MultiArray, Header
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from frankenbot.eval.recording import McapRecorder
from frankenbot_interfaces.msg import AnomalyEvent, SceneObjects, TaskStatus, TreeState

COLOR_TOPIC = "/camera/camera/color/image_raw"
DEPTH_TOPIC = "/camera/camera/aligned_depth_to_color/image_raw"
INFO_TOPIC = "/camera/camera/color/camera_info"

_LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)
_RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
_SENSOR = QoSProfile(depth=2, reliability=ReliabilityPolicy.BEST_EFFORT,
                     history=HistoryPolicy.KEEP_LAST)


@dataclass(frozen=True)
class TopicSpec:
    topic: str
    msg_type: Any  # the rclpy message class
    qos: QoSProfile
    record_hz: float = 0.0  # a recording's rate limit (0: every message)

    @property
    def datatype(self) -> str:
        """``pkg/msg/Type``, the schema name rosbag2 writes."""
        return f"{self.msg_type.__module__.split('.')[0]}/msg/{self.msg_type.__name__}"


# What a recording holds and the live view may show. Images are rate-limited in recordings (a
# 640x480 rgb8 frame is 0.9 MB); /joint_states is kept whole (the arm's motion, 250 Hz).
TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec("/joint_states", JointState, QoSProfile(depth=50)),
    TopicSpec("/clock", Clock, QoSProfile(depth=10), record_hz=10.0),
    TopicSpec("/frankenbot/task_status", TaskStatus, _RELIABLE),
    TopicSpec("/frankenbot/tree_state", TreeState, _LATCHED),
    TopicSpec("/frankenbot/events", AnomalyEvent, _RELIABLE),
    TopicSpec("/frankenbot/scene", SceneObjects, QoSProfile(depth=10)),
    TopicSpec("/frankenbot/scene_markers", MarkerArray, QoSProfile(depth=10), record_hz=2.0),
    TopicSpec("/frankenbot/annotated_image", Image, QoSProfile(depth=2), record_hz=2.0),
    TopicSpec(COLOR_TOPIC, Image, _SENSOR, record_hz=2.0),
    TopicSpec(DEPTH_TOPIC, Image, _SENSOR, record_hz=1.0),
    TopicSpec(INFO_TOPIC, CameraInfo, _SENSOR, record_hz=1.0),
    TopicSpec("/frankenbot_sim/scene_reset", Header, _LATCHED),
    TopicSpec("/frankenbot/estop", Bool, QoSProfile(depth=10)),
    TopicSpec("/scaled_joint_trajectory_controller/joint_trajectory", JointTrajectory,
              QoSProfile(depth=10)),
    TopicSpec("/gripper_position_controller/commands", Float64MultiArray, QoSProfile(depth=10)),
)
TOPICS_BY_NAME = {t.topic: t for t in TOPICS}
# Depth is for the live view's point cloud only: one more 0.6 MB stream per frame costs the
# shared machine more than a recording gains from it.
RECORDED_TOPICS: tuple[TopicSpec, ...] = tuple(t for t in TOPICS if t.topic != DEPTH_TOPIC)


def topics_for(*, live_view: bool) -> tuple[TopicSpec, ...]:
    """What the tap subscribes to: everything for the live view, else what a recording keeps."""
    return TOPICS if live_view else RECORDED_TOPICS


class Sink(Protocol):
    def on_message(self, spec: TopicSpec, cdr: bytes, received_ns: int) -> None: ...


class RateGate:
    """Per-topic minimum period in wall time (thread-safe)."""

    def __init__(self, rates_hz: dict[str, float]) -> None:
        self._period = {t: 1.0 / hz for t, hz in rates_hz.items() if hz > 0}
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def admit(self, topic: str) -> bool:
        period = self._period.get(topic)
        if period is None:
            return True
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(topic, -1e9) < period:
                return False
            self._last[topic] = now
            return True


class TopicTap:
    """Raw subscriptions on ``node`` to ``topics``, each message handed to every sink."""

    def __init__(self, node: Any, sinks: list[Sink], topics: tuple[TopicSpec, ...] = TOPICS,
                 callback_group: Any = None) -> None:
        self.sinks = list(sinks)
        self._subs = []
        for spec in topics:
            self._subs.append(node.create_subscription(
                spec.msg_type, spec.topic, self._callback(spec), spec.qos, raw=True,
                callback_group=callback_group))
        self._node = node

    def _callback(self, spec: TopicSpec) -> Callable[[bytes], None]:
        def on_raw(cdr: bytes) -> None:
            now = time.time_ns()
            for sink in tuple(self.sinks):  # sinks come and go (the demo's recording)
                sink.on_message(spec, cdr, now)

        return on_raw

    def close(self) -> None:
        for sub in self._subs:
            self._node.destroy_subscription(sub)
        self._subs = []


class RecordingSink:
    """Writes what the tap sees to one MCAP file (the demo: one task, one file)."""

    def __init__(self, path: Path, topics: tuple[TopicSpec, ...] = RECORDED_TOPICS) -> None:
        self.recorder = McapRecorder(Path(path))
        self._gate = RateGate({t.topic: t.record_hz for t in TOPICS})
        self._topics = {t.topic for t in topics}
        for spec in topics:
            self.recorder.add_channel(spec.topic, spec.datatype)

    def on_message(self, spec: TopicSpec, cdr: bytes, received_ns: int) -> None:
        if spec.topic in self._topics and self._gate.admit(spec.topic):
            self.recorder.write(spec.topic, spec.datatype, cdr, received_ns)

    def close(self) -> Path:
        self.recorder.close()
        return self.recorder.path


class PerTaskRecordingSink:
    """One MCAP file per task (``frankenbot up --record DIR``).

    A task's file opens on the first /frankenbot/task_status of a new task id and closes on its
    ``done`` status; it starts with the latest message of every latched or slow topic (tree
    state, scene, camera info, scene reset) so each file is complete on its own.
    """

    PRIMED = ("/frankenbot/tree_state", "/frankenbot/scene", INFO_TOPIC,
              "/frankenbot_sim/scene_reset")

    def __init__(self, out_dir: Path, on_closed: Callable[[Path], None] | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.paths: list[Path] = []
        self._on_closed = on_closed
        self._lock = threading.Lock()
        self._latest: dict[str, tuple[TopicSpec, bytes, int]] = {}
        self._task: str | None = None
        self._sink: RecordingSink | None = None

    def on_message(self, spec: TopicSpec, cdr: bytes, received_ns: int) -> None:
        closed: Path | None = None
        status = None
        with self._lock:
            if spec.topic in self.PRIMED:
                self._latest[spec.topic] = (spec, cdr, received_ns)
            if spec.msg_type is TaskStatus:
                status = deserialize_message(cdr, TaskStatus)
                if status.task_id and status.task_id != self._task and not status.done:
                    closed = self._close_locked()
                    self._open_locked(status.task_id)
            sink = self._sink
            if sink is not None:
                sink.on_message(spec, cdr, received_ns)
                if status is not None and status.done and status.task_id == self._task:
                    closed = self._close_locked()
        if closed is not None and self._on_closed is not None:
            self._on_closed(closed)

    def _open_locked(self, task_id: str) -> None:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in task_id)[:60]
        path = self.out_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}.mcap"
        self._sink = RecordingSink(path)
        self._task = task_id
        for spec, cdr, t in self._latest.values():
            self._sink.recorder.write(spec.topic, spec.datatype, cdr, t)

    def _close_locked(self) -> Path | None:
        if self._sink is None:
            return None
        path = self._sink.close()
        self.paths.append(path)
        self._sink = None
        return path

    def close(self) -> None:
        with self._lock:
            closed = self._close_locked()
        if closed is not None and self._on_closed is not None:
            self._on_closed(closed)

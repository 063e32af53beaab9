"""MCAP recordings of in-process episodes (``frankenbot bench --record``), in ROS 2 encoding.

The in-process brain has no DDS, so nothing is on a topic: this builds, from its hooks, the
messages the ROS deployment would publish (the same message types and topic names, converted by
the same functions the nodes use) and serialises them into the same kind of file
``frankenbot demo`` records. Kept cheap for the benchmark: joint states at most 50 Hz, the
perceived scene and camera frames 2 and 1 times a second, every tree change and anomaly event,
the task status at start and end. The hooks only queue what they are given: building, CDR
serialisation and compression happen on the recording's own thread, never on the physics,
render, control or monitor thread they were called from.
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Any

from frankenbot.eval.recording import McapRecorder

JOINT_HZ = 50.0  # sim seconds
SCENE_HZ = 2.0  # wall seconds (the perceived scene is polled)
IMAGE_HZ = 1.0  # sim seconds
CAMERA_FRAME = "camera_color_optical_frame"
TOPICS = {"/joint_states": "sensor_msgs/msg/JointState",
          "/frankenbot/scene": "frankenbot_interfaces/msg/SceneObjects",
          "/frankenbot/tree_state": "frankenbot_interfaces/msg/TreeState",
          "/frankenbot/events": "frankenbot_interfaces/msg/AnomalyEvent",
          "/frankenbot/task_status": "frankenbot_interfaces/msg/TaskStatus",
          "/camera/camera/color/image_raw": "sensor_msgs/msg/Image"}


class EpisodeRecording:
    """One episode's file; the brain calls the ``on_*`` hooks from its threads."""

    def __init__(self, path: Path, *, task_id: str, instruction: str, scene: Any,
                 sim_time: Any) -> None:
        from frankenbot.motion.kinematics import JOINT_NAMES

        self.path = Path(path)
        self.task_id = task_id
        self.instruction = instruction
        self._scene = scene  # () -> Scene, what the brain sees
        self._sim_time = sim_time  # () -> float
        self._joint_names = list(JOINT_NAMES) + ["finger_joint"]
        self._rec = McapRecorder(self.path)
        for topic, datatype in TOPICS.items():
            self._rec.add_channel(topic, datatype)
        self._rec.add_metadata("episode", {"task_id": task_id, "instruction": instruction,
                                           "source": "frankenbot bench (in-process brain)"})
        self._lock = threading.Lock()
        self._statuses: dict[str, str] = {}
        self._steps = 0
        self._active: Any = None
        self._phase = "executing"
        self._last_joint = -1e9
        self._last_image = -1e9
        self._t0_wall = time.monotonic()
        self._queue: queue.SimpleQueue[tuple[str, Any] | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._writer = threading.Thread(target=self._drain, name="episode-recording",
                                        daemon=True)
        self._writer.start()

    def _write(self, topic: str, build: Any) -> None:
        """Queue a message builder (a callable) for the recording thread."""
        self._queue.put((topic, build))

    def _drain(self) -> None:
        from rclpy.serialization import serialize_message

        from frankenbot.nodes.scene_msgs import scene_to_msg

        next_scene = time.monotonic()
        while True:
            try:
                item = self._queue.get(timeout=0.05)
            except queue.Empty:
                item = ("", None)
            if item is None:
                return
            topic, build = item
            if build is not None:
                self._rec.write(topic, TOPICS[topic], serialize_message(build()),
                                log_time_ns=time.time_ns())
            now = time.monotonic()
            if now >= next_scene and not self._stop.is_set():
                next_scene = now + 1.0 / SCENE_HZ
                scene = self._scene()
                self._rec.write("/frankenbot/scene", TOPICS["/frankenbot/scene"],
                                serialize_message(scene_to_msg(scene)))

    # ------------------------------------------------------------------ hooks
    def on_joint_state(self, sample: Any) -> None:
        """A ``sim.runner.JointStateSample`` (physics thread)."""
        if sample.stamp - self._last_joint < 1.0 / JOINT_HZ:
            return
        self._last_joint = sample.stamp

        def build() -> Any:
            from sensor_msgs.msg import JointState

            from frankenbot.nodes.scene_msgs import time_to_msg

            msg = JointState(name=self._joint_names,
                             position=[float(v) for v in sample.positions]
                             + [float(sample.gripper_position)],
                             velocity=[float(v) for v in sample.velocities] + [0.0])
            msg.header.stamp = time_to_msg(sample.stamp)
            return msg

        self._write("/joint_states", build)

    def on_frame(self, frame: Any) -> None:
        """A ``sim.runner.Frame`` (render thread): the colour image, rate-limited."""
        if frame.stamp - self._last_image < 1.0 / IMAGE_HZ:
            return
        self._last_image = frame.stamp

        def build() -> Any:
            from frankenbot.nodes.scene_msgs import image_msg_from_rgb

            return image_msg_from_rgb(frame.rgb, frame.stamp, CAMERA_FRAME)

        self._write("/camera/camera/color/image_raw", build)

    def on_trace(self, entry: Any) -> None:
        """A ``program.trace.TraceEntry`` (control thread): the tree state as the executor
        node would publish it."""
        from frankenbot_interfaces.msg import TreeState

        with self._lock:
            self._steps += entry.event == "enter"
            self._statuses[entry.path] = entry.status.value
            if entry.event in ("enter", "handler", "escalate"):
                self._active = entry
            active = self._active
            msg = TreeState(task_id=self.task_id, program_name=self.instruction,
                            phase=self._phase, active_path=active.path if active else "",
                            active_node=active.node if active else "",
                            active_line=max(0, active.line) if active else 0,
                            node_paths=list(self._statuses),
                            node_statuses=list(self._statuses.values()), steps=self._steps)
        msg.header.stamp = self._stamp()
        self._write("/frankenbot/tree_state", lambda: msg)

    def on_event(self, record: Any) -> None:
        """An ``anomaly.records.AnomalyRecord`` (monitor or control thread)."""
        from frankenbot.nodes.anomaly_msgs import event_to_msg

        msg = event_to_msg(record, task_id=self.task_id, to_time=self._monotonic_to_time)
        msg.header.stamp = self._stamp()
        self._write("/frankenbot/events", lambda: msg)

    def status(self, *, phase: str, done: bool = False, success: bool = False,
               outcome: str = "", summary: str = "", vlm_calls: int = 0) -> None:
        from frankenbot_interfaces.msg import TaskStatus

        self._phase = phase
        msg = TaskStatus(task_id=self.task_id, instruction=self.instruction, phase=phase,
                         done=done, success=success, outcome=outcome, summary=summary,
                         vlm_calls=vlm_calls, duration=time.monotonic() - self._t0_wall)
        msg.header.stamp = self._stamp()
        self._write("/frankenbot/task_status", lambda: msg)

    # ------------------------------------------------------------------ internals
    def _stamp(self) -> Any:
        from frankenbot.nodes.scene_msgs import time_to_msg

        return time_to_msg(float(self._sim_time()))

    def _monotonic_to_time(self, t: float) -> Any:
        """The executor's monotonic clock -> wall time (0 stays the zero Time)."""
        from builtin_interfaces.msg import Time

        from frankenbot.nodes.scene_msgs import time_to_msg

        if t <= 0.0:
            return Time()
        return time_to_msg(time.time() - (time.monotonic() - t))

    def close(self) -> Path:
        """Write what is queued, then finish the file."""
        self._stop.set()
        self._queue.put(None)
        self._writer.join(timeout=30.0)
        self._rec.close()
        return self.path

    def counts(self) -> dict[str, int]:
        return dict(self._rec.counts)

"""In-process scene source over the simulator: rendered frames -> perceived Scene, in background.

The in-process robot adapter (motion, executor) runs the brain without ROS; it still must see the
table only through perception. ``SimSceneSource`` takes a ``SimRunner`` (uses its rendered frames
and joint states) or a bare ``SimWorld`` (renders itself), processes frames on its own thread at
``rate_hz``, and ``source()`` returns the latest perceived Scene (stale when frames stop, e.g.
the camera-freeze anomaly). Only rendered images and joint angles are used, never ground truth.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from frankenbot.errors import FrankenbotError, PerceptionError
from frankenbot.perception.pipeline import PerceptionPipeline
from frankenbot.state import Scene

_log = logging.getLogger(__name__)


class SimSceneSource:
    """Callable ``() -> Scene`` backed by a perception thread over a SimRunner or SimWorld."""

    def __init__(self, runner_or_world: Any, pipeline: PerceptionPipeline,
                 rate_hz: float = 10.0) -> None:
        if not rate_hz > 0:
            raise PerceptionError(f"rate_hz must be > 0, got {rate_hz}")
        self.pipeline = pipeline
        self.rate_hz = float(rate_hz)
        self._runner = runner_or_world if hasattr(runner_or_world, "latest_frame") else None
        self._world = runner_or_world.world if self._runner is not None else runner_or_world
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._new_scene = threading.Condition()  # notified after every processed frame
        self._last_stamp: float | None = None
        self.frames = 0
        self.errors = 0
        self.last_error = ""

    # ------------------------------------------------------------------ consumer API
    def __call__(self) -> Scene:
        return self.scene()

    def scene(self) -> Scene:
        """Latest perceived scene; stale when no frame came within the pipeline's timeout."""
        return self.pipeline.scene_at(float(self._world.time))

    def wait_for_scene(self, timeout: float = 5.0, after: float | None = None) -> Scene:
        """Block until a frame stamped after ``after`` (default: now) is processed."""
        since = float(self._world.time) if after is None else after
        deadline = time.monotonic() + timeout
        with self._new_scene:
            while self._last_stamp is None or self._last_stamp < since:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PerceptionError(f"no perceived frame within {timeout} s "
                                          f"({self.errors} bad frames; {self.last_error})")
                self._new_scene.wait(left)
        return self.scene()

    def reset(self) -> None:
        """Forget tracks (call after the world is reset to a new scene)."""
        self.pipeline.reset()
        with self._new_scene:
            self._last_stamp = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "SimSceneSource":
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="perception", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self._thread = None

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> "SimSceneSource":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ worker
    def _grab(self) -> tuple[float, Any, Any, Any] | None:
        w = self._world
        if self._runner is not None:
            frame = self._runner.latest_frame()
            if frame is None or frame.stamp == self._last_stamp:
                return None  # nothing new rendered yet
            joints = frame.joints  # the arm as the frame shows it (not as it is now)
            if joints is None:
                js = self._runner.latest_joint_state()
                joints = js.positions if js is not None else w.joint_positions()
            return frame.stamp, frame.rgb, frame.depth, joints
        if w.camera_frozen():
            return None
        stamp, qpos = w.render_state()  # one instant: the image and the arm in it
        rgb, depth = w.sense(*w.render_qpos(qpos), stamp)
        return stamp, rgb, depth, w.arm_joints_of(qpos)

    def _loop(self) -> None:
        period = 1.0 / self.rate_hz
        try:
            while not self._stop.is_set():
                t0 = time.monotonic()
                grabbed = self._grab()
                if grabbed is not None:
                    stamp, rgb, depth, joints = grabbed
                    if self._last_stamp is not None and stamp < self._last_stamp:
                        self.pipeline.reset()  # sim time went back: a new episode
                    try:
                        self.pipeline.process(rgb, depth, stamp, joint_positions=joints)
                        self.frames += 1
                    except FrankenbotError as e:
                        self.errors += 1
                        self.last_error = str(e)
                        _log.warning("perception frame rejected: %s", e)
                    with self._new_scene:
                        self._last_stamp = stamp
                        self._new_scene.notify_all()
                self._stop.wait(max(0.0, period - (time.monotonic() - t0)))
        finally:
            closer = getattr(self._world, "close_renderer_of_this_thread", None)
            if self._runner is None and closer is not None:
                closer()

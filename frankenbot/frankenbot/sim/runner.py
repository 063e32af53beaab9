"""SimRunner: runs a SimWorld's physics on its own thread at a chosen real-time factor.

Why a runner: the ROS node and in-process consumers (the robot adapter, perception) need the same
thing — physics that advances on its own clock, joint states at >= 100 Hz of sim time, and RGB-D
frames at a lower rate — without each of them writing a loop. Physics and rendering run on
separate threads, so a 20-40 ms frame never delays a 8 ms joint-state tick. Consumers either
register callbacks (called on the runner's threads: keep them short) or poll ``latest_*``.
``deadline_stats`` counts joint-state ticks emitted more than one period late in wall time.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np

from frankenbot.errors import SimError
from frankenbot.sim.world import SimWorld

_log = logging.getLogger(__name__)

MAX_FIFO_FACTOR = 2.0  # realtime_priority applies only up to this real-time factor
FRAME_TIMES_KEPT = 100  # frames whose draw and publish times are kept (frame_times)
RESYNC_LAG = 0.25  # s of wall time behind schedule after which the runner drops the backlog


@dataclass(frozen=True)
class JointStateSample:
    stamp: float  # sim seconds
    positions: np.ndarray  # 6 UR joints, rad
    velocities: np.ndarray
    gripper_position: float  # knuckle units (0 open .. 0.8 closed)
    gripper_width: float  # m


@dataclass(frozen=True)
class Frame:
    stamp: float  # sim seconds of the rendered state
    rgb: np.ndarray  # HxWx3 uint8
    depth: np.ndarray  # HxW uint16 mm
    joints: tuple[float, ...] | None = None  # the arm's 6 joints in the rendered state


@dataclass(frozen=True)
class DeadlineStats:
    ticks: int
    missed: int
    worst_late_s: float

    @property
    def missed_share(self) -> float:
        return self.missed / self.ticks if self.ticks else 0.0


class SimRunner:
    """Physics + joint-state thread and render thread over one world."""

    def __init__(self, world: SimWorld, *, realtime_factor: float = 1.0,
                 rate_hz: float = 125.0, camera_rate: float = 15.0, render: bool = True,
                 render_process: bool = False, realtime_priority: int = 0) -> None:
        if not (realtime_factor > 0):
            raise SimError(f"realtime_factor must be > 0 (math.inf = as fast as possible), "
                           f"got {realtime_factor}")
        if not (0 < rate_hz <= 1.0 / world.timestep) or not math.isfinite(rate_hz):
            raise SimError(f"rate_hz must be in (0, {1.0 / world.timestep:.0f}], got {rate_hz}")
        if not (camera_rate > 0) or not math.isfinite(camera_rate):
            raise SimError(f"camera_rate must be > 0, got {camera_rate}")
        self.world = world
        self.realtime_factor = float(realtime_factor)
        self.rate_hz = float(rate_hz)
        self.camera_rate = float(camera_rate)
        self.render = render
        # render in a child process (the ROS node does): GL calls hold the GIL for 10-25 ms
        self.render_process = render_process
        # SCHED_FIFO priority for the physics thread in real-time runs (as ros2_control does for
        # its control loop); 0 = normal scheduling. Falls back quietly where not permitted.
        self.realtime_priority = int(realtime_priority)
        self._steps_per_tick = max(1, int(round(1.0 / (rate_hz * world.timestep))))
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._cb_lock = threading.Lock()  # guards the callback lists and latest samples
        self._joint_cbs: list[Callable[[JointStateSample], None]] = []
        self._frame_cbs: list[Callable[[Frame], None]] = []
        self._latest_joint: JointStateSample | None = None
        self._latest_frame: Frame | None = None
        self._ticks = 0
        self._missed = 0
        self._worst = 0.0
        # per published frame: (s drawing + sensing, s in the frame callbacks), the latest ones
        self._frame_times: deque[tuple[float, float]] = deque(maxlen=FRAME_TIMES_KEPT)

    # ------------------------------------------------------------------ consumers
    def on_joint_state(self, callback: Callable[[JointStateSample], None]) -> None:
        with self._cb_lock:
            self._joint_cbs.append(callback)

    def on_frame(self, callback: Callable[[Frame], None]) -> None:
        with self._cb_lock:
            self._frame_cbs.append(callback)

    def latest_joint_state(self) -> JointStateSample | None:
        with self._cb_lock:
            return self._latest_joint

    def latest_frame(self) -> Frame | None:
        with self._cb_lock:
            return self._latest_frame

    def deadline_stats(self) -> DeadlineStats:
        with self._cb_lock:
            return DeadlineStats(self._ticks, self._missed, self._worst)

    def frame_times(self) -> list[tuple[float, float]]:
        """(draw + sensor model, frame callbacks) wall seconds of the latest frames."""
        with self._cb_lock:
            return list(self._frame_times)

    def reset_deadline_stats(self) -> None:
        with self._cb_lock:
            self._ticks = self._missed = 0
            self._worst = 0.0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "SimRunner":
        if self._threads:
            return self
        self._stop.clear()
        self._threads = [threading.Thread(target=self._physics_loop, name="sim-physics",
                                          daemon=True)]
        if self.render:
            self._threads.append(threading.Thread(target=self._render_loop, name="sim-render",
                                                  daemon=True))
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5.0)
        self._threads = []

    def close(self) -> None:
        """Stop the threads (safe to call twice). The world stays usable."""
        self.stop()

    @property
    def running(self) -> bool:
        return bool(self._threads) and not self._stop.is_set()

    def __enter__(self) -> "SimRunner":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ threads
    def _sample(self) -> JointStateSample:
        w = self.world
        with w._lock:
            return JointStateSample(w.time, w.joint_positions(), w.joint_velocities(),
                                    w.gripper_position(), w.gripper_width())

    def _emit_joint(self, sample: JointStateSample) -> None:
        with self._cb_lock:
            self._latest_joint = sample
            callbacks = list(self._joint_cbs)
        for cb in callbacks:
            try:
                cb(sample)
            except Exception:  # a consumer's bug must not stop the physics
                _log.exception("joint-state callback failed")

    def _raise_priority(self) -> None:
        # only for (near) real-time runs: a faster-than-real-time FIFO thread that cannot keep up
        # would never sleep and starve everything else on its core
        if self.realtime_priority <= 0 or self.realtime_factor > MAX_FIFO_FACTOR:
            return
        try:
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_FIFO,
                                  os.sched_param(self.realtime_priority))
            _log.info("physics thread runs SCHED_FIFO priority %d", self.realtime_priority)
        except (AttributeError, OSError) as e:
            _log.info("physics thread keeps normal scheduling (%s)", e)

    def _physics_loop(self) -> None:
        w = self.world
        self._raise_priority()
        fast = math.isinf(self.realtime_factor)
        period_sim = self._steps_per_tick * w.timestep
        period_wall = period_sim / self.realtime_factor
        wall0, sim0 = time.monotonic(), w.time
        while not self._stop.is_set():
            w.step(self._steps_per_tick)
            sample = self._sample()
            if fast:
                self._emit_joint(sample)
                continue
            due = wall0 + (sample.stamp - sim0) / self.realtime_factor
            now = time.monotonic()
            if due - now > RESYNC_LAG:  # the sim jumped ahead (evaluate, reset): new schedule
                wall0, sim0, due = now, sample.stamp, now
            elif due > now:
                time.sleep(due - now)
            self._emit_joint(sample)
            # a deadline is met when the sample is out (callbacks done) within one period
            late = time.monotonic() - due
            with self._cb_lock:
                self._ticks += 1
                if late > period_wall:
                    self._missed += 1
                self._worst = max(self._worst, late)
                if late > RESYNC_LAG:  # a long stall: drop the backlog, count what it cost
                    skipped = int(late / period_wall)
                    self._ticks += skipped
                    self._missed += skipped
            if late > RESYNC_LAG:
                wall0, sim0 = time.monotonic(), sample.stamp

    def _render_loop(self) -> None:
        w = self.world
        period = 1.0 / self.camera_rate
        next_stamp = w.time
        worker = None
        try:
            if self.render_process:
                from frankenbot.sim.render_process import RenderProcess

                worker = RenderProcess(w.model_xml, w.width, w.height)
            while not self._stop.is_set():
                stamp, qpos = w.render_state()  # the frame shows exactly this instant
                if stamp < next_stamp:
                    # until the frame is due (one wake-up, not a 5 ms poll: 200 GIL grabs a
                    # second beside the physics thread), never longer than a period
                    time.sleep(min(period, max(0.001, (next_stamp - stamp)
                                               / self.realtime_factor)))
                    continue
                # stay on the frame grid; when behind by a whole period, restart it from now
                next_stamp += period
                if next_stamp <= stamp:
                    next_stamp = stamp + period
                if w.camera_frozen():
                    continue
                t_draw = time.monotonic()
                if worker is not None:  # it applies the sensor model too, on another core
                    rgb, depth = worker.render(qpos, w.render_settings(), w.sensor_spec(), stamp)
                else:  # the sensor model: what leaves the sim
                    rgb, depth = w.sense(*w.render_qpos(qpos), stamp)
                frame = Frame(stamp, rgb, depth, w.arm_joints_of(qpos))
                t_out = time.monotonic()
                with self._cb_lock:
                    self._latest_frame = frame
                    callbacks = list(self._frame_cbs)
                for cb in callbacks:
                    try:
                        cb(frame)
                    except Exception:
                        _log.exception("frame callback failed")
                with self._cb_lock:
                    self._frame_times.append((t_out - t_draw, time.monotonic() - t_out))
        except SimError:
            _log.exception("rendering stopped")
        finally:
            if worker is not None:
                worker.close()
            w.close_renderer_of_this_thread()

"""Camera -> scene speed over ROS (issue 16): what ``frankenbot bench --component scene-rate``
measures, and the statistics it prints.

The stack (the sim node and every brain node, each its own process, started the way
``frankenbot up --sim`` starts them) is run by ``frankenbot.bringup.scene_rate``; this module only
listens, on an rclpy node it is handed:

* ``camera/camera/color/camera_info``: published by the sim with every RGB-D frame, with the
  frame's stamp; it stands for the camera (a 1 KB message, where subscribing to the images
  themselves would cost the probe ~2 MB of deserialisation per frame on the same 2 cores);
* ``clock``: the sim's clock, to turn a frame's sim-time stamp into wall time;
* ``frankenbot/scene``: every scene message, its stamp (= the source frame's stamp), its
  ``stale`` flag and its ``latency`` field;
* ``frankenbot/events``: anomaly events (``scene_stale`` ones are counted).

Latencies (all wall seconds, on this machine's monotonic clock):

* ``stamp_to_scene``: from the instant the frame shows (its stamp, the sim time the renderer
  drew, converted to wall time by the /clock offset) to the scene message's arrival here. This
  is the whole path: render, sensor model, image publication and transport, perception's wait
  for its timer, its processing and the scene's publication and transport.
* ``info_to_scene``: from this probe's receipt of the frame's camera_info (published right after
  its colour and depth images) to the scene's arrival: the path from publication on.
* ``node_latency``: the scene message's own ``latency`` field (the perception node's time from
  the depth image's arrival to publication).

The /clock offset is the smallest (arrival - stamp) over the last ``CLOCK_WINDOW_S``: a clock
message is published right when its tick is due, so its smallest delay is the transport's (~1 ms).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

CLOCK_WINDOW_S = 2.0
GAP_LIMIT_S = 0.5  # issue 16: no gap between fresh scenes above this
TARGET_RATIO = 0.8  # issue 16: scene >= 8 Hz for a 10 Hz camera
TARGET_LATENCY_S = 0.120  # issue 16: frame-to-scene latency median


@dataclass(frozen=True)
class SceneArrival:
    arrival: float  # monotonic s
    stamp: float  # sim s (the source frame's stamp)
    stale: bool
    node_latency: float  # the message's latency field
    n_objects: int
    frame_wall: float | None  # the frame stamp in monotonic s (None: no clock yet)
    info_arrival: float | None  # when the probe got this frame's camera_info (None: never)


@dataclass
class Recording:
    """Everything the probe heard in one window."""

    t0: float
    t1: float = 0.0
    frames: list[tuple[float, float]] = field(default_factory=list)  # (arrival, stamp)
    scenes: list[SceneArrival] = field(default_factory=list)
    stale_events: int = 0
    events: list[str] = field(default_factory=list)  # every anomaly kind seen


class ClockOffset:
    """monotonic - sim time, from /clock: the minimum over a sliding window."""

    def __init__(self, window_s: float = CLOCK_WINDOW_S) -> None:
        self.window_s = window_s
        self._samples: deque[tuple[float, float]] = deque()  # (arrival, arrival - stamp)

    def add(self, arrival: float, stamp: float) -> None:
        self._samples.append((arrival, arrival - stamp))
        while self._samples and arrival - self._samples[0][0] > self.window_s:
            self._samples.popleft()

    def offset(self) -> float | None:
        return min((o for _, o in self._samples), default=None)


def _stamp(header_stamp: Any) -> float:
    return float(header_stamp.sec) + float(header_stamp.nanosec) * 1e-9


class SceneProbe:
    """Subscriptions on ``node`` that record camera frames and scenes into ``recording``."""

    def __init__(self, node: Any) -> None:
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
        from rclpy.qos import qos_profile_sensor_data
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import CameraInfo

        from frankenbot_interfaces.msg import AnomalyEvent, SceneObjects

        self._lock = threading.Lock()
        self._clock = ClockOffset()
        self._info_arrivals: dict[float, float] = {}  # stamp (rounded) -> arrival
        self.recording: Recording | None = None
        group = MutuallyExclusiveCallbackGroup()
        self._subs = [
            node.create_subscription(Clock, "clock", self._on_clock, 10, callback_group=group),
            node.create_subscription(CameraInfo, "camera/camera/color/camera_info",
                                     self._on_info, qos_profile_sensor_data,
                                     callback_group=group),
            node.create_subscription(SceneObjects, "frankenbot/scene", self._on_scene, 50,
                                     callback_group=group),
            node.create_subscription(AnomalyEvent, "frankenbot/events", self._on_event, 50,
                                     callback_group=group)]
        self._node = node

    def close(self) -> None:
        for s in self._subs:
            self._node.destroy_subscription(s)
        self._subs = []

    def start(self) -> None:
        with self._lock:
            self.recording = Recording(t0=time.monotonic())

    def stop(self) -> Recording:
        with self._lock:
            rec, self.recording = self.recording, None
        assert rec is not None, "stop() without start()"
        rec.t1 = time.monotonic()
        return rec

    def _on_clock(self, msg: Any) -> None:
        now = time.monotonic()
        with self._lock:
            self._clock.add(now, _stamp(msg.clock))

    def _on_info(self, msg: Any) -> None:
        now = time.monotonic()
        stamp = _stamp(msg.header.stamp)
        with self._lock:
            self._info_arrivals[round(stamp, 4)] = now
            if len(self._info_arrivals) > 200:
                for k in sorted(self._info_arrivals)[:100]:
                    del self._info_arrivals[k]
            if self.recording is not None:
                self.recording.frames.append((now, stamp))

    def _on_scene(self, msg: Any) -> None:
        now = time.monotonic()
        stamp = _stamp(msg.header.stamp)
        with self._lock:
            if self.recording is None:
                return
            offset = self._clock.offset()
            self.recording.scenes.append(SceneArrival(
                now, stamp, bool(msg.stale), float(msg.latency), len(msg.objects),
                None if offset is None else stamp + offset,
                self._info_arrivals.get(round(stamp, 4))))

    def _on_event(self, msg: Any) -> None:
        with self._lock:
            if self.recording is None:
                return
            self.recording.events.append(str(msg.kind))
            if msg.kind == "scene_stale":
                self.recording.stale_events += 1


def _dist(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "median_ms": None, "p95_ms": None, "max_ms": None}
    a = np.asarray(values) * 1000.0
    return {"n": int(a.size), "median_ms": round(float(np.median(a)), 1),
            "p95_ms": round(float(np.percentile(a, 95)), 1), "max_ms": round(float(a.max()), 1)}


def summarise(rec: Recording) -> dict[str, Any]:
    """Rates, latencies and gaps of one window (see the module docstring for what each is)."""
    duration = max(rec.t1 - rec.t0, 1e-9)
    fresh = [s for s in rec.scenes if not s.stale]
    # a frame processed twice would count twice: rate of distinct stamps
    fresh_stamps = {round(s.stamp, 4) for s in fresh}
    arrivals = [rec.t0] + [s.arrival for s in fresh] + [rec.t1]
    gaps = np.diff(arrivals) if len(arrivals) > 1 else np.zeros(0)
    camera_hz = len(rec.frames) / duration
    frame_gaps = np.diff([rec.t0] + [a for a, _ in rec.frames] + [rec.t1])
    scene_hz = len(fresh_stamps) / duration
    stamp_lat = [s.arrival - s.frame_wall for s in fresh if s.frame_wall is not None]
    info_lat = [s.arrival - s.info_arrival for s in fresh if s.info_arrival is not None]
    out = {
        "duration_s": round(duration, 2),
        "camera_frames": len(rec.frames), "camera_hz": round(camera_hz, 2),
        "camera_max_gap_s": round(float(frame_gaps.max()), 3) if frame_gaps.size else None,
        "scenes": len(fresh_stamps), "scene_hz": round(scene_hz, 2),
        "scene_per_frame": round(scene_hz / camera_hz, 3) if camera_hz > 0 else None,
        "stale_messages": len(rec.scenes) - len(fresh),
        "max_gap_s": round(float(gaps.max()), 3) if gaps.size else None,
        "gaps_over_0_5_s": int(np.count_nonzero(gaps > GAP_LIMIT_S)),
        "stamp_to_scene": _dist(stamp_lat),
        "info_to_scene": _dist(info_lat),
        "node_latency": _dist([s.node_latency for s in fresh]),
        "objects_median": float(np.median([s.n_objects for s in fresh])) if fresh else 0.0,
        "scene_stale_events": rec.stale_events,
        "anomaly_events": len(rec.events),
    }
    med = out["stamp_to_scene"]["median_ms"]
    out["meets_targets"] = bool(
        camera_hz > 0 and scene_hz >= TARGET_RATIO * camera_hz and med is not None
        and med <= TARGET_LATENCY_S * 1000 and (out["max_gap_s"] or 0) <= GAP_LIMIT_S
        and rec.stale_events == 0)
    return out


def format_line(name: str, s: dict[str, Any]) -> str:
    lat = s["stamp_to_scene"]
    node = s["node_latency"]
    return (f"{name}: scene {s['scene_hz']:.2f} Hz for camera {s['camera_hz']:.2f} Hz "
            f"({s['scenes']} scenes / {s['camera_frames']} frames in {s['duration_s']:.0f} s); "
            f"frame stamp -> scene arrival median {lat['median_ms']} p95 {lat['p95_ms']} max "
            f"{lat['max_ms']} ms (node's own {node['median_ms']} ms); largest gap "
            f"{s['max_gap_s']} s, {s['gaps_over_0_5_s']} over 0.5 s; stale messages "
            f"{s['stale_messages']}, scene_stale anomalies {s['scene_stale_events']}; "
            f"targets {'met' if s['meets_targets'] else 'NOT met'}")


class CpuMeter:
    """CPU seconds of a set of processes (and their children) over a window, via /proc."""

    def __init__(self, pids: dict[str, int], alone: tuple[str, ...] = ()) -> None:
        self.pids = dict(pids)
        self.alone = alone  # names whose children are not counted (the bench: its children are
        # the nodes)
        self._start: dict[str, float] = {}

    def _cpu(self, name: str) -> float:
        try:
            import psutil
        except ImportError:  # pragma: no cover - psutil is in the requirements
            return 0.0
        try:
            p = psutil.Process(self.pids[name])
            procs = [p] if name in self.alone else [p, *p.children(recursive=True)]
        except psutil.Error:
            return 0.0
        total = 0.0
        for q in procs:
            try:
                t = q.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def start(self) -> None:
        self._start = {name: self._cpu(name) for name in self.pids}
        self._t0 = time.monotonic()

    def stop(self) -> dict[str, float]:
        dt = max(time.monotonic() - self._t0, 1e-9)
        return {name: round((self._cpu(name) - self._start.get(name, 0.0)) / dt, 3)
                for name in self.pids}


def measure_window(probe: SceneProbe, seconds: float, cpu: CpuMeter | None = None,
                   until: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Record for ``seconds`` (or until ``until()`` is true) and summarise."""
    load0 = os.getloadavg()
    if cpu is not None:
        cpu.start()
    probe.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (until is not None and until()):
        time.sleep(0.1)
    rec = probe.stop()
    out = summarise(rec)
    out["loadavg_1m_start_end"] = [round(load0[0], 2), round(os.getloadavg()[0], 2)]
    if cpu is not None:
        out["cpu_cores_by_node"] = cpu.stop()
    return out

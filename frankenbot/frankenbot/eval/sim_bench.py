"""Simulator benchmark: physics speed, RGB-D frame time, joint-state deadlines of the node.

Targets (issue #4): physics with the full scene >= 10x real time without rendering; RGB + depth
at 640x480 <= 40 ms; < 2 % missed joint-state deadlines over a 60 s real-time run of the node.
The node is measured as a consumer sees it: a separate process, /joint_states over DDS, each
message compared with the wall time its sim stamp was due (the first second is warm-up).
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from frankenbot.sim.controller import TrajectoryPoint
from frankenbot.sim.kinematics import HOME
from frankenbot.sim.world import SimWorld


def physics_speed(sim_seconds: float) -> dict[str, float]:
    """Full scene (every object + drawer), arm sweeping back and forth, no rendering."""
    with SimWorld(task=None, seed=0, width=64, height=48) as world:
        swing = np.array([0.5, 0.2, -0.3, 0.3, 0.4, 0.6])
        points = [TrajectoryPoint(1.0 + 2.0 * k, (HOME + swing * (1 if k % 2 else -1)).tolist())
                  for k in range(int(sim_seconds / 2) + 2)]
        world.command_trajectory(world.JOINT_NAMES, points)
        t0, w0, c0 = world.time, time.perf_counter(), time.thread_time()
        world.advance(sim_seconds)
        wall, cpu = time.perf_counter() - w0, time.thread_time() - c0
        sim = world.time - t0
        steps = sim / world.timestep
        # wall time is what a run gets on this machine now; CPU time is what the code costs
        # (the two differ when other processes compete for the cores)
        return {"sim_s": sim, "wall_s": wall, "cpu_s": cpu, "realtime_factor": sim / wall,
                "realtime_factor_cpu": sim / cpu if cpu > 0 else float("inf"),
                "us_per_step": wall / steps * 1e6, "cpu_us_per_step": cpu / steps * 1e6,
                "contacts": float(world.data.ncon)}


def frame_time(frames: int, width: int = 640, height: int = 480) -> dict[str, float]:
    with SimWorld(task=None, seed=0, width=width, height=height) as world:
        world.render_rgbd()  # context creation and first upload are not frame time
        times = []
        for _ in range(frames):
            world.advance(0.02)
            t = time.perf_counter()
            world.render_rgbd()
            times.append((time.perf_counter() - t) * 1000)
        return {"frames": float(frames), "mean_ms": statistics.fmean(times),
                "p95_ms": float(np.percentile(times, 95)), "max_ms": max(times)}


def node_deadlines(seconds: float, rate_hz: float = 125.0,
                   realtime_priority: int = 50) -> dict[str, float]:
    """Run the frankenbot_sim node (640x480 camera on) and time /joint_states at a subscriber.

    ``realtime_priority`` as in config/sim.yaml (SCHED_FIFO for the physics thread where the
    process may use it; 0 = normal scheduling).
    """
    import rclpy
    from sensor_msgs.msg import JointState

    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(60 + os.getpid() % 30)
    log = Path(tempfile.mkstemp(prefix="fb-sim-bench-", suffix=".log")[1])
    proc = subprocess.Popen(
        [sys.executable, "-m", "frankenbot.nodes.sim_node", "--ros-args", "-p",
         f"joint_state_rate:={rate_hz}", "-p", f"realtime_priority:={realtime_priority}"],
        stdout=log.open("w"), stderr=subprocess.STDOUT,
        env=env, start_new_session=True)
    old_domain = os.environ.get("ROS_DOMAIN_ID")
    os.environ["ROS_DOMAIN_ID"] = env["ROS_DOMAIN_ID"]
    context = rclpy.context.Context()
    rclpy.init(context=context)
    arrivals: list[tuple[float, float]] = []
    try:
        node = rclpy.create_node("sim_benchmark_listener", context=context)
        node.create_subscription(JointState, "joint_states", lambda m: arrivals.append(
            (time.monotonic(), m.header.stamp.sec + m.header.stamp.nanosec * 1e-9)), 100)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        deadline = time.monotonic() + 60.0
        while not arrivals and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        if not arrivals:
            raise RuntimeError(f"the sim node published nothing; log: {log.read_text()[-800:]}")
        t_end = time.monotonic() + 1.0 + seconds
        while time.monotonic() < t_end:
            executor.spin_once(timeout_sec=0.01)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
        if old_domain is None:
            os.environ.pop("ROS_DOMAIN_ID", None)
        else:
            os.environ["ROS_DOMAIN_ID"] = old_domain
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        own = re.search(r"joint-state deadlines: ticks=(\d+) missed=(\d+)", log.read_text())
        log.unlink(missing_ok=True)
    period = 1.0 / rate_hz
    t_first = arrivals[0][0] + 1.0
    window = [(a, s) for a, s in arrivals if a >= t_first]
    if len(window) < 2:
        return {"ticks": float(len(window)), "missed_share": 1.0}
    a0, s0 = window[0]
    # the best-case offset between sim stamps and arrival times is the schedule
    offsets = np.array([a - a0 - (s - s0) for a, s in window])
    lateness = offsets - np.min(offsets)
    sim_span = window[-1][1] - s0
    expected = int(round(sim_span / period)) + 1
    late = int(np.sum(lateness > period))
    lost = max(0, expected - len(window))
    node_ticks, node_missed = (int(own.group(1)), int(own.group(2))) if own else (0, 0)
    return {"seconds": seconds, "ticks": float(len(window)), "expected_ticks": float(expected),
            "node_own_ticks": float(node_ticks),
            "node_own_missed_share": node_missed / node_ticks if node_ticks else float("nan"),
            "late": float(late), "lost": float(lost),
            "missed_share": (late + lost) / max(expected, 1),
            "rate_hz_sim": (len(window) - 1) / sim_span if sim_span > 0 else 0.0,
            "sim_per_wall": sim_span / (window[-1][0] - a0),
            "p99_late_ms": float(np.percentile(lateness, 99) * 1000)}


def run_benchmark(quick: bool = False) -> dict[str, object]:
    """Measure and print the three simulator numbers; returns them as a dict."""
    results: dict[str, object] = {"cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} "
          "(real-time numbers suffer when the load exceeds the CPU count)")
    phys = physics_speed(5.0 if quick else 20.0)
    results["physics"] = phys
    print(f"physics, full scene, no rendering: {phys['realtime_factor']:.1f}x real time by wall "
          f"clock ({phys['us_per_step']:.0f} us/step), {phys['realtime_factor_cpu']:.1f}x per "
          f"CPU-second ({phys['cpu_us_per_step']:.0f} us/step), {phys['contacts']:.0f} contacts "
          f"[target >= 10x] {'OK' if phys['realtime_factor'] >= 10 else 'MISSED'} by wall clock")
    frames = frame_time(10 if quick else 40)
    results["rgbd_640x480"] = frames
    print(f"RGB + depth 640x480: mean {frames['mean_ms']:.1f} ms, p95 {frames['p95_ms']:.1f} ms "
          f"[target <= 40 ms] {'OK' if frames['mean_ms'] <= 40 else 'MISSED'}")
    try:
        node = node_deadlines(10.0 if quick else 60.0)
        normal = node_deadlines(10.0, realtime_priority=0) if not quick else None
    except (ImportError, RuntimeError) as e:
        print(f"node joint-state deadlines: not measured ({e})")
        results["node"] = {"error": str(e)}
        return results
    results["node"] = node
    results["node_normal_scheduling_10s"] = normal
    results["load_after"] = os.getloadavg()[0]
    own = float(node.get("node_own_missed_share", float("nan")))
    print(f"node joint-state deadlines over {node.get('seconds', 0):.0f} s real time, node side "
          f"(sample published within one period of its due time): {own:.2%} of "
          f"{node.get('node_own_ticks', 0):.0f} ticks missed "
          f"[target < 2%] {'OK' if own < 0.02 else 'MISSED'}")
    print(f"  consumer side (DDS + a normal-priority subscriber in another process): "
          f"{float(node['missed_share']):.2%} arrived > 1 period late "
          f"({node.get('lost', 0):.0f} lost of {node.get('expected_ticks', 0):.0f}); "
          f"{node.get('rate_hz_sim', 0):.1f} Hz sim time, x{node.get('sim_per_wall', 0):.3f} real "
          f"time, p99 lateness {node.get('p99_late_ms', 0):.1f} ms")
    if normal is not None:
        print(f"  same node without SCHED_FIFO (realtime_priority 0), 10 s: node side "
              f"{float(normal.get('node_own_missed_share', float('nan'))):.2%}, consumer side "
              f"{float(normal['missed_share']):.2%}")
    return results


if __name__ == "__main__":  # pragma: no cover
    run_benchmark(quick="--quick" in sys.argv)

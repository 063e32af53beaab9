"""Motion benchmark: planning time of a full pick, and e-stop latency.

1. IK + trajectory generation (+ safety check) for a full pick, as the primitives do it: choose
   the grasp yaw among the block's symmetric yaws (4 IK calls), plan the joint move to the
   pre-grasp pose, the straight-line approach and the straight-line lift, each checked by the
   envelope. Random blocks over the table, from the home pose. Target: <= 5 ms.
2. E-stop latency over ROS 2: a second node publishes std_msgs/Bool on /frankenbot/estop; we
   time (a) the adapter's callback from entry to the stop trajectory being published and (b) the
   whole path from the Bool publish to the empty JointTrajectory arriving at a listener (two DDS
   hops). Target: one control cycle of the UR5e controller (500 Hz: 2 ms).

Run: ``python -c "from frankenbot.eval.motion_bench import run_benchmark; run_benchmark()"``.
"""

from __future__ import annotations

import math
import os
import statistics
import threading
import time
from typing import Any

import numpy as np

from frankenbot.motion.config import load_arm_config
from frankenbot.motion.jtc_backend import JtcBackend
from frankenbot.motion.kinematics import UR5eKinematics, symmetric_yaws, top_down_pose
from frankenbot.motion.safety import SafetyEnvelope
from frankenbot.primitives.config import PrimitiveConfig

CONTROL_CYCLE_S = 0.002  # UR5e controller: 500 Hz
PICK_TARGET_S = 0.005


class _NoRobot:
    """Planning needs no robot; speed scaling 1.0."""

    def speed_scaling(self) -> float:
        return 1.0


def plan_pick(backend: JtcBackend, kin: UR5eKinematics, q0: np.ndarray, x: float, y: float,
              yaw: float, cfg: PrimitiveConfig, size: float = 0.04) -> int:
    """Plan (not run) a full pick as the pick primitive does; returns the number of samples."""
    top = size
    above = top + cfg.approach_height
    grasp = max(top - min(cfg.grasp_depth, size / 2), cfg.min_tcp_z)
    best, best_cost = None, math.inf
    for cand in symmetric_yaws(yaw, math.pi / 2):
        sol = kin.ik(top_down_pose(x, y, above, cand), q0)
        cost = float(np.sum((sol - q0) ** 2))
        if cost < best_cost:
            best, best_cost = cand, cost
    assert best is not None
    t1 = backend.plan_pose(q0, top_down_pose(x, y, above, best))
    q1 = np.asarray(t1.final_positions)
    t2 = backend.plan_linear(q1, top_down_pose(x, y, grasp, best))
    q2 = np.asarray(t2.final_positions)
    t3 = backend.plan_linear(q2, top_down_pose(x, y, above, best))
    return len(t1) + len(t2) + len(t3)


def bench_pick_planning(n: int, seed: int = 0) -> dict[str, float]:
    cfg = load_arm_config()
    kin = UR5eKinematics(cfg.kinematics)
    envelope = SafetyEnvelope(cfg.safety, kin)
    backend = JtcBackend(_NoRobot(), kinematics=kin, envelope=envelope,  # type: ignore[arg-type]
                         limits=cfg.limits, execution=cfg.execution, posture=cfg.home)
    q0 = np.array(cfg.home)
    prim = PrimitiveConfig()
    rng = np.random.default_rng(seed)
    plan_pick(backend, kin, q0, 0.45, 0.0, 0.0, prim)  # warm-up (imports, caches)
    times, cpu, samples = [], [], []
    for _ in range(n):
        x, y = rng.uniform(0.30, 0.66), rng.uniform(-0.30, 0.22)
        yaw = rng.uniform(-math.pi, math.pi)
        t0, c0 = time.perf_counter(), time.thread_time()
        samples.append(plan_pick(backend, kin, q0, x, y, yaw, prim))
        cpu.append(time.thread_time() - c0)
        times.append(time.perf_counter() - t0)
    times.sort()
    cpu.sort()
    return {"n": n, "median_ms": 1e3 * statistics.median(times),
            "p95_ms": 1e3 * times[int(0.95 * (n - 1))], "max_ms": 1e3 * times[-1],
            "cpu_median_ms": 1e3 * statistics.median(cpu),
            "cpu_p95_ms": 1e3 * cpu[int(0.95 * (n - 1))],
            "mean_samples": float(np.mean(samples)), "load_average": os.getloadavg()[0],
            "cpus": os.cpu_count() or 1}


def bench_estop_ros(n: int) -> dict[str, float]:
    """E-stop latency through real rclpy publishers/subscriptions (loopback DDS)."""
    import rclpy
    from std_msgs.msg import Bool
    from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

    from frankenbot.nodes.ros_robot import TRAJECTORY_TOPIC, RosRobot
    from frankenbot.nodes.spin import Spinner, make_executor
    from frankenbot.state import Scene

    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        brain = rclpy.create_node("estop_bench_brain", context=context)
        operator = rclpy.create_node("estop_bench_operator", context=context)
        robot = RosRobot(brain, scene_source=lambda: Scene())
        arrivals: list[float] = []
        arrived = threading.Event()

        def on_traj(msg: JointTrajectoryMsg) -> None:
            if not msg.points:
                arrivals.append(time.perf_counter())
                arrived.set()

        operator.create_subscription(JointTrajectoryMsg, TRAJECTORY_TOPIC, on_traj, 10)
        pub = operator.create_publisher(Bool, "frankenbot/estop", 10)
        executor = make_executor(3, context=context)
        executor.add_node(brain)
        executor.add_node(operator)
        spinner = Spinner(executor, "motion-bench").start()
        deadline = time.monotonic() + 10.0
        while (pub.get_subscription_count() == 0
               or brain.count_publishers(TRAJECTORY_TOPIC) == 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        end_to_end = []
        for _ in range(n):
            arrived.clear()
            t0 = time.perf_counter()
            pub.publish(Bool(data=True))
            if not arrived.wait(2.0):
                continue
            end_to_end.append(arrivals[-1] - t0)
            pub.publish(Bool(data=False))
            time.sleep(0.05)
        in_callback = list(robot.estop_latencies)
        spinner.stop()
        executor.shutdown()
        brain.destroy_node()
        operator.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    if not end_to_end or not in_callback:
        return {"n": 0}
    end_to_end.sort()
    in_callback.sort()
    return {"n": len(end_to_end),
            "callback_median_ms": 1e3 * statistics.median(in_callback),
            "callback_max_ms": 1e3 * in_callback[-1],
            "e2e_median_ms": 1e3 * statistics.median(end_to_end),
            "e2e_p95_ms": 1e3 * end_to_end[int(0.95 * (len(end_to_end) - 1))],
            "e2e_max_ms": 1e3 * end_to_end[-1]}


def run_benchmark(quick: bool = False) -> dict[str, object]:
    """Print and return the motion numbers (quick: fewer repetitions)."""
    pick = bench_pick_planning(50 if quick else 500)
    print("motion benchmark")
    print(f"  full pick planning (yaw choice + joint move + approach + lift, IK + timing + "
          f"safety check), {pick['n']} random blocks:")
    print(f"    wall: median {pick['median_ms']:.2f} ms, p95 {pick['p95_ms']:.2f} ms, max "
          f"{pick['max_ms']:.2f} ms (load average {pick['load_average']:.1f} on "
          f"{pick['cpus']} CPUs)")
    print(f"    CPU time of the planning thread: median {pick['cpu_median_ms']:.2f} ms, p95 "
          f"{pick['cpu_p95_ms']:.2f} ms; {pick['mean_samples']:.0f} trajectory samples "
          f"(target <= {PICK_TARGET_S * 1e3:.0f} ms: "
          f"{'met' if pick['median_ms'] <= PICK_TARGET_S * 1e3 else 'MISSED'} by wall median, "
          f"{'met' if pick['cpu_median_ms'] <= PICK_TARGET_S * 1e3 else 'MISSED'} by CPU "
          f"median)")
    results: dict[str, Any] = {"pick_planning": pick}
    try:
        estop = bench_estop_ros(5 if quick else 30)
    except ImportError as e:  # no rclpy on this install
        estop = {"n": 0, "error": str(e)}
    results["estop"] = estop
    if estop.get("n"):
        cycle = CONTROL_CYCLE_S * 1e3
        print(f"  e-stop over ROS 2 ({estop['n']} trials), control cycle {cycle:.0f} ms (500 Hz):")
        print(f"    Bool received -> stop trajectory published (in the callback): median "
              f"{estop['callback_median_ms']:.3f} ms, max {estop['callback_max_ms']:.3f} ms "
              f"({'met' if estop['callback_max_ms'] <= cycle else 'MISSED'})")
        print(f"    Bool published -> stop trajectory received by the controller's topic "
              f"(2 DDS hops): median {estop['e2e_median_ms']:.2f} ms, p95 "
              f"{estop['e2e_p95_ms']:.2f} ms, max {estop['e2e_max_ms']:.2f} ms "
              f"({'met' if estop['e2e_p95_ms'] <= cycle else 'MISSED'} at p95)")
    else:
        print(f"  e-stop over ROS 2: not measured ({estop.get('error', 'no trial completed')})")
    return results


if __name__ == "__main__":  # pragma: no cover
    run_benchmark()

"""The frankenbot_sim node over real DDS, in a separate process (UR driver + RealSense API)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

from builtin_interfaces.msg import Duration  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image, JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from frankenbot import robotiq  # noqa: E402
from frankenbot.sim.model import JOINT_NAMES  # noqa: E402
from frankenbot_interfaces.srv import EvaluateTask, InjectAnomaly, ResetScene  # noqa: E402


class Client:
    """Test-side node: latest messages per topic, publishers and service clients."""

    def __init__(self, context) -> None:
        self.node = rclpy.create_node("sim_node_test_client", context=context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.msgs: dict[str, list] = {"joint": [], "color": [], "depth": [], "info": [],
                                      "clock": []}
        n = self.node
        n.create_subscription(Clock, "/clock", lambda m: self.msgs["clock"].append(m), 50)
        n.create_subscription(JointState, "/joint_states",
                              lambda m: self.msgs["joint"].append(m), 50)
        n.create_subscription(Image, "/camera/camera/color/image_raw",
                              lambda m: self.msgs["color"].append(m), 5)
        n.create_subscription(Image, "/camera/camera/aligned_depth_to_color/image_raw",
                              lambda m: self.msgs["depth"].append(m), 5)
        n.create_subscription(CameraInfo, "/camera/camera/color/camera_info",
                              lambda m: self.msgs["info"].append(m), 5)
        self.traj_pub = n.create_publisher(
            JointTrajectory, "/scaled_joint_trajectory_controller/joint_trajectory", 10)
        self.grip_pub = n.create_publisher(Float64MultiArray, robotiq.COMMAND_TOPIC, 10)
        self.reset = n.create_client(ResetScene, "/frankenbot_sim/reset")
        self.inject = n.create_client(InjectAnomaly, "/frankenbot_sim/inject_anomaly")
        self.evaluate = n.create_client(EvaluateTask, "/frankenbot_sim/evaluate")

    def spin_until(self, predicate, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.05)
        return bool(predicate())

    def call(self, client, request, timeout: float = 15.0):
        assert client.wait_for_service(timeout_sec=timeout), client.srv_name
        future = client.call_async(request)
        assert self.spin_until(future.done, timeout), f"{client.srv_name} timed out"
        return future.result()

    def arm(self) -> np.ndarray:
        m = self.msgs["joint"][-1]
        return np.array([m.position[list(m.name).index(j)] for j in JOINT_NAMES])

    def knuckle(self) -> float:
        m = self.msgs["joint"][-1]
        return m.position[list(m.name).index(robotiq.KNUCKLE_JOINT)]

    def send(self, names, positions, t: float) -> None:
        msg = JointTrajectory()
        msg.joint_names = list(names)
        sec = int(t)
        msg.points = [JointTrajectoryPoint(positions=list(map(float, positions)),
                                           time_from_start=Duration(
                                               sec=sec, nanosec=int((t - sec) * 1e9)))]
        self.traj_pub.publish(msg)

    def settle(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)


@pytest.fixture(scope="module")
def sim():
    log = Path(tempfile.mkstemp(prefix="fb-sim-node-", suffix=".log")[1])
    cmd = [sys.executable, "-m", "frankenbot.nodes.sim_node", "--ros-args",
           "-p", "task:=pick_up", "-p", "seed:=1", "-p", "camera_width:=320",
           "-p", "camera_height:=240", "-p", "camera_rate:=10.0"]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env=dict(os.environ), start_new_session=True)
    context = rclpy.context.Context()
    rclpy.init(context=context)
    client = Client(context)
    try:
        assert client.spin_until(lambda: len(client.msgs["joint"]) > 5, 40.0), \
            "no /joint_states from the sim node"
        yield client
    finally:
        client.node.destroy_node()
        rclpy.shutdown(context=context)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        text = log.read_text(errors="replace")
        sys.stderr.write(f"\n--- sim node output ---\n{text[-3000:]}\n")
        log.unlink(missing_ok=True)


def test_joint_states_carry_ur_joints_and_knuckle_at_100hz(sim):
    sim.msgs["joint"].clear()
    sim.settle(1.0)
    msgs = sim.msgs["joint"]
    assert list(msgs[-1].name) == [*JOINT_NAMES, robotiq.KNUCKLE_JOINT]
    stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in msgs]
    span = stamps[-1] - stamps[0]
    assert span > 0.5
    assert (len(stamps) - 1) / span >= 100.0  # rate in sim time
    assert all(math.isfinite(v) for m in msgs for v in m.position)


def test_clock_runs_at_clock_rate_on_the_joint_states_grid(sim):
    """/clock at clock_rate (50 Hz by default), each tick one of a joint state's stamps: a
    node following sim time pays a callback per clock message, joint states stay at 125 Hz."""
    sim.msgs["clock"].clear()
    sim.msgs["joint"].clear()
    sim.settle(1.5)
    clocks = [m.clock.sec + m.clock.nanosec * 1e-9 for m in sim.msgs["clock"]]
    joints = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in sim.msgs["joint"]}
    span = clocks[-1] - clocks[0]
    assert span > 1.0
    assert 40.0 <= (len(clocks) - 1) / span <= 60.0
    assert all(b > a for a, b in zip(clocks, clocks[1:], strict=False))
    on_grid = sum((m.clock.sec, m.clock.nanosec) in joints for m in sim.msgs["clock"])
    assert on_grid >= 0.8 * len(clocks)  # the rest were sent before this window's joints


def test_camera_topics_have_consistent_sizes_encodings_and_stamps(sim):
    for key in ("color", "depth", "info"):
        sim.msgs[key].clear()
    assert sim.spin_until(lambda: all(sim.msgs[k] for k in ("color", "depth", "info")), 20.0)
    color, depth, info = sim.msgs["color"][-1], sim.msgs["depth"][-1], sim.msgs["info"][-1]
    assert (color.width, color.height, color.encoding) == (320, 240, "rgb8")
    assert (depth.width, depth.height, depth.encoding) == (320, 240, "16UC1")
    assert color.step == 320 * 3 and len(color.data) == 320 * 240 * 3
    assert depth.step == 320 * 2 and len(depth.data) == 320 * 240 * 2
    assert (info.width, info.height) == (320, 240)
    assert info.header.frame_id == color.header.frame_id == "camera_color_optical_frame"
    assert info.k[0] > 0 and info.k[2] == pytest.approx(159.5)
    d = np.frombuffer(bytes(depth.data), "<u2").reshape(240, 320)
    assert 300 < np.median(d[d > 0]) < 3000  # table at about a metre, in millimetres
    stamps = {(m.header.stamp.sec, m.header.stamp.nanosec)
              for m in (sim.msgs["color"][-1], sim.msgs["depth"][-1])}
    assert len(stamps) == 1


def test_reset_gives_task_and_rejects_unknown_task(sim):
    r = sim.call(sim.reset, ResetScene.Request(task="put_in_bowl", seed=4))
    assert r.ok and r.task_id == "put_in_bowl-4" and r.instruction
    assert any(n.endswith("_bowl") for n in r.object_names)
    bad = sim.call(sim.reset, ResetScene.Request(task="make_coffee", seed=0))
    assert not bad.ok and "put_in_bowl" in bad.message


def test_joint_trajectory_moves_the_arm_to_the_target(sim):
    sim.call(sim.reset, ResetScene.Request(task="pick_up", seed=1))
    sim.settle(0.3)
    start = sim.arm()
    target = start + np.array([0.25, -0.1, 0.15, 0.1, -0.2, 0.3])
    sim.send(JOINT_NAMES, target, 1.0)
    assert sim.spin_until(lambda: np.max(np.abs(sim.arm() - target)) < 0.01, 10.0), \
        f"arm at {sim.arm()}, target {target}"


@pytest.mark.parametrize("case", ["nan", "names", "missing", "limits"])
def test_bad_trajectories_are_rejected_and_the_arm_holds(sim, case):
    sim.settle(0.2)
    before = sim.arm()
    names, target = list(JOINT_NAMES), before + 0.3
    if case == "nan":
        target[2] = float("nan")
    elif case == "names":
        names[0] = "shoulder_yaw_joint"
    elif case == "missing":
        names, target = names[:5], target[:5]
    else:
        target[2] = 3.5  # elbow limit is pi
    sim.send(names, target, 0.5)
    sim.settle(1.2)
    assert np.max(np.abs(sim.arm() - before)) < 2e-3


def test_gripper_command_closes_the_fingers(sim):
    sim.grip_pub.publish(Float64MultiArray(data=[robotiq.CLOSED_POSITION]))
    assert sim.spin_until(lambda: sim.knuckle() > 0.75, 10.0)
    sim.grip_pub.publish(Float64MultiArray(data=[0.0]))
    assert sim.spin_until(lambda: sim.knuckle() < 0.05, 10.0)


def test_evaluate_reports_failure_with_details(sim):
    sim.call(sim.reset, ResetScene.Request(task="pick_up", seed=2))
    r = sim.call(sim.evaluate, EvaluateTask.Request(stability_window=0.2))
    assert not r.success and r.task_id == "pick_up-2"
    assert "lifted" in r.details and '"family": "pick_up"' in r.details_json


def test_inject_rejects_unknown_kind_and_camera_freeze_stops_frames(sim):
    bad = sim.call(sim.inject, InjectAnomaly.Request(kind="earthquake"))
    assert not bad.ok and "camera_freeze" in bad.message
    bad_phase = sim.call(sim.inject, InjectAnomaly.Request(kind="drop_in_transport",
                                                           phase="lunch"))
    assert not bad_phase.ok and "transport" in bad_phase.message
    bad_json = sim.call(sim.inject, InjectAnomaly.Request(kind="drawer_stuck",
                                                          params_json="{duration: 3"))
    assert not bad_json.ok and "JSON" in bad_json.message
    armed = sim.call(sim.inject, InjectAnomaly.Request(kind="drop_in_transport"))
    assert armed.ok and armed.anomaly_class == "predictable" and "armed" in armed.message
    ok = sim.call(sim.inject, InjectAnomaly.Request(kind="camera_freeze",
                                                    params_json='{"duration": 30}'))
    assert ok.ok and ok.anomaly_class == "unpredictable"
    sim.settle(0.5)
    sim.msgs["color"].clear()
    sim.settle(1.5)
    assert not sim.msgs["color"]
    sim.call(sim.reset, ResetScene.Request(task="pick_up", seed=1))  # reset clears the freeze
    assert sim.spin_until(lambda: bool(sim.msgs["color"]), 10.0)

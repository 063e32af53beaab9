"""The motion stack through ROS 2: RosRobot (real rclpy, this process) against the sim node
(``frankenbot_sim``, another process), over the UR driver's topics.

The scene is TEST-ONLY ground truth of the task's initial layout, rebuilt locally from the same
(task, seed) the sim node was reset to (scenes are deterministic); the verdict comes from the sim
node's oracle service ~/evaluate.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from primitives_support import ground_truth_scene  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState as JointStateMsg  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg  # noqa: E402

from frankenbot.common import FailureCode  # noqa: E402
from frankenbot.motion.kinematics import JOINT_NAMES  # noqa: E402
from frankenbot.motion.trajectory import MotionLimits, joint_move  # noqa: E402
from frankenbot.nodes.robot_msgs import (  # noqa: E402
    joint_state_from_msg,
    trajectory_from_msg,
    trajectory_to_msg,
)
from frankenbot.nodes.ros_robot import RosRobot  # noqa: E402
from frankenbot.nodes.spin import Spinner, make_executor  # noqa: E402
from frankenbot.ports import CancelToken  # noqa: E402
from frankenbot.primitives.factory import build_primitives  # noqa: E402
from frankenbot.sim.world import SimWorld  # noqa: E402
from frankenbot.state import Scene  # noqa: E402

pytestmark = pytest.mark.ros


class SimNodeHarness:
    """One sim node process + one client node spun by a MultiThreadedExecutor thread."""

    def __init__(self) -> None:
        self.log = Path(tempfile.mkstemp(prefix="fb-sim-node-", suffix=".log")[1])
        cmd = [sys.executable, "-m", "frankenbot.nodes.sim_node", "--ros-args",
               "-p", "render:=false", "-p", "realtime_factor:=2.0", "-p", "task:=pick_up"]
        self.proc = subprocess.Popen(cmd, stdout=self.log.open("w"), stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(
            "motion_test", context=self.context,
            parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.local_world = SimWorld(seed=0, width=64, height=48)  # TEST-ONLY scene source
        self.robot = RosRobot(self.node, scene_source=self._scene)
        from frankenbot_interfaces.srv import EvaluateTask, ResetScene

        self.reset_client = self.node.create_client(ResetScene, "/frankenbot_sim/reset")
        self.eval_client = self.node.create_client(EvaluateTask, "/frankenbot_sim/evaluate")
        self.estop_pub = self.node.create_publisher(Bool, "/frankenbot/estop", 10)
        self.executor = make_executor(4, context=self.context)
        self.executor.add_node(self.node)
        self.spinner = Spinner(self.executor).start()
        self._scene_fn = ground_truth_scene(self.local_world)

    def _scene(self) -> Scene:
        return self._scene_fn()

    def wait_for_state(self, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.robot.joint_state() is not None and self.robot.gripper_state() is not None:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def call(self, client, request, timeout: float = 10.0):
        assert client.wait_for_service(timeout_sec=timeout), "service not available"
        future = client.call_async(request)
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert future.done(), "service call timed out"
        return future.result()

    def reset(self, task: str, seed: int) -> None:
        from frankenbot_interfaces.srv import ResetScene

        self.local_world.reset(task, seed)
        res = self.call(self.reset_client, ResetScene.Request(task=task, seed=seed))
        assert res.ok, res.message
        time.sleep(0.3)  # let the new joint states arrive

    def settled_state(self, timeout: float = 10.0):
        """The joint state once the arm is at rest (after a reset or a stop)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.robot.joint_state()
            if state is not None and max(abs(v) for v in state.velocities) < 0.005:
                return state
            time.sleep(0.05)
        raise AssertionError("the arm did not come to rest")

    def evaluate(self):
        from frankenbot_interfaces.srv import EvaluateTask

        return self.call(self.eval_client, EvaluateTask.Request(stability_window=0.3))

    def close(self) -> None:
        self.spinner.stop()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)
        self.local_world.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.log.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def harness():
    h = SimNodeHarness()
    try:
        if not h.wait_for_state():
            pytest.fail("no joint state from the sim node:\n" + h.log.read_text()[-3000:])
        yield h
    finally:
        h.close()


def test_conversions_round_trip() -> None:
    q0 = np.zeros(6)
    traj = joint_move(q0, q0 + 0.3, MotionLimits())
    back = trajectory_from_msg(trajectory_to_msg(traj))
    assert back.joint_names == JOINT_NAMES
    assert np.allclose(back.positions(), traj.positions())
    assert np.allclose(back.times(), traj.times(), atol=1e-9)
    msg = JointStateMsg(name=list(reversed(JOINT_NAMES)), position=[float(i) for i in range(6)],
                        velocity=[0.0] * 6)
    pos, _ = joint_state_from_msg(msg)
    assert pos == tuple(float(i) for i in reversed(range(6)))
    assert joint_state_from_msg(JointStateMsg(name=list(JOINT_NAMES[:5]),
                                              position=[0.0] * 5)) is None
    nan = JointStateMsg(name=list(JOINT_NAMES), position=[math.nan] * 6)
    assert joint_state_from_msg(nan) is None


def test_adapter_sees_the_sim_node(harness) -> None:
    state = harness.robot.joint_state()
    assert state is not None and len(state.positions) == 6
    assert 0.0 <= harness.robot.gripper_state().width <= 0.085
    assert harness.robot.speed_scaling() == pytest.approx(1.0)  # the sim sends 100 (%)
    clock = harness.robot.node.get_clock()
    t0 = clock.now().nanoseconds
    harness.robot.sleep(0.2)
    waited = clock.now().nanoseconds - t0  # sim clock through /clock
    assert waited >= 200_000_000
    assert waited < 5_000_000_000  # it did wait on the sim clock, not hang


FAMILIES = {
    "pick_up": lambda p: [("pick", {"obj": p["object"]})],
    "put_in_bowl": lambda p: [("pick", {"obj": p["object"]}),
                              ("place_in", {"obj": p["object"], "container": p["target"]})],
    "stack": lambda p: [("pick", {"obj": p["object"]}),
                        ("place_on", {"obj": p["object"], "target": p["target"]})],
    "push_to_zone": lambda p: [("push_to", {"obj": p["object"], "target": "zone"})],
    "open_drawer": lambda p: [("open_drawer", {"drawer": "drawer"})],
}


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_primitives_through_ros_topics(harness, family: str) -> None:
    seeds = (0, 1)
    for seed in seeds:
        harness.reset(family, seed)
        prims = build_primitives(harness.robot)
        result = None
        for name, args in FAMILIES[family](harness.local_world.task.params):
            result = prims.execute(name, args, CancelToken())
            assert result.ok, (family, seed, name, result)
        verdict = harness.evaluate()
        assert verdict.success, (family, seed, verdict.details)


def _is_hold(msg: JointTrajectoryMsg) -> bool:
    """The stop command: one point, at rest (the Jazzy JTC rejects an empty trajectory)."""
    return (len(msg.points) == 1 and len(msg.points[0].velocities) == 6
            and all(v == 0.0 for v in msg.points[0].velocities))


def test_estop_over_ros_stops_and_blocks(harness) -> None:
    harness.reset("pick_up", 3)
    prims = build_primitives(harness.robot)
    stops: list[float] = []
    holds: list[JointTrajectoryMsg] = []
    sub = harness.node.create_subscription(
        JointTrajectoryMsg, "/scaled_joint_trajectory_controller/joint_trajectory",
        lambda m: (stops.append(time.perf_counter()), holds.append(m)) if _is_hold(m) else None,
        10)
    out: dict[str, object] = {}
    thread = threading.Thread(target=lambda: out.setdefault(
        "r", prims.execute("pick", {"obj": harness.local_world.task.params["object"]},
                           CancelToken())))
    thread.start()
    time.sleep(1.0)
    t_pub = time.perf_counter()
    harness.estop_pub.publish(Bool(data=True))
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert out["r"].code == FailureCode.ESTOP
    deadline = time.monotonic() + 2.0
    while not stops and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stops and stops[0] - t_pub < 0.1
    time.sleep(0.5)
    state = harness.robot.joint_state()
    assert max(abs(v) for v in state.velocities) < 0.02
    # held where it was measured when the e-stop came, not somewhere on the planned path
    assert np.allclose(holds[0].points[0].positions, state.positions, atol=0.02)
    time.sleep(0.5)
    assert np.allclose(harness.robot.joint_state().positions, state.positions, atol=2e-3)
    assert prims.execute("home", {}, CancelToken()).code == FailureCode.ESTOP
    harness.estop_pub.publish(Bool(data=False))
    deadline = time.monotonic() + 2.0
    while harness.robot.estop_engaged() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert prims.execute("home", {}, CancelToken()).ok
    harness.node.destroy_subscription(sub)


def test_cancel_over_ros_stops_the_arm_in_topic_mode(harness) -> None:
    """A cancelled move (topic interface, no action goal to cancel) stops the arm with the
    one-point hold: it comes to rest short of the goal and stays there."""
    harness.reset("pick_up", 0)
    prims = build_primitives(harness.robot)
    q0 = np.array(harness.settled_state().positions)
    goal = q0 + np.array([0.9, 0.0, 0.0, 0.0, 0.0, 0.0])
    token = CancelToken()
    out: dict[str, object] = {}
    thread = threading.Thread(target=lambda: out.setdefault(
        "r", prims.backend.move_to_joints(goal, token)))
    thread.start()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:  # wait until the arm is clearly moving
        state = harness.robot.joint_state()
        if state is not None and abs(state.positions[0] - q0[0]) > 0.1:
            break
        time.sleep(0.01)
    token.cancel("test cancel")
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert out["r"].code == FailureCode.PREEMPTED, out["r"]
    rest = np.array(harness.settled_state(timeout=3.0).positions)
    assert rest[0] < goal[0] - 0.2  # stopped, not run on to the goal
    time.sleep(1.0)
    assert np.allclose(harness.robot.joint_state().positions, rest, atol=2e-3)


def test_trajectory_the_sim_controller_rejects_is_typed_and_moves_nothing(harness) -> None:
    """Over the topic interface a rejection is silent: the arm holds, the backend reports an
    abort once the goal is overdue, and nothing moved."""
    from frankenbot.motion.safety import SafetyConfig, SafetyEnvelope

    harness.reset("pick_up", 0)
    prims = build_primitives(harness.robot)
    backend = prims.backend
    backend.envelope = SafetyEnvelope(SafetyConfig(
        joint_lower=(-7.0,) * 6, joint_upper=(7.0,) * 6, link_clearance=-1.0,
        tcp_clearance=-1.0, min_radius=0.0, workspace_min=(-2.0, -2.0, -2.0),
        workspace_max=(2.0, 2.0, 2.0)), backend.kin)
    q0 = np.array(harness.settled_state().positions)
    goal = q0.copy()
    goal[2] = 3.3  # beyond the elbow's pi limit: the sim's JTC refuses it
    outcome = backend.move_to_joints(goal, CancelToken())
    assert outcome.code == FailureCode.ABORTED, outcome
    assert "did not reach" in outcome.detail
    assert np.allclose(harness.settled_state().positions, q0, atol=5e-3)


def test_speed_scaling_messages_are_read_and_sanitised(harness) -> None:
    from std_msgs.msg import Float64

    robot = RosRobot(harness.node, scene_source=lambda: Scene(),
                     trajectory_topic="/nobody/joint_trajectory", estop_topic="/nobody/estop")
    robot.speed_scaling_callback(Float64(data=50.0))  # the broadcaster always sends percent
    assert robot.speed_scaling() == pytest.approx(0.5)
    robot.speed_scaling_callback(Float64(data=0.4))  # 0.4 %, not 40 %
    assert robot.speed_scaling() == pytest.approx(0.004)
    robot.speed_scaling_callback(Float64(data=100.0))
    assert robot.speed_scaling() == pytest.approx(1.0)
    robot.speed_scaling_callback(Float64(data=math.nan))
    assert robot.speed_scaling() == pytest.approx(1.0)
    robot.speed_scaling_callback(Float64(data=-1.0))
    assert robot.speed_scaling() == 0.0
    robot.speed_scaling_callback(Float64(data=250.0))
    assert robot.speed_scaling() == 1.0


def test_missing_joint_state_over_ros_is_no_state(harness) -> None:
    other = RosRobot(harness.node, scene_source=lambda: Scene(),
                     trajectory_topic="/nobody/joint_trajectory", estop_topic="/nobody/estop")
    other._state_timeout = -1.0  # any received state counts as too old
    prims = build_primitives(other)
    assert prims.execute("home", {}, CancelToken()).code == FailureCode.NO_STATE

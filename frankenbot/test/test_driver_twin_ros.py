"""The robot adapter in the real robot's configuration against the sim's driver twin, over DDS.

One sim node process with ``driver_twin:=true`` (real time); in this process a RosRobot set up
as config/real_ur5e.yaml sets up the executor's (FollowJointTrajectory action, Robotiq
ParallelGripperCommand under /robotiq, the program-state topic), real rclpy action clients on
the stand-in control_msgs. The scene the primitives use is TEST-ONLY ground truth rebuilt from
the same (task, seed) the sim was reset to; verdicts come from the sim's oracle.
"""

from __future__ import annotations

import json
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
pytest.importorskip("control_msgs.action")

from primitives_support import ground_truth_scene  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState as JointStateMsg  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from frankenbot import robotiq, ur_driver  # noqa: E402
from frankenbot.common import FailureCode  # noqa: E402
from frankenbot.motion.kinematics import JOINT_NAMES  # noqa: E402
from frankenbot.motion.trajectory import JointTrajectory, TrajectoryPoint  # noqa: E402
from frankenbot.nodes.ros_robot import RosRobot  # noqa: E402
from frankenbot.nodes.spin import Spinner, make_executor  # noqa: E402
from frankenbot.ports import CancelToken, ControllerRejected, TrajectoryState  # noqa: E402
from frankenbot.primitives.factory import build_primitives  # noqa: E402
from frankenbot.sim.world import SimWorld  # noqa: E402

pytestmark = pytest.mark.ros

GRIPPER_ACTION = "/robotiq/robotiq_gripper_controller/gripper_cmd"
STOP_DEADLINE = 0.1  # s from the stop message to the arm at rest (the bound)


class TwinHarness:
    """The sim node with the driver twin + a client node with the real-config RosRobot."""

    def __init__(self) -> None:
        from control_msgs.action import FollowJointTrajectory

        self.log = Path(tempfile.mkstemp(prefix="fb-twin-", suffix=".log")[1])
        cmd = [sys.executable, "-m", "frankenbot.nodes.sim_node", "--ros-args",
               "-p", "render:=false", "-p", "realtime_factor:=1.0", "-p", "task:=pick_up",
               "-p", "driver_twin:=true"]
        self.proc = subprocess.Popen(cmd, stdout=self.log.open("w"), stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(
            "twin_test", context=self.context,
            parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.local_world = SimWorld(seed=0, width=64, height=48)  # TEST-ONLY scene source
        self._scene_fn = ground_truth_scene(self.local_world)
        self.executor = make_executor(6, context=self.context)
        self.executor.add_node(self.node)
        self.spinner = Spinner(self.executor, name="twin-test").start()
        self.robot = RosRobot(  # as config/real_ur5e.yaml sets up the executor's
            self.node, scene_source=lambda: self._scene_fn(), trajectory_mode="action",
            gripper_mode="parallel", gripper_action=GRIPPER_ACTION,
            gripper_closed_position=0.7929, gripper_joint_states_topic="/robotiq/joint_states",
            program_running_topic=ur_driver.PROGRAM_RUNNING_TOPIC, server_wait=30.0)
        self.follow = ActionClient(self.node, FollowJointTrajectory, ur_driver.FOLLOW_ACTION)
        from frankenbot_interfaces.srv import InjectAnomaly, ResetScene

        self.reset_client = self.node.create_client(ResetScene, "/frankenbot_sim/reset")
        self.fault_client = self.node.create_client(InjectAnomaly, "/frankenbot_sim/inject_fault")
        self.estop_pub = self.node.create_publisher(Bool, "/frankenbot/estop", 10)
        self.samples: list[tuple[float, np.ndarray, np.ndarray]] = []  # wall, q, dq
        self._samples_lock = threading.Lock()
        self.node.create_subscription(JointStateMsg, "/joint_states", self._joint_state, 50)

    def _joint_state(self, msg: JointStateMsg) -> None:
        with self._samples_lock:
            self.samples.append((time.monotonic(), np.array(msg.position),
                                 np.array(msg.velocity)))
            del self.samples[:-2000]

    def samples_since(self, t0: float) -> list[tuple[float, np.ndarray, np.ndarray]]:
        with self._samples_lock:
            return [s for s in self.samples if s[0] >= t0]

    def wait_for_state(self, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.robot.joint_state() is not None and self.robot.gripper_state() is not None \
                    and self.robot.program_running() is True:
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

    def fault(self, kind: str, phase: str = "now", **params) -> str:
        from frankenbot_interfaces.srv import InjectAnomaly

        res = self.call(self.fault_client, InjectAnomaly.Request(
            kind=kind, phase=phase, params_json=json.dumps(params)))
        assert res.ok, res.message
        time.sleep(0.3)  # the latched state reaches the adapter
        return res.message

    def reset(self, task: str, seed: int) -> None:
        from frankenbot_interfaces.srv import ResetScene

        self.fault("clear")
        self.robot.clear_faults()
        self.local_world.reset(task, seed)
        res = self.call(self.reset_client, ResetScene.Request(task=task, seed=seed))
        assert res.ok, res.message
        time.sleep(0.3)

    def settled(self, timeout: float = 10.0) -> np.ndarray:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.robot.joint_state()
            if state is not None and max(abs(v) for v in state.velocities) < 0.005:
                return np.array(state.positions)
            time.sleep(0.05)
        raise AssertionError("the arm did not come to rest")

    def send_goal(self, goal, timeout: float = 10.0):
        assert self.follow.wait_for_server(timeout_sec=timeout)
        future = self.follow.send_goal_async(goal, feedback_callback=self._feedback)
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.005)
        return future.result()

    feedback: list = []

    def _feedback(self, msg) -> None:
        self.feedback.append(msg.feedback)

    @staticmethod
    def wait(future, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert future.done(), "no answer"
        return future.result()

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
def twin():
    h = TwinHarness()
    try:
        if not h.wait_for_state():
            pytest.fail("no state from the driver twin:\n" + h.log.read_text()[-3000:])
        yield h
    finally:
        h.close()


def _goal(names, q0: dict[str, float], offsets: dict[str, float], times=(1.0, 2.0)):
    from control_msgs.action import FollowJointTrajectory

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(names)
    for k, t in enumerate(times):
        frac = (k + 1) / len(times)
        point = JointTrajectoryPoint(positions=[q0[n] + frac * offsets.get(n, 0.0)
                                                for n in names])
        point.time_from_start.sec = int(t)
        point.time_from_start.nanosec = int(round((t - int(t)) * 1e9))
        goal.trajectory.points.append(point)
    return goal


def test_goal_in_another_joint_order_runs_with_feedback(twin) -> None:
    twin.reset("pick_up", 0)
    q0 = dict(zip(JOINT_NAMES, twin.settled(), strict=True))
    twin.feedback.clear()
    handle = twin.send_goal(_goal(list(reversed(JOINT_NAMES)), q0,
                                  {"shoulder_pan_joint": 0.3, "wrist_3_joint": -0.2}))
    assert handle.accepted
    result = twin.wait(handle.get_result_async())
    assert result.status == 4 and result.result.error_code == 0, result.result.error_string
    q1 = dict(zip(JOINT_NAMES, twin.settled(), strict=True))
    assert q1["shoulder_pan_joint"] - q0["shoulder_pan_joint"] == pytest.approx(0.3, abs=0.01)
    assert q1["wrist_3_joint"] - q0["wrist_3_joint"] == pytest.approx(-0.2, abs=0.01)
    assert q1["elbow_joint"] == pytest.approx(q0["elbow_joint"], abs=0.01)
    assert len(twin.feedback) >= 10  # 20 Hz over 2 s
    assert list(twin.feedback[-1].joint_names) == list(JOINT_NAMES)


@pytest.mark.parametrize("change", ["unknown joint", "missing joint", "repeated joint",
                                    "times not increasing", "moving at the end"])
def test_goals_the_controller_refuses_are_rejected_and_nothing_moves(twin, change) -> None:
    twin.reset("pick_up", 0)
    q = twin.settled()
    q0 = dict(zip(JOINT_NAMES, q, strict=True))
    names = list(JOINT_NAMES)
    goal = _goal(names, q0, {"shoulder_pan_joint": 0.3})
    if change == "unknown joint":
        goal.trajectory.joint_names[2] = "elbow"
    elif change == "missing joint":
        goal.trajectory.joint_names.pop()
        for p in goal.trajectory.points:
            p.positions = list(p.positions)[:5]
    elif change == "repeated joint":
        goal.trajectory.joint_names[5] = goal.trajectory.joint_names[4]
    elif change == "times not increasing":
        goal.trajectory.points[1].time_from_start = goal.trajectory.points[0].time_from_start
    else:
        goal.trajectory.points[-1].velocities = [0.1] * 6
    assert not twin.send_goal(goal).accepted
    time.sleep(0.5)
    assert np.allclose(twin.settled(), q, atol=2e-3)


def test_the_adapter_names_why_the_controller_rejected_its_goal(twin) -> None:
    """The executor's robot adapter sends a goal the twin refuses (times that do not
    increase); the primitive's failure says why, and nothing moved."""
    twin.reset("pick_up", 0)
    q = tuple(float(v) for v in twin.settled())
    moved = tuple(v + 0.2 for v in q)
    bad = JointTrajectory(JOINT_NAMES, (TrajectoryPoint(0.5, moved), TrajectoryPoint(0.5, moved)))
    with pytest.raises(ControllerRejected, match="not strictly increasing"):
        twin.robot.send_trajectory(bad)
    assert np.allclose(twin.settled(), q, atol=2e-3)


def _moving_goal(twin, seconds: float = 3.0):
    q0 = dict(zip(JOINT_NAMES, twin.settled(), strict=True))
    traj = JointTrajectory(JOINT_NAMES, (
        TrajectoryPoint(0.0, tuple(q0.values())),
        TrajectoryPoint(seconds, tuple(q0[n] + (1.2 if n == "shoulder_pan_joint" else 0.0)
                                       for n in JOINT_NAMES))))
    twin.robot.send_trajectory(traj)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:  # until the arm clearly moves
        state = twin.robot.joint_state()
        if state is not None and abs(state.velocities[0]) > 0.2:
            return
        time.sleep(0.005)
    raise AssertionError("the arm did not start moving")


def _stopped_after(twin, t0: float, timeout: float = 2.0) -> float:
    """Wall seconds from ``t0`` to the first joint state with the arm at rest."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for wall, _q, dq in twin.samples_since(t0):
            if np.max(np.abs(dq)) < 0.05:
                return wall - t0
        time.sleep(0.005)
    raise AssertionError("the arm did not stop")


@pytest.mark.wall_clock
def test_cancel_mid_trajectory_stops_the_arm_within_100_ms(twin) -> None:
    twin.reset("pick_up", 0)
    _moving_goal(twin)
    handle = twin.robot._goal_handle
    t0 = time.monotonic()
    cancel = handle.cancel_goal_async()  # the cancel alone: the controller holds the arm
    stopped = _stopped_after(twin, t0)
    assert twin.wait(cancel).return_code == 0
    print(f"cancel -> arm at rest: {stopped * 1000:.1f} ms (wall, over DDS)")
    assert stopped < STOP_DEADLINE, f"at rest {stopped * 1000:.0f} ms after the cancel"
    rest = twin.settled()
    time.sleep(0.5)
    assert np.allclose(twin.settled(), rest, atol=2e-3)
    deadline = time.monotonic() + 2.0
    while twin.robot.trajectory_state() == TrajectoryState.ACTIVE and time.monotonic() < deadline:
        time.sleep(0.01)
    assert twin.robot.trajectory_state() == TrajectoryState.PREEMPTED


@pytest.mark.wall_clock
def test_estop_mid_trajectory_stops_the_arm_within_100_ms(twin) -> None:
    twin.reset("pick_up", 0)
    _moving_goal(twin)
    t0 = time.monotonic()
    twin.estop_pub.publish(Bool(data=True))
    stopped = _stopped_after(twin, t0)
    print(f"e-stop -> arm at rest: {stopped * 1000:.1f} ms (wall, over DDS)")
    assert stopped < STOP_DEADLINE, f"at rest {stopped * 1000:.0f} ms after the e-stop"
    rest = twin.settled()
    time.sleep(0.5)
    assert np.allclose(twin.settled(), rest, atol=2e-3)
    twin.estop_pub.publish(Bool(data=False))
    deadline = time.monotonic() + 2.0
    while twin.robot.estop_engaged() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not twin.robot.estop_engaged()


def test_gripper_stalls_on_the_block_and_the_pick_goes_on(twin) -> None:
    """ParallelGripperCommand closing on a block ends stalled (allow_stalling: true in
    config/robotiq_controllers.yaml), not at the closed position; the pick holds the block."""
    twin.reset("pick_up", 1)
    prims = build_primitives(twin.robot)
    block = twin.local_world.task.params["object"]
    result = prims.execute("pick", {"obj": block}, CancelToken())
    assert result.ok, result
    deadline = time.monotonic() + 2.0
    while twin.robot.last_gripper_result is None and time.monotonic() < deadline:
        time.sleep(0.01)
    stalled, reached, knuckle = twin.robot.last_gripper_result
    assert stalled and not reached, twin.robot.last_gripper_result
    assert 0.1 < knuckle < 0.7929 - 0.05  # on the block, short of closed
    assert twin.robot.driver_fault() == ""
    assert prims.held_object == block


def test_the_gripper_description_is_latched_where_the_real_launch_serves_it(twin) -> None:
    """A late subscriber (as `frankenbot doctor`) gets the sim gripper's URDF on
    /robotiq/robot_description, and its TCP is the one the twin's executor uses."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    from frankenbot import tcp
    from frankenbot.motion.config import load_arm_config

    got: list[String] = []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    sub = twin.node.create_subscription(String, "/robotiq/robot_description", got.append,
                                        latched)
    try:
        deadline = time.monotonic() + 10.0
        while not got and time.monotonic() < deadline:
            time.sleep(0.02)
        assert got, "nothing on /robotiq/robot_description"
        offset = tcp.tcp_offset_from_description(got[-1].data)
        assert offset == pytest.approx(load_arm_config().kinematics.tcp_offset, abs=1e-6)
    finally:
        twin.node.destroy_subscription(sub)


def test_gripper_not_activated_is_named_and_nothing_moves(twin) -> None:
    twin.reset("pick_up", 1)
    twin.fault("gripper_not_activated")
    width = twin.robot.gripper_state().width
    twin.robot.command_gripper(0.0)  # close: the Robotiq takes the goal and does not move
    deadline = time.monotonic() + 3.0
    while not twin.robot.driver_fault() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert robotiq.NOT_ACTIVATED in twin.robot.driver_fault()
    assert twin.robot.gripper_state().width == pytest.approx(width, abs=1e-3)
    twin.fault("clear")


def test_pendant_stop_mid_trajectory_aborts_and_is_named(twin) -> None:
    """The controller stopper deactivates the scaled JTC when the program stops: the goal is
    aborted, the arm holds, and motion is refused with the program named until Play."""
    from std_srvs.srv import Trigger

    twin.reset("pick_up", 0)
    twin.fault("pendant_stop", "motion", after_s=0.4)
    q0 = twin.settled()
    traj = JointTrajectory(JOINT_NAMES, (
        TrajectoryPoint(0.0, tuple(q0)),
        TrajectoryPoint(2.0, tuple(q0 + np.array([0.8, 0, 0, 0, 0, 0])))))
    twin.robot.send_trajectory(traj)
    deadline = time.monotonic() + 5.0
    while twin.robot.trajectory_state() == TrajectoryState.ACTIVE \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    assert twin.robot.trajectory_state() == TrajectoryState.ABORTED
    time.sleep(0.3)
    assert twin.robot.driver_fault() == ur_driver.PROGRAM_NOT_RUNNING
    rest = twin.settled()
    assert 0.05 < rest[0] - q0[0] < 0.7  # stopped part way
    with pytest.raises(ControllerRejected, match="press Play"):
        twin.robot.send_trajectory(traj)
    play = twin.node.create_client(Trigger, "/dashboard_client/play")
    assert twin.call(play, Trigger.Request()).success
    time.sleep(0.3)
    assert twin.robot.driver_fault() == ""
    assert np.allclose(twin.settled(), rest, atol=2e-3)


def test_protective_stop_needs_unlock_before_play(twin) -> None:
    from std_srvs.srv import Trigger

    twin.reset("pick_up", 0)
    twin.fault("protective_stop")
    assert "protective stop" in twin.robot.driver_fault()
    play = twin.node.create_client(Trigger, "/dashboard_client/play")
    unlock = twin.node.create_client(Trigger, "/dashboard_client/unlock_protective_stop")
    assert not twin.call(play, Trigger.Request()).success
    assert twin.call(unlock, Trigger.Request()).success
    time.sleep(0.3)
    assert twin.robot.driver_fault() == ur_driver.PROGRAM_NOT_RUNNING  # paused: Play next
    assert twin.call(play, Trigger.Request()).success
    time.sleep(0.3)
    assert twin.robot.driver_fault() == ""


def test_inactive_controller_rejects_goals_and_the_adapter_says_which(twin) -> None:
    twin.reset("pick_up", 0)
    q = twin.settled()
    twin.fault("controller_inactive")
    prims = build_primitives(twin.robot)
    result = prims.execute("home", {}, CancelToken())
    assert result.code == FailureCode.ABORTED
    assert "scaled_joint_trajectory_controller is inactive" in result.detail
    assert "scaled_joint_trajectory_controller is inactive" in twin.robot.driver_fault()
    assert np.allclose(twin.settled(), q, atol=2e-3)


def test_speed_slider_slows_trajectory_time(twin) -> None:
    """The scaled JTC runs trajectory time at the slider's fraction: a 1 s goal takes ~2 s at
    50 %, measured against the same goal at 100 % (a ratio in one run)."""
    twin.reset("pick_up", 0)

    def duration() -> float:
        q0 = dict(zip(JOINT_NAMES, twin.settled(), strict=True))
        handle = twin.send_goal(_goal(JOINT_NAMES, q0, {"wrist_3_joint": 0.3}, times=(1.0,)))
        t0 = twin.node.get_clock().now().nanoseconds
        result = twin.wait(handle.get_result_async())
        assert result.result.error_code == 0, result.result.error_string
        return (twin.node.get_clock().now().nanoseconds - t0) * 1e-9

    full = duration()
    twin.fault("speed_slider", fraction=0.5)
    assert twin.robot.speed_scaling() == pytest.approx(0.5)
    half = duration()
    twin.fault("speed_slider", fraction=1.0)
    assert 1.6 < half / full < 2.6, (full, half)


def test_a_new_goal_preempts_the_running_one(twin) -> None:
    twin.reset("pick_up", 0)
    q0 = dict(zip(JOINT_NAMES, twin.settled(), strict=True))
    first = twin.send_goal(_goal(JOINT_NAMES, q0, {"shoulder_pan_joint": 0.6}, times=(3.0,)))
    assert first.accepted
    time.sleep(0.5)
    second = twin.send_goal(_goal(JOINT_NAMES, q0, {"wrist_3_joint": 0.2}, times=(1.0,)))
    assert second.accepted
    old = twin.wait(first.get_result_async())
    assert old.status == 6  # ABORTED
    assert old.result.error_code == -1 and "preempted" in old.result.error_string
    new = twin.wait(second.get_result_async())
    assert new.status == 4 and new.result.error_code == 0
    q1 = dict(zip(JOINT_NAMES, twin.settled(), strict=True))
    # the second goal's last point holds: the pan went back to where it started
    assert q1["shoulder_pan_joint"] == pytest.approx(q0["shoulder_pan_joint"], abs=0.02)
    assert q1["wrist_3_joint"] - q0["wrist_3_joint"] == pytest.approx(0.2, abs=0.02)


def test_a_goal_starting_away_from_the_arm_aborts_on_the_start_state(twin) -> None:
    """The first point at t=0 is checked against the path tolerance (0.2 rad): a trajectory
    planned from another state is aborted before the arm jumps."""
    twin.reset("pick_up", 0)
    q = twin.settled()
    q0 = dict(zip(JOINT_NAMES, q, strict=True))
    goal = _goal(JOINT_NAMES, q0, {"shoulder_pan_joint": 0.5}, times=(0.0, 2.0))
    goal.trajectory.points[0].positions = [v + (0.3 if n == "shoulder_pan_joint" else 0.0)
                                           for n, v in q0.items()]
    handle = twin.send_goal(goal)
    assert handle.accepted
    result = twin.wait(handle.get_result_async())
    assert result.status == 6 and result.result.error_code == -4, result.result.error_string
    assert "shoulder_pan_joint" in result.result.error_string
    assert np.allclose(twin.settled(), q, atol=0.02)

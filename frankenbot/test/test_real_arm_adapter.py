"""RosRobot's real-driver paths, with fakes at the ROS action boundary.

These tests fake control_msgs' action types below (TEST-ONLY: the package never defines
them) so that they need no build; the stand-in control_msgs of compat_interfaces/ and the
driver twin cover the same paths over DDS (test_driver_twin_ros.py). The fakes carry the fields
the Jazzy definitions have: ParallelGripperCommand's
goal carries ``command`` (sensor_msgs/JointState), GripperCommand's ``command`` a
control_msgs/GripperCommand (position, max_effort), FollowJointTrajectory's ``trajectory``. The
action clients are fakes too (``action_client_factory``); everything else (the node, the
subscriptions, the messages, the callbacks) is real rclpy.
"""

from __future__ import annotations

import sys
import time
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from sensor_msgs.msg import JointState as JointStateMsg  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg  # noqa: E402

from frankenbot import robotiq, ur_driver  # noqa: E402
from frankenbot.common import FailureCode  # noqa: E402
from frankenbot.motion.kinematics import JOINT_NAMES  # noqa: E402
from frankenbot.motion.trajectory import MotionLimits, joint_move  # noqa: E402
from frankenbot.nodes.robot_msgs import STOP_DECELERATION, hold_msg, stop_msg  # noqa: E402
from frankenbot.nodes.ros_robot import RosRobot  # noqa: E402
from frankenbot.ports import ControllerRejected  # noqa: E402
from frankenbot.primitives.factory import build_primitives  # noqa: E402
from frankenbot.state import Scene  # noqa: E402


# --- fake control_msgs (TEST-ONLY) ---------------------------------------------------------
class _GripperCommandMsg:  # control_msgs/msg/GripperCommand
    def __init__(self) -> None:
        self.position = 0.0
        self.max_effort = 0.0


def _action(name: str, make_goal_fields) -> type:
    class Goal:
        def __init__(self) -> None:
            make_goal_fields(self)

    return type(name, (), {"Goal": Goal})


ParallelGripperCommand = _action(
    "ParallelGripperCommand", lambda g: setattr(g, "command", JointStateMsg()))
GripperCommand = _action(
    "GripperCommand", lambda g: setattr(g, "command", _GripperCommandMsg()))
FollowJointTrajectory = _action(
    "FollowJointTrajectory", lambda g: setattr(g, "trajectory", JointTrajectoryMsg()))


@pytest.fixture
def fake_control_msgs(monkeypatch):
    pkg = types.ModuleType("control_msgs")
    action = types.ModuleType("control_msgs.action")
    action.ParallelGripperCommand = ParallelGripperCommand
    action.GripperCommand = GripperCommand
    action.FollowJointTrajectory = FollowJointTrajectory
    pkg.action = action
    monkeypatch.setitem(sys.modules, "control_msgs", pkg)
    monkeypatch.setitem(sys.modules, "control_msgs.action", action)


# --- fake action clients -------------------------------------------------------------------
class _Done:
    """A completed rclpy-future look-alike."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def done(self) -> bool:
        return True

    def result(self) -> Any:
        return self._value

    def add_done_callback(self, fn) -> None:
        fn(self)


@dataclass
class _Handle:
    accepted: bool
    cancelled: int = 0

    def get_result_async(self) -> Any:
        class Pending:
            def add_done_callback(self, fn) -> None:  # the result never arrives in these tests
                pass

        return Pending()

    def cancel_goal_async(self) -> None:
        self.cancelled += 1


@dataclass
class FakeActionClient:
    action_type: Any
    name: str
    available: bool = True
    accept: bool = True
    goals: list = field(default_factory=list)
    handles: list = field(default_factory=list)
    waited: list = field(default_factory=list)

    def wait_for_server(self, timeout_sec: float | None = None) -> bool:
        self.waited.append(timeout_sec)
        return self.available

    def server_is_ready(self) -> bool:
        return self.available

    def send_goal_async(self, goal: Any) -> _Done:
        self.goals.append(goal)
        handle = _Handle(self.accept)
        self.handles.append(handle)
        return _Done(handle)


class Clients:
    def __init__(self, **availability: bool) -> None:
        self.by_name: dict[str, FakeActionClient] = {}
        self.availability = availability

    def __call__(self, node, action_type, name, group) -> FakeActionClient:
        client = FakeActionClient(action_type, name,
                                  available=self.availability.get(action_type.__name__, True))
        self.by_name[action_type.__name__] = client
        return client


@pytest.fixture
def node(ros_context):
    n = rclpy.create_node("real_arm_adapter_test", context=ros_context)
    yield n
    n.destroy_node()


def _robot(node, clients, **kw) -> RosRobot:
    kw.setdefault("trajectory_topic", "/real_arm_test/joint_trajectory")
    kw.setdefault("estop_topic", "/real_arm_test/estop")
    return RosRobot(node, scene_source=lambda: Scene(), action_client_factory=clients,
                    server_wait=0.0, **kw)


def _joint_states(robot: RosRobot, q=(0.0, -1.57, 1.57, -1.57, -1.57, 0.0)) -> None:
    robot.joint_state_callback(JointStateMsg(name=list(JOINT_NAMES), position=list(q),
                                             velocity=[0.0] * 6))


# --- gripper ---------------------------------------------------------------------------------
def test_parallel_gripper_goal_names_the_knuckle_joint_in_radians(node, fake_control_msgs):
    clients = Clients()
    robot = _robot(node, clients, gripper_mode="parallel",
                   gripper_action="/robotiq/robotiq_gripper_controller/gripper_cmd",
                   gripper_joint="robotiq_85_left_knuckle_joint", gripper_closed_position=0.7929)
    client = clients.by_name["ParallelGripperCommand"]
    assert client.name == "/robotiq/robotiq_gripper_controller/gripper_cmd"
    robot.command_gripper(0.0)  # fully closed
    robot.command_gripper(robotiq.STROKE)  # fully open
    robot.command_gripper(robotiq.STROKE / 2)
    commands = [g.command for g in client.goals]
    assert all(isinstance(c, JointStateMsg) for c in commands)
    assert [list(c.name) for c in commands] == [["robotiq_85_left_knuckle_joint"]] * 3
    assert [c.position[0] for c in commands] == pytest.approx([0.7929, 0.0, 0.7929 / 2])
    assert all(len(c.position) == 1 for c in commands)  # the controller takes exactly one


def test_gripper_command_mode_stays_for_other_grippers(node, fake_control_msgs):
    clients = Clients()
    robot = _robot(node, clients, gripper_mode="gripper_command")
    robot.command_gripper(0.0, max_effort=30.0)
    goal = clients.by_name["GripperCommand"].goals[0]
    assert goal.command.position == pytest.approx(robotiq.CLOSED_POSITION)
    assert goal.command.max_effort == 30.0


def test_old_action_gripper_mode_is_refused_with_the_new_names(node, fake_control_msgs):
    with pytest.raises(ValueError, match="parallel"):
        _robot(node, Clients(), gripper_mode="action")


def test_missing_gripper_server_is_named_at_start_and_on_command(node, fake_control_msgs):
    clients = Clients(ParallelGripperCommand=False)
    robot = _robot(node, clients, gripper_mode="parallel")
    assert robot.missing_servers and "ParallelGripperCommand" in robot.missing_servers[0]
    client = clients.by_name["ParallelGripperCommand"]
    with pytest.raises(ControllerRejected, match="gripper_cmd.*not available"):
        robot.command_gripper(0.02)
    assert client.goals == []  # nothing was sent to nobody


def test_gripper_state_comes_from_its_own_joint_state_topic(node, fake_control_msgs):
    robot = _robot(node, Clients(), gripper_mode="parallel",
                   gripper_joint_states_topic="/robotiq/joint_states")
    _joint_states(robot)
    # the arm's /joint_states carrying a knuckle value is not the gripper's topic here
    robot.joint_state_callback(JointStateMsg(name=[*JOINT_NAMES, robotiq.KNUCKLE_JOINT],
                                             position=[0.0] * 6 + [0.4]))
    assert robot.gripper_state() is None
    robot.gripper_joint_state_callback(JointStateMsg(name=[robotiq.KNUCKLE_JOINT],
                                                     position=[0.8]))
    assert robot.gripper_state().width == pytest.approx(0.0)


# --- External Control program ----------------------------------------------------------------
def test_program_not_running_gives_the_pendant_message_and_sends_nothing(node,
                                                                         fake_control_msgs):
    clients = Clients()
    robot = _robot(node, clients, trajectory_mode="action")
    _joint_states(robot)
    robot.program_running_callback(Bool(data=False))
    prims = build_primitives(robot)
    q = np.array(robot.joint_state().positions)
    outcome = prims.backend.move_to_joints(q + 0.1, _token())
    assert outcome.code == FailureCode.ABORTED
    assert ur_driver.PROGRAM_NOT_RUNNING in outcome.detail
    assert clients.by_name["FollowJointTrajectory"].goals == []
    # Play pressed: the latched topic says so and the same move is sent
    robot.program_running_callback(Bool(data=True))
    traj = joint_move(q, q + 0.1, MotionLimits())
    robot.send_trajectory(traj)
    assert len(clients.by_name["FollowJointTrajectory"].goals) == 1


def test_rejected_goal_while_program_stops_names_the_program(node, fake_control_msgs):
    clients = Clients()
    robot = _robot(node, clients, trajectory_mode="action")
    clients.by_name["FollowJointTrajectory"].accept = False
    q = np.zeros(6)
    traj = joint_move(q, q + 0.1, MotionLimits())
    with pytest.raises(ControllerRejected, match="rejected the goal"):
        robot.send_trajectory(traj)  # program state unknown: a plain rejection
    robot.program_running_callback(Bool(data=True))
    robot.program_running_callback(Bool(data=False))
    with pytest.raises(ControllerRejected, match="press Play on the pendant"):
        robot.send_trajectory(traj)


def test_first_goal_waits_for_the_trajectory_server(node, fake_control_msgs):
    clients = Clients(FollowJointTrajectory=False)
    robot = _robot(node, clients, trajectory_mode="action")
    client = clients.by_name["FollowJointTrajectory"]
    traj = joint_move(np.zeros(6), np.full(6, 0.1), MotionLimits())
    with pytest.raises(ControllerRejected, match="follow_joint_trajectory.*not available"):
        robot.send_trajectory(traj)
    assert client.goals == [] and len(client.waited) >= 2  # at start and before the goal
    client.available = True
    robot.send_trajectory(traj)
    assert len(client.goals) == 1


# --- stop ------------------------------------------------------------------------------------
def test_stop_in_action_mode_is_the_cancel_alone(node, fake_control_msgs):
    """With a goal running, the stop is its cancel: the JTC holds its own current state. No
    hold on the topic, whose positions would be a joint-state period old."""
    clients = Clients()
    robot = _robot(node, clients, trajectory_mode="action")
    sent: list[JointTrajectoryMsg] = []
    robot._traj_pub = types.SimpleNamespace(publish=sent.append)  # capture what goes out
    q = (0.1, -1.2, 1.3, -1.4, -1.5, 0.6)
    _joint_states(robot, q)
    robot.send_trajectory(joint_move(np.array(q), np.array(q) + 0.2, MotionLimits()))
    robot.stop()
    assert sent == []
    assert clients.by_name["FollowJointTrajectory"].handles[0].cancelled == 1
    robot.stop()  # nothing running any more: a stop on the topic, at rest where the arm is
    assert len(sent) == 1 and len(sent[0].points) == 1
    assert list(sent[0].points[0].positions) == pytest.approx(q)
    assert list(sent[0].points[0].velocities) == [0.0] * 6


def test_estop_at_speed_stops_ahead_of_the_arm_not_behind_it(node):
    """Topic mode, arm moving at up to 1 rad/s, joint state 50 ms old when the e-stop comes:
    the stop point lies ahead of where the arm is *then* (measured + v * age) on every moving
    joint, reached with at most the stop deceleration. A hold at the measured joints (the old
    stop) lies v * 50 ms behind it: the controller pulled the arm back."""
    robot = _robot(node, Clients())
    sent: list[JointTrajectoryMsg] = []
    robot._traj_pub = types.SimpleNamespace(publish=sent.append)
    q = np.array([0.1, -1.2, 1.3, -1.4, -1.5, 0.6])
    v = np.array([1.0, -0.5, 0.8, 0.0, 0.3, -1.0])
    robot.joint_state_callback(JointStateMsg(name=list(JOINT_NAMES), position=list(q),
                                             velocity=list(v)))
    time.sleep(0.05)
    t_stop = robot.now()
    robot.estop_callback(Bool(data=True))
    age = t_stop - robot._joint_received
    assert len(sent) == 1
    point = sent[0].points[0]
    target = np.array(point.positions)
    duration = point.time_from_start.sec + point.time_from_start.nanosec * 1e-9
    arm_now = q + v * age  # where the arm is when the stop goes out (at least)
    moving = np.abs(v) > 0
    assert np.all((target - arm_now)[moving] * v[moving] > 0), (target - arm_now, v)
    assert np.allclose(target[~moving], q[~moving])
    assert np.all(np.abs(v) / duration <= STOP_DECELERATION * 1.001)
    assert list(point.velocities) == [0.0] * 6
    assert robot.estop_engaged()
    # the old hold, for the record: behind the arm by v * age on every moving joint
    old = np.array(hold_msg(q).points[0].positions)
    assert np.all((old - arm_now)[moving] * v[moving] < 0)


def test_stop_message_decelerates_uniformly_to_rest():
    msg = stop_msg([0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [2.0, -1.0, 0.0, 0.0, 0.0, 0.0], age=0.1,
                   deceleration=4.0)
    point = msg.points[0]
    assert point.time_from_start.sec == 0 and point.time_from_start.nanosec == 500_000_000
    # joint 0: at 0.2 rad now, 2 rad/s, 0.5 s at 4 rad/s^2 -> 0.5 rad further
    assert list(point.positions)[:2] == pytest.approx([0.2 + 0.5, 1.0 - 0.1 - 0.25])
    still = stop_msg([0.3] * 6, [0.0] * 6)
    assert list(still.points[0].positions) == pytest.approx([0.3] * 6)


def test_hold_message_is_valid_for_the_jtc():
    msg = hold_msg([0.0] * 6, ramp=0.05)
    point = msg.points[0]
    assert point.time_from_start.sec == 0 and point.time_from_start.nanosec == 50_000_000
    assert msg.header.stamp.sec == 0  # start now


def _token():
    from frankenbot.ports import CancelToken

    return CancelToken()

"""RobotInterface over ROS 2: the UR driver's topics (or the sim node, which speaks the same ones).

The executor node owns the rclpy node and its MultiThreadedExecutor and hands the node in; this
adapter only creates its publishers, subscriptions and (optionally) action clients on it, each in
its own callback group so the e-stop is never queued behind anything else.

Subscribes  /joint_states (sensor_msgs/JointState: the six UR joints + the Robotiq knuckle),
            /speed_scaling_state_broadcaster/speed_scaling (std_msgs/Float64, 0..1),
            /frankenbot/scene (frankenbot_interfaces/SceneObjects; unless a scene source is
            injected), /frankenbot/estop (std_msgs/Bool).
Publishes   /scaled_joint_trajectory_controller/joint_trajectory (trajectory_msgs/JointTrajectory;
            an empty one stops the JTC), robotiq.COMMAND_TOPIC (std_msgs/Float64MultiArray).
Actions     (``trajectory_mode="action"`` / ``gripper_mode="action"``, real driver only;
            control_msgs is imported lazily and NOT exercised here: it does not install here)
            /scaled_joint_trajectory_controller/follow_joint_trajectory (FollowJointTrajectory),
            robotiq.ACTION_NAME (GripperCommand).

E-stop: the Bool callback publishes the stop (empty trajectory) itself, before anything else, and
``send_trajectory`` refuses motion until a False arrives. The robot clock is the node's clock
(sim time under ``use_sim_time``); the joint state counts as missing when none arrived within
``state_timeout`` seconds of wall time.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import Any, Sequence

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState as JointStateMsg
from std_msgs.msg import Bool, Float64, Float64MultiArray
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from frankenbot import robotiq
from frankenbot.motion.kinematics import JOINT_NAMES
from frankenbot.motion.trajectory import JointTrajectory
from frankenbot.ports import (
    ControllerRejected,
    EstopEngaged,
    GripperState,
    JointState,
    SceneSource,
    TrajectoryState,
)
from frankenbot.state import Scene

TRAJECTORY_TOPIC = "/scaled_joint_trajectory_controller/joint_trajectory"
FOLLOW_ACTION = "/scaled_joint_trajectory_controller/follow_joint_trajectory"
JOINT_STATES_TOPIC = "/joint_states"
SPEED_SCALING_TOPIC = "/speed_scaling_state_broadcaster/speed_scaling"
SCENE_TOPIC = "/frankenbot/scene"
ESTOP_TOPIC = "/frankenbot/estop"
STALL_WALL_TIMEOUT = 5.0  # s of wall time without clock progress before sleep() gives up


def _duration(seconds: float) -> Any:
    from builtin_interfaces.msg import Duration

    sec = math.floor(seconds)
    return Duration(sec=int(sec), nanosec=int(round((seconds - sec) * 1e9)) % 1_000_000_000)


def trajectory_to_msg(traj: JointTrajectory) -> JointTrajectoryMsg:
    """Our JointTrajectory -> trajectory_msgs/JointTrajectory (header stamp 0 = start now)."""
    msg = JointTrajectoryMsg()
    msg.joint_names = list(traj.joint_names)
    vel = traj.velocities().tolist() if traj.has_velocities else None
    for i, (t, q) in enumerate(zip(traj.times().tolist(), traj.positions().tolist(),
                                   strict=True)):
        point = JointTrajectoryPoint()
        point.positions = q
        if vel is not None:
            point.velocities = vel[i]
        point.time_from_start = _duration(t)
        msg.points.append(point)
    return msg


def trajectory_from_msg(msg: JointTrajectoryMsg) -> JointTrajectory:
    from frankenbot.motion.trajectory import TrajectoryPoint

    pts = tuple(TrajectoryPoint(
        float(p.time_from_start.sec) + float(p.time_from_start.nanosec) * 1e-9,
        tuple(float(v) for v in p.positions),
        tuple(float(v) for v in p.velocities) if len(p.velocities) else None)
        for p in msg.points)
    return JointTrajectory(tuple(msg.joint_names), pts)


def joint_state_from_msg(msg: JointStateMsg, names: Sequence[str] = JOINT_NAMES
                         ) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(positions, velocities) in ``names`` order, or None if a joint is missing or not finite."""
    index = {n: i for i, n in enumerate(msg.name)}
    if any(n not in index for n in names) or len(msg.position) < len(msg.name):
        return None
    pos = tuple(float(msg.position[index[n]]) for n in names)
    has_vel = len(msg.velocity) >= len(msg.name)
    vel = tuple(float(msg.velocity[index[n]]) for n in names) if has_vel else (0.0,) * len(names)
    if not all(math.isfinite(v) for v in pos + vel):
        return None
    return pos, vel


class RosRobot:
    """RobotInterface over ROS topics (and, on the real driver, actions)."""

    def __init__(self, node: Node, *, scene_source: SceneSource | None = None,
                 trajectory_mode: str = "topic", gripper_mode: str = "topic",
                 state_timeout: float = 0.5, trajectory_topic: str = TRAJECTORY_TOPIC,
                 estop_topic: str = ESTOP_TOPIC) -> None:
        if trajectory_mode not in ("topic", "action"):
            raise ValueError(f"trajectory_mode must be 'topic' or 'action', got "
                             f"{trajectory_mode!r}")
        if gripper_mode not in ("topic", "action"):
            raise ValueError(f"gripper_mode must be 'topic' or 'action', got {gripper_mode!r}")
        self.node = node
        self._scene_source = scene_source
        self._trajectory_mode = trajectory_mode
        self._gripper_mode = gripper_mode
        self._state_timeout = state_timeout
        self._lock = threading.Lock()  # guards every field below written by callbacks
        self._joint: tuple[tuple[float, ...], tuple[float, ...]] | None = None
        self._joint_received = -math.inf
        self._joint_received_wall = -math.inf
        self._gripper_position: float | None = None
        self._speed_scaling = 1.0
        self._scene = Scene(stale=True)
        self._traj_started = -math.inf
        self._traj_duration = 0.0
        self._traj_state = TrajectoryState.IDLE
        self._goal_handle: Any = None
        self._estop = threading.Event()
        # s from e-stop callback entry to the stop being published (the last 100 e-stops)
        self.estop_latencies: deque[float] = deque(maxlen=100)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._estop_group = MutuallyExclusiveCallbackGroup()
        self._state_group = MutuallyExclusiveCallbackGroup()
        self._traj_pub = node.create_publisher(JointTrajectoryMsg, trajectory_topic, reliable)
        self._grip_pub = node.create_publisher(Float64MultiArray, robotiq.COMMAND_TOPIC, reliable)
        node.create_subscription(Bool, estop_topic, self.estop_callback, reliable,
                                 callback_group=self._estop_group)
        node.create_subscription(JointStateMsg, JOINT_STATES_TOPIC, self.joint_state_callback,
                                 50, callback_group=self._state_group)
        node.create_subscription(Float64, SPEED_SCALING_TOPIC, self.speed_scaling_callback, 10,
                                 callback_group=self._state_group)
        if scene_source is None:
            from frankenbot_interfaces.msg import SceneObjects

            node.create_subscription(SceneObjects, SCENE_TOPIC, self.scene_callback, 5,
                                     callback_group=self._state_group)
        self._follow_client: Any = None
        self._gripper_client: Any = None
        if trajectory_mode == "action":
            from control_msgs.action import FollowJointTrajectory  # real ROS install only
            from rclpy.action import ActionClient

            self._follow_client = ActionClient(node, FollowJointTrajectory, FOLLOW_ACTION)
        if gripper_mode == "action":
            from control_msgs.action import GripperCommand  # real ROS install only
            from rclpy.action import ActionClient

            self._gripper_client = ActionClient(node, GripperCommand, robotiq.ACTION_NAME)

    # --- callbacks (executor threads) -----------------------------------------------------
    def estop_callback(self, msg: Bool) -> None:
        """Engage: stop first (on this very callback), then record; release on False."""
        if msg.data:
            t0 = time.perf_counter()
            self._estop.set()
            self._publish_stop()
            self.estop_latencies.append(time.perf_counter() - t0)
            self._cancel_goal()
            self.node.get_logger().warning("e-stop engaged: arm stopped, motion blocked")
        elif self._estop.is_set():
            self._estop.clear()
            self.node.get_logger().info("e-stop released")

    def joint_state_callback(self, msg: JointStateMsg) -> None:
        parsed = joint_state_from_msg(msg)
        knuckle = None
        if robotiq.KNUCKLE_JOINT in msg.name:
            i = list(msg.name).index(robotiq.KNUCKLE_JOINT)
            if i < len(msg.position) and math.isfinite(msg.position[i]):
                knuckle = float(msg.position[i])
        now = self.now()
        with self._lock:
            if parsed is not None:
                self._joint = parsed
                self._joint_received = now
                self._joint_received_wall = time.monotonic()
            if knuckle is not None:
                self._gripper_position = knuckle

    def speed_scaling_callback(self, msg: Float64) -> None:
        value = float(msg.data)
        if not math.isfinite(value):
            return
        if value > 1.0:  # some driver versions report percent
            value /= 100.0
        with self._lock:
            self._speed_scaling = min(max(value, 0.0), 1.0)

    def scene_callback(self, msg: Any) -> None:
        from frankenbot.perception.ros_conversions import scene_from_msg

        scene = scene_from_msg(msg)
        with self._lock:
            self._scene = scene

    # --- RobotInterface -------------------------------------------------------------------
    def joint_state(self) -> JointState | None:
        # Staleness in wall time: the robot clock may jump (a sim reset) or pause.
        wall = time.monotonic()
        with self._lock:
            if self._joint is None or wall - self._joint_received_wall > self._state_timeout:
                return None
            pos, vel = self._joint
            return JointState(pos, vel, self._joint_received)

    def now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def sleep(self, seconds: float) -> None:
        if not math.isfinite(seconds) or seconds <= 0:
            return
        # Integer nanoseconds: a float target (0.548 + 0.2) can land one ulp
        # past the clock reading it should equal and the wait then returns
        # a hair short (or a tick late).
        clock = self.node.get_clock()
        target_ns = clock.now().nanoseconds + int(round(seconds * 1e9))
        last, last_wall = clock.now().nanoseconds, time.monotonic()
        while True:
            now_ns = clock.now().nanoseconds
            if now_ns >= target_ns:
                return
            if now_ns != last:
                last, last_wall = now_ns, time.monotonic()
            elif time.monotonic() - last_wall > STALL_WALL_TIMEOUT:
                return
            time.sleep(min(0.001, (target_ns - now_ns) * 1e-9))

    def speed_scaling(self) -> float:
        with self._lock:
            return self._speed_scaling

    def scene(self) -> Scene:
        if self._scene_source is not None:
            return self._scene_source()
        with self._lock:
            return self._scene

    def estop_engaged(self) -> bool:
        return self._estop.is_set()

    def send_trajectory(self, trajectory: JointTrajectory) -> None:
        if self._estop.is_set():
            raise EstopEngaged("e-stop engaged: trajectory refused")
        if tuple(trajectory.joint_names) != JOINT_NAMES or not trajectory.points:
            raise ControllerRejected(f"trajectory must name {list(JOINT_NAMES)} and have points")
        for p in trajectory.points:
            vals = tuple(p.positions) + tuple(p.velocities or ()) + (p.time_from_start,)
            if len(p.positions) != 6 or not all(math.isfinite(v) for v in vals):
                raise ControllerRejected("trajectory points must hold 6 finite positions")
        msg = trajectory_to_msg(trajectory)
        with self._lock:
            self._traj_started = self.now()
            self._traj_duration = trajectory.duration
            self._traj_state = TrajectoryState.ACTIVE
        if self._follow_client is not None:
            self._send_goal(msg)
        else:
            self._traj_pub.publish(msg)

    def trajectory_state(self) -> TrajectoryState:
        with self._lock:
            state = self._traj_state
            if (self._follow_client is None and state == TrajectoryState.ACTIVE
                    and self.now() - self._traj_started > self._traj_duration):
                # The topic interface reports nothing: after the planned time it is just idle;
                # the backend judges success by the measured joints.
                state = TrajectoryState.IDLE
            return state

    def stop(self) -> None:
        self._publish_stop()
        self._cancel_goal()

    def command_gripper(self, width: float, max_effort: float = 50.0) -> None:
        if not math.isfinite(width):
            raise ControllerRejected(f"gripper width must be finite, got {width}")
        if self._estop.is_set():
            raise EstopEngaged("e-stop engaged: gripper command refused")
        position = robotiq.width_to_position(width)
        if self._gripper_client is not None:
            from control_msgs.action import GripperCommand

            goal = GripperCommand.Goal()
            goal.command.position = float(position)
            goal.command.max_effort = float(max_effort)
            self._gripper_client.send_goal_async(goal)
            return
        self._grip_pub.publish(Float64MultiArray(data=[float(position)]))

    def gripper_state(self) -> GripperState | None:
        with self._lock:
            pos = self._gripper_position
            stamp = self._joint_received
        if pos is None:
            return None
        return GripperState(robotiq.position_to_width(pos), pos, stamp)

    # --- helpers --------------------------------------------------------------------------
    def _publish_stop(self) -> None:
        """An empty JointTrajectory: the JTC stops and holds where it is."""
        msg = JointTrajectoryMsg()
        msg.joint_names = list(JOINT_NAMES)
        self._traj_pub.publish(msg)
        with self._lock:
            if self._traj_state == TrajectoryState.ACTIVE:
                self._traj_state = TrajectoryState.PREEMPTED
            self._traj_duration = 0.0

    def _send_goal(self, msg: JointTrajectoryMsg) -> None:
        """FollowJointTrajectory goal (real driver); acceptance and result update the state."""
        from control_msgs.action import FollowJointTrajectory

        goal = FollowJointTrajectory.Goal()
        goal.trajectory = msg
        future = self._follow_client.send_goal_async(goal)
        deadline = time.monotonic() + 2.0
        while not future.done():
            if time.monotonic() > deadline:
                raise ControllerRejected("the trajectory controller did not answer the goal")
            time.sleep(0.002)
        handle = future.result()
        if handle is None or not handle.accepted:
            with self._lock:
                self._traj_state = TrajectoryState.IDLE
            raise ControllerRejected("the trajectory controller rejected the goal")
        with self._lock:
            self._goal_handle = handle
        handle.get_result_async().add_done_callback(self._result_callback)

    def _result_callback(self, future: Any) -> None:
        result = future.result()
        code = getattr(getattr(result, "result", None), "error_code", -1)
        status = getattr(result, "status", 0)
        with self._lock:
            if self._traj_state != TrajectoryState.ACTIVE:
                return
            if code == 0 and status == 4:  # SUCCESSFUL, GoalStatus.STATUS_SUCCEEDED
                self._traj_state = TrajectoryState.SUCCEEDED
            elif status == 5:  # STATUS_CANCELED
                self._traj_state = TrajectoryState.PREEMPTED
            else:
                self._traj_state = TrajectoryState.ABORTED

    def _cancel_goal(self) -> None:
        with self._lock:
            handle, self._goal_handle = self._goal_handle, None
        if handle is not None:
            handle.cancel_goal_async()

"""RobotInterface over ROS 2: the UR driver's interfaces (or the sim node, which speaks them too).

The executor node owns the rclpy node and its MultiThreadedExecutor and hands the node in; this
adapter only creates its publishers, subscriptions and (optionally) action clients on it, each in
its own callback group so the e-stop is never queued behind anything else.

Subscribes  /joint_states (sensor_msgs/JointState: the six UR joints, and the gripper's knuckle
            unless ``gripper_joint_states_topic`` names another topic, e.g. a namespaced
            Robotiq controller manager's /robotiq/joint_states),
            /speed_scaling_state_broadcaster/speed_scaling (std_msgs/Float64, percent),
            /io_and_status_controller/robot_program_running (std_msgs/Bool, latched; real driver),
            /frankenbot/scene (frankenbot_interfaces/SceneObjects; unless a scene source is
            injected), /frankenbot/estop (std_msgs/Bool).
Publishes   /scaled_joint_trajectory_controller/joint_trajectory (trajectory_msgs/JointTrajectory;
            in topic mode the stop is one point that brings every joint to rest ahead of where
            it is now, see ``robot_msgs.stop_msg``: the Jazzy JTC rejects an empty trajectory),
            robotiq.COMMAND_TOPIC (std_msgs/Float64MultiArray; ``gripper_mode=topic``).
Actions     (control_msgs is imported lazily: the distro's on a robot; on the development
            machines the stand-in of compat_interfaces/, served by the sim's driver twin)
            ``trajectory_mode="action"``: FollowJointTrajectory on
            /scaled_joint_trajectory_controller/follow_joint_trajectory;
            ``gripper_mode="parallel"``: ParallelGripperCommand on ``gripper_action`` (goal: a
            JointState naming the knuckle joint, position in radians; Jazzy's Robotiq
            controller); ``gripper_mode="gripper_command"``: GripperCommand (other grippers).
            Servers are awaited at start (``server_wait`` s; a clear error is logged when one is
            missing) and again before the first goal, which fails with a clear message then.

Driver faults (``driver_fault()``, '' when none): the program not running, a safety mode other
than normal (io_and_status_controller/safety_mode, ur_dashboard_msgs, when installed), a goal the
controller rejected because it is not active (asked of controller_manager/list_controllers),
and a Robotiq that did not move when commanded (not activated). The executor node ends a running
task with the fault's sentence; motion is refused meanwhile.

E-stop: the Bool callback stops the arm itself, before anything else, and ``send_trajectory``
refuses motion until a False arrives. With the FollowJointTrajectory action the stop is the goal's
cancel alone: the JTC then holds its own, current state (or decelerates, with
decelerate_on_cancel) (ros2_controllers jazzy joint_trajectory_controller.cpp,
goal_cancelled_callback / set_hold_position). A hold on the topic as well would target
positions measured up to a joint-state period and a DDS hop earlier, behind an arm moving at
speed: the controller would pull it back, a jerk that can end in a protective stop. In topic
mode (the sim, Gazebo) the stop decelerates from the arm's extrapolated current state.
While the driver reports the External Control program as not running, trajectories are refused
with ``ur_driver.PROGRAM_NOT_RUNNING``. The robot clock is the node's clock (sim time under
``use_sim_time``); the joint state counts as missing when none arrived within ``state_timeout``
seconds of wall time.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, deque
from dataclasses import replace
from typing import Any

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState as JointStateMsg
from std_msgs.msg import Bool, Float64, Float64MultiArray
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from frankenbot import robotiq, ur_driver
from frankenbot.errors import PerceptionError
from frankenbot.motion.kinematics import JOINT_NAMES
from frankenbot.motion.trajectory import JointTrajectory
from frankenbot.nodes.robot_msgs import (
    STOP_RAMP,
    gripper_command_goal,
    joint_state_from_msg,
    joint_state_problem,
    parallel_gripper_goal,
    stop_msg,
    trajectory_to_msg,
)
from frankenbot.ports import (
    ControllerRejected,
    EstopEngaged,
    GripperState,
    JointState,
    SceneSource,
    TrajectoryState,
)
from frankenbot.state import Scene

# Relative names (the driver's, without the leading slash): under a namespace (several arms on
# one graph) they resolve to /<ns>/joint_states etc.; with none, to the driver's own names.
TRAJECTORY_TOPIC = ur_driver.TRAJECTORY_TOPIC.lstrip("/")
FOLLOW_ACTION = ur_driver.FOLLOW_ACTION.lstrip("/")
JOINT_STATES_TOPIC = ur_driver.JOINT_STATES_TOPIC.lstrip("/")
SPEED_SCALING_TOPIC = ur_driver.SPEED_SCALING_TOPIC.lstrip("/")
PROGRAM_RUNNING_TOPIC = ur_driver.PROGRAM_RUNNING_TOPIC.lstrip("/")
GRIPPER_COMMAND_TOPIC = robotiq.COMMAND_TOPIC.lstrip("/")
GRIPPER_ACTION = robotiq.ACTION_NAME.lstrip("/")
SCENE_TOPIC = "frankenbot/scene"
ESTOP_TOPIC = "frankenbot/estop"
STALL_WALL_TIMEOUT = 5.0  # s of wall time without clock progress before sleep() gives up
GRIPPER_MODES = ("topic", "parallel", "gripper_command")
SAFETY_MODE_TOPIC = ur_driver.SAFETY_MODE_TOPIC.lstrip("/")
LIST_CONTROLLERS = ur_driver.LIST_CONTROLLERS_SERVICE.lstrip("/")
GRIPPER_STUCK = 0.005  # rad: a knuckle that moved less than this did not move
GRIPPER_MOVE = 0.05  # rad: a command at least this far from the knuckle must move it


def _default_action_client(node: Node, action_type: Any, name: str,
                           callback_group: Any) -> Any:
    from frankenbot.nodes.action_client import ActionClient

    return ActionClient(node, action_type, name, callback_group=callback_group)


class RosRobot:
    """RobotInterface over ROS topics (and, on the real driver, actions)."""

    def __init__(self, node: Node, *, scene_source: SceneSource | None = None,
                 trajectory_mode: str = "topic", gripper_mode: str = "topic",
                 state_timeout: float = 0.5, trajectory_topic: str = TRAJECTORY_TOPIC,
                 estop_topic: str = ESTOP_TOPIC, follow_action: str = FOLLOW_ACTION,
                 gripper_action: str = GRIPPER_ACTION,
                 gripper_joint: str = robotiq.KNUCKLE_JOINT,
                 gripper_closed_position: float = robotiq.CLOSED_POSITION,
                 gripper_joint_states_topic: str = JOINT_STATES_TOPIC,
                 program_running_topic: str = PROGRAM_RUNNING_TOPIC,
                 server_wait: float = 10.0, stop_ramp: float = STOP_RAMP,
                 action_client_factory: Any = None) -> None:
        if trajectory_mode not in ("topic", "action"):
            raise ValueError(f"trajectory_mode must be 'topic' or 'action', got "
                             f"{trajectory_mode!r}")
        if gripper_mode not in GRIPPER_MODES:
            hint = (" ('action' was GripperCommand: the Jazzy Robotiq controller serves "
                    "ParallelGripperCommand, use 'parallel')" if gripper_mode == "action" else "")
            raise ValueError(f"gripper_mode must be one of {', '.join(GRIPPER_MODES)}, got "
                             f"{gripper_mode!r}{hint}")
        if not (math.isfinite(gripper_closed_position) and gripper_closed_position > 0.0):
            raise ValueError(f"gripper_closed_position must be > 0 rad, got "
                             f"{gripper_closed_position}")
        if not gripper_joint:
            raise ValueError("gripper_joint must name the gripper's joint in its joint states")
        self.node = node
        self._scene_source = scene_source
        self._trajectory_mode = trajectory_mode
        self._gripper_mode = gripper_mode
        self._state_timeout = state_timeout
        self._gripper_joint = gripper_joint
        self._gripper_closed = float(gripper_closed_position)
        self._server_wait = max(0.0, float(server_wait))
        self._stop_ramp = stop_ramp
        self._lock = threading.Lock()  # guards every field below written by callbacks
        self._joint: tuple[tuple[float, ...], tuple[float, ...]] | None = None
        self._joint_received = -math.inf
        self._joint_received_wall = -math.inf
        self._gripper_position: float | None = None
        self._gripper_received = -math.inf
        self._speed_scaling = 1.0
        self._program_running: bool | None = None  # None: never reported (sim, old driver)
        self._scene = Scene(stale=True)
        self._traj_started = -math.inf
        self._traj_duration = 0.0
        self._traj_state = TrajectoryState.IDLE
        self._goal_handle: Any = None
        self._safety_mode: int | None = None  # ur_dashboard_msgs/SafetyMode; None: not reported
        self._sticky_fault = ""  # a rejected goal's or the gripper's fault, until clear_faults
        self._grip_stalled_at: float | None = None  # where the last closing goal stalled
        # (stalled, reached_goal, knuckle) of the last ParallelGripperCommand result
        self.last_gripper_result: tuple[bool, bool, float] | None = None
        self._estop = threading.Event()
        self.rejected: Counter[str] = Counter()  # topic -> messages dropped as malformed
        self._scene_received_wall = -math.inf
        # s from e-stop callback entry to the stop being published (the last 100 e-stops)
        self.estop_latencies: deque[float] = deque(maxlen=100)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._estop_group = MutuallyExclusiveCallbackGroup()
        self._state_group = MutuallyExclusiveCallbackGroup()
        self._action_group = MutuallyExclusiveCallbackGroup()
        self._traj_pub = node.create_publisher(JointTrajectoryMsg, trajectory_topic, reliable)
        self._grip_pub = node.create_publisher(Float64MultiArray, GRIPPER_COMMAND_TOPIC,
                                               reliable)
        node.create_subscription(Bool, estop_topic, self.estop_callback, reliable,
                                 callback_group=self._estop_group)
        self._gripper_on_joint_states = gripper_joint_states_topic in ("", JOINT_STATES_TOPIC)
        node.create_subscription(JointStateMsg, JOINT_STATES_TOPIC, self.joint_state_callback,
                                 50, callback_group=self._state_group)
        if not self._gripper_on_joint_states:
            node.create_subscription(JointStateMsg, gripper_joint_states_topic,
                                     self.gripper_joint_state_callback, 10,
                                     callback_group=self._state_group)
        node.create_subscription(Float64, SPEED_SCALING_TOPIC, self.speed_scaling_callback, 10,
                                 callback_group=self._state_group)
        self._list_client: Any = None
        if program_running_topic:
            node.create_subscription(Bool, program_running_topic, self.program_running_callback,
                                     latched, callback_group=self._state_group)
            try:  # real driver messages; absent on a machine without them (then not watched)
                from ur_dashboard_msgs.msg import SafetyMode  # type: ignore[import-not-found]

                node.create_subscription(SafetyMode, SAFETY_MODE_TOPIC,
                                         self.safety_mode_callback, latched,
                                         callback_group=self._state_group)
            except ImportError:
                pass
            try:
                from controller_manager_msgs.srv import (  # type: ignore[import-not-found]
                    ListControllers,
                )

                self._list_client = node.create_client(ListControllers, LIST_CONTROLLERS,
                                                       callback_group=self._action_group)
            except ImportError:
                pass
        if scene_source is None:
            from frankenbot_interfaces.msg import SceneObjects

            node.create_subscription(SceneObjects, SCENE_TOPIC, self.scene_callback, 5,
                                     callback_group=self._state_group)
        make_client = action_client_factory or _default_action_client
        self._follow_client: Any = None
        self._follow_type: Any = None
        self._gripper_client: Any = None
        self._gripper_type: Any = None
        if trajectory_mode == "action":
            from control_msgs.action import FollowJointTrajectory

            self._follow_type = FollowJointTrajectory
            self._follow_client = make_client(node, FollowJointTrajectory, follow_action,
                                              self._action_group)
            self._follow_name = f"{follow_action} (control_msgs/action/FollowJointTrajectory)"
        if gripper_mode == "parallel":
            from control_msgs.action import ParallelGripperCommand

            self._gripper_type = ParallelGripperCommand
            self._gripper_name = f"{gripper_action} (control_msgs/action/ParallelGripperCommand)"
        elif gripper_mode == "gripper_command":
            from control_msgs.action import GripperCommand

            self._gripper_type = GripperCommand
            self._gripper_name = f"{gripper_action} (control_msgs/action/GripperCommand)"
        if self._gripper_type is not None:
            self._gripper_client = make_client(node, self._gripper_type, gripper_action,
                                               self._action_group)
        self.missing_servers = self._await_servers()

    # --- start-up -------------------------------------------------------------------------
    def _clients(self) -> list[tuple[Any, str]]:
        out = []
        if self._follow_client is not None:
            out.append((self._follow_client, self._follow_name))
        if self._gripper_client is not None:
            out.append((self._gripper_client, self._gripper_name))
        return out

    def _await_servers(self) -> list[str]:
        """Wait (``server_wait`` s in all) for the action servers; log each one missing."""
        deadline = time.monotonic() + self._server_wait
        missing = []
        for client, name in self._clients():
            left = max(0.0, deadline - time.monotonic())
            if not client.wait_for_server(timeout_sec=left):
                missing.append(name)
                self.node.get_logger().error(
                    f"action server {name} is not available after {self._server_wait:g} s: "
                    f"{self._server_hint(name)}; goals will fail until it appears")
        return missing

    def _server_hint(self, name: str) -> str:
        if self._follow_client is not None and name == self._follow_name:
            if self._program_running is False:
                return ur_driver.PROGRAM_NOT_RUNNING
            return ("is ur_robot_driver running with scaled_joint_trajectory_controller active "
                    "(ur_control.launch.py)?")
        return ("is the gripper driver running (robotiq_gripper.launch.py) and its controller "
                "spawned? `frankenbot doctor` lists what is missing")

    def _ensure_server(self, client: Any, name: str) -> None:
        """Before a goal: the server must be there (a goal to nobody is never answered)."""
        if client.server_is_ready():
            return
        if not client.wait_for_server(timeout_sec=self._server_wait):
            raise ControllerRejected(f"action server {name} is not available: "
                                     f"{self._server_hint(name)}")

    # --- callbacks (executor threads) -----------------------------------------------------
    def estop_callback(self, msg: Bool) -> None:
        """Engage: stop first (on this very callback), then record; release on False."""
        if msg.data:
            t0 = time.perf_counter()
            self._estop.set()
            self._publish_stop()
            self.estop_latencies.append(time.perf_counter() - t0)
            self.node.get_logger().warning("e-stop engaged: arm stopped, motion blocked")
        elif self._estop.is_set():
            self._estop.clear()
            self.node.get_logger().info("e-stop released")

    def _knuckle(self, msg: JointStateMsg) -> float | None:
        if self._gripper_joint not in msg.name:
            return None
        i = list(msg.name).index(self._gripper_joint)
        if i < len(msg.position) and math.isfinite(msg.position[i]):
            return float(msg.position[i])
        return None

    def joint_state_callback(self, msg: JointStateMsg) -> None:
        problem = joint_state_problem(msg)
        if problem:
            self.rejected[JOINT_STATES_TOPIC] += 1
            self.node.get_logger().warning(
                f"{JOINT_STATES_TOPIC} message rejected ({problem}); the arm's state goes "
                f"stale and motion stops until a valid one arrives", throttle_duration_sec=2.0)
            return
        parsed = joint_state_from_msg(msg)
        knuckle = self._knuckle(msg) if self._gripper_on_joint_states else None
        now = self.now()
        with self._lock:
            if parsed is not None:
                self._joint = parsed
                self._joint_received = now
                self._joint_received_wall = time.monotonic()
            if knuckle is not None:
                self._gripper_position = knuckle
                self._gripper_received = now

    def gripper_joint_state_callback(self, msg: JointStateMsg) -> None:
        """The gripper's own joint states (a namespaced gripper controller manager)."""
        knuckle = self._knuckle(msg)
        if knuckle is None:
            return
        now = self.now()
        with self._lock:
            self._gripper_position = knuckle
            self._gripper_received = now

    def speed_scaling_callback(self, msg: Float64) -> None:
        value = ur_driver.speed_fraction(msg.data)
        if value is None:
            self.rejected[SPEED_SCALING_TOPIC] += 1
            self.node.get_logger().warning(f"{SPEED_SCALING_TOPIC} value {msg.data} rejected "
                                           "(not finite)", throttle_duration_sec=2.0)
            return
        with self._lock:
            self._speed_scaling = value

    def program_running_callback(self, msg: Bool) -> None:
        running = bool(msg.data)
        with self._lock:
            changed = self._program_running != running
            self._program_running = running
        if changed and not running:
            self.node.get_logger().warning(ur_driver.PROGRAM_NOT_RUNNING)
        elif changed:
            self.node.get_logger().info("External Control program is running")

    def safety_mode_callback(self, msg: Any) -> None:
        mode = int(msg.mode)
        with self._lock:
            changed, self._safety_mode = self._safety_mode != mode, mode
        if changed and mode not in ur_driver.SAFETY_OK:
            self.node.get_logger().error(ur_driver.safety_mode_fault(mode))

    def driver_fault(self) -> str:
        """What the driver stack says stops motion now ('' when nothing): the safety mode
        first (a protective stop also pauses the program), then the program, then a fault
        seen on a goal (cleared by ``clear_faults``)."""
        with self._lock:
            mode, running, sticky = self._safety_mode, self._program_running, self._sticky_fault
        if mode is not None and mode not in ur_driver.SAFETY_OK:
            return ur_driver.safety_mode_fault(mode)
        if running is False:
            return ur_driver.PROGRAM_NOT_RUNNING
        return sticky

    def clear_faults(self) -> None:
        """Forget faults seen on earlier goals (a new task: the operator may have fixed them)."""
        with self._lock:
            self._sticky_fault = ""

    def _fault(self, text: str) -> None:
        with self._lock:
            self._sticky_fault = self._sticky_fault or text
        self.node.get_logger().error(text)

    def scene_callback(self, msg: Any) -> None:
        from frankenbot.nodes.scene_msgs import scene_from_msg

        try:
            scene = scene_from_msg(msg)
        except PerceptionError as e:
            self.rejected[SCENE_TOPIC] += 1
            self.node.get_logger().warning(f"{SCENE_TOPIC} message rejected ({e}); the scene "
                                           "counts as stale", throttle_duration_sec=2.0)
            with self._lock:  # keep what was seen, but never act on it as fresh
                self._scene = replace(self._scene, stale=True)
            return
        with self._lock:
            self._scene = scene
            self._scene_received_wall = time.monotonic()

    def input_ages(self) -> dict[str, float]:
        """Wall seconds since the last valid message on each input topic (inf: never).

        The executor names a vanished dependency (driver/sim, perception) from these when a
        program fails; they are wall time because the robot clock stops with the sim.
        """
        now = time.monotonic()
        with self._lock:
            ages = {JOINT_STATES_TOPIC: now - self._joint_received_wall}
            if self._scene_source is None:
                ages[SCENE_TOPIC] = now - self._scene_received_wall
            return ages

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
            if now_ns < last:  # the clock jumped back (a sim reset or restart): keep the
                # wait's remaining time on the new clock instead of waiting out the jump
                self.node.get_logger().warning(
                    f"robot clock jumped back {(last - now_ns) * 1e-9:.3f} s during a wait; "
                    "the wait continues on the new clock", throttle_duration_sec=2.0)
                target_ns = now_ns + (target_ns - last)
            if now_ns != last:
                last, last_wall = now_ns, time.monotonic()
            elif time.monotonic() - last_wall > STALL_WALL_TIMEOUT:
                return
            time.sleep(min(0.001, (target_ns - now_ns) * 1e-9))

    def speed_scaling(self) -> float:
        with self._lock:
            return self._speed_scaling

    def program_running(self) -> bool | None:
        """The driver's robot_program_running (None until it reported one)."""
        with self._lock:
            return self._program_running

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
        fault = self.driver_fault()
        if fault:
            raise ControllerRejected(fault)
        if tuple(trajectory.joint_names) != JOINT_NAMES or not trajectory.points:
            raise ControllerRejected(f"trajectory must name {list(JOINT_NAMES)} and have points")
        for p in trajectory.points:
            vals = tuple(p.positions) + tuple(p.velocities or ()) + (p.time_from_start,)
            if len(p.positions) != 6 or not all(math.isfinite(v) for v in vals):
                raise ControllerRejected("trajectory points must hold 6 finite positions")
        msg = trajectory_to_msg(trajectory)
        if self._follow_client is not None:
            self._ensure_server(self._follow_client, self._follow_name)
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
            elapsed = self.now() - self._traj_started
            # elapsed < 0: the clock jumped back (a sim restart), the plan's timing is void
            if (self._follow_client is None and state == TrajectoryState.ACTIVE
                    and (elapsed > self._traj_duration or elapsed < 0.0)):
                # The topic interface reports nothing: after the planned time it is just idle;
                # the backend judges success by the measured joints.
                state = TrajectoryState.IDLE
            return state

    def stop(self) -> None:
        self._publish_stop()

    def command_gripper(self, width: float, max_effort: float = 50.0) -> None:
        if not math.isfinite(width):
            raise ControllerRejected(f"gripper width must be finite, got {width}")
        if self._estop.is_set():
            raise EstopEngaged("e-stop engaged: gripper command refused")
        position = robotiq.width_to_position(width, self._gripper_closed)
        if self._gripper_client is None:
            self._grip_pub.publish(Float64MultiArray(data=[float(position)]))
            return
        self._ensure_server(self._gripper_client, self._gripper_name)
        if self._gripper_mode == "parallel":
            goal = parallel_gripper_goal(self._gripper_type, self._gripper_joint, position)
        else:
            goal = gripper_command_goal(self._gripper_type, position, max_effort)
        with self._lock:
            start = self._gripper_position
        # Not awaited: the primitives watch the knuckle in the joint states for the outcome;
        # the result only tells whether the gripper moved at all.
        self._gripper_client.send_goal_async(goal).add_done_callback(
            lambda future: self._gripper_goal_done(future, start, position))

    def _gripper_goal_done(self, future: Any, start: float | None, target: float) -> None:
        handle = future.result()
        if handle is None or not handle.accepted:
            self.node.get_logger().error(f"the gripper controller rejected the goal "
                                         f"({self._gripper_name})")
            return
        if self._gripper_mode == "parallel" and start is not None:
            handle.get_result_async().add_done_callback(
                lambda result: self._gripper_result(result, start, target))

    def _gripper_result(self, future: Any, start: float, target: float) -> None:
        """A Robotiq that is not activated takes goals and never moves: the controller
        reports a stall at the start. Closing further on an object already gripped does not
        move it either, so that case is told apart: the fingers are still where the previous
        closing goal stalled."""
        result = getattr(future.result(), "result", None)
        if result is None or not len(result.state.position):
            return
        end = float(result.state.position[0])
        closing = target > start
        stuck = (bool(result.stalled) and abs(end - start) < GRIPPER_STUCK
                 and abs(target - start) > GRIPPER_MOVE)
        with self._lock:  # still gripping what the last closing goal stalled on?
            held = self._grip_stalled_at
            holding = held is not None and abs(start - held) < GRIPPER_STUCK
            self._grip_stalled_at = end if bool(result.stalled) and closing else None
            self.last_gripper_result = (bool(result.stalled), bool(result.reached_goal), end)
        if stuck and not (closing and holding):
            self._fault(f"the gripper did not move when commanded ({start:.3f} -> "
                        f"{target:.3f} rad, stalled at {end:.3f}): {robotiq.NOT_ACTIVATED}")

    def gripper_state(self) -> GripperState | None:
        with self._lock:
            pos = self._gripper_position
            stamp = self._gripper_received
        if pos is None:
            return None
        return GripperState(robotiq.position_to_width(pos, self._gripper_closed), pos, stamp)

    # --- helpers --------------------------------------------------------------------------
    def _publish_stop(self) -> None:
        """Stop the arm: cancel the running action goal (the JTC holds its own current
        state), or, with no goal to cancel (topic mode, or a goal not yet accepted), publish a
        decelerating stop from the extrapolated state (``stop_msg``). With no joint state yet
        there is nothing to stop: the controller is not following anything we sent."""
        with self._lock:
            joint = self._joint
            age = self.now() - self._joint_received
            handle, self._goal_handle = self._goal_handle, None
            if self._traj_state == TrajectoryState.ACTIVE:
                self._traj_state = TrajectoryState.PREEMPTED
            self._traj_duration = 0.0
        if handle is not None:
            handle.cancel_goal_async()
        elif joint is not None:
            self._traj_pub.publish(stop_msg(joint[0], joint[1], age=age, ramp=self._stop_ramp))

    def _send_goal(self, msg: JointTrajectoryMsg) -> None:
        """FollowJointTrajectory goal (real driver); acceptance and result update the state."""
        goal = self._follow_type.Goal()
        goal.trajectory = msg
        future = self._follow_client.send_goal_async(goal)
        deadline = time.monotonic() + 2.0
        while not future.done():
            if time.monotonic() > deadline:
                with self._lock:
                    self._traj_state = TrajectoryState.IDLE
                raise ControllerRejected("the trajectory controller did not answer the goal")
            time.sleep(0.002)
        handle = future.result()
        if handle is None or not handle.accepted:
            with self._lock:
                self._traj_state = TrajectoryState.IDLE
            raise ControllerRejected(self._rejection_reason(msg))
        with self._lock:
            self._goal_handle = handle
        handle.get_result_async().add_done_callback(self._result_callback)
        if self._estop.is_set():  # engaged while the goal was on its way: nothing to cancel then
            self._publish_stop()
            raise EstopEngaged("e-stop engaged while the trajectory was being accepted")

    def _rejection_reason(self, msg: JointTrajectoryMsg) -> str:
        """The controller says no without saying why: name the likely reason. A driver fault
        (program, safety, controller inactive) is remembered for the executor."""
        from frankenbot.motion.jtc_rules import PointData, trajectory_problem

        fault = self.driver_fault()
        if fault:
            return fault
        points = [PointData(float(p.time_from_start.sec) + p.time_from_start.nanosec * 1e-9,
                            tuple(p.positions), tuple(p.velocities), tuple(p.accelerations),
                            tuple(p.effort)) for p in msg.points]
        problem = trajectory_problem(list(msg.joint_names), points, JOINT_NAMES)
        if problem:
            return f"the trajectory controller rejected the goal: {problem}"
        state = self._controller_state(ur_driver.TRAJECTORY_CONTROLLER)
        if state and state != "active":
            text = (f"the trajectory controller rejected the goal: "
                    f"{ur_driver.TRAJECTORY_CONTROLLER} is {state} "
                    f"(controller_manager/list_controllers): {ur_driver.CONTROLLER_INACTIVE}")
            self._fault(text)
            return text
        return ("the trajectory controller rejected the goal (its log says why: joint "
                "names, timing, joint limits)")

    def _controller_state(self, name: str, timeout: float = 1.0) -> str:
        """The controller manager's state of ``name`` ('' when it cannot be asked)."""
        client = self._list_client
        if client is None or not client.wait_for_service(timeout_sec=timeout):
            return ""
        future = client.call_async(client.srv_type.Request())
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.005)
        if not future.done() or future.result() is None:
            return ""
        states = {c.name: c.state for c in future.result().controller}
        return states.get(name, "not loaded")

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

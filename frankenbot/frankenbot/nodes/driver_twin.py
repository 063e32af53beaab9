"""The driver twin: the real UR5e cell's ROS interfaces, served from the MuJoCo sim.

The sim node builds one with ``driver_twin:=true``; it lives in the sim's process and moves the
sim's arm and gripper, with the semantics the real stack documents (see
``frankenbot.sim.driver_twin`` for the sources and the pure rules). With it the brain can run in
the real robot's configuration (``config/real_ur5e.yaml``: action mode, ParallelGripperCommand,
namespaced gripper) end to end over DDS.

Actions
  scaled_joint_trajectory_controller/follow_joint_trajectory (control_msgs/FollowJointTrajectory):
      refused while the controller is inactive or when ``motion.jtc_rules`` refuses the
      trajectory; joint names in any order; path tolerance while moving and on the first
      sample (start state), goal tolerance after the end, goal_time (0 = wait); feedback at
      20 Hz; a new goal aborts the old one; cancel holds the arm where it is; a topic
      trajectory replaces the running one while its goal stays active; trajectory time runs
      at the speed slider
  robotiq/robotiq_gripper_controller/gripper_cmd (control_msgs/ParallelGripperCommand):
      one knuckle position in radians (0 open .. ``gripper_closed`` closed), optional effort;
      ends reached_goal, or stalled (on an object) after ``stall_timeout``
Publishes
  io_and_status_controller/robot_program_running (std_msgs/Bool), .../safety_mode
      (ur_dashboard_msgs/SafetyMode), .../robot_mode (RobotMode): latched, on change
  robotiq/joint_states (sensor_msgs/JointState: the knuckle), /tf_static (tf2_msgs/TFMessage:
      base_link -> camera_color_optical_frame as real_ur5e.launch.py's static publisher, and the
      UR description's fixed frames)
  robotiq/robot_description (std_msgs/String, latched): the sim gripper's URDF rooted at tool0
      (``sim.model.gripper_description``), where real_ur5e.launch.py's gripper
      robot_state_publisher serves the 2F-85's; its pad frames give the sim's TCP, so
      ``frankenbot doctor`` checks the executor's tcp_offset against the gripper the twin has
      (the gripper's link frames are not put on /tf)
Services
  dashboard_client/{play,stop,pause,unlock_protective_stop,power_on,power_off,brake_release}
      (std_srvs/Trigger), dashboard_client/program_state (ur_dashboard_msgs/GetProgramState),
      dashboard_client/get_safety_mode, get_robot_mode, program_running
  controller_manager/list_controllers, controller_manager/switch_controller,
      robotiq/controller_manager/list_controllers (controller_manager_msgs)
  robotiq/robotiq_activation_controller/reactivate_gripper (std_srvs/Trigger)
  frankenbot_sim/inject_fault (frankenbot_interfaces/InjectAnomaly): kind pendant_stop |
      protective_stop | controller_inactive | gripper_not_activated | camera_silent |
      speed_slider (params fraction) | clear; phase now | motion (params after_s)
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, String

from frankenbot import robotiq, ur_driver
from frankenbot.errors import SimError
from frankenbot.motion.jtc_rules import PointData, trajectory_problem
from frankenbot.nodes.driver_twin_services import CellServices, static_transforms
from frankenbot.sim import driver_twin as dt
from frankenbot.sim.model import gripper_description
from frankenbot.sim.world import SimWorld, TrajectoryPoint

FEEDBACK_PERIOD = 0.05  # s: the JTC's action_monitor_rate (20 Hz, ur_controllers.yaml)
GRIPPER_STATE_EVERY = 2  # joint-state ticks per /robotiq/joint_states message
GRIPPER_ACTION = "robotiq/robotiq_gripper_controller/gripper_cmd"
GRIPPER_STATES = "robotiq/joint_states"
GRIPPER_DESCRIPTION = "robotiq/robot_description"  # the gripper's robot_state_publisher


def seconds(d: Any) -> float:
    return float(d.sec) + float(d.nanosec) * 1e-9


def point_data(msg: Any) -> list[PointData]:
    return [PointData(seconds(p.time_from_start), tuple(p.positions), tuple(p.velocities),
                      tuple(p.accelerations), tuple(p.effort)) for p in msg.points]


def world_points(msg: Any) -> list[TrajectoryPoint]:
    return [TrajectoryPoint(seconds(p.time_from_start), list(p.positions),
                            list(p.velocities) if len(p.velocities) else None)
            for p in msg.points]


def gripper_config(path: Any = None) -> dt.GripperConfig:
    """The gripper controller's parameters from config/robotiq_controllers.yaml (the file
    real_ur5e.launch.py gives the Robotiq's controller manager); defaults where absent."""
    import yaml

    from frankenbot import resources

    path = path or resources.config_path("robotiq_controllers.yaml")
    data = yaml.safe_load(open(path)) or {}
    entry = (data.get("/**/robotiq_gripper_controller") or data.get("robotiq_gripper_controller")
             or {})
    return dt.GripperConfig.from_params(entry.get("ros__parameters") or {})


@dataclass
class _Goal:
    """One action goal's outcome, filled by whichever thread decides it."""

    handle: Any
    done: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""  # succeed | abort | cancel
    code: int = 0
    text: str = ""
    feedback: tuple[float, np.ndarray, np.ndarray] | None = None  # stamp, actual, desired
    grip: dt.GripperGoal | None = None
    stalled: bool = False
    reached: bool = False
    position: float = 0.0

    def finish(self, outcome: str, code: int = 0, text: str = "") -> None:
        if not self.done.is_set():
            self.outcome, self.code, self.text = outcome, code, text
            self.done.set()


class DriverTwin:
    """Serves the real stack's interfaces on ``node`` over ``world``; see the module docstring.

    ``tick`` is called with every joint-state sample (the sim runner's physics thread): it runs
    the controllers' per-cycle checks, fires armed faults and publishes the gripper's joint
    state. ``lock`` guards ``state`` and the active goals; the dashboard, controller-manager and
    fault services (``CellServices``) change ``state`` under it and then call ``reconcile``.
    """

    def __init__(self, node: Node, world: SimWorld, *, gripper_closed: float = 0.7929,
                 gripper: dt.GripperConfig | None = None,
                 tolerances: dt.Tolerances | None = None,
                 on_change: Callable[[], None] | None = None) -> None:
        from control_msgs.action import FollowJointTrajectory, ParallelGripperCommand
        from tf2_msgs.msg import TFMessage
        from ur_dashboard_msgs.msg import RobotMode, SafetyMode


        if not (math.isfinite(gripper_closed) and gripper_closed > 0.0):
            raise SimError(f"gripper_closed must be > 0 rad, got {gripper_closed}")
        self.node, self.world = node, world
        self.joints = tuple(SimWorld.JOINT_NAMES)
        self.gripper_closed = float(gripper_closed)
        self.gripper_cfg = gripper or dt.GripperConfig()
        self.defaults = tolerances or dt.ur_default_tolerances(len(self.joints))
        self._FJT, self._PGC = FollowJointTrajectory, ParallelGripperCommand
        self._msgs = {"SafetyMode": SafetyMode, "RobotMode": RobotMode}
        self._on_change = on_change
        self.lock = threading.Lock()
        self.state = dt.DriverState()
        self._goal: _Goal | None = None
        self._goals: dict[bytes, _Goal] = {}  # goal id -> record (both actions)
        self._supervisor: dt.GoalSupervisor | None = None
        self._active_tol = self.defaults
        self._grip_goal: _Goal | None = None
        self._knuckle: tuple[float, float] | None = None  # (sim time, position) last tick
        self._ticks = 0
        self._published: tuple[Any, ...] = ()
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        io = "io_and_status_controller/"
        self.program_pub = node.create_publisher(Bool, io + "robot_program_running", latched)
        self.safety_pub = node.create_publisher(SafetyMode, io + "safety_mode", latched)
        self.mode_pub = node.create_publisher(RobotMode, io + "robot_mode", latched)
        self.gripper_pub = node.create_publisher(JointState, GRIPPER_STATES, 20)
        self.tf_static_pub = node.create_publisher(TFMessage, "/tf_static", latched)
        self.description_pub = node.create_publisher(String, GRIPPER_DESCRIPTION, latched)
        actions = ReentrantCallbackGroup()
        self._follow = ActionServer(
            node, FollowJointTrajectory, ur_driver.FOLLOW_ACTION.lstrip("/"),
            execute_callback=self._follow_execute, goal_callback=self._follow_goal,
            cancel_callback=self._follow_cancel, handle_accepted_callback=self._follow_accepted,
            callback_group=actions)
        self._gripper = ActionServer(
            node, ParallelGripperCommand, GRIPPER_ACTION,
            execute_callback=self._gripper_execute, goal_callback=self._gripper_goal,
            cancel_callback=self._gripper_cancel,
            handle_accepted_callback=self._gripper_accepted, callback_group=actions)
        self._services = CellServices(node, self)
        self.tf_static_pub.publish(static_transforms(TFMessage))
        self.description_pub.publish(String(data=gripper_description(self.gripper_closed)))
        with self.lock:
            self.reconcile()
        self.publish_states()

    # --- derived state for the sim node ---------------------------------------------------
    @property
    def camera_publishing(self) -> bool:
        with self.lock:
            return self.state.camera_publishing

    @property
    def gripper_activated(self) -> bool:
        with self.lock:
            return self.state.gripper_activated

    @property
    def speed_percent(self) -> float:
        with self.lock:
            return self.state.speed_slider * 100.0

    # --- the trajectory controller ---------------------------------------------------------
    def _problem(self, msg: Any) -> str:
        """Why the controller refuses ``msg`` ('' = it takes it): its rules, then the sim's
        own (joint limits, finite values)."""
        stamp = seconds(msg.header.stamp)
        problem = trajectory_problem(list(msg.joint_names), point_data(msg), self.joints,
                                     start_time=stamp, now=self.world.time)
        if problem:
            return problem
        try:
            self.world.check_trajectory(list(msg.joint_names), world_points(msg))
        except (SimError, ValueError, TypeError) as e:
            return str(e)
        return ""

    def _follow_goal(self, request: Any) -> GoalResponse:
        with self.lock:
            active = self.state.trajectory_controller_active
        if not active:
            self.node.get_logger().error("Can't accept new action goals. Controller is not "
                                         "running.")
            return GoalResponse.REJECT
        problem = self._problem(request.trajectory)
        if problem:
            self.node.get_logger().error(f"trajectory goal rejected: {problem}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _follow_accepted(self, handle: Any) -> None:
        goal = handle.request
        tol = dt.goal_tolerances(
            self.defaults, self.joints,
            [(t.name, float(t.position)) for t in goal.path_tolerance],
            [(t.name, float(t.position)) for t in goal.goal_tolerance],
            seconds(goal.goal_time_tolerance))
        rec = _Goal(handle)
        with self.lock:
            self._goals[bytes(handle.goal_id.uuid)] = rec
            if self._goal is not None:
                self._goal.finish("abort", dt.INVALID_GOAL, dt.PREEMPTED)
            self._goal, self._active_tol = rec, tol
            if not self.state.trajectory_controller_active:  # deactivated since accepted
                rec.finish("abort", dt.INVALID_GOAL, dt.DEACTIVATED)
                self._goal = None
            else:
                self._start(goal.trajectory, rec)
        handle.execute()

    def _start(self, msg: Any, rec: _Goal | None) -> None:
        """Replace the running trajectory (lock held); a refusal here ends ``rec``."""
        try:
            self.world.command_trajectory(list(msg.joint_names), world_points(msg))
        except (SimError, ValueError, TypeError) as e:
            if rec is not None:
                rec.finish("abort", dt.INVALID_GOAL, str(e))
                self._goal = None
            return
        self._supervisor = dt.GoalSupervisor(self.joints, self._active_tol)

    def topic_trajectory(self, msg: Any) -> str:
        """The controller's topic interface; returns why it ignored ``msg`` ('' = took it)."""
        with self.lock:
            if not self.state.trajectory_controller_active:
                return "the trajectory controller is not active: topic trajectory ignored"
        problem = self._problem(msg)
        if problem:
            return problem
        with self.lock:
            if self.state.trajectory_controller_active:
                self._start(msg, None)  # an active goal stays active, judged on this one
        return ""

    def _follow_cancel(self, handle: Any) -> CancelResponse:
        with self.lock:
            rec = self._goals.get(bytes(handle.goal_id.uuid))
            if rec is not None and rec is self._goal:
                self._hold()
                self._goal = None
                rec.finish("cancel")
        return CancelResponse.ACCEPT

    def _hold(self) -> None:
        """Hold where the arm is (lock held): set_hold_position."""
        self.world.hold()
        self._supervisor = None

    def _follow_execute(self, handle: Any) -> Any:
        rec = self._goals[bytes(handle.goal_id.uuid)]
        while not rec.done.wait(FEEDBACK_PERIOD):
            sample = rec.feedback
            if sample is not None and handle.is_active:
                handle.publish_feedback(self._feedback(*sample))
        return self._end(handle, rec, self._FJT.Result(error_code=rec.code,
                                                       error_string=rec.text))

    def _feedback(self, stamp: float, actual: np.ndarray, desired: np.ndarray) -> Any:
        from trajectory_msgs.msg import JointTrajectoryPoint

        fb = self._FJT.Feedback()
        fb.header.stamp.sec = int(math.floor(stamp))
        fb.header.stamp.nanosec = int((stamp - math.floor(stamp)) * 1e9) % 1_000_000_000
        fb.joint_names = list(self.joints)
        fb.actual = JointTrajectoryPoint(positions=[float(v) for v in actual])
        fb.desired = JointTrajectoryPoint(positions=[float(v) for v in desired])
        fb.error = JointTrajectoryPoint(positions=[float(d - a)
                                                   for d, a in zip(desired, actual, strict=True)])
        return fb

    def _end(self, handle: Any, rec: _Goal, result: Any) -> Any:
        """Put the goal in its terminal state (a cancel waits for the CANCELING transition)."""
        with self.lock:
            self._goals.pop(bytes(handle.goal_id.uuid), None)
        if rec.outcome == "cancel":
            deadline = time.monotonic() + 1.0
            while not handle.is_cancel_requested and time.monotonic() < deadline:
                time.sleep(0.002)
            if handle.is_cancel_requested:
                handle.canceled()
                return result
        if rec.outcome == "succeed":
            handle.succeed()
        else:
            handle.abort()
        return result

    # --- the gripper -------------------------------------------------------------------------
    def _gripper_goal(self, request: Any) -> GoalResponse:
        if len(request.command.position) != 1:
            self.node.get_logger().error(
                f"Received action goal with wrong number of position values, expects 1, got "
                f"{len(request.command.position)}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _gripper_accepted(self, handle: Any) -> None:
        cmd = handle.request.command
        target = min(max(float(cmd.position[0]), 0.0), self.gripper_closed)  # the driver clamps
        effort = float(cmd.effort[0]) if len(cmd.effort) else self.gripper_cfg.max_effort
        rec = _Goal(handle, grip=dt.GripperGoal(target, effort, self.world.time))
        with self.lock:
            self._goals[bytes(handle.goal_id.uuid)] = rec
            if self._grip_goal is not None:  # upstream marks it canceled; rclpy allows abort
                self._grip_goal.finish("abort")
            self._grip_goal = rec
            if self.state.gripper_activated:
                self.world.command_gripper(target / self.gripper_closed
                                           * robotiq.CLOSED_POSITION)
        handle.execute()

    def _gripper_cancel(self, handle: Any) -> CancelResponse:
        with self.lock:
            rec = self._goals.get(bytes(handle.goal_id.uuid))
            if rec is not None and rec is self._grip_goal:
                if self.state.gripper_activated:
                    self.world.command_gripper(self.world.gripper_position())
                self._grip_goal = None
                rec.finish("cancel")
        return CancelResponse.ACCEPT

    def _gripper_execute(self, handle: Any) -> Any:
        rec = self._goals[bytes(handle.goal_id.uuid)]
        rec.done.wait()
        result = self._PGC.Result(stalled=rec.stalled, reached_goal=rec.reached)
        result.state.name = [robotiq.KNUCKLE_JOINT]
        result.state.position = [rec.position]
        result.state.effort = [rec.grip.effort if rec.grip else 0.0]
        return self._end(handle, rec, result)

    def knuckle(self) -> float:
        """The knuckle in the real gripper's radians (0 open .. ``gripper_closed``)."""
        return self.world.gripper_position() / robotiq.CLOSED_POSITION * self.gripper_closed

    # --- the cycle ---------------------------------------------------------------------------
    def tick(self, stamp: float, positions: np.ndarray) -> None:
        """One controller cycle at sim time ``stamp`` (the runner's physics thread)."""
        knuckle = self.knuckle()
        with self.lock:
            before = self._status_key()
            sup = self._supervisor
            if sup is not None:
                q_des, t, t_end = self.world.trajectory_progress()
                for armed in self.state.due(t):
                    self.state.apply(armed.kind, armed.params)
                    self.node.get_logger().warning(f"driver fault: {self.state.log[-1]}")
                self.reconcile()
            if self._supervisor is not None:
                self._supervise(stamp, positions, q_des, t, t_end)
            velocity = 0.0
            if self._knuckle is not None and stamp > self._knuckle[0]:
                velocity = (knuckle - self._knuckle[1]) / (stamp - self._knuckle[0])
            self._knuckle = (stamp, knuckle)
            grip = self._grip_goal
            if grip is not None and grip.grip is not None:
                verdict = grip.grip.step(self.gripper_cfg, stamp, knuckle, velocity)
                if verdict is not None:
                    ok, grip.reached, grip.stalled = verdict
                    grip.position = knuckle
                    grip.finish("succeed" if ok else "abort")
                    self._grip_goal = None
            changed = self._status_key() != before
        self._ticks += 1
        if self._ticks % GRIPPER_STATE_EVERY == 0:
            msg = JointState(name=[robotiq.KNUCKLE_JOINT], position=[knuckle],
                             velocity=[velocity], effort=[0.0])
            msg.header.stamp.sec = int(math.floor(stamp))
            msg.header.stamp.nanosec = int((stamp - math.floor(stamp)) * 1e9) % 1_000_000_000
            self.gripper_pub.publish(msg)
        if changed:
            self.publish_states()

    def _supervise(self, stamp: float, q: np.ndarray, q_des: np.ndarray, t: float,
                   t_end: float) -> None:
        assert self._supervisor is not None
        verdict, text = self._supervisor.step(t, t_end, q, q_des)
        rec = self._goal
        if rec is not None:
            rec.feedback = (stamp, np.array(q, float), np.array(q_des, float))
        if verdict == dt.Verdict.RUNNING:
            return
        if verdict == dt.Verdict.SUCCEEDED:
            self._supervisor = None  # the last point stays commanded
            if rec is not None:
                rec.finish("succeed", dt.SUCCESSFUL, text)
                self._goal = None
            return
        self._hold()
        code = (dt.PATH_TOLERANCE_VIOLATED if verdict == dt.Verdict.PATH_VIOLATED
                else dt.GOAL_TOLERANCE_VIOLATED)
        self.node.get_logger().warning(text if rec is not None
                                       else f"Holding position: {text}")
        if rec is not None:
            rec.finish("abort", code, text)
            self._goal = None

    def reconcile(self) -> None:
        """Make the arm follow the driver state (lock held): a deactivated controller aborts
        its goal and holds; a protective stop holds; the slider scales trajectory time."""
        self.world.set_speed_scaling(self.state.speed_slider)
        if not self.state.trajectory_controller_active or not self.state.program_running \
                or self.state.safety_mode != dt.SAFETY_NORMAL:
            if self._goal is not None:
                self._goal.finish("abort", dt.INVALID_GOAL, dt.DEACTIVATED)
                self._goal = None
            if self._supervisor is not None or self.world.trajectory_active():
                self._hold()

    def _status_key(self) -> tuple[Any, ...]:
        s = self.state
        return (s.program, s.safety_mode, s.robot_mode, s.camera_publishing)

    def publish_states(self) -> None:
        with self.lock:
            s = self.state
            running, safety, mode = s.program_running, s.safety_mode, s.robot_mode
        self.program_pub.publish(Bool(data=running))
        self.safety_pub.publish(self._msgs["SafetyMode"](mode=safety))
        self.mode_pub.publish(self._msgs["RobotMode"](mode=mode))
        if self._on_change is not None:
            self._on_change()

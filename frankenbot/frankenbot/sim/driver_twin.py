"""The driver stack of a real UR5e cell as pure state: what the sim's driver twin serves.

Why: the brain's real-robot path (FollowJointTrajectory and ParallelGripperCommand actions, the
External Control program, the dashboard, the controller manager) should meet the behaviour it
will meet on the arm before it meets the arm. This module holds that behaviour without ROS, read
from the upstream sources (ros2_controllers jazzy: joint_trajectory_controller, tolerances,
parallel_gripper_action_controller; Universal_Robots_ROS2_Driver jazzy: scaled JTC, controller
stopper, dashboard client, io_and_status_controller; ros2_robotiq_gripper):

- ``Tolerances`` / ``goal_tolerances``: the scaled JTC's defaults from ur_controllers.yaml
  (path 0.2 rad, goal 0.1 rad, goal_time 0 = wait forever) and a goal's own overrides
  (0 keeps the default, -1 removes the bound, another negative value is illegal: defaults);
- ``GoalSupervisor``: the controller's per-cycle verdict on a trajectory (path tolerance while
  moving and on the first sample, which is the start-state check; goal tolerance after the end,
  within goal_time);
- ``GripperGoal``: the parallel gripper controller's success/stall rule;
- ``DriverState``: program state, safety and robot modes, controller states (the controller
  stopper deactivates the motion controllers while the program does not run), gripper
  activation, camera, speed slider; dashboard commands; injectable faults.

The rclpy side is ``frankenbot.nodes.driver_twin``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from frankenbot.errors import SimError

TRAJECTORY_CONTROLLER = "scaled_joint_trajectory_controller"
# What ur_control.launch.py loads, and which are active at start (the rest are loaded inactive).
UR_CONTROLLERS: dict[str, tuple[str, bool]] = {
    "joint_state_broadcaster": ("joint_state_broadcaster/JointStateBroadcaster", True),
    "io_and_status_controller": ("ur_controllers/GPIOController", True),
    "speed_scaling_state_broadcaster": ("ur_controllers/SpeedScalingStateBroadcaster", True),
    "force_torque_sensor_broadcaster": (
        "force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster", True),
    "tcp_pose_broadcaster": ("pose_broadcaster/PoseBroadcaster", True),
    "ur_configuration_controller": ("ur_controllers/URConfigurationController", True),
    TRAJECTORY_CONTROLLER: ("ur_controllers/ScaledJointTrajectoryController", True),
    "joint_trajectory_controller": ("joint_trajectory_controller/JointTrajectoryController",
                                    False),
    "forward_position_controller": ("position_controllers/JointGroupPositionController",
                                    False),
}
# The controller stopper leaves these alone when the program stops (ur_control.launch.py).
CONSISTENT_CONTROLLERS = ("io_and_status_controller", "force_torque_sensor_broadcaster",
                          "joint_state_broadcaster", "speed_scaling_state_broadcaster",
                          "tcp_pose_broadcaster", "ur_configuration_controller")
ROBOTIQ_CONTROLLERS: dict[str, tuple[str, bool]] = {
    "joint_state_broadcaster": ("joint_state_broadcaster/JointStateBroadcaster", True),
    "robotiq_gripper_controller": ("parallel_gripper_action_controller/GripperActionController",
                                   True),
    "robotiq_activation_controller": ("robotiq_controllers/RobotiqActivationController", True),
}

# ur_dashboard_msgs constants (SafetyMode, RobotMode, ProgramState)
SAFETY_NORMAL, SAFETY_PROTECTIVE_STOP = 1, 3
ROBOT_POWER_OFF, ROBOT_IDLE, ROBOT_RUNNING = 3, 5, 7
PLAYING, STOPPED, PAUSED = "PLAYING", "STOPPED", "PAUSED"
SAFETY_NAMES = {1: "NORMAL", 2: "REDUCED", 3: "PROTECTIVE_STOP", 4: "RECOVERY",
                5: "SAFEGUARD_STOP", 6: "SYSTEM_EMERGENCY_STOP", 7: "ROBOT_EMERGENCY_STOP",
                8: "VIOLATION", 9: "FAULT", 10: "VALIDATE_JOINT_ID", 11: "UNDEFINED_SAFETY_MODE",
                12: "AUTOMATIC_MODE_SAFEGUARD_STOP", 13: "SYSTEM_THREE_POSITION_ENABLING_STOP"}

# FollowJointTrajectory result codes
SUCCESSFUL, INVALID_GOAL, PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = 0, -1, -4, -5
DEACTIVATED = "Current goal cancelled during deactivate transition."
PREEMPTED = "Current goal preempted by new incoming action."


class Fault(str, enum.Enum):
    """Faults of the real stack the twin can be told to show."""

    PENDANT_STOP = "pendant_stop"  # Stop pressed on the pendant: the program stops
    PROTECTIVE_STOP = "protective_stop"  # the robot's safety system stopped it; program paused
    CONTROLLER_INACTIVE = "controller_inactive"  # scaled JTC deactivated (program still runs)
    GRIPPER_NOT_ACTIVATED = "gripper_not_activated"  # the Robotiq ignores commands
    CAMERA_SILENT = "camera_silent"  # the RealSense stops publishing


CONTROL_KINDS = ("speed_slider", "clear")  # not faults, but set through the same service
PHASES = ("", "now", "motion")  # now, or once a trajectory has run ``after_s`` (sim time)


# --- the trajectory controller --------------------------------------------------------------
@dataclass(frozen=True)
class Tolerances:
    """Per-joint position bounds (0 = not enforced) and the goal time (0 = wait forever)."""

    path: tuple[float, ...]
    goal: tuple[float, ...]
    goal_time: float = 0.0


def ur_default_tolerances(n: int = 6) -> Tolerances:
    """ur_controllers.yaml, scaled_joint_trajectory_controller.constraints (jazzy)."""
    return Tolerances((0.2,) * n, (0.1,) * n, 0.0)


def _resolve(default: float, value: float) -> float:
    if value > 0.0:
        return float(value)
    if abs(value + 1.0) < 1.1920929e-07:  # -1: the bound is erased
        return 0.0
    if value < 0.0:
        raise ValueError(f"illegal tolerance {value}")
    return default


def goal_tolerances(defaults: Tolerances, joints: Sequence[str],
                    path: Sequence[tuple[str, float]], goal: Sequence[tuple[str, float]],
                    goal_time: float) -> Tolerances:
    """A goal's (joint, position) tolerances over the defaults; any illegal one -> defaults,
    as the controller does (velocity and acceleration bounds are not checked for a
    position-commanded arm: the UR's JTC computes no velocity error)."""
    try:
        gt = _resolve(defaults.goal_time, goal_time)
        p, g = list(defaults.path), list(defaults.goal)
        for out, given in ((p, path), (g, goal)):
            for name, value in given:
                if name not in joints:
                    return defaults
                out[list(joints).index(name)] = _resolve(out[list(joints).index(name)], value)
    except ValueError:
        return defaults
    return Tolerances(tuple(p), tuple(g), gt)


class Verdict(str, enum.Enum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    PATH_VIOLATED = "path_violated"
    GOAL_VIOLATED = "goal_violated"


@dataclass
class GoalSupervisor:
    """The controller's per-cycle check of one trajectory against its tolerances."""

    joints: tuple[str, ...]
    tolerances: Tolerances
    first_sample: bool = True

    def step(self, traj_time: float, end_time: float, q: Sequence[float],
             q_des: Sequence[float]) -> tuple[Verdict, str]:
        before_last = traj_time < end_time
        check_path = before_last or self.first_sample
        self.first_sample = False
        path_bad, goal_out = "", False
        for i, name in enumerate(self.joints):
            err = float(q_des[i]) - float(q[i])
            tol = self.tolerances.path[i]
            if check_path and not path_bad and tol > 0.0 and abs(err) > tol:
                path_bad = f"{name} is {abs(err):.3f} rad off the path (tolerance {tol:g})"
            goal_tol = self.tolerances.goal[i]
            if not before_last and goal_tol > 0.0 and abs(err) > goal_tol:
                goal_out = True
        if path_bad:
            return Verdict.PATH_VIOLATED, f"Aborted due to path tolerance violation: {path_bad}"
        if before_last:
            return Verdict.RUNNING, ""
        if not goal_out:
            return Verdict.SUCCEEDED, "Goal successfully reached!"
        late = traj_time - end_time
        if self.tolerances.goal_time != 0.0 and late > self.tolerances.goal_time:
            return (Verdict.GOAL_VIOLATED,
                    f"Aborted due to goal_time_tolerance exceeding by {late:f} seconds")
        return Verdict.RUNNING, ""


# --- the gripper -----------------------------------------------------------------------------
@dataclass(frozen=True)
class GripperConfig:
    """parallel_gripper_action_controller parameters (config/robotiq_controllers.yaml)."""

    goal_tolerance: float = 0.01
    allow_stalling: bool = False
    stall_velocity_threshold: float = 0.001
    stall_timeout: float = 1.0
    max_effort: float = 10.0

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "GripperConfig":
        d = cls()
        return cls(float(params.get("goal_tolerance", d.goal_tolerance)),
                   bool(params.get("allow_stalling", d.allow_stalling)),
                   float(params.get("stall_velocity_threshold", d.stall_velocity_threshold)),
                   float(params.get("stall_timeout", d.stall_timeout)),
                   float(params.get("max_effort", d.max_effort)))


@dataclass
class GripperGoal:
    """One ParallelGripperCommand goal: reached within tolerance, or stalled (no motion for
    ``stall_timeout``): success with ``stalled`` when stalling is allowed, else an abort."""

    target: float
    effort: float
    started: float
    last_moved: float = field(init=False)

    def __post_init__(self) -> None:
        self.last_moved = self.started

    def step(self, cfg: GripperConfig, now: float, position: float,
             velocity: float) -> tuple[bool, bool, bool] | None:
        """None while running; else (succeeded, reached_goal, stalled)."""
        if abs(self.target - position) < cfg.goal_tolerance:
            return True, True, False
        if abs(velocity) > cfg.stall_velocity_threshold:
            self.last_moved = now
            return None
        if now - self.last_moved > cfg.stall_timeout:
            return cfg.allow_stalling, False, True
        return None


# --- the cell's state ------------------------------------------------------------------------
@dataclass(frozen=True)
class ArmedFault:
    kind: str
    phase: str
    params: Mapping[str, Any]


@dataclass
class DriverState:
    """Program, safety, controllers, gripper, camera and slider of the twin; not thread-safe
    (the twin node guards it with one lock)."""

    program: str = PLAYING
    safety_mode: int = SAFETY_NORMAL
    robot_mode: int = ROBOT_RUNNING
    speed_slider: float = 1.0
    gripper_activated: bool = True
    camera_publishing: bool = True
    controllers: dict[str, str] = field(default_factory=lambda: {
        n: "active" if on else "inactive" for n, (_, on) in UR_CONTROLLERS.items()})
    stopped_by_stopper: list[str] = field(default_factory=list)
    armed: list[ArmedFault] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # what happened, for the node's log and tests

    # --- derived ------------------------------------------------------------------------
    @property
    def program_running(self) -> bool:
        return self.program == PLAYING

    @property
    def trajectory_controller_active(self) -> bool:
        return self.controllers.get(TRAJECTORY_CONTROLLER) == "active"

    def robotiq_controllers(self) -> dict[str, str]:
        return {n: "active" if on else "inactive" for n, (_, on) in ROBOTIQ_CONTROLLERS.items()}

    # --- the program and the controller stopper --------------------------------------------
    def _set_program(self, state: str) -> None:
        was = self.program_running
        self.program = state
        if was and not self.program_running:  # stop every controller not kept consistent
            self.stopped_by_stopper = [n for n, s in self.controllers.items()
                                       if s == "active" and n not in CONSISTENT_CONTROLLERS]
            for n in self.stopped_by_stopper:
                self.controllers[n] = "inactive"
        elif not was and self.program_running:  # restart what the stopper stopped
            for n in self.stopped_by_stopper:
                self.controllers[n] = "active"
            self.stopped_by_stopper = []

    # --- the dashboard (std_srvs/Trigger answers) ------------------------------------------
    def dashboard(self, command: str) -> tuple[bool, str]:
        """play, stop, pause, unlock_protective_stop, power_on, power_off, brake_release."""
        if command == "play":
            if self.safety_mode != SAFETY_NORMAL:
                return False, (f"Failed to execute: play (safety mode "
                               f"{SAFETY_NAMES.get(self.safety_mode, self.safety_mode)})")
            if self.robot_mode != ROBOT_RUNNING:
                return False, "Failed to execute: play (robot is not running)"
            self._set_program(PLAYING)
            return True, "Starting program"
        if command == "stop":
            self._set_program(STOPPED)
            return True, "Stopped"
        if command == "pause":
            if not self.program_running:
                return False, "Failed to execute: pause"
            self._set_program(PAUSED)
            return True, "Pausing program"
        if command == "unlock_protective_stop":
            if self.safety_mode != SAFETY_PROTECTIVE_STOP:
                return False, "Failed to execute: unlock protective stop (not in one)"
            self.safety_mode = SAFETY_NORMAL
            return True, "Protective stop releasing"
        if command == "power_on":
            if self.robot_mode == ROBOT_POWER_OFF:
                self.robot_mode = ROBOT_IDLE
            return True, "Powering on"
        if command == "brake_release":
            if self.robot_mode == ROBOT_POWER_OFF:
                return False, "Failed to execute: brake release (powered off)"
            self.robot_mode = ROBOT_RUNNING
            return True, "Brake releasing"
        if command == "power_off":
            self._set_program(STOPPED)
            self.robot_mode = ROBOT_POWER_OFF
            return True, "Powering off"
        raise SimError(f"unknown dashboard command {command!r}")

    def switch_controllers(self, activate: Sequence[str],
                           deactivate: Sequence[str]) -> tuple[bool, str]:
        """controller_manager's switch_controller, STRICT: every name must be loaded."""
        unknown = [n for n in [*activate, *deactivate] if n not in self.controllers]
        if unknown:
            return False, f"controllers not loaded: {unknown}"
        for n in deactivate:
            self.controllers[n] = "inactive"
        for n in activate:
            self.controllers[n] = "active"
        return True, "switched"

    # --- faults ------------------------------------------------------------------------------
    def arm(self, kind: str, phase: str, params: Mapping[str, Any]) -> str:
        """Apply now or arm for the next motion; returns a sentence saying which."""
        valid = [f.value for f in Fault] + list(CONTROL_KINDS)
        if kind not in valid:
            raise SimError(f"unknown driver fault {kind!r}; valid: {', '.join(valid)}")
        if phase not in PHASES:
            raise SimError(f"unknown phase {phase!r}; valid: now, motion (after params "
                           f"after_s, default 0.3 s of a trajectory)")
        after = float(params.get("after_s", 0.3))
        if not (math.isfinite(after) and after >= 0.0):
            raise SimError(f"after_s must be >= 0, got {params.get('after_s')}")
        if phase == "motion":
            self.armed.append(ArmedFault(kind, phase, dict(params)))
            return f"{kind} armed for {after:g} s into the next trajectory"
        return self.apply(kind, params)

    def due(self, moving_for: float) -> list[ArmedFault]:
        """The armed faults whose time has come, ``moving_for`` s into a trajectory."""
        fire = [a for a in self.armed if moving_for >= float(a.params.get("after_s", 0.3))]
        self.armed = [a for a in self.armed if a not in fire]
        return fire

    def apply(self, kind: str, params: Mapping[str, Any]) -> str:
        if kind == Fault.PENDANT_STOP:
            self._set_program(STOPPED)
            text = "program stopped on the pendant"
        elif kind == Fault.PROTECTIVE_STOP:
            self.safety_mode = SAFETY_PROTECTIVE_STOP
            self._set_program(PAUSED)
            text = "protective stop (program paused)"
        elif kind == Fault.CONTROLLER_INACTIVE:
            self.controllers[TRAJECTORY_CONTROLLER] = "inactive"
            text = f"{TRAJECTORY_CONTROLLER} deactivated"
        elif kind == Fault.GRIPPER_NOT_ACTIVATED:
            self.gripper_activated = False
            text = "Robotiq not activated: it ignores commands"
        elif kind == Fault.CAMERA_SILENT:
            self.camera_publishing = False
            text = "camera topics silent"
        elif kind == "speed_slider":
            fraction = float(params.get("fraction", 1.0))
            if not (math.isfinite(fraction) and 0.0 <= fraction <= 1.0):
                raise SimError(f"speed_slider needs params fraction in [0, 1], got "
                               f"{params.get('fraction')}")
            self.speed_slider = fraction
            text = f"speed slider at {fraction * 100:g} %"
        else:  # clear: the operator fixes everything
            fresh = DriverState(speed_slider=self.speed_slider)
            self.__dict__.update(replace(fresh, log=self.log).__dict__)
            text = "all faults cleared, program playing"
        self.log.append(text)
        return text

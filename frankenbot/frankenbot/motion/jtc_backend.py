"""Motion backend for the joint trajectory controller: analytic IK, our own timing, safety check.

Planning is pure (IK, trajectory, envelope) and fast enough to run inline (a full pick plans in
a few milliseconds). Execution sends the trajectory through the RobotInterface and then watches
the robot: it polls the cancel token and the e-stop every ``poll_period`` of robot time and stops
the arm on a cancel; it declares success only when the measured joints have converged on the last
sample, and an abort when the controller says so or the arm is still short of the goal well after
the planned duration.

Speed scaling (the pendant's slider) is applied once, by the controller: the UR driver's
scaled_joint_trajectory_controller runs a trajectory's clock at the slider's fraction of real
time (ur_controllers/src/scaled_joint_trajectory_controller.cpp, jazzy). So trajectories are
planned for full speed (times only the motion's own ``speed`` factor), and the watch counts the
planned duration in scaled time, sampling the slider as it goes. Planning with the slider as
well ran motions at scaling squared: 25x slower than planned at 20 %.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from frankenbot import settings
from frankenbot.common import FailureCode
from frankenbot.errors import MotionError, SafetyViolation
from frankenbot.motion.backend import MotionOutcome
from frankenbot.motion.kinematics import HOME_JOINTS, UnreachableError, UR5eKinematics, Vector
from frankenbot.motion.safety import SafetyEnvelope
from frankenbot.motion.trajectory import (
    DiscontinuityError,
    JointTrajectory,
    MotionLimits,
    joint_move,
    linear_move,
)
from frankenbot.ports import (
    CancelToken,
    ControllerRejected,
    EstopEngaged,
    RobotInterface,
    TrajectoryState,
)
from frankenbot.settings import setting


@dataclass(frozen=True)
class ExecutionConfig:
    """How motions are watched while they run."""

    poll_period: float = setting(0.004, "robot time between checks (cancel, e-stop, progress)",
                                 unit="s", low=1e-4)
    goal_tolerance: float = setting(0.01, "largest joint error of a reached goal", unit="rad",
                                    low=0.0)
    settle_velocity: float = setting(0.05, "largest joint speed of a reached goal",
                                     unit="rad/s", low=0.0)
    goal_time_margin: float = setting(1.0, "past the planned duration before a stall is an "
                                      "abort", unit="s", low=0.0)
    min_speed_scaling: float = setting(0.05, "the progress watch counts scaled time at no less "
                                       "than this fraction of real time (a paused robot times "
                                       "out eventually instead of waiting forever)", low=1e-3,
                                       high=1.0)
    state_wait: float = setting(1.0, "wall time to wait for a fresh joint state before failing "
                                "(no_state)", unit="s", low=0.0)

    def __post_init__(self) -> None:
        settings.validate(self, "execution")


class PlanningError(MotionError):
    """A motion could not be planned; carries the failure code to report."""

    def __init__(self, code: FailureCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code


class JtcBackend:
    """MotionBackend over a RobotInterface that takes joint trajectories."""

    def __init__(self, robot: RobotInterface, *, kinematics: UR5eKinematics,
                 envelope: SafetyEnvelope, limits: MotionLimits | None = None,
                 execution: ExecutionConfig | None = None,
                 posture: Vector | None = HOME_JOINTS) -> None:
        self.robot = robot
        self.posture = None if posture is None else tuple(float(v) for v in posture)
        self.kin = kinematics
        self.envelope = envelope
        self.limits = limits or MotionLimits()
        self.execution = execution or ExecutionConfig()

    # --- planning (pure) ------------------------------------------------------------------
    def _scaling(self) -> float:
        """The slider's fraction now, for the watch's scaled clock (never for planning)."""
        s = self.robot.speed_scaling()
        if not math.isfinite(s):
            s = 1.0
        return min(1.0, max(self.execution.min_speed_scaling, s))

    def plan_joints(self, start: Vector, goal: Vector,
                    speed_scaling: float = 1.0) -> JointTrajectory:
        goal_arr = np.asarray(goal, dtype=float)
        if goal_arr.shape != (6,) or not np.all(np.isfinite(goal_arr)):
            raise PlanningError(FailureCode.INVALID_ARGUMENT,
                                f"joint goal must be 6 finite numbers, got {goal_arr.tolist()}")
        try:
            self.envelope.check_joints(goal_arr, "joint goal")
        except SafetyViolation as e:
            raise PlanningError(FailureCode.REJECTED_BY_SAFETY, str(e)) from e
        traj = joint_move(start, goal_arr, self.limits, speed_scaling, kin=self.kin)
        self._check(traj, start)
        return traj

    def plan_pose(self, start: Vector, tcp_pose: np.ndarray,
                  speed_scaling: float = 1.0) -> JointTrajectory:
        """Joint-space move to a TCP pose.

        The goal configuration is the IK solution nearest the preferred posture (elbow up, wrist
        down, as at home) rather than nearest the current one, so a series of free moves never
        drifts into an odd branch; wrist_3 stays near its current turn. The first candidate
        whose trajectory passes the envelope wins.
        """
        pose = self._valid_pose(tcp_pose)
        start_arr = np.asarray(start, dtype=float)
        near = np.array(self.posture if self.posture is not None else start_arr, dtype=float)
        near[5] = start_arr[5]
        candidates = self.kin.ik_candidates(pose, near)
        if not candidates:
            p = pose[:3, 3]
            raise PlanningError(FailureCode.UNREACHABLE,
                                f"no IK solution within joint limits for TCP at ({p[0]:.3f}, "
                                f"{p[1]:.3f}, {p[2]:.3f}) m")
        first_error: PlanningError | None = None
        for goal in candidates:
            try:
                return self.plan_joints(start_arr, goal, speed_scaling)
            except PlanningError as e:
                first_error = first_error or e
        assert first_error is not None
        raise first_error

    def plan_linear(self, start: Vector, tcp_pose: np.ndarray,
                    speed_scaling: float = 1.0) -> JointTrajectory:
        pose = self._valid_pose(tcp_pose)
        try:
            traj = linear_move(self.kin, start, pose, self.limits, speed_scaling)
        except (UnreachableError, DiscontinuityError) as e:
            raise PlanningError(FailureCode.UNREACHABLE, str(e)) from e
        self._check(traj, start)
        return traj

    def _valid_pose(self, tcp_pose: np.ndarray) -> np.ndarray:
        pose = np.asarray(tcp_pose, dtype=float)
        if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
            raise PlanningError(FailureCode.INVALID_ARGUMENT,
                                f"target pose must be a finite 4x4 transform, got {pose.shape} "
                                f"with finite={bool(np.all(np.isfinite(pose)))}")
        try:
            self.envelope.check_position(pose[:3, 3])
        except SafetyViolation as e:
            raise PlanningError(FailureCode.REJECTED_BY_SAFETY, str(e)) from e
        return pose

    def _check(self, traj: JointTrajectory, start: Vector) -> None:
        try:
            self.envelope.check_trajectory(traj, start)
        except SafetyViolation as e:
            raise PlanningError(FailureCode.REJECTED_BY_SAFETY, str(e)) from e

    # --- MotionBackend --------------------------------------------------------------------
    def move_to_joints(self, goal: Vector, cancel: CancelToken,
                       speed: float = 1.0) -> MotionOutcome:
        return self._plan_and_run(lambda q, s: self.plan_joints(q, goal, s), cancel, speed)

    def move_to_pose(self, tcp_pose: np.ndarray, cancel: CancelToken,
                     speed: float = 1.0) -> MotionOutcome:
        return self._plan_and_run(lambda q, s: self.plan_pose(q, tcp_pose, s), cancel, speed)

    def move_linear(self, tcp_pose: np.ndarray, cancel: CancelToken,
                    speed: float = 1.0) -> MotionOutcome:
        return self._plan_and_run(lambda q, s: self.plan_linear(q, tcp_pose, s), cancel, speed)

    def stop(self) -> None:
        self.robot.stop()

    def _plan_and_run(self, plan: Callable[[np.ndarray, float], JointTrajectory],
                      cancel: CancelToken, speed: float = 1.0) -> MotionOutcome:
        if not (math.isfinite(speed) and 0.0 < speed <= 1.0):
            return MotionOutcome(FailureCode.INVALID_ARGUMENT,
                                 f"speed factor must be in (0, 1], got {speed}")
        if cancel.cancelled:
            return MotionOutcome(FailureCode.PREEMPTED, f"cancelled before start: {cancel.reason}")
        if self.robot.estop_engaged():
            return MotionOutcome(FailureCode.ESTOP, "e-stop engaged: no motion")
        state = self._fresh_state(cancel)
        if state is None:
            return MotionOutcome(FailureCode.NO_STATE, "no joint state received: no motion")
        try:
            traj = plan(np.asarray(state.positions, dtype=float), speed)
        except PlanningError as e:
            return MotionOutcome(e.code, str(e))
        except ValueError as e:
            return MotionOutcome(FailureCode.INVALID_ARGUMENT, str(e))
        return self.execute(traj, cancel)

    def _fresh_state(self, cancel: CancelToken) -> Any:
        """The current joint state, waiting up to ``state_wait`` wall seconds for one (a driver
        or sim that paused briefly, e.g. during a scene reset); None when none comes."""
        deadline = time.monotonic() + self.execution.state_wait
        state = self.robot.joint_state()
        while state is None and time.monotonic() < deadline and not cancel.cancelled:
            time.sleep(0.01)
            state = self.robot.joint_state()
        return state

    def execute(self, traj: JointTrajectory, cancel: CancelToken) -> MotionOutcome:
        """Check (again, against the latest state), send and watch one trajectory."""
        robot = self.robot
        cfg = self.execution
        if robot.estop_engaged():
            return MotionOutcome(FailureCode.ESTOP, "e-stop engaged: no motion")
        state = self._fresh_state(cancel)
        if state is None:
            return MotionOutcome(FailureCode.NO_STATE, "no joint state received: no motion")
        try:
            self.envelope.check_trajectory(traj, state.positions)
        except SafetyViolation as e:
            return MotionOutcome(FailureCode.REJECTED_BY_SAFETY, str(e))
        if len(traj) == 1 and traj.duration == 0.0:
            return MotionOutcome(FailureCode.OK, "already there")
        try:
            robot.send_trajectory(traj)
        except EstopEngaged as e:
            return MotionOutcome(FailureCode.ESTOP, str(e))
        except ControllerRejected as e:
            return MotionOutcome(FailureCode.ABORTED, f"controller rejected the trajectory: {e}")
        start = robot.now()
        goal = np.asarray(traj.final_positions)
        # the controller's trajectory clock: robot time times the slider, sampled as we poll
        progress, last = 0.0, start
        while True:
            if cancel.cancelled:
                robot.stop()
                return MotionOutcome(FailureCode.PREEMPTED, f"preempted: {cancel.reason}",
                                     robot.now() - start)
            if robot.estop_engaged():
                robot.stop()
                return MotionOutcome(FailureCode.ESTOP, "e-stop engaged during motion",
                                     robot.now() - start)
            status = robot.trajectory_state()
            if status == TrajectoryState.ABORTED:
                return MotionOutcome(FailureCode.ABORTED, "the controller aborted the trajectory",
                                     robot.now() - start)
            if status == TrajectoryState.PREEMPTED:
                return MotionOutcome(FailureCode.PREEMPTED,
                                     "another trajectory replaced this one", robot.now() - start)
            now = robot.now()
            progress += max(0.0, now - last) * self._scaling()
            last = now
            over = progress > traj.duration + cfg.goal_time_margin
            state = robot.joint_state()
            if state is not None and progress >= traj.duration:
                err = float(np.max(np.abs(np.asarray(state.positions) - goal)))
                speed = float(np.max(np.abs(state.velocities))) if state.velocities else 0.0
                if err <= cfg.goal_tolerance and speed <= cfg.settle_velocity:
                    return MotionOutcome(FailureCode.OK, "", now - start)
                if over:
                    robot.stop()
                    return MotionOutcome(
                        FailureCode.ABORTED,
                        f"arm did not reach the goal: joint error {err:.3f} rad, speed "
                        f"{speed:.3f} rad/s {now - start:.2f} s after start (planned "
                        f"{traj.duration:.2f} s at full speed)", now - start)
            elif over:
                robot.stop()
                return MotionOutcome(FailureCode.NO_STATE, "joint state stopped arriving",
                                     now - start)
            robot.sleep(cfg.poll_period)

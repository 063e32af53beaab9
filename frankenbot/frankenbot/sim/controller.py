"""Joint trajectory controller emulation with ros2_control JTC semantics.

Why: the brain sends the same ``trajectory_msgs/JointTrajectory`` to the sim as to the UR driver,
so the sim must interpret it the same way: points are reached at ``time_from_start`` measured from
the moment the trajectory arrives; a new trajectory replaces the one running; an empty one stops
the arm where it is; positions-only points are joined linearly, points with velocities by cubic
Hermite segments; the controller aborts on a large path error (a collision) or if the goal is not
reached within the goal time. Invalid input raises ``SimError`` before anything changes.

Speed scaling as the UR driver's scaled_joint_trajectory_controller does it
(Universal_Robots_ROS2_Driver jazzy, ur_controllers/src/scaled_joint_trajectory_controller.cpp:
``traj_time_ += period * scaling_factor_``): the trajectory's own clock advances by the pendant
slider's fraction of real time, so a trajectory timed for full speed takes 1/scaling as long.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from frankenbot.errors import SimError

PATH_TOLERANCE = 0.25  # rad: larger tracking error aborts (the arm is blocked)
GOAL_TOLERANCE = 0.02  # rad: all joints within this of the last point = succeeded
GOAL_TIME = 1.0  # s after the last point's time to reach the goal tolerance


@dataclass(frozen=True)
class TrajectoryPoint:
    """One waypoint: reached ``time_from_start`` seconds after the trajectory is received."""

    time_from_start: float
    positions: Sequence[float]
    velocities: Sequence[float] | None = None


class TrajectoryState(str, enum.Enum):
    IDLE = "idle"
    EXECUTING = "executing"
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"


@dataclass(frozen=True)
class TrajectoryStatus:
    state: TrajectoryState
    reason: str = ""


class JointTrajectoryController:
    """Samples the active trajectory and supervises tracking; not thread-safe (the world locks)."""

    def __init__(self, joint_names: Sequence[str], lower: np.ndarray, upper: np.ndarray,
                 *, path_tolerance: float = PATH_TOLERANCE,
                 goal_tolerance: float = GOAL_TOLERANCE, goal_time: float = GOAL_TIME) -> None:
        self.joint_names = tuple(joint_names)
        self._lower = np.asarray(lower, float)
        self._upper = np.asarray(upper, float)
        self.path_tolerance = path_tolerance
        self.goal_tolerance = goal_tolerance
        self.goal_time = goal_time
        self._times = np.zeros(0)
        self._pos = np.zeros((0, len(self.joint_names)))
        self._vel: np.ndarray | None = None
        self._t0 = 0.0
        self._traj_time = 0.0  # s of trajectory time elapsed (advances at speed_scaling)
        self._last_now = 0.0
        self._ended_at: float | None = None  # real time the trajectory time reached the end
        self.speed_scaling = 1.0  # the pendant slider's fraction (0 pauses, 1 full speed)
        self._hold = np.zeros(len(self.joint_names))
        self._status = TrajectoryStatus(TrajectoryState.IDLE)

    # ------------------------------------------------------------------ input
    def validate(self, joint_names: Sequence[str],
                 points: Sequence[TrajectoryPoint]) -> tuple[np.ndarray, np.ndarray,
                                                              np.ndarray | None]:
        """Check a trajectory and return (times, positions, velocities) in controller order."""
        names = list(joint_names)
        if not points:  # as the Jazzy JTC: a stop is a hold point, not an empty trajectory
            raise SimError("Empty trajectory received.")
        if len(set(names)) != len(names):
            raise SimError(f"trajectory joint names repeat: {names}")
        unknown = [n for n in names if n not in self.joint_names]
        missing = [n for n in self.joint_names if n not in names]
        if unknown or missing:
            raise SimError(f"trajectory joint names must be exactly {list(self.joint_names)}; "
                           f"unknown: {unknown}, missing: {missing}")
        order = [names.index(n) for n in self.joint_names]
        times = np.array([float(p.time_from_start) for p in points])
        if not np.all(np.isfinite(times)) or times[0] < 0.0:
            raise SimError(f"time_from_start must be finite and >= 0, got {times.tolist()}")
        if np.any(np.diff(times) <= 0.0):
            raise SimError(f"time_from_start must strictly increase, got {times.tolist()}")
        pos = np.zeros((len(points), len(names)))
        with_vel = all(p.velocities is not None and len(p.velocities) > 0 for p in points)
        vel = np.zeros_like(pos) if with_vel else None
        for i, p in enumerate(points):
            if len(p.positions) != len(names):
                raise SimError(f"point {i} has {len(p.positions)} positions for {len(names)} "
                               "joints")
            row = np.asarray(p.positions, float)
            if not np.all(np.isfinite(row)):
                raise SimError(f"point {i} has non-finite positions: {row.tolist()}")
            pos[i] = row[order]
            bad = np.nonzero((pos[i] < self._lower) | (pos[i] > self._upper))[0]
            if bad.size:
                j = int(bad[0])
                raise SimError(
                    f"point {i}: {self.joint_names[j]} = {pos[i][j]:.4f} rad is beyond its limits "
                    f"[{self._lower[j]:.4f}, {self._upper[j]:.4f}]")
            if vel is not None:
                assert p.velocities is not None
                if len(p.velocities) != len(names):
                    raise SimError(f"point {i} has {len(p.velocities)} velocities for "
                                   f"{len(names)} joints")
                vrow = np.asarray(p.velocities, float)
                if not np.all(np.isfinite(vrow)):
                    raise SimError(f"point {i} has non-finite velocities: {vrow.tolist()}")
                vel[i] = vrow[order]
        return times, pos, vel

    def start(self, now: float, q_now: np.ndarray, joint_names: Sequence[str],
              points: Sequence[TrajectoryPoint]) -> None:
        """Replace the running trajectory (SimError, nothing changes, on a bad one)."""
        times, pos, vel = self.validate(joint_names, points)
        # The current state becomes the implicit first point at t = 0, as in the JTC: where
        # the arm is, moving as it was commanded to (a stop from speed blends, it does not jerk).
        if times[0] > 0.0:
            qd_now = (self.desired(now)[1] if self._status.state == TrajectoryState.EXECUTING
                      else np.zeros(len(self.joint_names)))
            scale = min(max(self.speed_scaling, 0.0), 1.0)
            times = np.concatenate([[0.0], times])
            pos = np.vstack([q_now, pos])
            if vel is not None:  # trajectory-time velocity of the commanded motion
                first = qd_now / scale if scale > 0.0 else np.zeros(len(self.joint_names))
                vel = np.vstack([first, vel])
        self._times, self._pos, self._vel, self._t0 = times, pos, vel, now
        self._traj_time, self._last_now, self._ended_at = 0.0, now, None
        self._hold = pos[-1].copy()
        self._status = TrajectoryStatus(TrajectoryState.EXECUTING)

    def hold(self, q: np.ndarray, reason: str = "") -> None:
        """Stop following any trajectory and hold ``q``."""
        was_executing = self._status.state == TrajectoryState.EXECUTING
        self._times = np.zeros(0)
        self._hold = np.asarray(q, float).copy()
        if was_executing:
            self._status = TrajectoryStatus(TrajectoryState.ABORTED, reason or "stopped")

    def abort(self, q: np.ndarray, reason: str) -> None:
        self._times = np.zeros(0)
        self._hold = np.asarray(q, float).copy()
        self._status = TrajectoryStatus(TrajectoryState.ABORTED, reason)

    def reset(self, q: np.ndarray) -> None:
        self._times = np.zeros(0)
        self._hold = np.asarray(q, float).copy()
        self._status = TrajectoryStatus(TrajectoryState.IDLE)

    # ------------------------------------------------------------------ runtime
    @property
    def status(self) -> TrajectoryStatus:
        return self._status

    @property
    def active(self) -> bool:
        return self._status.state == TrajectoryState.EXECUTING

    def _trajectory_time(self, now: float) -> float:
        """Trajectory time at ``now``: real time since the start times the speed scaling,
        accumulated step by step (the slider may move during a motion)."""
        if now < self._last_now:  # the clock jumped back (a reset): restart the count there
            self._last_now = now
        self._traj_time += (now - self._last_now) * min(max(self.speed_scaling, 0.0), 1.0)
        self._last_now = now
        return self._traj_time

    def progress(self, now: float) -> tuple[np.ndarray, float, float]:
        """(desired positions, trajectory time, its last point's time); -inf without one."""
        end = float(self._times[-1]) if self._times.size else -np.inf
        return self.desired(now)[0], self._trajectory_time(now), end

    def desired(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """Desired (positions, velocities) at time ``now``."""
        if self._times.size == 0:
            return self._hold, np.zeros_like(self._hold)
        t = self._trajectory_time(now)
        scale = min(max(self.speed_scaling, 0.0), 1.0)
        times = self._times
        if t >= times[-1]:
            return self._pos[-1], np.zeros_like(self._hold)
        if t <= 0.0:
            return self._pos[0], np.zeros_like(self._hold)
        k = int(np.searchsorted(times, t, side="right")) - 1
        h = times[k + 1] - times[k]
        s = (t - times[k]) / h
        p0, p1 = self._pos[k], self._pos[k + 1]
        if self._vel is None:
            return p0 + s * (p1 - p0), (p1 - p0) / h * scale
        v0, v1 = self._vel[k] * h, self._vel[k + 1] * h
        s2, s3 = s * s, s * s * s
        q = ((2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * v0
             + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * v1)
        dq = ((6 * s2 - 6 * s) * p0 + (3 * s2 - 4 * s + 1) * v0
              + (-6 * s2 + 6 * s) * p1 + (3 * s2 - 2 * s) * v1) / h
        return q, dq * scale

    def supervise(self, now: float, q: np.ndarray) -> None:
        """Abort on a large path error, succeed at the goal (call after each physics step)."""
        if self._status.state != TrajectoryState.EXECUTING:
            return
        q_des, _ = self.desired(now)
        err = np.abs(q - q_des)
        worst = int(np.argmax(err))
        if err[worst] > self.path_tolerance:
            self.abort(q, f"path tolerance violated: {self.joint_names[worst]} is "
                          f"{err[worst]:.3f} rad off (blocked or collision)")
            return
        if self._traj_time >= self._times[-1]:
            if self._ended_at is None:
                self._ended_at = now
            if err[worst] <= self.goal_tolerance:
                self._status = TrajectoryStatus(TrajectoryState.SUCCEEDED)
            elif now - self._ended_at > self.goal_time:
                self.abort(q, f"goal tolerance not reached: {self.joint_names[worst]} "
                              f"{err[worst]:.3f} rad off after the goal time")


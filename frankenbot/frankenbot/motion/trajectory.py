"""Joint trajectories: data types, time parameterisation, and straight-line Cartesian paths.

A path is a list of joint waypoints, taken as piecewise linear in joint space. It is timed with
one trapezoidal speed profile over a path parameter ``u`` measured in "seconds at full speed",
so every joint stays under its velocity limit, the TCP under the Cartesian speed limit and every
joint under its acceleration limit. The result is sampled densely (positions and velocities) in
the form ros2_control's joint trajectory controller takes.

Straight-line approach and retreat moves come from dense IK along the line, each sample seeded
with the previous one; a joint jump larger than a small threshold between neighbouring samples
(a wrist flip or a pass through a singularity) rejects the whole line rather than letting the
arm swing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from frankenbot import settings
from frankenbot.errors import ConfigError, MotionError
from frankenbot.motion.kinematics import JOINT_NAMES, UnreachableError, UR5eKinematics, Vector
from frankenbot.settings import setting


class DiscontinuityError(MotionError):
    """A Cartesian path would need a joint jump (wrist flip or singularity)."""


@dataclass(frozen=True)
class TrajectoryPoint:
    """One sample: time from the trajectory's start (s), positions (rad), velocities (rad/s)."""

    time_from_start: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...] | None = None


class JointTrajectory:
    """A timed joint trajectory for the six UR joints (JTC semantics: times from start).

    Built either from points (``JointTrajectory(names, points)``) or, by the planners, from
    arrays (``from_arrays``); the other form is derived on first use, so planning never pays for
    thousands of small tuples and checking never re-packs them. Treat it as immutable.
    """

    def __init__(self, joint_names: Sequence[str],
                 points: Sequence[TrajectoryPoint] = ()) -> None:
        self.joint_names = tuple(joint_names)
        self._points: tuple[TrajectoryPoint, ...] | None = tuple(points)
        self._t: np.ndarray | None = None
        self._q: np.ndarray | None = None
        self._v: np.ndarray | None = None

    @classmethod
    def from_arrays(cls, joint_names: Sequence[str], times: np.ndarray, positions: np.ndarray,
                    velocities: np.ndarray | None) -> "JointTrajectory":
        traj = cls(joint_names)
        traj._points = None
        traj._t = np.array(times, dtype=float)
        traj._q = np.array(positions, dtype=float)
        traj._v = None if velocities is None else np.array(velocities, dtype=float)
        for arr in (traj._t, traj._q, traj._v):
            if arr is not None:
                arr.flags.writeable = False
        return traj

    @property
    def points(self) -> tuple[TrajectoryPoint, ...]:
        if self._points is None:
            assert self._t is not None and self._q is not None
            vel = self._v
            self._points = tuple(
                TrajectoryPoint(float(t), tuple(q.tolist()),
                                None if vel is None else tuple(vel[i].tolist()))
                for i, (t, q) in enumerate(zip(self._t, self._q, strict=True)))
        return self._points

    def __len__(self) -> int:
        return len(self._t) if self._t is not None else len(self.points)

    def times(self) -> np.ndarray:
        if self._t is None:
            self._t = np.array([p.time_from_start for p in self.points], dtype=float)
        return self._t

    def positions(self) -> np.ndarray:
        """(N, joints) array; ValueError if the points have different lengths."""
        if self._q is None:
            self._q = np.array([tuple(p.positions) for p in self.points], dtype=float)
        return self._q

    @property
    def has_velocities(self) -> bool:
        if self._points is None:
            return self._v is not None
        return bool(self._points) and all(p.velocities is not None for p in self._points)

    def velocities(self) -> np.ndarray:
        """(N, joints) array; NaN rows for points that carry no velocities."""
        if self._v is None:
            n = len(self.joint_names)
            self._v = np.array([tuple(p.velocities) if p.velocities is not None
                                else (math.nan,) * n for p in self.points], dtype=float)
        return self._v

    @property
    def duration(self) -> float:
        return float(self.times()[-1]) if len(self) else 0.0

    @property
    def final_positions(self) -> tuple[float, ...]:
        return tuple(float(v) for v in self.positions()[-1])


@dataclass(frozen=True)
class MotionLimits:
    """Planning limits. ``velocity_scale``/``acceleration_scale`` come from config; a motion's
    own ``speed_scaling`` factor multiplies in at planning time. The pendant's speed slider does
    not: the scaled JTC applies it when it executes (jtc_backend's docstring says why)."""

    max_joint_velocity: tuple[float, ...] = setting((math.pi,) * 6, "planned joint speed "
                                                    "limits, 6 values (UR5e rating)",
                                                    unit="rad/s", low=1e-6)
    max_joint_acceleration: tuple[float, ...] = setting((2.5,) * 6, "planned joint acceleration "
                                                        "limits, 6 values", unit="rad/s^2",
                                                        low=1e-6)
    max_cartesian_speed: float = setting(0.25, "planned TCP speed", unit="m/s", low=1e-6)
    velocity_scale: float = setting(0.5, "share of the joint speed limits a motion uses",
                                    low=1e-6, high=1.0)
    acceleration_scale: float = setting(0.5, "share of the joint acceleration limits a motion "
                                        "uses", low=1e-6, high=1.0)
    sample_period: float = setting(0.02, "time between trajectory points", unit="s", low=1e-4)
    linear_step: float = setting(0.02, "between IK samples on a Cartesian line", unit="m",
                                 low=1e-4)
    linear_max_joint_step: float = setting(0.25, "between neighbouring samples of a line; more "
                                           "is a flip and rejected", unit="rad", low=1e-4)

    def __post_init__(self) -> None:
        settings.validate(self, "motion")
        for name in ("max_joint_velocity", "max_joint_acceleration"):
            vals = getattr(self, name)
            if len(vals) != 6 or not all(math.isfinite(v) for v in vals):
                raise ConfigError(f"motion {name} needs 6 finite values, got {vals}")


def _trapezoid(length: float, v_max: float, a_max: float) -> tuple[float, float, float]:
    """(t_accel, t_total, v_peak) of a rest-to-rest trapezoid covering ``length``."""
    if length <= 0.0:
        return 0.0, 0.0, 0.0
    if length >= v_max * v_max / a_max:
        t_acc = v_max / a_max
        return t_acc, length / v_max + t_acc, v_max
    t_acc = math.sqrt(length / a_max)
    return t_acc, 2 * t_acc, a_max * t_acc


def _trapezoid_sample(t: np.ndarray, length: float, t_acc: float, t_total: float,
                      v_peak: float) -> tuple[np.ndarray, np.ndarray]:
    """Path parameter and its rate at times ``t`` for the trapezoid."""
    a = v_peak / t_acc if t_acc > 0 else 0.0
    t_dec = t_total - t_acc
    u = np.where(t < t_acc, 0.5 * a * t * t,
                 np.where(t < t_dec, 0.5 * a * t_acc * t_acc + v_peak * (t - t_acc),
                          length - 0.5 * a * (t_total - t) ** 2))
    du = np.where(t < t_acc, a * t, np.where(t < t_dec, v_peak, a * (t_total - t)))
    return np.clip(u, 0.0, length), np.maximum(du, 0.0)


def time_parameterize(waypoints: Sequence[Vector] | np.ndarray, limits: MotionLimits,
                      speed_scaling: float = 1.0,
                      tcp_points: np.ndarray | None = None,
                      kin: UR5eKinematics | None = None) -> JointTrajectory:
    """Time a piecewise-linear joint path with one trapezoidal profile.

    ``tcp_points`` (M, 3), when given, are the TCP positions at the waypoints; the TCP's
    Cartesian speed then also bounds the timing (used for straight lines, where the TCP path
    between waypoints is the chord). With ``kin``, the sampled TCP speed is measured and the
    whole trajectory is slowed uniformly if a joint-space move would swing the TCP too fast.
    """
    wps = np.asarray(waypoints, dtype=float)
    if wps.ndim != 2 or wps.shape[1] != 6 or wps.shape[0] < 1:
        raise ValueError(f"expected waypoints of shape (M, 6), got {wps.shape}")
    if not np.all(np.isfinite(wps)):
        raise ValueError("waypoints contain NaN or infinite values")
    if not 0.0 < speed_scaling <= 1.0:
        raise ValueError(f"speed_scaling must be in (0, 1], got {speed_scaling}")
    scale_v = limits.velocity_scale * speed_scaling
    scale_a = limits.acceleration_scale * speed_scaling
    vmax = np.asarray(limits.max_joint_velocity) * scale_v
    amax = np.asarray(limits.max_joint_acceleration) * scale_a
    deltas = np.diff(wps, axis=0)
    # Segment lengths in "seconds at full speed": the slowest joint (or the TCP) sets the pace.
    seg = np.max(np.abs(deltas) / vmax, axis=1) if len(deltas) else np.zeros(0)
    if tcp_points is not None and len(deltas):
        chord = np.linalg.norm(np.diff(np.asarray(tcp_points, dtype=float), axis=0), axis=1)
        seg = np.maximum(seg, chord / (limits.max_cartesian_speed * speed_scaling))
    keep = np.concatenate(([True], seg > 1e-12))  # drop repeated waypoints
    wps = wps[keep]
    seg = seg[keep[1:]] if len(seg) else seg
    length = float(np.sum(seg))
    if length <= 1e-12:
        return JointTrajectory.from_arrays(JOINT_NAMES, np.zeros(1), wps[-1:], np.zeros((1, 6)))
    slopes = np.diff(wps, axis=0) / seg[:, None]  # dq/du per segment, |.| <= vmax
    # du/dt <= 1 keeps velocities in limits; d2u/dt2 bounded so each joint's accel stays in limits.
    max_slope = np.max(np.abs(slopes), axis=0)
    with np.errstate(divide="ignore"):
        u_acc = float(np.min(np.where(max_slope > 1e-12, amax / max_slope, np.inf)))
    u_acc = min(u_acc, 1e6)
    t_acc, t_total, v_peak = _trapezoid(length, 1.0, u_acc)
    n = max(2, int(math.ceil(t_total / limits.sample_period)) + 1)
    t = np.linspace(0.0, t_total, n)
    u, du = _trapezoid_sample(t, length, t_acc, t_total, v_peak)
    knots = np.concatenate(([0.0], np.cumsum(seg)))
    idx = np.clip(np.searchsorted(knots, u, side="right") - 1, 0, len(seg) - 1)
    frac = (u - knots[idx]) / seg[idx]
    pos = wps[idx] + (wps[idx + 1] - wps[idx]) * frac[:, None]
    vel = slopes[idx] * du[:, None]
    pos[-1] = wps[-1]
    vel[0] = 0.0
    vel[-1] = 0.0
    traj = JointTrajectory.from_arrays(JOINT_NAMES, t, pos, vel)
    traj = limit_joint_acceleration(traj, np.asarray(limits.max_joint_acceleration))
    if kin is not None:
        traj = limit_tcp_speed(traj, kin, 0.95 * limits.max_cartesian_speed * speed_scaling)
    return traj


def limit_joint_acceleration(traj: JointTrajectory, amax: np.ndarray) -> JointTrajectory:
    """``traj`` slowed uniformly so no joint's sampled acceleration exceeds ``amax``.

    One trapezoid over a piecewise-linear path bounds the acceleration along each segment, not
    at the corners between them: where a straight TCP line passes near a singularity (the
    elbow nearly straight at the edge of the reach) a joint's rate along the path changes
    sharply from one waypoint to the next, and crossing that corner at full speed is a spike
    the safety envelope rejects. Stretching time by k scales velocities by 1/k and
    accelerations by 1/k**2; the path is unchanged."""
    if len(traj) < 3 or not traj.has_velocities:
        return traj
    t = traj.times()
    acc = np.abs(np.diff(traj.velocities(), axis=0)) / np.diff(t)[:, None]
    ratio = float(np.max(acc / amax))
    if ratio <= 1.0:
        return traj
    k = math.sqrt(ratio)
    return JointTrajectory.from_arrays(traj.joint_names, t * k, traj.positions(),
                                       traj.velocities() / k)


def limit_tcp_speed(traj: JointTrajectory, kin: UR5eKinematics,
                    max_speed: float) -> JointTrajectory:
    """``traj`` slowed uniformly so the TCP's speed between samples stays within ``max_speed``.

    Time is stretched by the worst ratio: velocities fall by it, accelerations by its square,
    the path is unchanged. Measured as the safety envelope measures it (chord between samples
    over their time), so a trajectory that passes here passes the envelope's speed check. Any
    joint-space timing needs it: our own joint moves and MoveIt's time parameterisation, which
    bounds joint velocities and accelerations but knows no TCP speed.
    """
    if not (max_speed > 0 and math.isfinite(max_speed)):
        raise ValueError(f"max_speed must be positive, got {max_speed}")
    if len(traj) < 2:
        return traj
    t = traj.times()
    tcp = kin.link_points(traj.positions())[:, -1, :]
    speed = np.linalg.norm(np.diff(tcp, axis=0), axis=1) / np.diff(t)
    ratio = float(np.max(speed)) / max_speed
    if ratio <= 1.0:
        return traj
    vel = traj.velocities() / ratio if traj.has_velocities else None
    return JointTrajectory.from_arrays(traj.joint_names, t * ratio, traj.positions(), vel)


def joint_move(q_start: Vector, q_goal: Vector, limits: MotionLimits,
               speed_scaling: float = 1.0,
               kin: UR5eKinematics | None = None) -> JointTrajectory:
    """Rest-to-rest joint-space move, all joints synchronised (straight line in joint space).

    Pass ``kin`` to keep the TCP under the Cartesian speed limit as well."""
    return time_parameterize([q_start, q_goal], limits, speed_scaling, kin=kin)


def _rotation_log(r: np.ndarray) -> np.ndarray:
    """Axis-angle vector of a rotation matrix."""
    cos = max(-1.0, min(1.0, (np.trace(r) - 1.0) / 2.0))
    angle = math.acos(cos)
    if angle < 1e-9:
        return np.zeros(3)
    if math.pi - angle < 1e-6:
        # Near 180 degrees: take the axis from the diagonal.
        axis = np.sqrt(np.maximum((np.diag(r) + 1.0) / 2.0, 0.0))
        k = int(np.argmax(axis))
        for j in range(3):
            if j != k and r[k, j] + r[j, k] < 0:
                axis[j] = -axis[j]
        return axis / np.linalg.norm(axis) * angle
    w = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    return w / (2.0 * math.sin(angle)) * angle


def _rotation_exp(w: np.ndarray) -> np.ndarray:
    angle = float(np.linalg.norm(w))
    if angle < 1e-12:
        return np.eye(3)
    k = w / angle
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def linear_waypoints(kin: UR5eKinematics, q_start: Vector, goal_pose: np.ndarray,
                     limits: MotionLimits) -> tuple[np.ndarray, np.ndarray]:
    """Joint waypoints (M, 6) and TCP points (M, 3) along a straight TCP line to ``goal_pose``.

    Orientation is interpolated along the geodesic. Raises UnreachableError if a sample has no
    IK solution and DiscontinuityError on a joint jump.
    """
    goal = np.asarray(goal_pose, dtype=float)
    if goal.shape != (4, 4) or not np.all(np.isfinite(goal)):
        raise ValueError("goal pose must be a finite 4x4 transform")
    q0 = np.asarray(q_start, dtype=float)
    start = kin.fk(q0)
    dp = goal[:3, 3] - start[:3, 3]
    w = _rotation_log(start[:3, :3].T @ goal[:3, :3])
    steps = max(1, int(math.ceil(max(np.linalg.norm(dp) / limits.linear_step,
                                     np.linalg.norm(w) / 0.05))))
    qs = np.empty((steps + 1, 6))
    tcps = np.empty((steps + 1, 3))
    qs[0] = q0
    tcps[0] = start[:3, 3]
    pose = np.eye(4)
    pose[:3, :3] = goal[:3, :3]
    turning = bool(np.linalg.norm(w) > 1e-9)
    for k in range(1, steps + 1):
        s = k / steps
        if turning:
            pose[:3, :3] = start[:3, :3] @ _rotation_exp(w * s)
        pose[:3, 3] = start[:3, 3] + dp * s
        cands = kin.ik_candidates(pose, qs[k - 1])
        if not cands:
            raise UnreachableError(f"the straight line leaves the reachable space at {s:.0%} "
                                   f"of the way ({pose[0, 3]:.3f}, {pose[1, 3]:.3f}, "
                                   f"{pose[2, 3]:.3f}) m")
        q = cands[0]
        jump = float(np.max(np.abs(q - qs[k - 1])))
        if jump > limits.linear_max_joint_step:
            raise DiscontinuityError(
                f"straight line needs a {jump:.2f} rad joint jump at {s:.0%} of the way "
                f"(limit {limits.linear_max_joint_step:.2f} rad): wrist flip or singularity")
        qs[k] = q
        tcps[k] = pose[:3, 3]
    return qs, tcps


def linear_move(kin: UR5eKinematics, q_start: Vector, goal_pose: np.ndarray,
                limits: MotionLimits, speed_scaling: float = 1.0) -> JointTrajectory:
    """A timed straight-line TCP move from the configuration ``q_start`` to ``goal_pose``."""
    qs, tcps = linear_waypoints(kin, q_start, goal_pose, limits)
    return time_parameterize(qs, limits, speed_scaling, tcp_points=tcps)

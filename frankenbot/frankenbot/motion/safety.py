"""The safety envelope: the last check every trajectory passes before it reaches the controller.

It sits below the program, the primitives and the motion backends, and it never repairs
anything: a target or a trajectory that leaves the envelope raises ``SafetyViolation`` naming
the check, the sample and the offending value. Limits come from ``config/safety.yaml``.

Checked on every sample of a trajectory: finite values, joint names and timing, joint position
limits, joint velocity and acceleration limits, the TCP (and the wrist) inside the workspace box,
the TCP above the table by a clearance and the other links by a larger one, and the TCP's
Cartesian speed. The first sample must also continue smoothly from the robot's current state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frankenbot import settings
from frankenbot.errors import ConfigError, SafetyViolation
from frankenbot.motion.kinematics import JOINT_NAMES, UR5eKinematics, Vector
from frankenbot.motion.trajectory import JointTrajectory
from frankenbot.settings import setting


@dataclass(frozen=True)
class SafetyConfig:
    """Hard limits. Planning limits (motion config) stay below these; these are never exceeded."""

    workspace_min: tuple[float, float, float] = setting(
        (-0.95, -0.95, -0.05), "TCP and wrist points stay inside this box (base_link)", unit="m")
    workspace_max: tuple[float, float, float] = setting((0.95, 0.95, 0.95), "the box's far "
                                                        "corner", unit="m")
    min_radius: float = setting(0.12, "the TCP keeps out of the column above the base "
                                "(singularity)", unit="m", low=0.0)
    table_z: float = setting(0.0, "table surface in base_link", unit="m")
    tcp_clearance: float = setting(0.0, "the TCP stays this far above the table", unit="m")
    link_clearance: float = setting(0.04, "every other link origin stays this far above the "
                                    "table", unit="m")
    joint_lower: tuple[float, ...] = setting(
        (-2 * math.pi, -2 * math.pi, -math.pi, -2 * math.pi, -2 * math.pi, -2 * math.pi),
        "lower joint position limits, 6 values", unit="rad")
    joint_upper: tuple[float, ...] = setting(
        (2 * math.pi, 2 * math.pi, math.pi, 2 * math.pi, 2 * math.pi, 2 * math.pi),
        "upper joint position limits, 6 values", unit="rad")
    max_joint_velocity: tuple[float, ...] = setting((math.pi,) * 6, "joint speed limits, 6 "
                                                    "values", unit="rad/s", low=1e-6)
    max_joint_acceleration: tuple[float, ...] = setting((5.0,) * 6, "joint acceleration limits, "
                                                        "6 values", unit="rad/s^2", low=1e-6)
    max_cartesian_speed: float = setting(0.5, "TCP speed limit", unit="m/s", low=1e-6)
    start_tolerance: float = setting(0.05, "a trajectory's first sample vs the current state",
                                     unit="rad", low=0.0)
    tolerance: float = setting(0.02, "relative slack on velocity / acceleration / speed "
                               "(sampling noise)", low=0.0, high=1.0)

    def __post_init__(self) -> None:
        settings.validate(self, "safety")
        if any(lo >= hi for lo, hi in zip(self.workspace_min, self.workspace_max, strict=True)):
            raise ConfigError(f"workspace min must be below max: {self.workspace_min} / "
                              f"{self.workspace_max}")
        for name in ("joint_lower", "joint_upper", "max_joint_velocity",
                     "max_joint_acceleration"):
            if len(getattr(self, name)) != 6:
                raise ConfigError(f"safety {name} needs 6 values, got {getattr(self, name)}")


class SafetyEnvelope:
    """Checks targets and trajectories against a SafetyConfig; raises SafetyViolation."""

    def __init__(self, config: SafetyConfig, kinematics: UR5eKinematics) -> None:
        self.config = config
        self._kin = kinematics
        self._lower = np.array(config.joint_lower)
        self._upper = np.array(config.joint_upper)
        self._vmax = np.array(config.max_joint_velocity)
        self._amax = np.array(config.max_joint_acceleration)
        self._box_min = np.array(config.workspace_min)
        self._box_max = np.array(config.workspace_max)

    # --- single targets -------------------------------------------------------------------
    def check_position(self, position: Vector, what: str = "target") -> None:
        """A TCP target position: finite, inside the box, outside the base column, above the
        table."""
        p = np.asarray(position, dtype=float)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise SafetyViolation(f"{what} position must be 3 finite numbers, got {p.tolist()}")
        self._check_tcp_points(p[None, :], what)

    def check_joints(self, q: Vector, what: str = "joint target") -> None:
        arr = np.asarray(q, dtype=float)
        if arr.shape != (6,) or not np.all(np.isfinite(arr)):
            raise SafetyViolation(f"{what} must be 6 finite numbers, got {arr.tolist()}")
        self._check_joint_limits(arr[None, :], what)
        pts = self._kin.link_points(arr)
        self._check_tcp_points(pts[:, -1, :], what)
        self._check_links(pts, what)

    # --- trajectories ---------------------------------------------------------------------
    def check_trajectory(self, traj: JointTrajectory,
                         current: Vector | None = None) -> None:
        """Every check on every sample; ``current`` is the measured joint state, if known."""
        cfg = self.config
        if tuple(traj.joint_names) != JOINT_NAMES:
            raise SafetyViolation(f"trajectory joint names {list(traj.joint_names)} do not match "
                                  f"{list(JOINT_NAMES)}")
        if len(traj) == 0:
            raise SafetyViolation("trajectory has no points")
        try:
            pos = traj.positions()
            times = traj.times()
            vel = traj.velocities() if traj.has_velocities else np.zeros((0, 6))
        except ValueError as e:
            raise SafetyViolation(f"every point needs 6 positions and velocities: {e}") from e
        if pos.ndim != 2 or pos.shape[1:] != (6,):
            raise SafetyViolation(f"every point needs 6 positions, got shape {pos.shape}")
        if not np.all(np.isfinite(pos)) or not np.all(np.isfinite(times)):
            raise SafetyViolation("trajectory contains NaN or infinite positions/times")
        if times[0] < 0 or np.any(np.diff(times) <= 0):
            raise SafetyViolation("trajectory times must start >= 0 and strictly increase")
        if len(vel) and (vel.shape[1:] != (6,) or not np.all(np.isfinite(vel))):
            raise SafetyViolation("trajectory velocities must be 6 finite numbers per point")
        self._check_joint_limits(pos, "trajectory")
        slack = 1.0 + cfg.tolerance
        if len(vel):
            over = np.abs(vel) > self._vmax * slack
            if np.any(over):
                i, j = np.argwhere(over)[0]
                raise SafetyViolation(
                    f"{JOINT_NAMES[j]} velocity {vel[i, j]:.3f} rad/s at t={times[i]:.3f} s "
                    f"exceeds the limit {self._vmax[j]:.3f} rad/s")
        if current is not None:
            cur = np.asarray(current, dtype=float)
            if cur.shape != (6,) or not np.all(np.isfinite(cur)):
                raise SafetyViolation(f"current joint state is invalid: {cur.tolist()}")
            # The controller blends from the current state to the first sample.
            pos_all = np.vstack([cur[None, :], pos])
            t_all = np.concatenate(([0.0], times)) if times[0] > 0 else times
            if times[0] <= 0:
                jump = float(np.max(np.abs(pos[0] - cur)))
                if jump > cfg.start_tolerance:
                    raise SafetyViolation(
                        f"trajectory starts {jump:.3f} rad away from the current state "
                        f"(tolerance {cfg.start_tolerance:.3f} rad)")
                pos_all, t_all = pos, times
        else:
            pos_all, t_all = pos, times
        if len(t_all) > 1:
            dt = np.diff(t_all)
            fd_vel = np.diff(pos_all, axis=0) / dt[:, None]
            over = np.abs(fd_vel) > self._vmax * slack
            if np.any(over):
                i, j = np.argwhere(over)[0]
                raise SafetyViolation(
                    f"{JOINT_NAMES[j]} moves at {abs(fd_vel[i, j]):.3f} rad/s between "
                    f"t={t_all[i]:.3f} and {t_all[i + 1]:.3f} s (limit {self._vmax[j]:.3f})")
            self._check_acceleration(traj, fd_vel, t_all)
        pts = self._kin.link_points(pos_all)
        self._check_tcp_points(pts[:, -1, :], "trajectory")
        self._check_links(pts, "trajectory")
        if len(t_all) > 1:
            speed = np.linalg.norm(np.diff(pts[:, -1, :], axis=0), axis=1) / np.diff(t_all)
            k = int(np.argmax(speed))
            if speed[k] > cfg.max_cartesian_speed * slack:
                raise SafetyViolation(
                    f"TCP speed {speed[k]:.3f} m/s at t={t_all[k]:.3f} s exceeds the limit "
                    f"{cfg.max_cartesian_speed:.3f} m/s")

    # --- helpers --------------------------------------------------------------------------
    def _check_acceleration(self, traj: JointTrajectory, fd_vel: np.ndarray,
                            t_all: np.ndarray) -> None:
        """Acceleration from the points' velocities when given, else from positions."""
        slack = 1.0 + self.config.tolerance
        if traj.has_velocities and len(traj) > 1:
            vel = traj.velocities()
            times = traj.times()
        else:
            vel = fd_vel
            times = 0.5 * (t_all[1:] + t_all[:-1])
        if len(vel) < 2:
            return
        acc = np.diff(vel, axis=0) / np.diff(times)[:, None]
        over = np.abs(acc) > self._amax * slack
        if np.any(over):
            i, j = np.argwhere(over)[0]
            raise SafetyViolation(
                f"{JOINT_NAMES[j]} acceleration {abs(acc[i, j]):.3f} rad/s^2 near "
                f"t={times[i]:.3f} s exceeds the limit {self._amax[j]:.3f} rad/s^2")

    def _check_joint_limits(self, pos: np.ndarray, what: str) -> None:
        low = pos < self._lower - 1e-9
        high = pos > self._upper + 1e-9
        if np.any(low | high):
            i, j = np.argwhere(low | high)[0]
            raise SafetyViolation(
                f"{what}: {JOINT_NAMES[j]} = {pos[i, j]:.3f} rad is outside "
                f"[{self._lower[j]:.3f}, {self._upper[j]:.3f}]")

    def _check_tcp_points(self, tcp: np.ndarray, what: str) -> None:
        cfg = self.config
        outside = np.any((tcp < self._box_min) | (tcp > self._box_max), axis=1)
        if np.any(outside):
            p = tcp[int(np.argmax(outside))]
            raise SafetyViolation(
                f"{what}: TCP ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m leaves the workspace box "
                f"{list(cfg.workspace_min)}..{list(cfg.workspace_max)}")
        floor = cfg.table_z + cfg.tcp_clearance
        low = tcp[:, 2] < floor - 1e-9
        if np.any(low):
            p = tcp[int(np.argmax(low))]
            raise SafetyViolation(
                f"{what}: TCP z {p[2]:.3f} m is below the table clearance ({floor:.3f} m)")
        radius = np.hypot(tcp[:, 0], tcp[:, 1])
        inner = radius < cfg.min_radius
        if np.any(inner):
            p = tcp[int(np.argmax(inner))]
            raise SafetyViolation(
                f"{what}: TCP ({p[0]:.3f}, {p[1]:.3f}) m is within {cfg.min_radius:.3f} m of the "
                f"base axis")

    def _check_links(self, pts: np.ndarray, what: str) -> None:
        """Link origins (elbow, wrists) above the table; wrists inside the box too."""
        cfg = self.config
        floor = cfg.table_z + cfg.link_clearance
        z = pts[:, 1:6, 2]  # frame 1 is the fixed shoulder; 2..6 move
        low = z < floor - 1e-9
        if np.any(low):
            i, j = np.argwhere(low)[0]
            raise SafetyViolation(
                f"{what}: link {j + 2} at z {z[i, j]:.3f} m is below the link clearance "
                f"({floor:.3f} m above the table)")
        wrists = pts[:, 3:6, :]
        outside = np.any((wrists < self._box_min) | (wrists > self._box_max), axis=2)
        if np.any(outside):
            i, j = np.argwhere(outside)[0]
            p = wrists[i, j]
            raise SafetyViolation(
                f"{what}: wrist point ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m leaves the "
                f"workspace box")

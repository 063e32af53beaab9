"""UR5e analytic kinematics in ``base_link`` for the sim's own scripting (home pose, selftest).

``ur_analytic_ik`` works in the UR controller's ``base`` frame, which is ``base_link`` turned by
pi about z (see the URDF's ``base_link-base_fixed_joint``); this module converts, and picks the
solution closest to a reference configuration. The brain's planner lives in ``motion/``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from ur_analytic_ik import ur5e

from frankenbot.errors import SimError

_RZ_PI = np.diag([-1.0, -1.0, 1.0, 1.0])


def fk_tool0(q: Sequence[float]) -> np.ndarray:
    """4x4 pose of tool0 in base_link."""
    return _RZ_PI @ np.asarray(ur5e.forward_kinematics(*[float(v) for v in q]))


def ik_tool0(T: np.ndarray, q_ref: Sequence[float]) -> np.ndarray:
    """Joint solution for tool0 pose ``T`` (base_link) closest to ``q_ref``; SimError if none."""
    sols = ur5e.inverse_kinematics(_RZ_PI @ np.asarray(T, float))
    ref = np.asarray(q_ref, float)
    best, best_cost = None, math.inf
    for s in sols:
        s = np.asarray(s, float)
        if not np.all(np.isfinite(s)):
            continue
        # unwrap each joint to the turn nearest the reference
        s = ref + (s - ref + np.pi) % (2 * np.pi) - np.pi
        s = np.where(s > 2 * np.pi, s - 2 * np.pi, np.where(s < -2 * np.pi, s + 2 * np.pi, s))
        if abs(s[2]) > math.pi:
            continue
        cost = float(np.sum((s - ref) ** 2 * np.array([1, 1, 1, 0.5, 0.5, 0.2])))
        if cost < best_cost:
            best, best_cost = s, cost
    if best is None:
        raise SimError(f"no IK solution for tool0 at {np.round(T[:3, 3], 3).tolist()}")
    return best


def tool_down(x: float, y: float, z: float, yaw: float = 0.0) -> np.ndarray:
    """tool0 pose pointing straight down at (x, y, z), fingers closing along world (-sin, cos)."""
    c, s = math.cos(yaw), math.sin(yaw)
    T = np.eye(4)
    # tool0 z down; tool0 y (closing axis) = (-s, c, 0); x = y cross z
    zt = np.array([0.0, 0.0, -1.0])
    yt = np.array([-s, c, 0.0])
    xt = np.cross(yt, zt)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = xt, yt, zt, (x, y, z)
    return T


HOME = np.array([-0.3397, -1.827, 2.0169, -1.7607, -1.5708, 1.231])  # tool0 down at (0.4, 0, 0.4)

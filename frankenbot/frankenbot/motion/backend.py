"""What a motion backend offers the primitives, and the typed outcome of one motion.

Two backends implement it: ``jtc_backend.JtcBackend`` (analytic IK + our own trajectories sent to
the joint trajectory controller; runs here and on the real arm) and
``nodes/moveit_backend.MoveItBackend`` (collision-aware planning with moveit_py on a full ROS
install; an adapter, since it speaks ROS).
Backends never raise for robot failures: they return a ``MotionOutcome`` whose code the
primitives pass on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from frankenbot.common import FailureCode
from frankenbot.ports import CancelToken


@dataclass(frozen=True)
class MotionOutcome:
    """Result of one motion: OK, or why not (code + readable detail)."""

    code: FailureCode = FailureCode.OK
    detail: str = ""
    duration: float = 0.0  # s of robot time the motion took (planned duration if not run)

    @property
    def ok(self) -> bool:
        return self.code == FailureCode.OK


class MotionBackend(Protocol):
    """Plan, check and execute arm motions; all calls block until done, failed or cancelled."""

    def move_to_joints(self, goal: Sequence[float], cancel: CancelToken,
                       speed: float = 1.0) -> MotionOutcome:
        """``speed`` in (0, 1] slows this motion below the configured limits."""
        ...

    def move_to_pose(self, tcp_pose: np.ndarray, cancel: CancelToken,
                     speed: float = 1.0) -> MotionOutcome:
        """Joint-space move to a TCP pose (IK nearest the current configuration)."""
        ...

    def move_linear(self, tcp_pose: np.ndarray, cancel: CancelToken,
                    speed: float = 1.0) -> MotionOutcome:
        """Straight-line TCP move to a pose (approach, retreat, push, pull)."""
        ...

    def stop(self) -> None:
        ...

"""The port every primitive and motion backend talks to: one robot, sim or real, in-process or ROS.

Adapters implement ``RobotInterface`` (``sim_adapter.SimRobot`` over the in-process simulator,
``ros_adapter.RosRobot`` over the UR driver's topics). All brain-side timing goes through
``now()`` and ``sleep()`` so the same primitive runs unchanged whether the robot's clock is wall
time or a simulator running faster than real time.

E-stop contract: an adapter that sees the e-stop engage stops the arm itself, immediately, on the
path that delivered the e-stop (not on a timer), and refuses ``send_trajectory`` until it is
released. Backends check ``estop_engaged()`` as well, to report the right failure code.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

from frankenbot.errors import MotionError
from frankenbot.motion.trajectory import JointTrajectory
from frankenbot.state import Scene


class ControllerRejected(MotionError):
    """The controller refused a trajectory (bad joints, NaNs, limits) and did not move."""


class EstopEngaged(MotionError):
    """Motion was requested while the e-stop is engaged."""


class TrajectoryState(str, enum.Enum):
    """What the controller reports about the last trajectory (IDLE when it reports nothing)."""

    IDLE = "idle"
    ACTIVE = "active"
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"
    PREEMPTED = "preempted"


@dataclass(frozen=True)
class JointState:
    """Measured arm joint state in UR joint order; ``stamp`` on the robot's clock (s)."""

    positions: tuple[float, ...]
    velocities: tuple[float, ...]
    stamp: float


@dataclass(frozen=True)
class GripperState:
    """Measured finger gap (m) and knuckle position; ``stamp`` on the robot's clock (s)."""

    width: float
    position: float
    stamp: float


SceneSource = Callable[[], Scene]


@runtime_checkable
class RobotInterface(Protocol):
    """Joint state, trajectories, gripper, speed scaling, scene, clock and e-stop of one robot."""

    def joint_state(self) -> JointState | None:
        """Latest joint state, or None if none has arrived (the arm must then not move)."""
        ...

    def send_trajectory(self, trajectory: JointTrajectory) -> None:
        """Start a trajectory, replacing any running one. Raises ControllerRejected or
        EstopEngaged without moving."""
        ...

    def trajectory_state(self) -> TrajectoryState:
        ...

    def stop(self) -> None:
        """Stop the arm now and hold position (an empty trajectory on a JTC)."""
        ...

    def command_gripper(self, width: float, max_effort: float = 50.0) -> None:
        """Move the fingers to a gap (m); closing on an object stops on it."""
        ...

    def gripper_state(self) -> GripperState | None:
        ...

    def speed_scaling(self) -> float:
        """The robot's speed scaling in [0, 1] (1.0 where the robot reports none)."""
        ...

    def scene(self) -> Scene:
        """The latest perceived scene (from the injected scene source)."""
        ...

    def now(self) -> float:
        """The robot's clock (s): sim time in simulation, wall time on the real arm."""
        ...

    def sleep(self, seconds: float) -> None:
        """Let ``seconds`` of robot time pass."""
        ...

    def estop_engaged(self) -> bool:
        ...

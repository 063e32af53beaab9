"""The ports between the layers: what primitives return, how they are cancelled, and the robot.

One root module so that program (the interpreter), primitives and motion share these types
without importing each other. ``RobotInterface`` is what every primitive and motion backend talks
to: one robot, sim or real, in-process or ROS (``sim.robot_adapter.SimRobot`` over the in-process
simulator, ``nodes.ros_robot.RosRobot`` over the UR driver's topics). All brain-side timing goes
through ``now()`` and ``sleep()`` so the same primitive runs unchanged whether the robot's clock is
wall time or a simulator running faster than real time.

E-stop contract: an adapter that sees the e-stop engage stops the arm itself, immediately, on the
path that delivered the e-stop (not on a timer), and refuses ``send_trajectory`` until it is
released. Backends check ``estop_engaged()`` as well, to report the right failure code.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Union, runtime_checkable

from frankenbot.common import FailureCode
from frankenbot.errors import MotionError
from frankenbot.state import Scene

if TYPE_CHECKING:  # a type only; motion imports this module
    from frankenbot.motion.trajectory import JointTrajectory

Value = Union[str, float]  # an object id / string, or a number


@dataclass(frozen=True)
class PrimitiveResult:
    """Outcome of one primitive call. ``code`` is OK on success."""

    code: FailureCode = FailureCode.OK
    detail: str = ""
    data: Mapping[str, object] = field(default_factory=dict)  # e.g. {"grasp_width": 0.039}

    @property
    def ok(self) -> bool:
        return self.code == FailureCode.OK

    @classmethod
    def success(cls, detail: str = "", **data: object) -> "PrimitiveResult":
        return cls(FailureCode.OK, detail, data)

    @classmethod
    def failure(cls, code: FailureCode, detail: str, **data: object) -> "PrimitiveResult":
        if code == FailureCode.OK:
            raise ValueError("failure() needs a failure code, got OK")
        return cls(code, detail, data)


class CancelToken:
    """Set from another thread (monitor loop, cancel, e-stop) to preempt a running primitive.

    Primitives poll ``cancelled`` between and during motions and stop the arm when it is set.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason = ""
        self._reason_lock = threading.Lock()

    def cancel(self, reason: str = "") -> None:
        with self._reason_lock:
            if not self._event.is_set():
                self._reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str:
        with self._reason_lock:
            return self._reason

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds; return True early if cancelled."""
        return self._event.wait(timeout)


class PrimitiveExecutor(Protocol):
    """What the interpreter calls to run one whitelisted primitive.

    ``args`` are already validated against the catalog (names, types, ranges) and defaults are
    filled in. Implementations must return a PrimitiveResult (never raise for robot failures) and
    must return promptly with FailureCode.PREEMPTED once ``cancel`` is set.
    """

    def execute(self, name: str, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        ...


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
        """Stop the arm now and hold position (on a JTC: a one-point hold at the measured joints;
        the Jazzy JTC rejects an empty trajectory)."""
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


@dataclass(frozen=True)
class PixelTarget:
    """Where an image pixel points: the base-frame surface point the depth image sees there.

    ``age`` (s) is how much older the depth frame used is than the newest one (a pixel the arm
    covers now is read from an earlier frame)."""

    position: tuple[float, float, float]
    u: float
    v: float
    depth: float  # m along the optical axis
    stamp: float
    age: float = 0.0


@runtime_checkable
class PixelResolver(Protocol):
    """Back-projects pixels of the set-of-mark image (``perception.pixels.DepthPixelResolver``;
    fed by the sim stack's render thread or a node's depth subscription)."""

    def image_size(self) -> tuple[int, int]:
        """(width, height) of the image the pixels refer to."""
        ...

    def resolve(self, u: float, v: float) -> PixelTarget:
        """The surface point at pixel (u, v); raises PerceptionError where depth is missing."""
        ...

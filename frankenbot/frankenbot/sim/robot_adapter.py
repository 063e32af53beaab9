"""RobotInterface over the in-process simulator (``frankenbot.sim.world.SimWorld``).

Two ways to let time pass, chosen by whether physics runs on its own thread:

* lockstep (``SimRobot(world, ...)``): ``sleep(dt)`` steps the physics by ``dt`` on the caller's
  thread. Deterministic and as fast as the CPU allows: the tests and the benchmark use it.
* threaded (``SimRobot(world, ..., physics_thread=True)``): a ``SimRunner`` steps the world at a
  real-time factor; ``sleep(dt)`` waits until the world's clock has moved by ``dt``. Used where a
  monitor thread must run concurrently with the primitive (the executor in-process).

Either way the brain's clock is the simulator's clock (``now()`` is sim time), never wall time.
The scene comes from an injected source (perception in production); this adapter never reads the
simulator's ground truth.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol, Sequence

import numpy as np

from frankenbot import robotiq
from frankenbot.errors import SimError
from frankenbot.motion.trajectory import JointTrajectory
from frankenbot.ports import (
    ControllerRejected,
    EstopEngaged,
    GripperState,
    JointState,
    SceneSource,
    TrajectoryState,
)
from frankenbot.state import Scene

STALL_WALL_TIMEOUT = 5.0  # s of wall time without sim progress before a threaded sleep gives up


class SimWorldLike(Protocol):
    """The part of SimWorld this adapter uses (see issue #4's contract)."""

    @property
    def time(self) -> float: ...
    def advance(self, seconds: float) -> None: ...
    def joint_positions(self) -> np.ndarray: ...
    def joint_velocities(self) -> np.ndarray: ...
    def command_trajectory(self, joint_names: Sequence[str], points: Sequence[object]) -> None: ...
    def trajectory_status(self) -> object: ...
    def hold(self) -> None: ...
    def command_gripper(self, position: float) -> None: ...
    def gripper_width(self) -> float: ...
    def gripper_position(self) -> float: ...


def _sim_point_type() -> type:
    from frankenbot.sim.controller import TrajectoryPoint as SimPoint

    return SimPoint


class SimRobot:
    """The in-process simulated UR5e + gripper as a RobotInterface."""

    def __init__(self, world: SimWorldLike, *, scene_source: SceneSource | None = None,
                 physics_thread: bool = False) -> None:
        self.world = world
        self._scene_source = scene_source
        self._threaded = physics_thread
        self._estop = threading.Event()
        self._speed_scaling = 1.0
        self._point_type = _sim_point_type()

    # --- state ----------------------------------------------------------------------------
    def joint_state(self) -> JointState | None:
        q = self.world.joint_positions()
        v = self.world.joint_velocities()
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            return None
        return JointState(tuple(map(float, q)), tuple(map(float, v)), self.world.time)

    def now(self) -> float:
        return float(self.world.time)

    def sleep(self, seconds: float) -> None:
        if not math.isfinite(seconds) or seconds <= 0.0:
            return
        if not self._threaded:
            self.world.advance(seconds)
            return
        target = self.world.time + seconds
        last, last_wall = self.world.time, time.monotonic()
        while self.world.time < target - 1e-9:
            time.sleep(0.0005)
            now = self.world.time
            if now != last:
                last, last_wall = now, time.monotonic()
            elif time.monotonic() - last_wall > STALL_WALL_TIMEOUT:
                return  # physics stopped; the caller's deadline logic reports it

    def speed_scaling(self) -> float:
        return self._speed_scaling

    def set_speed_scaling(self, value: float) -> None:
        """Emulate the teach pendant's speed slider (0..1): reported here as the driver's
        broadcaster does, and applied by the sim's controller at execution, as the scaled JTC
        does (plans are timed for full speed)."""
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"speed scaling must be in [0, 1], got {value}")
        self._speed_scaling = float(value)
        set_world = getattr(self.world, "set_speed_scaling", None)
        if set_world is not None:
            set_world(self._speed_scaling)

    def scene(self) -> Scene:
        if self._scene_source is None:
            return Scene(stamp=self.now(), stale=True)
        return self._scene_source()

    # --- arm ------------------------------------------------------------------------------
    def send_trajectory(self, trajectory: JointTrajectory) -> None:
        if self._estop.is_set():
            raise EstopEngaged("e-stop engaged: trajectory refused")
        point = self._point_type
        points = [point(p.time_from_start, tuple(p.positions),
                        None if p.velocities is None else tuple(p.velocities))
                  for p in trajectory.points]
        try:
            self.world.command_trajectory(list(trajectory.joint_names), points)
        except SimError as e:
            raise ControllerRejected(str(e)) from e

    def trajectory_state(self) -> TrajectoryState:
        status = self.world.trajectory_status()
        value = getattr(getattr(status, "state", status), "value", str(status))
        return {"executing": TrajectoryState.ACTIVE, "succeeded": TrajectoryState.SUCCEEDED,
                "aborted": TrajectoryState.ABORTED}.get(str(value), TrajectoryState.IDLE)

    def stop(self) -> None:
        self.world.hold()

    # --- gripper --------------------------------------------------------------------------
    def command_gripper(self, width: float, max_effort: float = 50.0) -> None:
        """Finger gap (m). The sim's fingers have a fixed force; ``max_effort`` is unused."""
        if not math.isfinite(width):
            raise ControllerRejected(f"gripper width must be finite, got {width}")
        if self._estop.is_set():
            raise EstopEngaged("e-stop engaged: gripper command refused")
        try:
            self.world.command_gripper(robotiq.width_to_position(width))
        except SimError as e:
            raise ControllerRejected(str(e)) from e

    def gripper_state(self) -> GripperState | None:
        return GripperState(float(self.world.gripper_width()),
                            float(self.world.gripper_position()), self.now())

    # --- e-stop ---------------------------------------------------------------------------
    def estop_engaged(self) -> bool:
        return self._estop.is_set()

    def set_estop(self, engaged: bool) -> None:
        """Engage: hold the arm right here, on the caller's path; then refuse motion."""
        if engaged:
            self._estop.set()
            self.world.hold()
        else:
            self._estop.clear()

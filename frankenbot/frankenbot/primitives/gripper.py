"""Gripper moves as the primitives need them: command a gap, wait until the fingers stop.

A parallel gripper closing on an object stalls on it, so "done" means the measured gap reached
the command or stopped changing for a moment. Opening from a grip, the fingers do not move at
once: the actuator first backs off the squeeze it held beyond the object's width (a Robotiq's
motor position lies past the fingers' contact). Until the fingers have moved, an opening gripper
has not stalled: a place that retreated then would carry the object up with it. Whether
something is held is judged from that final gap (finger position), not from the command.
Cancel and e-stop are polled on the robot's clock like every other wait.
"""

from __future__ import annotations

from dataclasses import dataclass

from frankenbot.common import FailureCode
from frankenbot.errors import FrankenbotError
from frankenbot.ports import CancelToken, PrimitiveResult, RobotInterface

POLL_PERIOD = 0.02  # s of robot time between gripper width reads
REACHED = 0.001  # m: within this of the command counts as reached
STILL = 0.0005  # m: moving less than this between polls counts as still


class StepFailed(FrankenbotError):
    """A step of a primitive failed; carries the typed result the primitive returns."""

    def __init__(self, result: PrimitiveResult) -> None:
        super().__init__(result.detail)
        self.result = result


@dataclass(frozen=True)
class GripperTiming:
    timeout: float = 2.0  # s for the fingers to reach or stall
    settle: float = 0.15  # s the width must stay still to count as settled


def move_gripper(robot: RobotInterface, width: float, cancel: CancelToken,
                 timing: GripperTiming) -> float:
    """Command a finger gap (m) and wait until the fingers stop; returns the measured gap.

    Raises StepFailed with PREEMPTED, ESTOP or NO_STATE.
    """
    if robot.estop_engaged():
        raise StepFailed(PrimitiveResult.failure(FailureCode.ESTOP, "e-stop engaged"))
    before = robot.gripper_state()
    robot.command_gripper(width)
    start = robot.now()
    last_width: float | None = None
    still_since = start
    # opening: a stall counts only once the fingers have left the gap they held
    opening_from = (before.width if before is not None and width > before.width + REACHED
                    else None)
    while True:
        if cancel.cancelled:
            raise StepFailed(PrimitiveResult.failure(FailureCode.PREEMPTED,
                                                     f"preempted: {cancel.reason}"))
        if robot.estop_engaged():
            raise StepFailed(PrimitiveResult.failure(FailureCode.ESTOP, "e-stop engaged"))
        robot.sleep(POLL_PERIOD)
        grip = robot.gripper_state()
        now = robot.now()
        if grip is None:
            if now - start > timing.timeout:
                raise StepFailed(PrimitiveResult.failure(FailureCode.NO_STATE,
                                                         "no gripper state"))
            continue
        if abs(grip.width - width) < REACHED:
            return grip.width
        if opening_from is not None and grip.width <= opening_from + STILL:
            still_since = now  # not started yet
        elif last_width is None or abs(grip.width - last_width) > STILL:
            last_width, still_since = grip.width, now
        elif now - still_since >= timing.settle:
            return grip.width  # stalled on an object (or at a mechanical stop)
        if now - start > timing.timeout:
            return grip.width

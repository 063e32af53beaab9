"""The gripper wait (`primitives.gripper.move_gripper`) on a scripted finger model."""

from __future__ import annotations

import pytest

from frankenbot.ports import CancelToken, GripperState
from frankenbot.primitives.gripper import GripperTiming, move_gripper

SPEED = 0.1  # m/s of finger gap


class Fingers:
    """Fingers that start moving ``delay`` s after a command (a Robotiq backing off the squeeze
    it held past an object) and stop on an object of width ``block`` while closing."""

    def __init__(self, width: float, *, delay: float, block: float = 0.0) -> None:
        self.width, self.delay, self.block = width, delay, block
        self.t, self.target, self.since = 0.0, width, 0.0

    def estop_engaged(self) -> bool:
        return False

    def command_gripper(self, width: float) -> None:
        self.target, self.since = width, self.t

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds
        if self.t - self.since < self.delay:
            return
        step = SPEED * seconds
        if self.target > self.width:
            self.width = min(self.target, self.width + step)
        else:
            self.width = max(self.target, self.block, self.width - step)

    def gripper_state(self) -> GripperState:
        return GripperState(self.width, 0.0, self.t)


@pytest.mark.parametrize("delay", [0.0, 0.4, 1.0])
def test_opening_waits_for_fingers_that_start_late(delay: float) -> None:
    fingers = Fingers(0.040, delay=delay)
    width = move_gripper(fingers, 0.060, CancelToken(), GripperTiming())
    assert width == pytest.approx(0.060, abs=0.001)
    assert fingers.t >= delay


def test_closing_on_an_object_returns_once_the_fingers_stall() -> None:
    fingers = Fingers(0.085, delay=0.0, block=0.040)
    timing = GripperTiming()
    width = move_gripper(fingers, 0.0, CancelToken(), timing)
    assert width == pytest.approx(0.040)
    # stalled: returned a settle time after the fingers stopped, not at the timeout
    assert fingers.t < 0.45 + timing.settle + 0.1 < timing.timeout


def test_opening_fingers_that_never_move_give_up_at_the_timeout() -> None:
    fingers = Fingers(0.040, delay=10.0)
    timing = GripperTiming()
    width = move_gripper(fingers, 0.085, CancelToken(), timing)
    assert width == pytest.approx(0.040)
    assert timing.timeout <= fingers.t < timing.timeout + 0.1

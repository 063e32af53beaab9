"""The monitor loop: one snapshot per tick, debounce, re-arming, program probes, rate."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from frankenbot.anomaly.monitor_loop import Firing, MonitorLoop
from frankenbot.anomaly.monitors import EStopMonitor, MonitorContext
from frankenbot.common import AnomalyKind
from frankenbot.state import RobotSnapshot, WorldSnapshot


class Box:
    def __init__(self, snap: WorldSnapshot) -> None:
        self.snap = snap
        self.calls = 0

    def __call__(self) -> WorldSnapshot:
        self.calls += 1
        return self.snap


@dataclass
class Probe:
    name: str
    flag: list[bool]

    def holds(self, snap: WorldSnapshot) -> bool:
        return self.flag[0]


def make(box: Box, fired: list[Firing], **kw) -> MonitorLoop:
    return MonitorLoop(snapshot=box, context=lambda: MonitorContext("pick", {"obj": "a"}),
                       deliver=fired.append, builtins=[EStopMonitor()], **kw)


def test_takes_one_snapshot_per_tick():
    box, fired = Box(WorldSnapshot()), []
    loop = make(box, fired)
    for _ in range(5):
        loop.tick()
    assert box.calls == 5


def test_debounce_needs_consecutive_ticks_and_fires_once_until_cleared():
    box, fired = Box(WorldSnapshot(robot=RobotSnapshot(estop=True))), []
    loop = make(box, fired, debounce_ticks=3)
    loop.tick()
    loop.tick()
    assert fired == []
    loop.tick()
    assert len(fired) == 1 and fired[0].detection.kind == AnomalyKind.ESTOP
    for _ in range(5):
        loop.tick()
    assert len(fired) == 1  # disarmed while the condition persists
    box.snap = WorldSnapshot()
    loop.tick()
    box.snap = WorldSnapshot(robot=RobotSnapshot(estop=True))
    for _ in range(3):
        loop.tick()
    assert len(fired) == 2


def test_a_blip_shorter_than_the_debounce_never_fires():
    box, fired = Box(WorldSnapshot()), []
    loop = make(box, fired, debounce_ticks=2)
    for i in range(10):
        box.snap = WorldSnapshot(robot=RobotSnapshot(estop=i % 2 == 0))
        loop.tick()
    assert fired == []


def test_rearm_lets_a_persisting_condition_fire_again():
    box, fired = Box(WorldSnapshot(robot=RobotSnapshot(estop=True))), []
    loop = make(box, fired, debounce_ticks=1)
    loop.tick()
    loop.tick()
    assert len(fired) == 1
    loop.rearm()
    loop.tick()
    assert len(fired) == 2


def test_program_probes_fire_as_program_monitors():
    box, fired = Box(WorldSnapshot()), []
    flag = [False]
    loop = make(box, fired, debounce_ticks=1,
                program_monitors=lambda now: [Probe("dropped", flag)])
    loop.tick()
    assert fired == []
    flag[0] = True
    loop.tick()
    assert len(fired) == 1
    det = fired[0].detection
    assert det.monitor == "dropped" and det.kind == AnomalyKind.PROGRAM_MONITOR
    assert not det.builtin


def test_thread_runs_near_its_rate_and_delivers():
    box, fired = Box(WorldSnapshot()), []
    got = threading.Event()

    def deliver(f: Firing) -> None:
        fired.append(f)
        got.set()

    loop = MonitorLoop(snapshot=box, context=MonitorContext, deliver=deliver,
                       builtins=[EStopMonitor()], rate_hz=100.0)
    with loop:
        time.sleep(0.5)
        box.snap = WorldSnapshot(robot=RobotSnapshot(estop=True))
        assert got.wait(2.0)
    stats = loop.stats()
    assert not loop.running
    assert stats.ticks > 10
    assert 0.0 < stats.achieved_hz < 150.0
    assert fired[0].onset <= fired[0].detected_at


def test_a_crashing_snapshot_is_reported_not_swallowed():
    fired: list[Firing] = []

    def boom() -> WorldSnapshot:
        raise RuntimeError("no joint state")

    loop = MonitorLoop(snapshot=boom, context=MonitorContext, deliver=fired.append)
    loop.start()
    deadline = time.monotonic() + 2.0
    while not fired and time.monotonic() < deadline:
        time.sleep(0.01)
    loop.stop()
    assert isinstance(loop.error, RuntimeError)
    assert "no joint state" in fired[0].detection.detail


@pytest.mark.parametrize("kw", [{"rate_hz": 0.0}, {"debounce_ticks": 0}])
def test_bad_settings_are_refused(kw):
    with pytest.raises(ValueError):
        MonitorLoop(snapshot=WorldSnapshot, context=MonitorContext, deliver=print, **kw)

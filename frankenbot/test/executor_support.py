"""TEST-ONLY fake arm for the executor tests: a tiny kinematic tabletop with cancellable motions.

Primitives take a fixed time, poll their CancelToken every few milliseconds (as the real ones do)
and change a small world of objects; scripted anomalies fire once at a chosen fraction of a chosen
primitive. It lets the executor's threads, preemption and tiers be tested in well under a second
per case; the sim tests repeat the important cases against MuJoCo and the real primitives.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from frankenbot.common import FailureCode
from frankenbot.ports import CancelToken, PrimitiveResult
from frankenbot.state import RobotSnapshot, Scene, SceneObject


def block(name: str, x: float, y: float) -> SceneObject:
    return SceneObject(name, name.replace("_", " "), "block", name.split("_")[0], (x, y, 0.02),
                       (0.04, 0.04, 0.04))


def bowl(name: str, x: float, y: float) -> SceneObject:
    return SceneObject(name, name.replace("_", " "), "bowl", name.split("_")[0], (x, y, 0.03),
                       (0.14, 0.14, 0.06))


@dataclass
class Script:
    """Fire ``action(arm)`` once when primitive ``name`` is ``at`` (0..1) of the way through."""

    name: str
    at: float
    action: Callable[["FakeArm"], None]
    fired: bool = False


@dataclass
class FakeArm:
    objects: dict[str, SceneObject] = field(default_factory=dict)
    duration: float = 0.12  # seconds per motion primitive
    scripts: list[Script] = field(default_factory=list)
    fail_next: dict[str, FailureCode] = field(default_factory=dict)  # name -> code, once
    held: str | None = None
    width: float = 0.085
    closed: bool = False
    moving: bool = False
    estop: bool = False
    camera_frozen: bool = False
    stops: int = 0
    calls: list[str] = field(default_factory=list)
    tcp: tuple[float, float, float] = (0.3, 0.0, 0.3)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _stamp: float = 0.0

    # --- what the executor reads -----------------------------------------------------------
    def snapshot(self) -> RobotSnapshot:
        with self.lock:
            q = (time.monotonic() % 1.0,) * 6 if self.moving else (0.0,) * 6
            return RobotSnapshot(joint_positions=q, tcp_position=self.tcp,
                                 gripper_width=self.width, gripper_closed_cmd=self.closed,
                                 held_object=self.held, moving=self.moving, estop=self.estop,
                                 stamp=time.monotonic())

    def scene(self) -> Scene:
        with self.lock:
            if not self.camera_frozen:
                self._stamp = time.monotonic()
            objs = list(self.objects.values())
            if self.held is not None and self.held in self.objects and self.closed \
                    and self.width > 0.01:
                objs = [replace(o, position=(self.tcp[0], self.tcp[1], self.tcp[2] - 0.05))
                        if o.object_id == self.held else o for o in objs]
            return Scene.of(objs, stamp=self._stamp)

    def stop(self) -> None:
        with self.lock:
            self.stops += 1
            self.moving = False

    def forget_held(self) -> None:
        with self.lock:
            self.held = None

    # --- anomaly helpers (scripts call these) -------------------------------------------------
    def drop(self) -> None:
        with self.lock:
            if self.held is not None:
                o = self.objects[self.held]
                self.objects[self.held] = replace(o, position=(self.tcp[0], self.tcp[1], 0.02))
            self.width = 0.0  # fingers close on nothing; belief stays until the brain notices

    def remove(self, name: str) -> None:
        with self.lock:
            self.objects.pop(name, None)

    def displace(self, name: str, dx: float) -> None:
        with self.lock:
            o = self.objects[name]
            self.objects[name] = replace(o, position=(o.position[0] + dx, o.position[1],
                                                      o.position[2]))

    # --- PrimitiveExecutor ---------------------------------------------------------------------
    def execute(self, name: str, args: Mapping[str, object],
                cancel: CancelToken) -> PrimitiveResult:
        self.calls.append(name)
        code = self.fail_next.pop(name, None)
        if name == "wait":
            return self._move(name, cancel, float(args.get("seconds", 0.0)), motion=False) \
                or PrimitiveResult.success()
        obj = str(args.get("obj", ""))
        target = str(args.get("container", args.get("target", "")))
        with self.lock:
            visible = {k: v for k, v in self.objects.items()}
        for oid in (obj, target):
            if oid and oid not in visible:
                return PrimitiveResult.failure(FailureCode.NOT_FOUND, f"{oid} not in the scene")
        stopped = self._move(name, cancel, self.duration)
        if stopped is not None:
            return stopped
        if code is not None:
            return PrimitiveResult.failure(code, f"scripted {code.value}")
        with self.lock:
            if name == "pick":
                self.held, self.closed, self.width = obj, True, 0.04
            elif name in ("place_in", "place_on"):
                if self.held != obj or self.width < 0.01:
                    return PrimitiveResult.failure(FailureCode.PLACE_FAILED, f"not holding {obj}")
                t = self.objects[target]
                self.objects[obj] = replace(self.objects[obj],
                                            position=(t.position[0], t.position[1], 0.05))
                self.held, self.closed, self.width = None, False, 0.085
        return PrimitiveResult.success()

    def _move(self, name: str, cancel: CancelToken, seconds: float,
              motion: bool = True) -> PrimitiveResult | None:
        with self.lock:
            if self.estop:
                return PrimitiveResult.failure(FailureCode.ESTOP, "e-stop engaged")
            self.moving = motion
        t0 = time.monotonic()
        try:
            while True:
                frac = (time.monotonic() - t0) / seconds if seconds > 0 else 1.0
                for s in self.scripts:
                    if not s.fired and s.name == name and frac >= s.at:
                        s.fired = True
                        s.action(self)
                if cancel.cancelled:
                    return PrimitiveResult.failure(FailureCode.PREEMPTED, cancel.reason)
                with self.lock:
                    if self.estop:
                        return PrimitiveResult.failure(FailureCode.ESTOP, "e-stop engaged")
                if frac >= 1.0:
                    return None
                time.sleep(0.002)
        finally:
            with self.lock:
                self.moving = False

"""One consistent ``WorldSnapshot`` from the robot state, the perceived scene and executor facts.

Monitors and predicates must judge robot and scene from the same instant, so both are read
together under one lock. The scene is marked stale here, on the executor's clock, when its stamp
has not advanced for ``stale_after_s`` (the camera stopped): perception's own ``stale`` flag is
honoured too.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any, Callable, Mapping

from frankenbot.state import RobotSnapshot, Scene, WorldSnapshot

STALE_AFTER_S = 1.0  # s the scene's stamp may stand still (ExecutorParams.scene_stale_after_s)


class SnapshotSource:
    """Callable returning a fresh ``WorldSnapshot``; safe to call from any thread."""

    def __init__(self, robot: Callable[[], RobotSnapshot], scene: Callable[[], Scene], *,
                 stale_after_s: float = STALE_AFTER_S,
                 clock: Callable[[], float] = time.monotonic,
                 beliefs: Callable[[], Mapping[str, bool]] | None = None,
                 fixture_map: Callable[[], Any] | None = None,
                 scene_beliefs: Callable[[Scene], Scene] | None = None) -> None:
        if not stale_after_s > 0:
            raise ValueError(f"stale_after_s must be > 0, got {stale_after_s!r}")
        self._robot = robot
        self._scene = scene
        self._beliefs = beliefs  # e.g. the primitives' open:<part>; set_fact wins
        self._fixture_map = fixture_map  # the current FixtureMap (None: no fixtures known)
        # the robot's own knowledge over the camera's (where it let go of an object it has
        # not seen since): e.g. the primitives' believed_scene
        self._scene_beliefs = scene_beliefs
        self._clock = clock
        self.stale_after_s = stale_after_s
        self._lock = threading.Lock()  # guards the reads and the staleness bookkeeping
        self._facts: dict[str, bool] = {}
        self._last_stamp: float | None = None
        self._last_change = clock()

    def set_fact(self, key: str, value: bool) -> None:
        with self._lock:
            self._facts[key] = value

    def facts(self) -> Mapping[str, bool]:
        with self._lock:
            return dict(self._facts)

    def __call__(self) -> WorldSnapshot:
        with self._lock:
            robot = self._robot()
            scene = self._scene()
            now = self._clock()
            if scene.stamp != self._last_stamp:
                self._last_stamp = scene.stamp
                self._last_change = now
            if not scene.stale and now - self._last_change > self.stale_after_s:
                scene = replace(scene, stale=True)
            if self._scene_beliefs is not None:
                scene = self._scene_beliefs(scene)
            facts = dict(self._beliefs()) if self._beliefs is not None else {}
            facts.update(self._facts)
            fmap = self._fixture_map() if self._fixture_map is not None else None
            return WorldSnapshot(robot=robot, scene=scene, facts=facts, time=now,
                                 fixture_map=fmap)

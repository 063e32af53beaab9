"""A pass-through ``PrimitiveExecutor`` that tells the monitors what is running.

The interpreter calls primitives through this wrapper; it records the running primitive, its
arguments, the active tree path, when it started and where its objects were at that moment
(``MonitorContext``), so the monitor loop can judge "moved since the robot committed" and
"running too long". It also timestamps every primitive start: the first primitive of a recovery
is the recovery command whose time the AnomalyEvent reports.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Mapping

from frankenbot.anomaly.monitors import OBJECT_ARGS, MonitorContext
from frankenbot.ports import CancelToken, PrimitiveExecutor, PrimitiveResult, Value
from frankenbot.state import WorldSnapshot

StartListener = Callable[[str, Mapping[str, Value], str, float], None]


class TrackedPrimitives:
    """Wraps ``inner``; ``context()`` is what the monitor loop reads on its own thread."""

    def __init__(self, inner: PrimitiveExecutor, snapshot: Callable[[], WorldSnapshot], *,
                 active_path: Callable[[], str] = lambda: "",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._inner = inner
        self._snapshot = snapshot
        self._active_path = active_path
        self._clock = clock
        self._lock = threading.Lock()  # guards _ctx and the listeners
        self._ctx = MonitorContext()
        self._listeners: list[StartListener] = []
        self.calls = 0

    def add_start_listener(self, fn: StartListener) -> None:
        with self._lock:
            self._listeners.append(fn)

    def context(self) -> MonitorContext:
        with self._lock:
            return self._ctx

    def execute(self, name: str, args: Mapping[str, Value],
                cancel: CancelToken) -> PrimitiveResult:
        snap = self._snapshot()
        ref = {}
        seen = {}
        for key in OBJECT_ARGS:
            v = args.get(key)
            if isinstance(v, str):
                obj = snap.scene.get(v)
                if obj is not None:
                    ref[v] = obj.position
                    seen[v] = obj
        path = self._active_path()
        started = snap.time
        with self._lock:
            self._ctx = MonitorContext(name, dict(args), path, started, ref,
                                       snap.robot.held_object, seen)
            listeners = list(self._listeners)
            self.calls += 1
        for fn in listeners:
            fn(name, args, path, self._clock())
        try:
            return self._inner.execute(name, args, cancel)
        finally:
            with self._lock:
                self._ctx = MonitorContext()

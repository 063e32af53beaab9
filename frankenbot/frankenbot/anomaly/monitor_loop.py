"""The monitor loop: a fixed-rate thread beside the control thread that watches for anomalies.

Every tick takes ONE snapshot (robot + scene, same instant) and one context, evaluates the
program's monitors that are in scope and the built-in ones against it, debounces (a condition must
hold for ``debounce_ticks`` consecutive ticks, then the monitor is disarmed until the condition
clears), and hands each firing to ``deliver``. It measures its own achieved rate and CPU share so
the benchmark can report them.

The loop never decides what to do about an anomaly; the executor's ``deliver`` does.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from frankenbot.anomaly.monitors import Detection, Monitor, MonitorContext
from frankenbot.common import AnomalyClass, AnomalyKind
from frankenbot.state import WorldSnapshot

DEFAULT_RATE_HZ = 200.0
DEFAULT_DEBOUNCE_TICKS = 2


_log = logging.getLogger(__name__)


class ProgramProbe(Protocol):
    """A monitor written in the program, as the loop sees it: a name and a condition."""

    @property
    def name(self) -> str: ...

    def holds(self, snap: WorldSnapshot) -> bool:
        ...


@dataclass(frozen=True)
class Firing:
    """A debounced detection with its timing: when the condition was first seen true (onset as
    observed by the loop) and when the loop delivered it."""

    detection: Detection
    onset: float
    detected_at: float


@dataclass(frozen=True)
class LoopStats:
    ticks: int
    elapsed_s: float
    achieved_hz: float
    cpu_share: float  # thread CPU seconds / wall seconds (1.0 = one core busy)
    mean_tick_us: float
    max_tick_us: float
    overruns: int  # ticks that took longer than the period


class MonitorLoop:
    """Runs monitors at ``rate_hz`` on its own thread until ``stop()``.

    ``program_monitors(now)`` returns the program monitors in scope now (may be empty);
    ``deliver(firing)`` is called on the loop thread and must not block for long.
    """

    def __init__(self, *, snapshot: Callable[[], WorldSnapshot],
                 context: Callable[[], MonitorContext],
                 deliver: Callable[[Firing], None],
                 builtins: Sequence[Monitor] = (),
                 program_monitors: Callable[[float], Sequence[ProgramProbe]] | None = None,
                 rate_hz: float = DEFAULT_RATE_HZ,
                 debounce_ticks: int = DEFAULT_DEBOUNCE_TICKS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not rate_hz > 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz!r}")
        if debounce_ticks < 1:
            raise ValueError(f"debounce_ticks must be >= 1, got {debounce_ticks!r}")
        self._snapshot = snapshot
        self._context = context
        self._deliver = deliver
        self._builtins = tuple(builtins)
        self._program_monitors = program_monitors
        self.period = 1.0 / rate_hz
        self.debounce_ticks = debounce_ticks
        self._clock = clock
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._rearm = threading.Event()
        # debounce state, touched only by the loop thread (or by tick() when no thread runs)
        self._streak: dict[str, int] = {}
        self._onset: dict[str, float] = {}
        self._disarmed: set[str] = set()
        self._last_primitive_key: tuple[object, ...] | None = None
        self._stats_lock = threading.Lock()  # guards the counters below
        self._ticks = 0
        self._tick_sum = 0.0
        self._tick_max = 0.0
        self._overruns = 0
        self._t0 = 0.0
        self._cpu0 = 0.0
        self._cpu = 0.0
        self._t_last = 0.0
        self.error: BaseException | None = None

    # ---- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("monitor loop already started")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="frankenbot-monitor-loop",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    close = stop

    def __enter__(self) -> "MonitorLoop":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def rearm(self) -> None:
        """Forget debounce state at the next tick (after a recovery, so a condition that
        persists fires again). Safe from any thread: the loop thread does the clearing."""
        self._rearm.set()

    # ---- the loop ---------------------------------------------------------------------------
    def _run(self) -> None:
        self._t0 = self._clock()
        self._cpu0 = time.thread_time()
        next_t = self._t0
        try:
            while not self._stop.is_set():
                start = self._clock()
                self.tick()
                end = self._clock()
                dt = end - start
                with self._stats_lock:
                    self._ticks += 1
                    self._tick_sum += dt
                    self._tick_max = max(self._tick_max, dt)
                    self._cpu = time.thread_time() - self._cpu0
                    self._t_last = end
                    if dt > self.period:
                        self._overruns += 1
                next_t += self.period
                delay = next_t - self._clock()
                if delay < -self.period:  # fell behind by more than a tick: do not burst
                    next_t = self._clock()
                elif delay > 0:
                    self._stop.wait(delay)
        except BaseException as e:  # reported via .error, never silent
            self.error = e
            _log.error("monitor loop crashed", exc_info=e)
            self._deliver(Firing(Detection("builtin:monitor_loop", AnomalyKind.PRIMITIVE_FAILED,
                                           AnomalyClass.UNPREDICTABLE,
                                           f"monitor loop crashed: {e!r}"),
                                 self._clock(), self._clock()))

    def tick(self) -> list[Firing]:
        """One evaluation round (public so tests and benchmarks can drive it without a thread)."""
        if self._rearm.is_set():
            self._rearm.clear()
            self._disarmed.clear()
            self._streak.clear()
        snap = self._snapshot()
        ctx = self._context()
        now = self._clock()
        key = (ctx.primitive, ctx.node_path, ctx.started_at)
        if key != self._last_primitive_key:  # a new primitive: stateful monitors start afresh
            self._last_primitive_key = key
            for mon in self._builtins:
                mon.reset()
        fired: list[Firing] = []
        seen: set[str] = set()
        if self._program_monitors is not None:
            for probe in self._program_monitors(snap.time):
                name = probe.name
                seen.add(name)
                if probe.holds(snap):
                    det = Detection(name, AnomalyKind.PROGRAM_MONITOR, AnomalyClass.PREDICTABLE,
                                    f"program monitor {name} fired", builtin=False)
                    self._debounce(name, det, now, fired)
                else:
                    self._clear(name)
        for mon in self._builtins:
            found = mon.check(snap, ctx)
            seen.add(mon.name)
            if found is not None:
                self._debounce(mon.name, found, now, fired)
            else:
                self._clear(mon.name)
        for stale in [k for k in self._streak if k not in seen]:
            self._clear(stale)
        for firing in fired:
            self._deliver(firing)
        return fired

    def _debounce(self, name: str, det: Detection, now: float, fired: list[Firing]) -> None:
        if name in self._disarmed:
            return
        streak = self._streak.get(name, 0) + 1
        self._streak[name] = streak
        if streak == 1:
            self._onset[name] = now
        if streak >= self.debounce_ticks:
            self._disarmed.add(name)
            fired.append(Firing(det, self._onset.get(name, now), now))

    def _clear(self, name: str) -> None:
        self._streak.pop(name, None)
        self._disarmed.discard(name)

    # ---- measurement ------------------------------------------------------------------------
    def stats(self) -> LoopStats:
        with self._stats_lock:
            ticks = self._ticks
            elapsed = max(self._t_last - self._t0, 1e-9)
            return LoopStats(
                ticks=ticks,
                elapsed_s=elapsed if ticks else 0.0,
                achieved_hz=(ticks - 1) / elapsed if ticks > 1 else 0.0,
                cpu_share=self._cpu / elapsed if ticks else 0.0,
                mean_tick_us=self._tick_sum / ticks * 1e6 if ticks else 0.0,
                max_tick_us=self._tick_max * 1e6,
                overruns=self._overruns,
            )

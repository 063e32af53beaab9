"""Which camera frames to process: pairing colour with depth, the rate cap, late frames, resets
and a camera clock that jumps back. ROS-free: the perception node feeds it stamps and its
messages as opaque payloads, and tests drive it with plain numbers.

Colour frames are kept for a while (``history``): the one closest in stamp to a depth frame,
within ``sync_tolerance``, is its pair (the newest colour frame is often already the next one
when depth arrives). Only the newest depth frame is a candidate; one replaced before it was
taken is counted ``unpaired``, one that waited longer than ``max_latency`` is dropped as
``late``. ``admit`` then decides on the pair's camera stamp:

* frames stamped before a reset (within ``CLOCK_JUMP_S`` of it) show the old scene: skipped;
* a frame stamped less than 0.75 / ``rate`` after the last processed one is ``too_soon`` (a
  30 Hz camera is perceived at 10 Hz; the 0.75 keeps every frame of a camera at ``rate``
  despite stamp jitter);
* a frame older than the last processed one is a late or repeated frame (skipped), unless it
  is older by more than ``CLOCK_BACK_S``: the camera's clock restarted (a sim or driver
  restart), so the tracks' times are void: ``CLOCK_RESTARTED`` tells the caller to forget them
  and process the frame.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

F = TypeVar("F")

RGB_HISTORY = 8  # colour frames kept for pairing with depth by stamp
CLOCK_BACK_S = 1.0  # a frame this much older than the last one: the camera clock restarted
CLOCK_JUMP_S = 10.0  # a frame this much older than a reset means the camera clock restarted

PROCESS = "process"
OLD_SCENE = "old_scene"
TOO_SOON = "too_soon"
REPEATED = "repeated"
CLOCK_RESTARTED = "clock_restarted"  # process it, after forgetting the tracks


def too_soon(stamp: float, last: float | None, rate: float) -> bool:
    """True for a frame stamped less than 0.75 / ``rate`` after the last processed one;
    rate <= 0: never."""
    return last is not None and rate > 0 and 0.0 <= stamp - last < 0.75 / rate


@dataclass(frozen=True)
class FramePair(Generic[F]):
    colour: F
    depth: F
    stamp: float  # the depth frame's camera stamp (s)
    arrival: float  # monotonic time the depth frame arrived


class FrameSync(Generic[F]):
    """Thread-safe: intake (``colour``, ``depth``) from subscription callbacks, ``take`` /
    ``admit`` / ``processed`` / ``reset`` from the one processing thread."""

    def __init__(self, *, rate: float, sync_tolerance: float, max_latency: float,
                 history: int = RGB_HISTORY) -> None:
        self.rate = rate
        self.sync_tolerance = sync_tolerance
        self.max_latency = max_latency
        self._lock = threading.Lock()  # guards the intake fields and counts
        self._colour: deque[tuple[float, F]] = deque(maxlen=history)
        self._depth: tuple[float, F, float] | None = None  # stamp, frame, arrival
        self._taken: Any = None  # the depth frame last taken (or dropped as late)
        self.last_stamp: float | None = None  # camera stamp of the last processed frame
        # frames stamped up to this predate the last reset (None: none pending)
        self._reset_after: float | None = None
        self.counts = {"colour": 0, "depth": 0, "unpaired": 0, "late": 0, "too_soon": 0}

    # ---------------------------------------------------------------- intake
    def colour(self, stamp: float, frame: F) -> None:
        with self._lock:
            self._colour.append((stamp, frame))
            self.counts["colour"] += 1

    def depth(self, stamp: float, frame: F, arrival: float) -> None:
        with self._lock:
            if self._depth is not None and self._depth[1] is not self._taken:
                self.counts["unpaired"] += 1  # replaced before it could be processed
            self._depth = (stamp, frame, arrival)
            self.counts["depth"] += 1

    def latest_depth_stamp(self) -> float | None:
        with self._lock:
            return self._depth[0] if self._depth is not None else None

    # ---------------------------------------------------------------- processing
    def take(self, now: float) -> FramePair[F] | None:
        """The newest complete pair not taken yet; None when there is none (no new depth
        frame, its colour frame not in yet, or it waited past ``max_latency``: dropped)."""
        with self._lock:
            if self._depth is None or self._depth[1] is self._taken:
                return None
            stamp, depth, arrival = self._depth
            colour = self._matching(stamp)
            if colour is None:
                return None  # its colour frame has not arrived yet (or was dropped)
            self._taken = depth
            if now - arrival > self.max_latency:
                self.counts["late"] += 1
                return None
            return FramePair(colour, depth, stamp, arrival)

    def _matching(self, stamp: float) -> F | None:
        best = min(self._colour, default=None, key=lambda c: abs(c[0] - stamp))
        if best is None or abs(best[0] - stamp) > self.sync_tolerance:
            return None
        return best[1]

    def admit(self, stamp: float) -> str:
        """What to do with a taken pair stamped ``stamp`` (see the module docstring)."""
        if self._reset_after is not None:
            if self._reset_after - CLOCK_JUMP_S < stamp <= self._reset_after:
                return OLD_SCENE
            self._reset_after = None  # the new scene's first frame (or a restarted clock)
        last = self.last_stamp
        if too_soon(stamp, last, self.rate):
            with self._lock:
                self.counts["too_soon"] += 1
            return TOO_SOON
        if last is not None and stamp <= last:
            return CLOCK_RESTARTED if last - stamp > CLOCK_BACK_S else REPEATED
        return PROCESS

    def processed(self, stamp: float) -> None:
        self.last_stamp = stamp

    def reset(self, after: float | None) -> None:
        """Forget the last stamp; frames stamped up to ``after`` are not processed any more."""
        self._reset_after = after
        self.last_stamp = None

    def take_counts(self) -> dict[str, int]:
        """The intake counters since the last call (for the node's periodic log line)."""
        with self._lock:
            counts = dict(self.counts)
            for k in self.counts:
                self.counts[k] = 0
        return counts

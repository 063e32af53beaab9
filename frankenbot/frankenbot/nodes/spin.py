"""A MultiThreadedExecutor that keeps up with high-rate topics.

rclpy's MultiThreadedExecutor hands a ready callback to its thread pool and immediately waits
again; the entity is still "ready" until a pool thread takes it, so the spinning thread loops
holding the GIL and the pool thread only gets to run at the interpreter's switch interval
(5 ms). Measured here with the rclpy 7.1.6 wheels: 2+ threads received 5-40 of 250 joint-state
messages a second (a single thread all of them), which starved every node of /joint_states and
/frankenbot/scene. Yielding the GIL once after each hand-off removes the convoy: all 250 arrive
at ~0.2 of a core. Every FrankenBot node spins with this executor.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

from rclpy.executors import MultiThreadedExecutor


class ResponsiveExecutor(MultiThreadedExecutor):
    """MultiThreadedExecutor that yields the GIL after handing a callback to its pool."""

    def _spin_once_impl(self, timeout_sec: Optional[float] = None,
                        wait_condition: Callable[[], bool] = lambda: False) -> None:
        super()._spin_once_impl(timeout_sec, wait_condition)
        if self._futures:  # a callback is (or may be) waiting for a pool thread
            time.sleep(0)

"""rclpy's ActionClient, safe to send from a thread other than the one spinning it.

rclpy's ``send_goal_async`` sends the request and only then files the sequence number the
response will carry. When an executor spins the client in another thread (every FrankenBot
node, and the CLI's client) the response can be taken and handled in between: the client logs
"Ignoring unexpected goal response. There may be more than one action server" and the future
never completes (ros2/rclpy#1123; fixed upstream by a lock in later releases than the wheels
installed here). The same holds for cancel and result requests. Seen here: `frankenbot demo`
under a loaded CI machine waited 60 s for a goal response that had arrived, twice in a row.

``ActionClient`` below holds one lock from sending a request to filing it, and handles a taken
response only after any filing in flight has finished. Only public or long-standing protected
methods are overridden; the class is a drop-in for ``rclpy.action.ActionClient``.
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.action import ActionClient as _RclpyActionClient


class ActionClient(_RclpyActionClient):
    """``rclpy.action.ActionClient`` without the send/response race (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # RLock: a done callback run while handling a response may send the next request
        self._filing = threading.RLock()
        super().__init__(*args, **kwargs)

    def send_goal_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._filing:
            return super().send_goal_async(*args, **kwargs)

    def _cancel_goal_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._filing:
            return super()._cancel_goal_async(*args, **kwargs)

    def _get_result_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._filing:
            return super()._get_result_async(*args, **kwargs)

    async def execute(self, taken_data: Any) -> None:
        # a response can exist only once its request was sent; the sender holds the lock
        # until the request is filed, so acquiring it here waits for exactly that
        with self._filing:
            pass
        await super().execute(taken_data)

"""The pixel primitives' ``PixelResolver`` port over ROS: asks the perception node.

``frankenbot_perception`` owns the camera (its model, calibration or TF, and the depth frames it
has processed) and answers ``frankenbot_perception/resolve_pixel``; the executor node gives its
primitives this adapter, so ``place_at_pixel`` and friends work on the robot and over the sim's
topics exactly as in the in-process stack. Called on the executor's control thread (never in a
callback), so it may wait for the answer; a missing service or a late answer is a
``PerceptionError`` (the primitive then fails with a clear reason and nothing moves).
"""

from __future__ import annotations

from typing import Any

from frankenbot.errors import PerceptionError
from frankenbot.nodes.scene_msgs import time_from_msg
from frankenbot.nodes.spin import call_and_wait
from frankenbot.ports import PixelTarget
from frankenbot.program.spatial_catalog import shipped_image_size

SERVICE = "frankenbot_perception/resolve_pixel"


class RosPixelResolver:
    """``PixelResolver`` backed by the perception node's ``~/resolve_pixel`` service."""

    def __init__(self, node: Any, service: str = SERVICE, *, timeout: float = 3.0,
                 callback_group: Any = None) -> None:
        from frankenbot_interfaces.srv import ResolvePixel

        self._srv = ResolvePixel
        self._client = node.create_client(ResolvePixel, service, callback_group=callback_group)
        self.service = service
        self.timeout = float(timeout)
        self._size = shipped_image_size()  # until the perception node has said otherwise

    def image_size(self) -> tuple[int, int]:
        return self._size

    def resolve(self, u: float, v: float) -> PixelTarget:
        if not self._client.wait_for_service(timeout_sec=min(self.timeout, 1.0)):
            raise PerceptionError(f"no depth camera is connected: {self.service} is not "
                                  "available (is frankenbot_perception running?)")
        res = call_and_wait(self._client, self._srv.Request(u=float(u), v=float(v)),
                            self.timeout)
        if res is None:
            raise PerceptionError(f"{self.service} did not answer within {self.timeout:g} s")
        if res.width and res.height:
            self._size = (int(res.width), int(res.height))
        if not res.ok:
            raise PerceptionError(res.message or "the perception node could not resolve it")
        return PixelTarget((float(res.target.x), float(res.target.y), float(res.target.z)),
                           float(u), float(v), float(res.depth), time_from_msg(res.stamp),
                           float(res.frame_age))

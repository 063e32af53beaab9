"""Tier 3 in-process: the planner core as the escalation policy's ``Replanner``.

The ROS node reaches the planner through the ``/frankenbot/replan`` service instead (see
``nodes/executor_node.py``); both hand over the running program, the failure context and the
failed node, and get back a validated program text and the number of VLM calls it cost.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from frankenbot.anomaly.candidates import Situation
from frankenbot.anomaly.escalation import ReplanResult
from frankenbot.state import Scene

SCENE_WAIT_S = 6.0  # wall seconds a replan waits for a fresh scene (a blip, a busy CPU)


class PlannerReplanner:
    """Wraps ``frankenbot.planner.planner.Planner.replan`` for one task."""

    def __init__(self, planner: Any, *, instruction: str, program_text: str,
                 scene: Callable[[], Scene]) -> None:
        self._planner = planner
        self.instruction = instruction
        self.program_text = program_text
        self._scene = scene
        self.calls = 0

    def _fresh_scene(self) -> Scene:
        """The scene to replan from: a replan needs a current view, so a stale one is waited
        out for up to ``SCENE_WAIT_S`` (a busy perception thread, a camera hiccup); a camera that
        stays dead is then reported stale and the planner says so."""
        deadline = time.monotonic() + SCENE_WAIT_S
        scene = self._scene()
        while scene.stale and time.monotonic() < deadline:
            time.sleep(0.05)
            scene = self._scene()
        return scene

    def replan(self, situation: Situation, failure_context: str) -> ReplanResult:
        from frankenbot.planner.request import FailureContext, PlanRequest

        self.calls += 1
        request = PlanRequest(instruction=self.instruction or situation.task,
                              scene=self._fresh_scene())
        failure = FailureContext(
            self.program_text, failure_context, situation.node_path, kind=situation.kind.value,
            objects=tuple(situation.objects), held_object=situation.held_object,
            failed_call=situation.failed_call.text() if situation.failed_call else "")
        try:
            outcome = self._planner.replan(request, failure)
        except Exception as e:  # a planner bug ends in a clean abort, not a dead executor
            return ReplanResult(False, "", f"planner raised {type(e).__name__}: {e}", 0)
        if outcome.ok:
            self.program_text = outcome.program_text
        return ReplanResult(bool(outcome.ok), outcome.program_text if outcome.ok else "",
                            outcome.message, int(outcome.vlm_calls))

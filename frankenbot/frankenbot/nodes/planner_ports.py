"""The episode runner's ports over ROS, for the planner node.

``execution.episode.EpisodeRunner`` runs every task the same way in-process and over ROS; here
its ports are filled with ROS: memory's ``get_context`` / ``record_episode`` services and the
executor's ``execute_program`` action. They are called on the node's task worker thread, never
inside a callback, and wait on futures that the node's executor threads complete.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rclpy.node import Node

from frankenbot.errors import MemoryStoreError
from frankenbot.execution.episode import ExecutionReport, PlanningContext
from frankenbot.memory.records import EpisodeRecord
from frankenbot.nodes.action_client import ActionClient
from frankenbot.nodes.memory_msgs import anomaly_from_msg, record_request, signature_from_msg
from frankenbot.nodes.spin import wait_future
from frankenbot.planner.request import Exemplar, PlanOutcome
from frankenbot.ports import CancelToken
from frankenbot_interfaces.action import ExecuteProgram
from frankenbot_interfaces.srv import GetContext, RecordEpisode

EXECUTOR_GONE_S = 1.0  # s the executor's action server must stay missing to count as gone
CANCEL_CONFIRM_S = 10.0  # s the executor has to confirm a cancel
EXECUTOR_VANISHED = ("dependency lost: the executor (frankenbot_executor, "
                     "/frankenbot/execute_program) vanished mid-task; its last trajectory "
                     "segment ends and the arm holds; restart it and submit again")


class RosMemory:
    """Memory's services as the runner's ``context`` and ``record`` ports. Memory is optional:
    without it planning goes on with no context, and a failed record is a note."""

    def __init__(self, node: Node, *, timeout: Callable[[], float],
                 callback_group: Any = None) -> None:
        self._node = node
        self._timeout = timeout  # s; read per call (a live parameter)
        self._context = node.create_client(GetContext, "frankenbot/memory/get_context",
                                           callback_group=callback_group)
        self._record = node.create_client(RecordEpisode, "frankenbot/memory/record_episode",
                                          callback_group=callback_group)
        self._probed = False

    def context(self, instruction: str) -> PlanningContext | None:
        timeout = self._timeout()
        if not self._probed:  # memory may start after us: wait once, then only check
            self._probed = True
            self._context.wait_for_service(timeout_sec=timeout)
        if not self._context.service_is_ready():
            return None
        future = self._context.call_async(GetContext.Request(instruction=instruction))
        if not wait_future(future, timeout) or future.result() is None:
            future.cancel()
            self._node.get_logger().warning("memory get_context timed out; planning without it")
            return None
        ctx = future.result()
        return PlanningContext(
            skills=tuple(s for s in map(signature_from_msg, ctx.skills) if s is not None),
            exemplars=tuple(Exemplar(i, p) for i, p in zip(
                ctx.exemplar_instructions, ctx.exemplar_programs, strict=False)),
            experience=tuple(ctx.anomaly_experience))

    def record(self, episode: EpisodeRecord) -> None:
        """Store one episode; MemoryStoreError says why it may not be stored."""
        if not self._record.service_is_ready():
            raise MemoryStoreError("memory unavailable (frankenbot_memory not running): "
                                   "episode not recorded")
        timeout = self._timeout()
        future = self._record.call_async(record_request(episode))
        if not wait_future(future, timeout) or future.result() is None:
            future.cancel()
            raise MemoryStoreError(
                f"memory did not confirm the episode within {timeout:g} s (frankenbot_memory "
                "vanished or is stuck): it may not be recorded")
        if not future.result().ok:
            raise MemoryStoreError(f"memory error, episode not recorded: "
                                   f"{future.result().message}")


class RosExecutor:
    """The runner's ``execute`` port over ``/frankenbot/execute_program``.

    ``on_feedback(task_id, feedback)`` gets every ExecuteProgram feedback, and None when the
    executor has accepted the goal. A cancel, or ``timeout()`` s of execution,
    cancels the executor's goal (the executor stops the arm); an executor that vanishes
    mid-task ends the task with a note naming it.
    """

    def __init__(self, node: Node, *, server_wait: Callable[[], float],
                 timeout: Callable[[], float],
                 on_feedback: Callable[[str, Any], None], callback_group: Any = None) -> None:
        self._node = node
        self._server_wait = server_wait
        self._timeout = timeout
        self._on_feedback = on_feedback
        self.client = ActionClient(node, ExecuteProgram, "frankenbot/execute_program",
                                   callback_group=callback_group)

    def __call__(self, plan: PlanOutcome, task_id: str, instruction: str,
                 cancel: CancelToken) -> ExecutionReport:
        t0 = time.monotonic()

        def report(outcome: str, reason: str) -> ExecutionReport:
            return ExecutionReport(success=False, outcome=outcome, reason=reason,
                                   final_program=plan.program_text,
                                   duration=time.monotonic() - t0)

        if not self.client.wait_for_server(timeout_sec=self._server_wait()):
            return report("error", "the executor (/frankenbot/execute_program) is not "
                                   "available; nothing moved")
        goal = ExecuteProgram.Goal(task_id=task_id, instruction=instruction,
                                   program=plan.program_text)
        send = self.client.send_goal_async(
            goal, feedback_callback=lambda msg: self._on_feedback(task_id, msg.feedback))
        if not wait_future(send, 10.0) or send.result() is None or not send.result().accepted:
            return report("error", "the executor rejected the program")
        handle = send.result()
        self._on_feedback(task_id, None)
        result_future = handle.get_result_async()
        deadline = time.monotonic() + self._timeout()
        cancelled = False
        gone_since: float | None = None
        while not wait_future(result_future, 0.1):
            # the executor's process died (SIGKILL, crash): DDS drops its action server once
            # its participant lease expires (3 s with config/fastdds_liveliness.xml)
            if self.client.server_is_ready():
                gone_since = None
            elif gone_since is None:
                gone_since = time.monotonic()
            elif time.monotonic() - gone_since > EXECUTOR_GONE_S:
                self._node.get_logger().error(f"{task_id}: the executor vanished mid-task")
                return report("error", EXECUTOR_VANISHED)
            if (cancel.cancelled or time.monotonic() > deadline) and not cancelled:
                cancelled = True
                handle.cancel_goal_async()  # the executor stops the arm safely
            if cancelled and not wait_future(result_future, CANCEL_CONFIRM_S):
                return report("cancelled", f"cancel sent; the executor did not confirm "
                                           f"within {CANCEL_CONFIRM_S:g} s")
        res = result_future.result().result
        outcome = "cancelled" if cancelled and not res.success else res.outcome
        return ExecutionReport(
            success=bool(res.success), outcome=outcome, reason=res.reason,
            final_program=res.final_program or plan.program_text,
            anomalies=tuple(anomaly_from_msg(a) for a in res.anomalies),
            vlm_calls=int(res.vlm_calls), replans=int(res.replans),
            duration=float(res.duration), trace_json=res.trace_json or "[]")

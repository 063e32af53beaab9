"""ROS adapter for the planner: the ``frankenbot_planner`` node.

Services
  /frankenbot/submit_task (frankenbot_interfaces/srv/SubmitTask)
      plan a task; ``dry_run`` returns the validated program and moves nothing, otherwise the
      program is handed to the executor in the background and the service returns at once.
  /frankenbot/replan (frankenbot_interfaces/srv/Replan)
      tier-3 replanning for the executor: one counted VLM call (+ at most one repair), or an
      offline re-plan from the current scene (0 calls).
Actions
  /frankenbot/run_task (frankenbot_interfaces/action/RunTask)
      plan and execute with feedback (phase, active node, anomaly events); cancelling it cancels
      the executor's goal, which stops the arm safely.
Topics
  publishes /frankenbot/task_status (TaskStatus, reliable, depth 50)
  subscribes /frankenbot/scene (SceneObjects), /frankenbot/annotated_image (sensor_msgs/Image)
Uses
  action /frankenbot/execute_program (ExecuteProgram, frankenbot_executor)
  services /frankenbot/memory/get_context and /frankenbot/memory/record_episode when available

Parameters: see ``PARAMS`` below (planner_mode, vlm.*, prompt_budget_chars, use_image, timeouts,
stats_file). All planning logic lives in ``frankenbot.planner``; this node only moves data
between ROS and ``Planner``. Callbacks never block the executor: service and action callbacks
run in reentrant groups and wait on futures with timeouts while other threads spin.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from frankenbot.errors import FrankenbotError, PerceptionError
from frankenbot.execution.episode import (
    ExecutionReport,
    PlanningContext,
    episode_record,
    plan_request,
)
from frankenbot.nodes.spin import run_node
from frankenbot.planner.planner import Planner, PlannerConfig, make_client
from frankenbot.planner.prompt import encode_png
from frankenbot.planner.request import Exemplar, FailureContext, PlanOutcome, PlanRequest
from frankenbot.planner.vlm_client import VlmConfig
from frankenbot.program.catalog import Param, ParamType, Signature, SignatureKind
from frankenbot.state import Scene
from frankenbot_interfaces.action import ExecuteProgram, RunTask
from frankenbot_interfaces.msg import SceneObjects, TaskStatus
from frankenbot_interfaces.srv import GetContext, RecordEpisode, Replan, SubmitTask

# name -> (default, description)
PARAMS: dict[str, tuple[Any, str]] = {
    "planner_mode": ("auto", "auto (VLM when an endpoint is configured, else offline) | offline "
                             "| vlm"),
    "vlm.model": ("gpt-5-mini", "model name at the OpenAI-compatible endpoint"),
    "vlm.api_key": ("", "API key; empty = OPENAI_API_KEY from the environment"),
    "vlm.base_url": ("", "endpoint base URL; empty = OPENAI_BASE_URL or api.openai.com"),
    "vlm.mode": ("auto", "auto (the server's constraint, text if refused) | grammar | guided | "
                 "text"),
    "vlm.server": ("auto", "auto (probe) | openai | vllm | sglang | llamacpp | ollama: which "
                   "constraint field and grammar dialect to send"),
    "vlm.timeout": (60.0, "seconds per HTTP request"),
    "vlm.transport_retries": (2, "HTTP retries per planning call (5xx, timeouts); not counted "
                                 "as planning calls"),
    "vlm.max_output_tokens": (4096, "completion token limit per call (reasoning included)"),
    "vlm.temperature": (-1.0, "sampling temperature; < 0 = not sent (reasoning models)"),
    "vlm.reasoning_effort": ("", "'' = not sent; minimal | low | medium | high"),
    "vlm.image_detail": ("auto", "image detail for the VLM: low | high | auto"),
    "prompt_budget_chars": (16000, "prompt text budget; exemplars are trimmed first"),
    "prompt_skill_bodies": (False, "list skill bodies in the prompt, not only signatures"),
    "use_image": (True, "send perception's annotated image with the prompt"),
    "scene_wait": (3.0, "seconds to wait for a first scene before planning"),
    "memory_timeout": (2.0, "seconds to wait for memory's services (planning works without)"),
    "executor_wait": (5.0, "seconds to wait for the executor's action server"),
    "execution_timeout": (900.0, "seconds a task may execute before it is cancelled"),
    "stats_file": ("", "append one JSON line of planning metrics per task ('' = off)"),
}


KEEP_TASKS = 64  # recent tasks kept for replan bookkeeping (the running one is the newest)
EXECUTOR_GONE_S = 1.0  # s the executor's action server must stay missing to count as gone
EXECUTOR_VANISHED = ("dependency lost: the executor (frankenbot_executor, "
                     "/frankenbot/execute_program) vanished mid-task; its last trajectory "
                     "segment ends and the arm holds; restart it and submit again")


@dataclass
class _Task:
    task_id: str
    instruction: str
    started: float
    outcome: PlanOutcome | None = None
    replans: int = 0
    replan_calls: int = 0
    exec_goal: Any = None  # the executor's ClientGoalHandle while executing
    phase: str = ""  # last phase published on task_status


def _wait(future: Any, timeout: float) -> bool:
    """Block this (worker) thread until ``future`` is done; other threads keep spinning."""
    if future.done():
        return True
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    return done.wait(timeout) or future.done()


def skill_from_msg(msg: Any) -> Signature | None:
    """frankenbot_interfaces/msg/Skill -> catalog Signature (None when its types are unknown)."""
    try:
        params = tuple(Param(n, ParamType(t)) for n, t in
                       zip(msg.param_names, msg.param_types, strict=True))
    except ValueError:
        return None
    return Signature(msg.name, SignatureKind.SKILL, params, msg.description, msg.body)


class PlannerNode(Node):
    """See the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("frankenbot_planner", **kwargs)
        for name, (default, doc) in PARAMS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=doc))
        p = self._p
        vlm = VlmConfig(model=p("vlm.model"), api_key=p("vlm.api_key"),
                        base_url=p("vlm.base_url"), mode=p("vlm.mode"),
                        server=p("vlm.server"),
                        timeout=float(p("vlm.timeout")),
                        transport_retries=int(p("vlm.transport_retries")),
                        max_output_tokens=int(p("vlm.max_output_tokens")),
                        temperature=(None if float(p("vlm.temperature")) < 0
                                     else float(p("vlm.temperature"))),
                        reasoning_effort=p("vlm.reasoning_effort"),
                        image_detail=p("vlm.image_detail"))
        self.config = PlannerConfig(default_planner=p("planner_mode"), vlm=vlm,
                                    prompt_budget_chars=int(p("prompt_budget_chars")),
                                    prompt_skill_bodies=bool(p("prompt_skill_bodies")))
        self.planner = Planner(self.config, make_client(self.config))
        self._state_lock = threading.Lock()  # guards _scene, _image, _current, _tasks
        self._scene: Scene | None = None
        self._image: Image | None = None
        self._current: _Task | None = None
        self._tasks: dict[str, _Task] = {}
        self._ids = itertools.count(1)
        self._memory_probed = False

        sensors = MutuallyExclusiveCallbackGroup()
        serving = ReentrantCallbackGroup()
        clients = ReentrantCallbackGroup()
        self.create_subscription(SceneObjects, "frankenbot/scene", self.scene_callback, 5,
                                 callback_group=sensors)
        self.create_subscription(Image, "frankenbot/annotated_image", self.image_callback, 2,
                                 callback_group=sensors)
        qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        self.status_pub = self.create_publisher(TaskStatus, "frankenbot/task_status", qos)
        self.create_service(SubmitTask, "frankenbot/submit_task", self.submit_callback,
                            callback_group=serving)
        self.create_service(Replan, "frankenbot/replan", self.replan_callback,
                            callback_group=serving)
        self.run_server = ActionServer(
            self, RunTask, "frankenbot/run_task", execute_callback=self.run_task_callback,
            goal_callback=self.goal_callback, cancel_callback=lambda _g: CancelResponse.ACCEPT,
            callback_group=serving)
        self.executor_client = ActionClient(self, ExecuteProgram, "frankenbot/execute_program",
                                            callback_group=clients)
        self.context_client = self.create_client(GetContext, "frankenbot/memory/get_context",
                                                 callback_group=clients)
        self.record_client = self.create_client(
            RecordEpisode, "frankenbot/memory/record_episode", callback_group=clients)
        mode = "VLM " + vlm.model if self.planner.client is not None else "offline"
        self.get_logger().info(f"planner ready ({p('planner_mode')}: {mode})")

    def _p(self, name: str) -> Any:
        return self.get_parameter(name).value

    # -- inputs ------------------------------------------------------------------------------

    def scene_callback(self, msg: SceneObjects) -> None:
        from frankenbot.perception.ros_conversions import scene_from_msg

        try:
            scene = scene_from_msg(msg)
        except PerceptionError as e:  # keep what was seen, never plan on it as fresh
            self.get_logger().warning(f"/frankenbot/scene message rejected ({e}); the scene "
                                      "counts as stale", throttle_duration_sec=2.0)
            with self._state_lock:
                if self._scene is not None:
                    self._scene = replace(self._scene, stale=True)
            return
        with self._state_lock:
            self._scene = scene

    def image_callback(self, msg: Image) -> None:
        with self._state_lock:
            self._image = msg

    def _latest_scene(self) -> Scene:
        deadline = time.monotonic() + float(self._p("scene_wait"))
        while True:
            with self._state_lock:
                scene = self._scene
            # a stale scene (perception just started, or the camera paused) is used only when
            # no fresh one arrives before the deadline
            if (scene is not None and not scene.stale) or time.monotonic() >= deadline:
                return scene or Scene()
            time.sleep(0.05)

    def _request(self, instruction: str, planner: str, task_id: str) -> PlanRequest:
        """Everything the planner gets: scene, annotated image, memory's context."""
        from frankenbot.perception.ros_conversions import rgb_from_image_msg

        scene = self._latest_scene()
        image = None
        with self._state_lock:
            image_msg = self._image
        if image_msg is not None and self._p("use_image"):
            try:
                image = encode_png(rgb_from_image_msg(image_msg))
            except (FrankenbotError, ValueError) as e:
                self.get_logger().warning(f"annotated image unusable, planning without: {e}")
        skills: list[Signature] = []
        exemplars: list[Exemplar] = []
        experience: tuple[str, ...] = ()
        if not self._memory_probed:  # memory may start after us: wait once, then only check
            self._memory_probed = True
            self.context_client.wait_for_service(timeout_sec=float(self._p("memory_timeout")))
        if self.context_client.service_is_ready():
            future = self.context_client.call_async(GetContext.Request(instruction=instruction))
            if _wait(future, float(self._p("memory_timeout"))) and future.result() is not None:
                ctx = future.result()
                skills = [s for s in map(skill_from_msg, ctx.skills) if s is not None]
                exemplars = [Exemplar(i, p) for i, p in zip(
                    ctx.exemplar_instructions, ctx.exemplar_programs, strict=False)]
                experience = tuple(ctx.anomaly_experience)
            else:
                self.get_logger().warning("memory get_context timed out; planning without it")
        context = PlanningContext(tuple(skills), tuple(exemplars), experience)
        return plan_request(instruction, scene, context=context, image=image, planner=planner,
                            task_id=task_id)

    # -- planning ----------------------------------------------------------------------------

    def _plan(self, instruction: str, planner: str) -> _Task:
        task = _Task(f"task-{next(self._ids)}-{int(time.time())}", instruction, time.monotonic())
        with self._state_lock:
            self._tasks[task.task_id] = task
            while len(self._tasks) > KEEP_TASKS:  # a node that runs all day must not grow
                self._tasks.pop(next(iter(self._tasks)))
        self._status(task, "planning")
        try:
            request = self._request(instruction, planner, task.task_id)
            task.outcome = self.planner.plan(request)
        except FrankenbotError as e:
            task.outcome = PlanOutcome(False, "", None, str(e))
        with self._state_lock:
            no_scene = self._scene is None
        if no_scene and not task.outcome.ok:
            task.outcome = replace(task.outcome, message=task.outcome.message + " (no scene has "
                                   "arrived on /frankenbot/scene: is perception running?)")
        out = task.outcome
        self.get_logger().info(f"{task.task_id}: {out.summary()}")
        self._write_stats(task)
        if not out.ok:
            self._status(task, "done", done=True, success=False, outcome="error",
                         summary=out.message)
        return task

    def submit_callback(self, request: SubmitTask.Request,
                        response: SubmitTask.Response) -> SubmitTask.Response:
        with self._state_lock:
            busy = self._current is not None and not request.dry_run
        if busy:
            response.accepted = False
            response.message = "busy: another task is executing; wait for it or cancel it"
            return response
        task = self._plan(request.instruction, request.planner)
        out = task.outcome
        assert out is not None
        response.task_id = task.task_id
        response.planner = out.planner
        response.vlm_calls = out.vlm_calls
        response.first_call_valid = out.first_call_valid
        response.accepted = out.ok
        response.message = out.message
        response.program = out.program_text if out.ok else ""
        if not out.ok or request.dry_run:
            if out.ok:
                self._status(task, "done", done=True, success=True, outcome="success",
                             summary="dry run: planned only, nothing moved")
            return response
        with self._state_lock:
            if self._current is not None:
                response.accepted = False
                response.message = "busy: another task started while this one was planned"
                response.program = ""
                return response
            self._current = task
        threading.Thread(target=self._execute, args=(task, None), daemon=True).start()
        response.message = out.message + "; executing"
        return response

    def goal_callback(self, _goal: RunTask.Goal) -> GoalResponse:
        with self._state_lock:
            return GoalResponse.REJECT if self._current is not None else GoalResponse.ACCEPT

    def run_task_callback(self, goal_handle: Any) -> RunTask.Result:
        goal = goal_handle.request
        goal_handle.publish_feedback(RunTask.Feedback(phase="planning"))
        task = self._plan(goal.instruction, goal.planner)
        out = task.outcome
        assert out is not None
        result = RunTask.Result(task_id=task.task_id, vlm_calls=out.vlm_calls,
                                repair_calls=out.repair_calls,
                                first_call_valid=out.first_call_valid)
        if out.ok and goal_handle.is_cancel_requested:  # cancelled while planning
            result.outcome, result.summary = "cancelled", "cancelled before execution"
            result.program = out.program_text
            self._status(task, "done", done=True, outcome="cancelled", summary=result.summary)
            goal_handle.canceled()
            return result
        if not out.ok:
            result.outcome, result.summary = "error", out.message
            result.duration = time.monotonic() - task.started
            goal_handle.abort()
            return result
        with self._state_lock:
            if self._current is not None:
                result.outcome, result.summary = "error", "busy: another task is executing"
                goal_handle.abort()
                return result
            self._current = task
        exec_result = self._execute(task, goal_handle)
        result.program = out.program_text
        result.vlm_calls = out.vlm_calls + task.replan_calls
        result.replans = task.replans
        result.duration = time.monotonic() - task.started
        result.success, result.outcome, result.summary, trace = exec_result
        result.trace_json = trace
        if result.outcome == "cancelled" and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif result.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    # -- execution ---------------------------------------------------------------------------

    def _execute(self, task: _Task, goal_handle: Any) -> tuple[bool, str, str, str]:
        """Drive the executor's action; returns (success, outcome, summary, trace_json)."""
        try:
            return self._execute_inner(task, goal_handle)
        finally:
            with self._state_lock:
                self._current = None

    def _execute_inner(self, task: _Task, goal_handle: Any) -> tuple[bool, str, str, str]:
        out = task.outcome
        assert out is not None
        if not self.executor_client.wait_for_server(timeout_sec=float(self._p("executor_wait"))):
            return self._finish(task, False, "error", "the executor (/frankenbot/execute_program)"
                                " is not available; nothing moved", "")
        self._status(task, "executing")

        def feedback(msg: Any) -> None:
            fb = msg.feedback
            if goal_handle is not None:
                goal_handle.publish_feedback(RunTask.Feedback(
                    task_id=task.task_id, phase=fb.phase, active_path=fb.active_path,
                    active_node=fb.active_node, active_line=fb.active_line, events=fb.events,
                    vlm_calls=out.vlm_calls + task.replan_calls))
            if fb.phase and fb.phase != task.phase:
                self._status(task, fb.phase)

        goal = ExecuteProgram.Goal(task_id=task.task_id, instruction=task.instruction,
                                   program=out.program_text)
        send = self.executor_client.send_goal_async(goal, feedback_callback=feedback)
        if not _wait(send, 10.0) or send.result() is None or not send.result().accepted:
            return self._finish(task, False, "error", "the executor rejected the program", "")
        task.exec_goal = send.result()
        result_future = task.exec_goal.get_result_async()
        deadline = time.monotonic() + float(self._p("execution_timeout"))
        cancelled = False
        gone_since: float | None = None
        while not _wait(result_future, 0.1):
            # the executor's process died (SIGKILL, crash): DDS drops its action server once
            # its participant lease expires (3 s with config/fastdds_liveliness.xml)
            if self.executor_client.server_is_ready():
                gone_since = None
            elif gone_since is None:
                gone_since = time.monotonic()
            elif time.monotonic() - gone_since > EXECUTOR_GONE_S:
                self.get_logger().error(f"{task.task_id}: the executor vanished mid-task")
                return self._finish(task, False, "error", EXECUTOR_VANISHED, "")
            wants_cancel = goal_handle is not None and goal_handle.is_cancel_requested
            if (wants_cancel or time.monotonic() > deadline) and not cancelled:
                cancelled = True
                task.exec_goal.cancel_goal_async()  # the executor stops the arm safely
            if cancelled and not _wait(result_future, 10.0):
                return self._finish(task, False, "cancelled", "cancel sent; the executor did "
                                    "not confirm within 10 s", "")
        res = result_future.result().result
        outcome = "cancelled" if cancelled and not res.success else res.outcome
        summary = res.reason or outcome
        memory_note = self._record(task, res)
        if memory_note:  # the task's own outcome stands; the note says what memory missed
            summary = f"{summary}; {memory_note}"
        return self._finish(task, bool(res.success), outcome, summary, res.trace_json)

    def _finish(self, task: _Task, success: bool, outcome: str, summary: str,
                trace: str) -> tuple[bool, str, str, str]:
        self._status(task, "done", done=True, success=success, outcome=outcome, summary=summary)
        return success, outcome, summary, trace

    def _record(self, task: _Task, res: Any) -> str:
        """Tell memory about the finished episode; '' or a note on why it was not stored.

        Memory is optional: its absence or failure (a full disk, a read-only file) never changes
        the task's outcome, but the note goes into the task's summary so nobody assumes the
        episode was learnt from. Waits at most ``memory_timeout`` for memory's answer.
        """
        if not self.record_client.service_is_ready():
            return "memory unavailable (frankenbot_memory not running): episode not recorded"
        out = task.outcome
        assert out is not None
        # what memory learns is decided in one place (execution.episode): the executor's report
        report = ExecutionReport(success=bool(res.success), outcome=res.outcome,
                                 final_program=res.final_program, vlm_calls=task.replan_calls,
                                 duration=float(res.duration), trace_json=res.trace_json)
        ep = episode_record(task.task_id, task.instruction, out, report)
        req = RecordEpisode.Request(
            task_id=ep.task_id, instruction=ep.instruction, program=ep.program,
            success=ep.success, outcome=ep.outcome, anomalies=list(res.anomalies),
            vlm_calls=ep.vlm_calls, repair_calls=ep.repair_calls,
            planning_time=ep.planning_time, execution_time=ep.execution_time,
            trace_json=ep.trace_json)
        future = self.record_client.call_async(req)
        timeout = float(self._p("memory_timeout"))
        if not _wait(future, timeout) or future.result() is None:
            future.cancel()
            note = (f"memory did not confirm the episode within {timeout:g} s (frankenbot_memory "
                    "vanished or is stuck): it may not be recorded")
        elif not future.result().ok:
            note = f"memory error, episode not recorded: {future.result().message}"
        else:
            return ""
        self.get_logger().warning(f"{task.task_id}: {note}")
        return note

    # -- tier 3 ------------------------------------------------------------------------------

    def replan_callback(self, request: Replan.Request,
                        response: Replan.Response) -> Replan.Response:
        plan_request = self._request(request.instruction, "", request.task_id)
        failure = FailureContext(request.program, request.failure_context, request.failed_node)
        out = self.planner.replan(plan_request, failure)
        with self._state_lock:
            task = self._tasks.get(request.task_id)
            if task is not None:
                task.replans += 1
                task.replan_calls += out.vlm_calls
        self.get_logger().info(f"replan {request.task_id}: {out.summary()}")
        response.ok = out.ok
        response.program = out.program_text if out.ok else ""
        response.message = out.message
        response.vlm_calls = out.vlm_calls
        return response

    # -- reporting ---------------------------------------------------------------------------

    def _status(self, task: _Task, phase: str, *, done: bool = False, success: bool = False,
                outcome: str = "", summary: str = "") -> None:
        out = task.outcome
        task.phase = phase
        msg = TaskStatus(task_id=task.task_id, instruction=task.instruction, phase=phase,
                         done=done, success=success, outcome=outcome, summary=summary)
        msg.header.stamp = self.get_clock().now().to_msg()
        if out is not None:
            msg.planner = out.planner
            msg.vlm_calls = out.vlm_calls + task.replan_calls
            msg.repair_calls = out.repair_calls
            msg.first_call_valid = out.first_call_valid
        msg.replans = task.replans
        msg.duration = time.monotonic() - task.started
        self.status_pub.publish(msg)

    def _write_stats(self, task: _Task) -> None:
        path = str(self._p("stats_file"))
        out = task.outcome
        if not path or out is None:
            return
        line = {"task_id": task.task_id, "instruction": task.instruction, "ok": out.ok,
                "planner": out.planner, "vlm_calls": out.vlm_calls,
                "repair_calls": out.repair_calls, "first_call_valid": out.first_call_valid,
                "tokens_in": out.tokens_in, "tokens_out": out.tokens_out,
                "latency": round(out.latency, 4), "transport_retries": out.transport_retries,
                "message": out.message}
        try:
            with Path(path).expanduser().open("a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
        except OSError as e:
            self.get_logger().warning(f"cannot write planner stats to {path}: {e}")


def main(args: list[str] | None = None) -> int:
    return run_node(PlannerNode, num_threads=6, args=args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

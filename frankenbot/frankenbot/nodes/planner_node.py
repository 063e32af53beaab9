"""ROS adapter for the planner: the ``frankenbot_planner`` node.

Services
  /frankenbot/submit_task (frankenbot_interfaces/srv/SubmitTask)
      plan a task (and review the plan); ``dry_run`` returns the validated program and moves
      nothing, otherwise the program is handed to the executor and the service returns as soon
      as the plan is known.
  /frankenbot/replan (frankenbot_interfaces/srv/Replan)
      tier-3 replanning for the executor: one counted VLM call (+ at most one repair), or an
      offline re-plan from the current scene (0 calls); reviewed like the first plan.
Actions
  /frankenbot/run_task (frankenbot_interfaces/action/RunTask)
      plan and execute with feedback (phase, active node, anomaly events); cancelling it while
      planning ends it at once (the plan is dropped when it comes), while executing cancels the
      executor's goal, which stops the arm safely.
Topics
  publishes /frankenbot/task_status (TaskStatus, reliable, depth 50)
  subscribes /frankenbot/scene (SceneObjects), /frankenbot/annotated_image (sensor_msgs/Image)
Uses
  action /frankenbot/execute_program (ExecuteProgram, frankenbot_executor)
  services /frankenbot/memory/get_context and /frankenbot/memory/record_episode when available

Parameters: ``planner.settings.PlannerNodeSettings`` (types, units, ranges, defaults):
planner_mode, max_repairs, prompt_budget_chars, prompt_skill_bodies, vlm.*, review,
review_config, use_image, scene_wait, memory_timeout, executor_wait, execution_timeout,
stats_file. The review, the waits and timeouts and stats_file may change live (``ros2 param
set``, from the next task on); the planner and VLM settings are refused with the reason
(restart the node).

Every task runs through ``execution.episode.EpisodeRunner`` (plan -> safety review -> execute ->
record), the same flow the in-process benchmarks measure, with its ports filled by ROS
(``nodes/planner_ports.py``). Each task runs on a worker thread of its own: the service and
action callbacks only start it and wait for its plan or its end, so a cancel reaches a task that
is still planning (a VLM call can take a minute). One task executes at a time.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from frankenbot import resources
from frankenbot.errors import FrankenbotError, PerceptionError
from frankenbot.execution.episode import Episode, EpisodeRunner
from frankenbot.nodes.parameters import NodeSettings
from frankenbot.nodes.planner_ports import RosExecutor, RosMemory
from frankenbot.nodes.spin import run_node
from frankenbot.planner.planner import Planner, make_client
from frankenbot.planner.prompt import encode_png
from frankenbot.planner.request import FailureContext, PlanImage, PlanOutcome
from frankenbot.planner.review import load_review_config, review_port
from frankenbot.planner.settings import PlannerNodeSettings
from frankenbot.ports import CancelToken
from frankenbot.state import Scene
from frankenbot_interfaces.action import RunTask
from frankenbot_interfaces.msg import SceneObjects, TaskStatus
from frankenbot_interfaces.srv import Replan, SubmitTask

KEEP_TASKS = 64  # recent tasks kept for replan bookkeeping (the running one is the newest)
WAIT_POLL_S = 0.1  # s between checks of a waiting callback (cancel requests, shutdown)


@dataclass
class _Task:
    """One submitted task, shared by its worker thread and the callback that waits for it."""

    task_id: str
    instruction: str
    started: float
    planner: str = ""
    dry_run: bool = False
    goal_handle: Any = None  # the RunTask goal, when the action started it
    cancel: CancelToken = field(default_factory=CancelToken)
    planned: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    outcome: PlanOutcome | None = None  # the reviewed plan (message with the node's hints)
    episode: Episode | None = None
    replans: int = 0
    replan_calls: int = 0
    phase: str = ""  # last phase published on task_status


class PlannerNode(Node):
    """See the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("frankenbot_planner", **kwargs)
        self.settings = NodeSettings(self, PlannerNodeSettings, on_change=self._settings_changed)
        cfg = self.settings.value
        self.config = cfg.planner
        self.planner = Planner(self.config, make_client(self.config))
        self._state_lock = threading.Lock()  # guards _scene, _image, _current, _tasks
        self._scene: Scene | None = None
        self._image: Image | None = None
        self._current: _Task | None = None  # the task that holds the arm (planning or running)
        self._tasks: dict[str, _Task] = {}
        self._ids = itertools.count(1)
        self._closing = False

        sensors = MutuallyExclusiveCallbackGroup()
        serving = ReentrantCallbackGroup()
        clients = ReentrantCallbackGroup()
        self.create_subscription(SceneObjects, "frankenbot/scene", self.scene_callback, 5,
                                 callback_group=sensors)
        self.create_subscription(Image, "frankenbot/annotated_image", self.image_callback, 2,
                                 callback_group=sensors)
        qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        self.status_pub = self.create_publisher(TaskStatus, "frankenbot/task_status", qos)
        memory = RosMemory(self, timeout=lambda: self.settings.value.memory_timeout,
                           callback_group=clients)
        self.execute_port = RosExecutor(
            self, server_wait=lambda: self.settings.value.executor_wait,
            timeout=lambda: self.settings.value.execution_timeout,
            on_feedback=self._execution_feedback, callback_group=clients)
        self.runner = EpisodeRunner(self.planner, scene=self._latest_scene,
                                    context=memory.context, execute=self.execute_port,
                                    record=memory.record, review=self._review_port(cfg))
        self.create_service(SubmitTask, "frankenbot/submit_task", self.submit_callback,
                            callback_group=serving)
        self.create_service(Replan, "frankenbot/replan", self.replan_callback,
                            callback_group=serving)
        self.run_server = ActionServer(
            self, RunTask, "frankenbot/run_task", execute_callback=self.run_task_callback,
            goal_callback=self.goal_callback, cancel_callback=lambda _g: CancelResponse.ACCEPT,
            callback_group=serving)
        mode = ("VLM " + self.config.vlm.model if self.planner.client is not None
                else "offline")
        self.get_logger().info(f"planner ready ({self.config.planner_mode}: {mode}; review "
                               f"{cfg.review})")

    @staticmethod
    def _review_port(cfg: PlannerNodeSettings) -> Any:
        path = cfg.review_config
        config = load_review_config(resources.config_path(path)) if path else None
        return review_port(cfg.review, config)

    def _settings_changed(self, cfg: PlannerNodeSettings) -> None:
        """A live parameter changed: the review takes it from the next plan on (the timeouts
        and the rest are read where they are used). A review_config that cannot be read raises
        ConfigError here, which refuses the change."""
        self.runner.review = self._review_port(cfg)
        self.get_logger().info(f"review now {cfg.review} ({cfg.review_config or 'defaults'})")

    # -- inputs ------------------------------------------------------------------------------

    def scene_callback(self, msg: SceneObjects) -> None:
        from frankenbot.nodes.scene_msgs import scene_from_msg

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
        """The runner's scene port: the newest fresh scene, waiting up to ``scene_wait``."""
        deadline = time.monotonic() + self.settings.value.scene_wait
        while True:
            with self._state_lock:
                scene = self._scene
            # a stale scene (perception just started, or the camera paused) is used only when
            # no fresh one arrives before the deadline
            if (scene is not None and not scene.stale) or time.monotonic() >= deadline:
                return scene or Scene()
            time.sleep(0.05)

    def _plan_image(self) -> PlanImage | None:
        """Perception's latest set-of-mark image for the prompt (None: none, or not wanted)."""
        from frankenbot.nodes.scene_msgs import rgb_from_image_msg

        with self._state_lock:
            image_msg = self._image
        if image_msg is None or not self.settings.value.use_image:
            return None
        try:
            return encode_png(rgb_from_image_msg(image_msg))
        except (FrankenbotError, ValueError) as e:
            self.get_logger().warning(f"annotated image unusable, planning without: {e}")
            return None

    # -- tasks -------------------------------------------------------------------------------

    def _new_task(self, instruction: str, planner: str, *, dry_run: bool = False,
                  goal_handle: Any = None) -> _Task:
        return _Task(f"task-{next(self._ids)}-{int(time.time())}", instruction,
                     time.monotonic(), planner=planner, dry_run=dry_run, goal_handle=goal_handle)

    def _start(self, task: _Task) -> str:
        """Register ``task`` and start its worker; '' or why not (busy)."""
        with self._state_lock:
            if not task.dry_run:
                if self._current is not None:
                    return "busy: another task is executing; wait for it or cancel it"
                self._current = task
            self._tasks[task.task_id] = task
            while len(self._tasks) > KEEP_TASKS:  # a node that runs all day must not grow
                self._tasks.pop(next(iter(self._tasks)))
        threading.Thread(target=self._work, args=(task,), name=f"planner-{task.task_id}",
                         daemon=True).start()
        return ""

    def _work(self, task: _Task) -> None:
        """A task's worker thread: the whole episode through the runner."""
        self._status(task, "planning")
        try:
            episode = self.runner.run(
                task.instruction, task_id=task.task_id, planner=task.planner,
                image=self._plan_image(), cancel=task.cancel, dry_run=task.dry_run,
                on_planned=lambda plan, verdict: self._planned(task, plan, verdict))
        except Exception as e:  # a bug must never leave a caller waiting or the arm reserved
            self.get_logger().error(f"{task.task_id}: {type(e).__name__}: {e}")
            episode = Episode(task.task_id, task.instruction,
                              task.outcome or PlanOutcome(False, "", None, f"internal error: {e}"))
            if not task.planned.is_set():
                self._planned(task, episode.plan, None)
        finally:
            with self._state_lock:
                if self._current is task:
                    self._current = None
        task.episode = episode
        self._status(task, "done", done=True, **self._final(task, episode))
        task.done.set()

    def _planned(self, task: _Task, plan: PlanOutcome, verdict: Any) -> None:
        """The reviewed plan is known: log it, add the node's hints, wake the waiting caller."""
        if not plan.ok:
            with self._state_lock:
                no_scene = self._scene is None
            if no_scene:
                plan = replace(plan, message=plan.message + " (no scene has arrived on "
                               "/frankenbot/scene: is perception running?)")
        task.outcome = plan
        self.get_logger().info(f"{task.task_id}: {plan.summary()}")
        if verdict is not None and verdict.decision in ("edit", "refuse"):
            self.get_logger().info(f"{task.task_id}: {verdict.explain()}")
        self._write_stats(task)
        task.planned.set()

    def _final(self, task: _Task, episode: Episode) -> dict[str, Any]:
        """The done status of a task: success, outcome and summary."""
        out = task.outcome or episode.plan
        if not out.ok:
            return {"success": False, "outcome": "error", "summary": out.message}
        report = episode.report
        if report is None:
            if task.dry_run:
                return {"success": True, "outcome": "success",
                        "summary": "dry run: planned only, nothing moved"}
            return {"success": False, "outcome": "cancelled",
                    "summary": "cancelled before execution; nothing moved"}
        summary = report.reason or report.outcome
        if episode.memory_note:  # the task's own outcome stands; the note says what memory missed
            self.get_logger().warning(f"{task.task_id}: {episode.memory_note}")
            summary = f"{summary}; {episode.memory_note}"
        return {"success": report.success, "outcome": report.outcome, "summary": summary}

    def _wait(self, event: threading.Event, task: _Task | None = None) -> bool:
        """Wait in a callback thread (never the spinning one) until ``event``; False when the
        node shuts down or ``task`` was cancelled first."""
        while not event.wait(WAIT_POLL_S):
            if not self.context.ok() or (task is not None and task.cancel.cancelled):
                return event.is_set()
        return True

    def submit_callback(self, request: SubmitTask.Request,
                        response: SubmitTask.Response) -> SubmitTask.Response:
        task = self._new_task(request.instruction, request.planner, dry_run=request.dry_run)
        busy = self._start(task)
        if busy:
            response.accepted, response.message = False, busy
            return response
        if not self._wait(task.planned):
            response.accepted, response.message = False, "the planner is shutting down"
            return response
        out = task.outcome
        assert out is not None
        response.task_id = task.task_id
        response.planner = out.planner
        response.vlm_calls = out.vlm_calls
        response.first_call_valid = out.first_call_valid
        response.accepted = out.ok
        response.message = out.message + ("; executing" if out.ok and not request.dry_run
                                          else "")
        response.program = out.program_text if out.ok else ""
        return response

    def goal_callback(self, _goal: RunTask.Goal) -> GoalResponse:
        with self._state_lock:
            return GoalResponse.REJECT if self._current is not None else GoalResponse.ACCEPT

    def run_task_callback(self, goal_handle: Any) -> RunTask.Result:
        goal = goal_handle.request
        goal_handle.publish_feedback(RunTask.Feedback(phase="planning"))
        task = self._new_task(goal.instruction, goal.planner, goal_handle=goal_handle)
        result = RunTask.Result(task_id=task.task_id)
        busy = self._start(task)
        if busy:
            result.outcome, result.summary = "error", busy
            goal_handle.abort()
            return result
        while not task.done.wait(WAIT_POLL_S):
            if goal_handle.is_cancel_requested and not task.cancel.cancelled:
                task.cancel.cancel("cancelled by the client")
            if task.cancel.cancelled and not task.planned.is_set():
                # still planning: answer now; the worker drops the plan when it comes
                result.outcome = "cancelled"
                result.summary = "cancelled while planning; nothing moved"
                result.duration = time.monotonic() - task.started
                goal_handle.canceled()
                return result
            if not self.context.ok():
                result.outcome, result.summary = "error", "the planner is shutting down"
                goal_handle.abort()
                return result
        episode = task.episode
        out = task.outcome
        assert episode is not None and out is not None
        final = self._final(task, episode)
        report = episode.report
        result.success, result.outcome, result.summary = (final["success"], final["outcome"],
                                                          final["summary"])
        result.program = ((report.final_program if report is not None else "")
                          or (out.program_text if out.ok else ""))
        result.vlm_calls = out.vlm_calls + (report.vlm_calls if report is not None else 0)
        result.repair_calls = out.repair_calls
        result.first_call_valid = out.first_call_valid
        result.replans = report.replans if report is not None else 0
        result.trace_json = report.trace_json if report is not None else ""
        result.duration = time.monotonic() - task.started
        if result.outcome == "cancelled" and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif result.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _execution_feedback(self, task_id: str, fb: Any) -> None:
        """The execute port's feedback: on to the RunTask goal and the task status (None: the
        executor accepted the goal)."""
        with self._state_lock:
            task = self._tasks.get(task_id)
        if task is None:
            return
        if fb is None:
            self._status(task, "executing")
            return
        out = task.outcome
        if task.goal_handle is not None:
            task.goal_handle.publish_feedback(RunTask.Feedback(
                task_id=task_id, phase=fb.phase, active_path=fb.active_path,
                active_node=fb.active_node, active_line=fb.active_line, events=fb.events,
                vlm_calls=(out.vlm_calls if out else 0) + task.replan_calls))
        if fb.phase and fb.phase != task.phase:
            self._status(task, fb.phase)

    # -- tier 3 ------------------------------------------------------------------------------

    def replan_callback(self, request: Replan.Request,
                        response: Replan.Response) -> Replan.Response:
        with self._state_lock:
            task = self._tasks.get(request.task_id)
        failure = FailureContext(
            request.program, request.failure_context, request.failed_node, kind=request.kind,
            objects=tuple(request.objects), held_object=request.held_object or None,
            failed_call=request.failed_call)
        got: list[PlanOutcome] = []

        def work() -> None:
            try:
                plan_req = self.runner.request(request.instruction, task_id=request.task_id,
                                               image=self._plan_image())
                got.append(self.runner.replan(plan_req, failure))
            except FrankenbotError as e:
                got.append(PlanOutcome(False, "", None, str(e)))

        finished = self._on_worker(work, task)
        out = got[0] if finished and got else PlanOutcome(
            False, "", None, "replan abandoned: the task was cancelled or the planner is "
                             "shutting down")
        if task is not None:
            with self._state_lock:
                task.replans += 1
                task.replan_calls += out.vlm_calls
        self.get_logger().info(f"replan {request.task_id}: {out.summary()}")
        response.ok = out.ok
        response.program = out.program_text if out.ok else ""
        response.message = out.message
        response.vlm_calls = out.vlm_calls
        return response

    def _on_worker(self, work: Callable[[], None], task: _Task | None) -> bool:
        """Run ``work`` on a worker thread and wait for it (False: cancelled or shutting down
        first; the worker's result is then dropped)."""
        done = threading.Event()

        def run() -> None:
            try:
                work()
            finally:
                done.set()

        threading.Thread(target=run, name="planner-replan", daemon=True).start()
        return self._wait(done, task)

    # -- reporting ---------------------------------------------------------------------------

    def _status(self, task: _Task, phase: str, *, done: bool = False, success: bool = False,
                outcome: str = "", summary: str = "") -> None:
        if self._closing:  # a worker finishing after destroy_node: nobody to tell
            return
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
        path = self.settings.value.stats_file
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


    def destroy_node(self) -> None:
        """Cancel what runs (the executor stops the arm) and stop publishing from workers."""
        with self._state_lock:
            tasks = list(self._tasks.values())
        for task in tasks:
            if not task.done.is_set():
                task.cancel.cancel("the planner is shutting down")
        self._closing = True
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(PlannerNode, num_threads=6, args=args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

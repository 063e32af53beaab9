"""ROS adapter for the executor: the ``frankenbot_executor`` node.

Runs programs on the arm with the monitor thread and the three-tier anomaly handling; all logic
lives in ``frankenbot.execution`` and ``frankenbot.anomaly``; this node only converts messages.

Action
  /frankenbot/execute_program (frankenbot_interfaces/action/ExecuteProgram): goal = program
      text; runs on the action's execute thread (the control thread), feedback with phase,
      active node and new anomaly events; cancel stops the arm and ends with ``cancelled``.
Publishes
  /frankenbot/tree_state (TreeState, latched): active node, node statuses, steps
  /frankenbot/events (AnomalyEvent): every anomaly when detected and when a tier acted
Uses
  /joint_states, /frankenbot/scene, /frankenbot/estop and the trajectory / gripper command
      topics (through ``frankenbot.nodes.ros_robot.RosRobot``)
  /frankenbot/replan (frankenbot_interfaces/srv/Replan) for tier 3
  frankenbot_perception/resolve_pixel (ResolvePixel) for the pixel primitives' targets
  ``reset_topic`` (std_msgs/Header; the sim's ~/scene_reset): a new world, so the beliefs of the
      primitives (held object, open drawers) are forgotten
  ``fixture_map_topic`` (std_msgs/String, latched; the sim's ~/fixture_map): the scene's fixture
      map as JSON (``frankenbot.fixture_map``); the primitives and predicates use the latest one
      received, the ``fixtures_path`` file until one arrives
Parameters: ``execution.settings.ExecutorNodeSettings`` (types, units, ranges, defaults):
  monitor_rate_hz, debounce_ticks, handler_retries, tier2_attempts, replans, tier2_method,
  confidence_threshold, rule_bonus, step_budget, scene_stale_after_s, local_expert_model,
  local_expert_threads, trajectory_mode, gripper_mode, gripper_action, gripper_joint,
  gripper_closed_position, gripper_joint_states_topic, program_running_topic,
  action_server_wait, motion_backend, replan_timeout, feedback_rate_hz, reset_topic,
  pixel_service, fixture_map_topic, fixtures_path. Live (``ros2 param set``, from the next
  program on): the tier budgets, confidence_threshold, rule_bonus, step_budget, replan_timeout,
  feedback_rate_hz; the others are refused with the reason (restart the node).

Driver faults the robot adapter reports (program stopped on the pendant, protective stop, the
trajectory controller inactive, a gripper that does not move) end the running task at once with
their sentence (checked every ``DRIVER_CHECK_S``), and a task is not started while one lasts.

One goal at a time (a second is rejected while one runs). Callbacks that must not block each
other have their own groups under a MultiThreadedExecutor: the action (reentrant), the replan
client, and the robot adapter's e-stop and state subscriptions.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from builtin_interfaces.msg import Time
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header, String

from frankenbot import resources
from frankenbot.anomaly.candidates import Situation
from frankenbot.anomaly.escalation import ReplanResult
from frankenbot.anomaly.local_expert import LocalExpert, gemma_loader
from frankenbot.anomaly.records import AnomalyRecord
from frankenbot.common import ExitStatus, NodeStatus
from frankenbot.errors import ConfigError, FrankenbotError
from frankenbot.execution.executor import ExecutionOutcome, ProgramExecutor
from frankenbot.execution.settings import ExecutorNodeSettings
from frankenbot.fixture_map import FixtureMap
from frankenbot.nodes.anomaly_msgs import event_to_msg
from frankenbot.nodes.parameters import NodeSettings
from frankenbot.nodes.scene_msgs import fixture_map_from_msg
from frankenbot.nodes.spin import call_and_wait, run_node
from frankenbot.program.trace import TraceEntry, trace_to_json
from frankenbot_interfaces.action import ExecuteProgram
from frankenbot_interfaces.msg import AnomalyEvent, TreeState
from frankenbot_interfaces.srv import Replan

DEPENDENCY_SILENT_S = 1.0  # s without messages after which an input counts as vanished
PLANNER_NODE = "frankenbot_planner"
PERCEPTION_NODE = "frankenbot_perception"
OWNER_CHECK_S = 0.5  # s between checks that the planner of the running goal is still up
DRIVER_CHECK_S = 0.05  # s between checks of the robot adapter's driver faults during a task
DRIVER_STOPPED = "the robot's driver stopped the task: "
PLANNER_VANISHED = ("dependency lost: the planner (frankenbot_planner) vanished mid-task; "
                    "program stopped, arm stopped")
MAX_ID_CHARS = 200  # task ids are short; a longer one is not ours


def goal_problem(goal: Any) -> str:
    """Why an ExecuteProgram goal is refused before it reaches the parser ('' = accept).

    The parser and validator judge the program's content (a malformed one ends the goal with
    an error and no motion); this only refuses what is not worth parsing: nothing, too much, or
    ids and instructions that are not plain text.
    """
    from frankenbot.planner.planner import MAX_INSTRUCTION_CHARS
    from frankenbot.program.extract import MAX_TEXT_CHARS

    if not goal.program.strip():
        return "the program is empty"
    if len(goal.program) > MAX_TEXT_CHARS:
        return f"the program has {len(goal.program)} characters (at most {MAX_TEXT_CHARS})"
    if len(goal.task_id) > MAX_ID_CHARS or not goal.task_id.isprintable():
        return "the task id is too long or has control characters"
    if len(goal.instruction) > MAX_INSTRUCTION_CHARS:
        return f"the instruction has {len(goal.instruction)} characters"
    return ""


class RosReplanner:
    """Tier 3 over ``/frankenbot/replan``; called on the control thread, never in a callback."""

    def __init__(self, node: "ExecutorNode", client: Any, *, task_id: str, instruction: str,
                 program_text: str, timeout: float) -> None:
        self._node = node
        self._client = client
        self.task_id = task_id
        self.instruction = instruction
        self.program_text = program_text
        self.timeout = timeout

    def replan(self, situation: Situation, failure_context: str) -> ReplanResult:
        if not self._client.wait_for_service(timeout_sec=2.0):
            return ReplanResult(False, "", "frankenbot/replan is not available", 0)
        self._node.set_phase("replanning")
        req = Replan.Request(
            task_id=self.task_id, instruction=self.instruction, program=self.program_text,
            failure_context=failure_context, failed_node=situation.node_path,
            kind=situation.kind.value, objects=list(situation.objects),
            held_object=situation.held_object or "",
            failed_call=situation.failed_call.text() if situation.failed_call else "")
        res = call_and_wait(self._client, req, self.timeout)
        self._node.set_phase("executing")
        if res is None:
            return ReplanResult(False, "", f"frankenbot/replan timed out after "
                                           f"{self.timeout:.0f} s", 0)
        if res.ok:
            self.program_text = res.program
        return ReplanResult(bool(res.ok), res.program, res.message, int(res.vlm_calls))


class ExecutorNode(Node):
    """Serves ExecuteProgram; see the module docstring for the interface."""

    def __init__(self, robot: Any = None, primitives: Any = None) -> None:
        super().__init__("frankenbot_executor")
        self.settings = NodeSettings(self, ExecutorNodeSettings,
                                     on_change=self._settings_changed)
        cfg = self.settings.value
        params = cfg.params
        self._map_lock = threading.Lock()  # guards _fixture_map (replaced by the subscription)
        self._fixture_map = FixtureMap.load(resources.config_path(cfg.fixtures_path)
                                            if cfg.fixtures_path else resources.fixtures_path())
        if robot is None or primitives is None:
            robot, primitives = self._build_robot(cfg)
        self.robot = robot
        self.primitives = primitives
        self.expert = self._build_expert(params.tier2.tier2_method, cfg.local_expert_model,
                                         cfg.local_expert_threads)
        self._replan_group = MutuallyExclusiveCallbackGroup()
        self._replan_client = self.create_client(Replan, "frankenbot/replan",
                                                 callback_group=self._replan_group)
        self.executor_core = ProgramExecutor(
            primitives, primitives.snapshot, robot.scene, params=params, expert=self.expert,
            stop_arm=robot.stop, replanner_for=self._replanner, on_trace=self._on_trace,
            on_event=self._on_event)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.tree_pub = self.create_publisher(TreeState, "frankenbot/tree_state", latched)
        self.events_pub = self.create_publisher(AnomalyEvent, "frankenbot/events", 50)
        self._goal_lock = threading.Lock()  # guards the fields of the running goal below
        self._goal: Any = None
        self._task_id = ""
        self._program_name = ""
        self._phase = "idle"
        self._statuses: dict[str, str] = {}
        self._active: TraceEntry | None = None
        self._steps = 0
        self._new_events: list[AnomalyEvent] = []
        self._last_feedback = 0.0
        self._action = ActionServer(
            self, ExecuteProgram, "frankenbot/execute_program",
            execute_callback=self.execute_callback, goal_callback=self.goal_callback,
            cancel_callback=self.cancel_callback, callback_group=ReentrantCallbackGroup())
        self._owner_present = False  # the planner was up when the running goal started
        self.create_timer(OWNER_CHECK_S, self._check_owner,
                          callback_group=MutuallyExclusiveCallbackGroup())
        self.create_timer(DRIVER_CHECK_S, self._check_driver,
                          callback_group=MutuallyExclusiveCallbackGroup())
        if cfg.reset_topic:
            self.create_subscription(Header, cfg.reset_topic, self.reset_callback,
                                     latched, callback_group=MutuallyExclusiveCallbackGroup())
        if cfg.fixture_map_topic:
            self.create_subscription(String, cfg.fixture_map_topic,
                                     self.fixture_map_callback, latched,
                                     callback_group=MutuallyExclusiveCallbackGroup())
        self._publish_tree()
        self.get_logger().info(f"executor ready (tier 2: {params.tier2.tier2_method}, monitors at "
                               f"{params.monitor_rate_hz:g} Hz)")

    # ---- construction -----------------------------------------------------------------------
    def _settings_changed(self, cfg: ExecutorNodeSettings) -> None:
        """A live parameter changed: the next program runs with it."""
        self.executor_core.params = cfg.params

    def _build_robot(self, p: ExecutorNodeSettings) -> tuple[Any, Any]:
        from frankenbot.nodes.ros_robot import RosRobot
        from frankenbot.primitives.factory import build_primitives

        try:
            robot = RosRobot(
                self, trajectory_mode=p.trajectory_mode,
                gripper_mode=p.gripper_mode, gripper_action=p.gripper_action,
                gripper_joint=p.gripper_joint,
                gripper_closed_position=p.gripper_closed_position,
                gripper_joint_states_topic=p.gripper_joint_states_topic,
                program_running_topic=p.program_running_topic,
                server_wait=p.action_server_wait)
        except ValueError as e:
            raise ConfigError(f"frankenbot_executor parameters: {e}") from e
        backend = p.motion_backend
        pixels = None
        if p.pixel_service:
            from frankenbot.nodes.ros_pixels import RosPixelResolver

            pixels = RosPixelResolver(self, p.pixel_service,
                                      callback_group=MutuallyExclusiveCallbackGroup())
        motion = None
        if backend == "moveit":
            # MoveItPy runs in this process as its own node (moveit_backend.MOVEIT_NODE_NAME)
            from frankenbot.nodes.moveit_backend import moveit_motion

            motion = moveit_motion(self)
        prims = build_primitives(robot, fixture_map=self.fixture_map, motion=motion,
                                 pixels=pixels,
                                 tcp_offset=p.tcp_offset if p.tcp_offset >= 0 else None)
        return robot, prims

    def _build_expert(self, method: str, model: str, threads: int) -> LocalExpert | None:
        if method == "rules" or model == "none":
            return None
        if model.startswith(("http://", "https://")):
            from frankenbot.anomaly.local_expert import ServerExpert

            # a decision that takes longer than this escalates to tier 3 instead
            server = ServerExpert(model, timeout=10.0, name=model)
            server.start()  # probes the server; tier 2 escalates until it answers
            return server
        if model == "tiny":
            from frankenbot.anomaly.tiny_model import build_tiny_loader

            loader = build_tiny_loader()
        elif model == "gemma3-270m":
            loader = gemma_loader()
        else:
            raise ConfigError(f"local_expert_model must be gemma3-270m, an http(s) URL, tiny "
                              f"or none, got {model!r}")
        expert = LocalExpert(loader, torch_threads=threads, name=model)
        expert.start()  # background; tier 2 escalates until it is ready
        return expert

    def _replanner(self, task_id: str, instruction: str, text: str) -> RosReplanner:
        return RosReplanner(self, self._replan_client, task_id=task_id, instruction=instruction,
                            program_text=text, timeout=self.settings.value.replan_timeout)

    # ---- fixture map ----------------------------------------------------------------------------
    def fixture_map(self) -> FixtureMap:
        """The current fixture map (the primitives' provider)."""
        with self._map_lock:
            return self._fixture_map

    def fixture_map_callback(self, msg: String) -> None:
        """A new scene's fixture map; a malformed one is logged and the old one kept."""
        try:
            fmap = fixture_map_from_msg(msg)
        except FrankenbotError as e:
            self.get_logger().error(f"ignoring a malformed fixture map: {e}")
            return
        with self._map_lock:
            self._fixture_map = fmap
        self.get_logger().info(f"fixture map: {', '.join(fmap.ids()) or 'no fixtures'}")

    # ---- action callbacks ---------------------------------------------------------------------
    def reset_callback(self, msg: Header) -> None:
        """A new world: what the primitives believed about the old one no longer holds."""
        held = self.primitives.held_object
        self.primitives.reset_beliefs()
        with self._goal_lock:
            running = self._goal is not None
        self.get_logger().info(
            f"world reset ({msg.frame_id or 'unnamed'}): beliefs dropped"
            + (f" (was holding {held})" if held else "")
            + (" while a program runs; it will see the new world" if running else ""))

    def goal_callback(self, goal_request: Any) -> GoalResponse:
        if self.executor_core.running:
            self.get_logger().warning("rejecting a goal: a program is already running")
            return GoalResponse.REJECT
        problem = goal_problem(goal_request)
        if problem:
            self.get_logger().warning(f"rejecting a goal: {problem}", throttle_duration_sec=1.0)
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _check_owner(self) -> None:
        """Stop the running program when the planner that sent it died.

        Nobody could then cancel the task or receive its result, so the arm should not go on
        moving for it. Goals sent by other clients (tests, tools; no planner up when they
        started) are not watched.
        """
        if not self._owner_present or not self.executor_core.running:
            return
        if PLANNER_NODE not in self.get_node_names():
            self._owner_present = False
            self.get_logger().error("the planner (frankenbot_planner) vanished mid-task: "
                                    "stopping the program and the arm")
            self.executor_core.cancel(PLANNER_VANISHED)

    def _driver_fault(self) -> str:
        return str(getattr(self.robot, "driver_fault", lambda: "")())

    def _check_driver(self) -> None:
        """End the running task when the driver stack stopped the robot (no tier can help)."""
        if not self.executor_core.running:
            return
        fault = self._driver_fault()
        if fault:
            self.get_logger().error(f"{DRIVER_STOPPED}{fault}")
            self.executor_core.abort(DRIVER_STOPPED + fault)

    def cancel_callback(self, goal_handle: Any) -> CancelResponse:
        self.executor_core.cancel("cancelled by the client")
        return CancelResponse.ACCEPT

    def execute_callback(self, goal_handle: Any) -> ExecuteProgram.Result:
        goal = goal_handle.request
        self._owner_present = PLANNER_NODE in self.get_node_names()
        with self._goal_lock:
            self._goal = goal_handle
            self._task_id = goal.task_id
            self._program_name = goal.instruction
            self._statuses, self._active, self._steps, self._new_events = {}, None, 0, []
            self._phase = "executing"
        self._publish_tree(force=True)
        getattr(self.robot, "clear_faults", lambda: None)()  # the operator may have fixed them
        fault = self._driver_fault()
        try:
            if fault:  # nothing moves until the operator fixes it
                out = ExecutionOutcome(ExitStatus.FAILURE, f"not started: {fault}",
                                       goal.program, 0, 0, 0, 0.0)
            else:
                out = self.executor_core.run(goal.program, task_id=goal.task_id,
                                             instruction=goal.instruction)
        except FrankenbotError as e:  # never a traceback to the client
            out = ExecutionOutcome(ExitStatus.ERROR, str(e), goal.program, 0, 0, 0, 0.0)
        with self._goal_lock:
            self._goal = None
            self._phase = "done"
        self._publish_tree(force=True)
        result = self._result(out)
        if not out.success:
            note = self.dependency_note()
            if note:
                result.reason = f"{result.reason}; {note}" if result.reason else note
                self.get_logger().error(f"{goal.task_id}: {note}")
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif out.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def dependency_note(self) -> str:
        """Which input vanished, when one did ('' when all arrive): for a failed program's
        reason, so the task's result names the node to restart rather than only the
        anomaly it caused (a stale scene, a missing joint state)."""
        from frankenbot.nodes.ros_robot import JOINT_STATES_TOPIC, SCENE_TOPIC

        # keyed by the robot adapter's own (relative, namespace-able) topic names
        ages = getattr(self.robot, "input_ages", lambda: {})()
        lost, late = [], []
        js = ages.get(JOINT_STATES_TOPIC, 0.0)
        if js > DEPENDENCY_SILENT_S:
            lost.append(f"no valid /joint_states for {js:.1f} s (is the UR driver or "
                        "frankenbot_sim running?)")
        scene_age = ages.get(SCENE_TOPIC, 0.0)
        if scene_age > DEPENDENCY_SILENT_S:
            if PERCEPTION_NODE in self.get_node_names():
                late.append(f"no /frankenbot/scene for {scene_age:.1f} s although "
                            f"{PERCEPTION_NODE} is up (overloaded?)")
            else:
                lost.append(f"{PERCEPTION_NODE} vanished: no /frankenbot/scene for "
                            f"{scene_age:.1f} s")
        elif SCENE_TOPIC in ages and self.robot.scene().stale and not lost:
            lost.append(f"{PERCEPTION_NODE} reports a stale scene (no usable camera frames: "
                        "is the camera or frankenbot_sim running?)")
        parts = (["dependency lost: " + "; ".join(lost)] if lost else []) + late
        return "; ".join(parts)

    def _result(self, out: ExecutionOutcome) -> ExecuteProgram.Result:
        return ExecuteProgram.Result(
            success=out.success, outcome=out.status.value, reason=out.reason,
            final_program=out.final_program, replans=out.replans, vlm_calls=out.vlm_calls,
            steps=out.steps, duration=float(out.duration),
            anomalies=[self.event_msg(r) for r in out.anomalies],
            trace_json=trace_to_json(out.trace))

    # ---- hooks from the executor core (control thread / monitor thread) ------------------------
    def set_phase(self, phase: str) -> None:
        with self._goal_lock:
            self._phase = phase
        self._publish_tree(force=True)

    def _on_trace(self, entry: TraceEntry) -> None:
        with self._goal_lock:
            self._steps += entry.event == "enter"
            self._statuses[entry.path] = entry.status.value
            if entry.event in ("enter", "handler", "escalate"):
                self._active = entry
            if entry.event == "handler":
                self._phase = "handling" if entry.status == NodeStatus.RUNNING else "executing"
        self._publish_tree()

    def _on_event(self, rec: AnomalyRecord) -> None:
        msg = self.event_msg(rec)
        self.events_pub.publish(msg)
        with self._goal_lock:
            self._new_events.append(msg)
        self._publish_tree()

    # ---- messages -------------------------------------------------------------------------------
    def _stamp(self, t: float) -> Time:
        """Executor monotonic time -> ROS time (0 stays the zero Time)."""
        if t <= 0.0:
            return Time()
        now_ros = self.get_clock().now().nanoseconds
        ns = now_ros - int((time.monotonic() - t) * 1e9)
        return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def event_msg(self, r: AnomalyRecord) -> AnomalyEvent:
        msg = event_to_msg(r, task_id=self._task_id, to_time=self._stamp)
        msg.header.stamp = self.get_clock().now().to_msg()
        return msg

    def _publish_tree(self, force: bool = False) -> None:
        now = time.monotonic()
        period = 1.0 / self.settings.value.feedback_rate_hz
        with self._goal_lock:
            if not force and now - self._last_feedback < period:
                return
            self._last_feedback = now
            active = self._active
            msg = TreeState(task_id=self._task_id, program_name=self._program_name,
                            phase=self._phase,
                            active_path=active.path if active else "",
                            active_node=active.node if active else "",
                            active_line=max(0, active.line) if active else 0,
                            node_paths=list(self._statuses),
                            node_statuses=list(self._statuses.values()), steps=self._steps)
            goal, events, self._new_events = self._goal, self._new_events, []
        msg.header.stamp = self.get_clock().now().to_msg()
        self.tree_pub.publish(msg)
        if goal is not None:
            goal.publish_feedback(ExecuteProgram.Feedback(
                phase=msg.phase, active_path=msg.active_path, active_node=msg.active_node,
                active_line=msg.active_line, events=events))

    def destroy_node(self) -> None:
        self.executor_core.cancel("executor shutting down")
        if self.expert is not None:
            self.expert.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(ExecutorNode, num_threads=6, args=args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""A ROS 2 client of a running FrankenBot: submit tasks, follow them, drive the sim's services.

Used by ``frankenbot submit``, ``status`` and ``demo`` (the command-line layer; the brain's own
nodes live in ``frankenbot.nodes``). It spins its node on a background thread so every call here
can block on a future with a timeout.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from frankenbot.errors import FrankenbotError
from frankenbot.nodes.action_client import ActionClient
from frankenbot.nodes.spin import make_executor, report_callback_error, spin_once
from frankenbot_interfaces.action import RunTask
from frankenbot_interfaces.msg import AnomalyEvent, TaskStatus, TreeState
from frankenbot_interfaces.srv import EvaluateTask, InjectAnomaly, ResetScene, SubmitTask

SIM_NODE = "frankenbot_sim"
SPIN_POLL_S = 0.2  # s the spinning thread waits at most before it checks for close()
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)


@dataclass
class TaskProgress:
    """What a follower has seen of one task so far."""

    status: TaskStatus | None = None
    tree: TreeState | None = None
    events: list[AnomalyEvent] = field(default_factory=list)


class BrainClient:
    """Context manager: ``with BrainClient() as client: client.submit(...)``."""

    def __init__(self, node_name: str = "frankenbot_cli", namespace: str = "") -> None:
        from frankenbot.bringup.processes import normalise_namespace

        # Every name this client uses is relative, so it talks to the brain in ``namespace``.
        self.namespace = normalise_namespace(namespace)
        self._context = rclpy.context.Context()
        rclpy.init(context=self._context)
        self.node = rclpy.create_node(node_name, namespace=self.namespace or None,
                                      context=self._context)
        self._group = ReentrantCallbackGroup()
        self._clients: dict[str, Any] = {}  # service name -> its client (see _call)
        self._clients_lock = threading.Lock()
        self._executor = make_executor(2, context=self._context)
        self._executor.add_node(self.node)
        self._closing = False
        self.spin_errors = 0  # callbacks that raised (logged; spinning went on)
        self._spinner = threading.Thread(target=self._spin, name="brain-client-spin", daemon=True)
        self._spinner.start()

    def _spin(self) -> None:
        """Spin until ``close``. A callback that raises is logged and spinning goes on: with
        the spinner gone every later answer is lost (a 200-task soak lost each sim reset from
        its 10th task on, because one exception had ended ``spin()`` silently)."""
        while self._context.ok() and not self._closing:
            try:
                spin_once(self._executor, SPIN_POLL_S)
            except ExternalShutdownException:
                return
            except Exception as e:  # a callback's error, or one made while shutting down
                if self._closing or not self._context.ok():
                    return
                self.spin_errors += 1
                report_callback_error(self.node, e)

    def close(self) -> None:
        self._closing = True
        if self._context.ok():
            self._executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()
            rclpy.shutdown(context=self._context)

    def __enter__(self) -> "BrainClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------
    def _call(self, srv_type, name: str, request, timeout: float):
        """Call a service, reusing one client per service name.

        A client made for each call loses answers on a loaded machine: ``wait_for_service``
        only says that this side sees the server, and a server that has not yet matched the
        new client's response reader drops its answer (measured here: 24 of 31 sim resets of a
        soak under load 24 timed out that way). A kept client is matched once.
        """
        with self._clients_lock:
            client = self._clients.get(name)
            if client is None:
                client = self.node.create_client(srv_type, name, callback_group=self._group)
                self._clients[name] = client
        if not client.wait_for_service(timeout_sec=timeout):
            raise FrankenbotError(f"service {name} is not available (is the node running?)")
        future = client.call_async(request)
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                client.remove_pending_request(future)
                raise FrankenbotError(f"service {name} did not answer within {timeout:.0f} s")
            time.sleep(0.01)
        return future.result()

    def wait_for_services(self, names: list[str], timeout: float) -> list[str]:
        """Wait until every service is advertised; returns the ones still missing.

        Relative names are resolved in this client's namespace.
        """
        deadline = time.monotonic() + timeout
        names = [self.node.resolve_service_name(n) for n in names]
        missing = list(names)
        while missing and time.monotonic() < deadline:
            advertised = {n for n, _ in self.node.get_service_names_and_types()}
            missing = [n for n in names if n not in advertised]
            if missing:
                time.sleep(0.2)
        return missing

    def frankenbot_nodes(self, all_namespaces: bool = False) -> list[str]:
        """FrankenBot node names in this client's namespace (or fully qualified, in all)."""
        own = self.namespace or "/"
        out = []
        for name, ns in self.node.get_node_names_and_namespaces():
            if not name.startswith("frankenbot_") or name == self.node.get_name():
                continue
            if all_namespaces and ns not in ("", "/"):
                out.append(f"{ns}/{name}")
            elif ns == own or all_namespaces:
                out.append(name)
        return sorted(out)

    # -- tasks ------------------------------------------------------------------------------
    def submit(self, instruction: str, *, planner: str = "", dry_run: bool = False,
               timeout: float = 120.0) -> SubmitTask.Response:
        request = SubmitTask.Request(instruction=instruction, dry_run=dry_run, planner=planner)
        return self._call(SubmitTask, "frankenbot/submit_task", request, timeout)

    def follow(self, task_id: str, *, timeout: float,
               on_update: Callable[[TaskProgress], None] | None = None) -> TaskProgress:
        """Watch /frankenbot/task_status, tree_state and events until the task is done."""
        progress = TaskProgress()
        lock = threading.Lock()
        done = threading.Event()

        def on_status(msg: TaskStatus) -> None:
            if msg.task_id != task_id:
                return
            with lock:
                progress.status = msg
            if on_update:
                on_update(progress)
            if msg.done:
                done.set()

        def on_tree(msg: TreeState) -> None:
            if msg.task_id == task_id:
                with lock:
                    progress.tree = msg
                if on_update:
                    on_update(progress)

        def on_event(msg: AnomalyEvent) -> None:
            if msg.task_id == task_id:
                with lock:
                    progress.events.append(msg)
                if on_update:
                    on_update(progress)

        subs = [
            self.node.create_subscription(TaskStatus, "frankenbot/task_status", on_status,
                                          RELIABLE, callback_group=self._group),
            self.node.create_subscription(TreeState, "frankenbot/tree_state", on_tree, LATCHED,
                                          callback_group=self._group),
            self.node.create_subscription(AnomalyEvent, "frankenbot/events", on_event, RELIABLE,
                                          callback_group=self._group),
        ]
        try:
            if not done.wait(timeout):
                raise FrankenbotError(f"task {task_id} did not finish within {timeout:.0f} s")
            return progress
        finally:
            for sub in subs:
                self.node.destroy_subscription(sub)

    def run_task(self, instruction: str, *, planner: str = "", timeout: float = 600.0,
                 on_feedback: Callable[[RunTask.Feedback], None] | None = None) -> RunTask.Result:
        """The /frankenbot/run_task action with live feedback; Ctrl-C cancels the goal."""
        client = ActionClient(self.node, RunTask, "frankenbot/run_task",
                              callback_group=self._group)
        try:
            if not client.wait_for_server(timeout_sec=30.0):
                raise FrankenbotError("action /frankenbot/run_task is not available")
            send = client.send_goal_async(
                RunTask.Goal(instruction=instruction, planner=planner),
                feedback_callback=(lambda fb: on_feedback(fb.feedback)) if on_feedback else None)
            handle = self._wait_future(send, 60.0, "run_task goal")
            if not handle.accepted:
                raise FrankenbotError("the planner rejected the task goal")
            result = handle.get_result_async()
            try:
                return self._wait_future(result, timeout, "run_task result",
                                         alive=client.server_is_ready).result
            except KeyboardInterrupt:
                handle.cancel_goal_async()
                raise
        finally:
            client.destroy()

    @staticmethod
    def _wait_future(future, timeout: float, what: str,
                     alive: Callable[[], bool] | None = None):
        """Wait for ``future``; with ``alive``, give up once the server is gone for 1 s."""
        deadline = time.monotonic() + timeout
        gone_since: float | None = None
        while not future.done():
            now = time.monotonic()
            if now > deadline:
                raise FrankenbotError(f"{what} did not arrive within {timeout:.0f} s")
            if alive is not None and not alive():
                gone_since = gone_since or now
                if now - gone_since > 1.0:
                    raise FrankenbotError(f"{what}: the server vanished (dependency lost: "
                                          "frankenbot_planner); is the planner running?")
            else:
                gone_since = None
            time.sleep(0.01)
        return future.result()

    def set_parameters(self, node: str, values: dict[str, Any], timeout: float = 10.0
                       ) -> list[Any]:
        """``ros2 param set`` for a running node of this brain (e.g. ``frankenbot_planner``,
        ``{"review": "never"}``); the SetParametersResult of each, in order (a refused one
        says why in ``reason``)."""
        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient

        client = AsyncParameterClient(self.node, node)
        if not client.wait_for_services(timeout_sec=timeout):
            raise FrankenbotError(f"{node}'s parameter services are not available")
        future = client.set_parameters([Parameter(k, value=v) for k, v in values.items()])
        return list(self._wait_future(future, timeout, f"{node} set_parameters").results)

    def wait_for_scene(self, *, after: float, min_objects: int = 1,
                       required: tuple[str, ...] = (), timeout: float = 30.0) -> int:
        """Wait for a fresh (not stale) /frankenbot/scene stamped after ``after`` (seconds, the
        sim's clock) with at least ``min_objects`` objects, among them every id in
        ``required``; returns how many objects it has."""
        from frankenbot_interfaces.msg import SceneObjects

        seen = threading.Event()
        count = [0]
        good = [0]  # consecutive matching scenes: the brain's nodes get the same messages, and
        # waiting for a second one gives them time to take in the first
        last_ids: list[list[str] | None] = [None]  # the latest scene's ids, for the error

        def on_scene(msg: SceneObjects) -> None:
            stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            ids = {o.id for o in msg.objects}
            last_ids[0] = sorted(ids)
            if (not msg.stale and stamp > after and len(msg.objects) >= min_objects
                    and ids.issuperset(required)):
                good[0] += 1
                count[0] = len(msg.objects)
                if good[0] >= 2:
                    seen.set()
            else:
                good[0] = 0

        sub = self.node.create_subscription(SceneObjects, "frankenbot/scene", on_scene, 10,
                                            callback_group=self._group)
        try:
            if not seen.wait(timeout):
                latest = ("no scene arrived" if last_ids[0] is None else
                          f"the latest had {', '.join(last_ids[0]) or 'no objects'}")
                raise FrankenbotError(f"perception published no fresh scene with "
                                      f"{', '.join(required) or 'objects'} within {timeout:.0f} "
                                      f"s ({latest}; is the perception node running?)")
            return count[0]
        finally:
            self.node.destroy_subscription(sub)

    def sim_time(self, timeout: float = 10.0) -> float:
        """The sim's clock (seconds), from one /clock message."""
        from rosgraph_msgs.msg import Clock

        got: list[float] = []
        done = threading.Event()

        def on_clock(msg: Clock) -> None:
            got.append(msg.clock.sec + msg.clock.nanosec * 1e-9)
            done.set()

        sub = self.node.create_subscription(Clock, "clock", on_clock, 10,
                                            callback_group=self._group)
        try:
            if not done.wait(timeout):
                raise FrankenbotError("no /clock message (is the sim node running?)")
            return got[-1]
        finally:
            self.node.destroy_subscription(sub)

    # -- the sim's services -----------------------------------------------------------------
    def sim_reset(self, task: str, seed: int, timeout: float = 60.0) -> ResetScene.Response:
        response = self._call(ResetScene, f"{SIM_NODE}/reset",
                              ResetScene.Request(task=task, seed=seed), timeout)
        if not response.ok:
            raise FrankenbotError(f"sim reset failed: {response.message}")
        return response

    def sim_evaluate(self, window: float = 0.0, timeout: float = 30.0) -> EvaluateTask.Response:
        return self._call(EvaluateTask, f"{SIM_NODE}/evaluate",
                          EvaluateTask.Request(stability_window=window), timeout)

    def sim_inject(self, kind: str, phase: str = "", params_json: str = "",
                   timeout: float = 30.0) -> InjectAnomaly.Response:
        request = InjectAnomaly.Request(kind=kind, phase=phase, params_json=params_json)
        response = self._call(InjectAnomaly, f"{SIM_NODE}/inject_anomaly", request, timeout)
        if not response.ok:
            raise FrankenbotError(f"anomaly injection failed: {response.message}")
        return response

    def sim_fault(self, kind: str, phase: str = "now", params_json: str = "",
                  timeout: float = 30.0) -> InjectAnomaly.Response:
        """A fault of the real driver stack on the sim's driver twin (``driver_twin:=true``)."""
        request = InjectAnomaly.Request(kind=kind, phase=phase, params_json=params_json)
        response = self._call(InjectAnomaly, f"{SIM_NODE}/inject_fault", request, timeout)
        if not response.ok:
            raise FrankenbotError(f"driver fault injection failed: {response.message}")
        return response


def image_to_array(msg: Image) -> np.ndarray:
    """sensor_msgs/Image rgb8 -> HxWx3 uint8 (a copy)."""
    if msg.encoding != "rgb8":
        raise FrankenbotError(f"expected an rgb8 image, got {msg.encoding!r}")
    data = np.frombuffer(bytes(msg.data), dtype=np.uint8)
    return data.reshape(msg.height, msg.step)[:, : msg.width * 3].reshape(
        msg.height, msg.width, 3).copy()


class FrameRecorder:
    """Keeps camera frames (and annotated frames) at a bounded rate for the demo's artifacts."""

    def __init__(self, client: BrainClient, *, max_rate_hz: float = 4.0, scale: int = 2,
                 max_frames: int = 600) -> None:
        self.frames: list[np.ndarray] = []
        self.annotated: list[np.ndarray] = []
        self._period = 1.0 / max_rate_hz
        self._scale = scale
        self._max = max_frames
        self._last = 0.0
        self._lock = threading.Lock()
        node = client.node
        qos = QoSProfile(depth=2, reliability=ReliabilityPolicy.BEST_EFFORT)
        self._subs = [
            node.create_subscription(Image, "camera/camera/color/image_raw", self._on_frame, qos),
            node.create_subscription(Image, "frankenbot/annotated_image", self._on_annotated,
                                     qos),
        ]

    def _on_frame(self, msg: Image) -> None:
        now = time.monotonic()
        if now - self._last < self._period or len(self.frames) >= self._max:
            return
        self._last = now
        frame = image_to_array(msg)[:: self._scale, :: self._scale]
        with self._lock:
            self.frames.append(frame)

    def _on_annotated(self, msg: Image) -> None:
        with self._lock:
            self.annotated = [image_to_array(msg)]  # keep the latest one

    def snapshot(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        with self._lock:
            return list(self.frames), list(self.annotated)

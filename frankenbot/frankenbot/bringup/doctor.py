"""`frankenbot doctor`: check a running system and say what is missing, by name.

What is expected follows the setup's parameter file (config/<setup>.yaml), so the same checks
serve the MuJoCo sim, Gazebo and the real UR5e: the executor's trajectory and gripper modes say
whether a topic subscriber or an action server must be there, ``program_running_topic`` whether
the External Control program is watched, perception's ``camera_config`` whether the camera pose
comes from a file or from TF. The probe (``observe``) listens on the graph for ``timeout``
seconds; the verdicts (``evaluate``) are plain functions of what it saw.

Checked: the brain's four nodes and their endpoints (and the sim node in the sim setup); the
arm's /joint_states with the six UR joints, its command interface, speed scaling (percent) and,
on the real driver, its controllers, the program state and the safety mode (a protective stop
by name); the camera's colour, aligned depth and camera_info topics, and the camera pose (file,
or the TF chain base_link <- optical frame); the gripper's joint in its joint states, its
command interface and, with the Robotiq's action, whether its last goal moved the fingers (a
Robotiq that is not activated takes goals and stalls where it is; nothing else on the graph
shows it, so this is judged only once the gripper has been commanded); on the real robot, the
executor's TCP offset against the gripper's description (/robotiq/robot_description).
"""

from __future__ import annotations

import argparse
import math
import threading
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

from frankenbot import robotiq, ur_driver
from frankenbot.motion.kinematics import JOINT_NAMES

BRAIN: dict[str, tuple[str, str]] = {  # node -> (kind, endpoint it must offer)
    "frankenbot_perception": ("publisher", "/frankenbot/scene"),
    "frankenbot_memory": ("service", "/frankenbot/memory/get_context"),
    "frankenbot_planner": ("service", "/frankenbot/submit_task"),
    "frankenbot_executor": ("action", "/frankenbot/execute_program"),
}
COLOR_TOPIC = "/camera/camera/color/image_raw"
DEPTH_TOPIC = "/camera/camera/aligned_depth_to_color/image_raw"
INFO_TOPIC = "/camera/camera/color/camera_info"


class Status(Enum):
    OK = "ok"
    MISSING = "MISSING"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str = ""
    hint: str = ""

    def line(self) -> str:
        text = f"{self.status.value:>8}  {self.name}"
        if self.detail:
            text += f": {self.detail}"
        if self.hint and self.status == Status.MISSING:
            text += f" -> {self.hint}"
        return text


@dataclass(frozen=True)
class Expectations:
    """What the setup's parameter file says must be running."""

    setup: str
    trajectory_mode: str = "topic"
    gripper_mode: str = "topic"
    gripper_action: str = robotiq.ACTION_NAME
    gripper_joint: str = robotiq.KNUCKLE_JOINT
    gripper_joint_states_topic: str = ur_driver.JOINT_STATES_TOPIC
    program_running_topic: str = ""
    camera_config: str = ""
    base_frame: str = "base_link"

    @classmethod
    def from_setup(cls, setup: str) -> "Expectations":
        import yaml

        from frankenbot.bringup.processes import config_file

        data = yaml.safe_load(config_file(setup).read_text()) or {}

        def section(node: str) -> Mapping[str, Any]:
            # keyed /**/node (matches the node in any namespace) or plainly by node name
            entry = data.get(f"/**/{node}") or data.get(node) or {}
            return entry.get("ros__parameters") or {}

        ex, pe = section("frankenbot_executor"), section("frankenbot_perception")
        defaults = cls(setup)
        return cls(
            setup=setup,
            trajectory_mode=str(ex.get("trajectory_mode", defaults.trajectory_mode)),
            gripper_mode=str(ex.get("gripper_mode", defaults.gripper_mode)),
            gripper_action=str(ex.get("gripper_action", defaults.gripper_action)),
            gripper_joint=str(ex.get("gripper_joint", defaults.gripper_joint)),
            gripper_joint_states_topic=str(ex.get("gripper_joint_states_topic",
                                                  defaults.gripper_joint_states_topic)),
            program_running_topic=str(ex.get("program_running_topic",
                                             ur_driver.PROGRAM_RUNNING_TOPIC)),
            camera_config=str(pe.get("camera_config", "")),
            base_frame=str(pe.get("base_frame", "base_link")))

    @property
    def real_driver(self) -> bool:
        return self.setup == "real_ur5e"


@dataclass
class Observations:
    """What the probe saw on the graph (names fully qualified)."""

    nodes: set[str] = field(default_factory=set)
    publishers: dict[str, int] = field(default_factory=dict)
    subscribers: dict[str, int] = field(default_factory=dict)
    services: set[str] = field(default_factory=set)
    messages: dict[str, Any] = field(default_factory=dict)  # topic -> first message
    controllers: dict[str, str] | None = None  # name -> state (list_controllers), if asked
    safety_mode_observable: bool = True  # ur_dashboard_msgs installed
    # (stalled, reached_goal, knuckle) of the gripper action's last finished goal, if any
    gripper_result: tuple[bool, bool, float] | None = None
    tf_edges: dict[str, str] | None = None  # child -> parent (None: TF not observable here)
    gripper_description: str | None = None  # URDF text on GRIPPER_DESCRIPTION_TOPIC
    executor_tcp_offset: float | None = None  # the executor's tcp_offset parameter, if read

    def has_action(self, name: str) -> bool:
        return f"{name}/_action/send_goal" in self.services


def _ok(name: str, detail: str = "") -> Check:
    return Check(name, Status.OK, detail)


def _missing(name: str, detail: str, hint: str = "") -> Check:
    return Check(name, Status.MISSING, detail, hint)


def _topic(seen: Observations, name: str, topic: str, hint: str) -> Check:
    if not seen.publishers.get(topic):
        return _missing(name, f"nobody publishes {topic}", hint)
    if topic not in seen.messages:
        return _missing(name, f"{topic} has a publisher but no message arrived", hint)
    return _ok(name, topic)


def tf_chain(edges: Mapping[str, str], child: str, root: str) -> list[str] | None:
    """Frames from ``child`` up to ``root`` through child -> parent edges, or None."""
    chain, frame = [child], child
    while frame != root:
        if frame not in edges or len(chain) > 64:
            return None
        frame = edges[frame]
        chain.append(frame)
    return chain


def evaluate(expect: Expectations, seen: Observations) -> list[Check]:
    """The verdicts, in reading order: brain, arm, camera, gripper."""
    checks: list[Check] = []
    # --- the brain ----------------------------------------------------------------------
    nodes = dict(BRAIN)
    if expect.setup == "sim":
        nodes["frankenbot_sim"] = ("service", "/frankenbot_sim/reset")
    for node, (kind, endpoint) in nodes.items():
        name = f"node {node}"
        if f"/{node}" not in seen.nodes:
            checks.append(_missing(name, "not running",
                                   "start it (`frankenbot up` / ros2 launch); its log says why "
                                   "it stopped"))
            continue
        present = {"publisher": bool(seen.publishers.get(endpoint)),
                   "service": endpoint in seen.services,
                   "action": seen.has_action(endpoint)}[kind]
        checks.append(_ok(name, f"{kind} {endpoint}") if present else
                      _missing(name, f"running but offers no {kind} {endpoint}",
                               "it may still be starting; see its log"))
    # --- the arm ------------------------------------------------------------------------
    driver_hint = ("start the UR driver (ur_control.launch.py)" if expect.setup != "sim"
                   else "start the sim node (frankenbot up --sim)")
    js = seen.messages.get(ur_driver.JOINT_STATES_TOPIC)
    check = _topic(seen, "arm joint states", ur_driver.JOINT_STATES_TOPIC, driver_hint)
    if check.status == Status.OK:
        missing = [n for n in JOINT_NAMES if n not in list(js.name)]
        check = (_missing("arm joint states", f"/joint_states lacks {missing}", driver_hint)
                 if missing else _ok("arm joint states", "/joint_states with the 6 UR joints"))
    checks.append(check)
    if expect.trajectory_mode == "action":
        checks.append(_ok("arm trajectory action", ur_driver.FOLLOW_ACTION)
                      if seen.has_action(ur_driver.FOLLOW_ACTION) else
                      _missing("arm trajectory action", f"no action server "
                               f"{ur_driver.FOLLOW_ACTION}",
                               "is scaled_joint_trajectory_controller active?"))
    else:
        checks.append(_ok("arm trajectory topic", f"{ur_driver.TRAJECTORY_TOPIC} is subscribed")
                      if seen.subscribers.get(ur_driver.TRAJECTORY_TOPIC) else
                      _missing("arm trajectory topic",
                               f"nobody subscribes {ur_driver.TRAJECTORY_TOPIC}", driver_hint))
    scaling = _topic(seen, "speed scaling", ur_driver.SPEED_SCALING_TOPIC,
                     "is speed_scaling_state_broadcaster active?")
    if scaling.status == Status.OK:
        value = float(seen.messages[ur_driver.SPEED_SCALING_TOPIC].data)
        fraction = ur_driver.speed_fraction(value)
        scaling = (_ok("speed scaling", f"{value:g} %")
                   if fraction is not None and fraction > 0.0 else
                   _missing("speed scaling", f"{value:g} %: the arm will not move",
                            "raise the speed slider on the pendant"))
    checks.append(scaling)
    if expect.real_driver:
        checks += _controller_checks(seen)
    if expect.real_driver:
        checks.append(_safety_check(seen))
    if expect.program_running_topic:
        msg = seen.messages.get(expect.program_running_topic)
        if msg is None:
            checks.append(_missing("External Control program", f"no message on "
                                   f"{expect.program_running_topic}",
                                   "is io_and_status_controller active?"))
        elif not msg.data:
            checks.append(_missing("External Control program", ur_driver.PROGRAM_NOT_RUNNING,
                                   "load the External Control URCap program, then Play"))
        else:
            checks.append(_ok("External Control program", "running"))
    # --- the camera ---------------------------------------------------------------------
    cam_hint = ("start the camera (rs_launch.py)" if expect.setup == "real_ur5e"
                else "the camera is not publishing")
    for name, topic in (("camera colour", COLOR_TOPIC), ("camera depth", DEPTH_TOPIC),
                        ("camera info", INFO_TOPIC)):
        checks.append(_topic(seen, name, topic, cam_hint))
    checks.append(_camera_pose_check(expect, seen))
    # --- the gripper --------------------------------------------------------------------
    topic = expect.gripper_joint_states_topic or ur_driver.JOINT_STATES_TOPIC
    msg = seen.messages.get(topic)
    if msg is not None and expect.gripper_joint in list(msg.name):
        checks.append(_ok("gripper joint", f"{expect.gripper_joint} on {topic}"))
    else:
        checks.append(_missing("gripper joint", f"no {expect.gripper_joint} on {topic}",
                               "is the gripper driver running (launch_gripper:=true)?"))
    if expect.real_driver and expect.gripper_mode != "topic":
        checks.append(tcp_check(seen.executor_tcp_offset, seen.gripper_description))
    if expect.gripper_mode == "topic":
        checks.append(_ok("gripper command", f"{robotiq.COMMAND_TOPIC} is subscribed")
                      if seen.subscribers.get(robotiq.COMMAND_TOPIC) else
                      _missing("gripper command", f"nobody subscribes {robotiq.COMMAND_TOPIC}",
                               driver_hint))
    else:
        checks.append(_ok("gripper action", expect.gripper_action)
                      if seen.has_action(expect.gripper_action) else
                      _missing("gripper action", f"no action server {expect.gripper_action}",
                               "is robotiq_gripper_controller spawned under /robotiq?"))
    if expect.gripper_mode == "parallel":
        checks.append(_gripper_activation_check(seen))
    return checks


GRIPPER_OPEN = 0.02  # rad: a knuckle below this is open


def _gripper_activation_check(seen: Observations) -> Check:
    name = "gripper activation"
    if seen.gripper_result is None:
        return Check(name, Status.SKIPPED, "no finished gripper goal yet (a Robotiq that is not "
                     "activated shows only when commanded)")
    stalled, reached, knuckle = seen.gripper_result
    if stalled and not reached and knuckle < GRIPPER_OPEN:
        # the action keeps its last result until the next goal: a stall from before a
        # reactivation still shows here, so the hint says how to judge the gripper afresh
        return _missing(name, f"the last gripper goal stalled fully open ({knuckle:.3f} rad): "
                        "the fingers did not move",
                        f"{robotiq.NOT_ACTIVATED}; if it was reactivated since, command it "
                        "once and run doctor again")
    return _ok(name, f"the last goal {'reached its target' if reached else 'stalled'} at "
               f"{knuckle:.3f} rad")


def _safety_check(seen: Observations) -> Check:
    if not seen.safety_mode_observable:
        return Check("safety mode", Status.SKIPPED, "ur_dashboard_msgs is not installed")
    msg = seen.messages.get(ur_driver.SAFETY_MODE_TOPIC)
    if msg is None:
        return _missing("safety mode", f"no message on {ur_driver.SAFETY_MODE_TOPIC}",
                        "is io_and_status_controller active?")
    mode = int(msg.mode)
    if mode not in ur_driver.SAFETY_OK:
        return _missing("safety mode", ur_driver.safety_mode_fault(mode))
    return _ok("safety mode", ur_driver.SAFETY_MODES.get(mode, str(mode)))


GRIPPER_DESCRIPTION_TOPIC = "/robotiq/robot_description"  # the gripper's robot_state_publisher


def tcp_check(configured: float | None, description: str | None) -> Check:
    """The executor's tcp_offset (its parameter; < 0 means config/safety.yaml's) against the
    pad centre of the gripper's description (frankenbot.tcp), within ``tcp.TOLERANCE``."""
    from frankenbot import tcp
    from frankenbot.errors import FrankenbotError

    name = "TCP offset"
    if description is None:
        return _missing(name, f"no gripper description on {GRIPPER_DESCRIPTION_TOPIC}",
                        "is the gripper's robot_state_publisher running (launch_gripper:=true)?")
    try:
        described = tcp.tcp_offset_from_description(description)
        low, high = tcp.tcp_range(description)
    except FrankenbotError as e:
        return _missing(name, f"cannot read the TCP from the description: {e}",
                        "use urdf/robotiq_on_tool0.urdf.xacro (it has the pad frames)")
    if configured is None:
        return _missing(name, "the executor's tcp_offset parameter could not be read",
                        "is frankenbot_executor running?")
    source = "parameter"
    if configured < 0:
        from frankenbot.motion.config import load_arm_config

        configured, source = load_arm_config().kinematics.tcp_offset, "config/safety.yaml"
    detail = (f"executor {configured:.4f} m ({source}), description {described:.4f} m at a "
              f"{1000 * tcp.REFERENCE_WIDTH:.0f} mm grip ({low:.4f} open .. {high:.4f} closed)")
    if abs(configured - described) > tcp.TOLERANCE:
        return _missing(name, detail, "start the executor with real_ur5e.launch.py (it passes "
                        "the description's offset) or set its tcp_offset parameter; set the "
                        "same TCP on the pendant")
    return _ok(name, detail)


def _controller_checks(seen: Observations) -> list[Check]:
    out = []
    for controller in ur_driver.ACTIVE_CONTROLLERS:
        name = f"controller {controller}"
        if seen.controllers is not None:
            state = seen.controllers.get(controller)
            out.append(_ok(name, "active") if state == "active" else
                       _missing(name, f"state {state or 'not loaded'}",
                                "check the driver's log; after a protective stop press Play"))
        elif f"/{controller}" in seen.nodes:
            out.append(_ok(name, "loaded (state not read: controller_manager_msgs missing)"))
        else:
            out.append(_missing(name, "not loaded", "start ur_control.launch.py"))
    return out


def _camera_pose_check(expect: Expectations, seen: Observations) -> Check:
    if expect.camera_config:
        from frankenbot import resources
        from frankenbot.errors import FrankenbotError
        from frankenbot.perception.camera import load_camera

        try:
            load_camera(resources.config_path(expect.camera_config))
        except FrankenbotError as e:
            return _missing("camera pose", str(e), "run `frankenbot calibrate camera`")
        return _ok("camera pose", f"from {expect.camera_config}")
    info = seen.messages.get(INFO_TOPIC)
    frame = getattr(getattr(info, "header", None), "frame_id", "") or \
        "camera_color_optical_frame"
    if seen.tf_edges is None:
        return Check("camera pose", Status.SKIPPED,
                     "TF not observable here (tf2_msgs is not installed)")
    chain = tf_chain(seen.tf_edges, frame, expect.base_frame)
    if chain is None:
        return _missing("camera pose", f"no TF chain {expect.base_frame} <- {frame}",
                        "pass camera_calibration:=<file> to real_ur5e.launch.py")
    return _ok("camera pose", " <- ".join(reversed(chain)))


# --- the probe (rclpy) ----------------------------------------------------------------------
def observe(expect: Expectations, timeout: float = 5.0) -> Observations:
    """Listen on the graph for up to ``timeout`` s (less once every expected message came)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import (
        DurabilityPolicy,
        QoSProfile,
        ReliabilityPolicy,
        qos_profile_sensor_data,
    )
    from sensor_msgs.msg import CameraInfo, Image, JointState
    from std_msgs.msg import Bool, Float64

    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("frankenbot_doctor", context=context)
    seen = Observations()
    lock = threading.Lock()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    wanted: list[tuple[str, Any, Any]] = [
        (ur_driver.JOINT_STATES_TOPIC, JointState, 10),
        (ur_driver.SPEED_SCALING_TOPIC, Float64, 10),
        (COLOR_TOPIC, Image, qos_profile_sensor_data),
        (DEPTH_TOPIC, Image, qos_profile_sensor_data),
        (INFO_TOPIC, CameraInfo, qos_profile_sensor_data),
    ]
    gripper_topic = expect.gripper_joint_states_topic or ur_driver.JOINT_STATES_TOPIC
    if gripper_topic != ur_driver.JOINT_STATES_TOPIC:
        wanted.append((gripper_topic, JointState, 10))
    if expect.program_running_topic:
        wanted.append((expect.program_running_topic, Bool, latched))
    if expect.real_driver:
        try:
            from ur_dashboard_msgs.msg import SafetyMode  # type: ignore[import-not-found]

            wanted.append((ur_driver.SAFETY_MODE_TOPIC, SafetyMode, latched))
        except ImportError:
            seen.safety_mode_observable = False
    statuses: dict[str, Any] = {}
    if expect.gripper_mode == "parallel":
        from action_msgs.msg import GoalStatusArray

        wanted.append((f"{expect.gripper_action}/_action/status", GoalStatusArray, latched))
    if expect.real_driver and expect.gripper_mode != "topic":
        from std_msgs.msg import String

        wanted.append((GRIPPER_DESCRIPTION_TOPIC, String, latched))

    def keep(topic: str):
        def callback(msg: Any) -> None:
            with lock:
                if topic.endswith("/_action/status"):
                    statuses[topic] = msg
                    return
                if topic == gripper_topic and expect.gripper_joint not in list(
                        getattr(msg, "name", [])) and topic in seen.messages:
                    return
                if topic not in seen.messages or topic == gripper_topic:
                    seen.messages[topic] = msg
        return callback

    subs = [node.create_subscription(t, topic, keep(topic), qos) for topic, t, qos in wanted]
    tf_edges = _tf_subscriptions(node, lock)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        # Until everything expected is seen or the time is up: discovery on a loaded machine
        # can take seconds, and a missing part is only reported after the full wait.
        deadline = time.monotonic() + max(0.5, timeout)
        while True:
            _read_graph(node, seen)
            with lock:
                seen.tf_edges = None if tf_edges is None else dict(tf_edges)
                snapshot = Observations(seen.nodes, seen.publishers, seen.subscribers,
                                        seen.services, dict(seen.messages), seen.controllers,
                                        seen.safety_mode_observable, None, seen.tf_edges)
            # (the TCP check needs a service call, made once after the wait)
            complete = all(c.status != Status.MISSING for c in evaluate(expect, snapshot)
                           if c.name != "TCP offset")
            if complete or time.monotonic() >= deadline:
                break
            time.sleep(0.25)
        if expect.real_driver:
            seen.controllers = _list_controllers(node)
            seen.executor_tcp_offset = _executor_parameter(node, "tcp_offset")
        with lock:
            status = statuses.get(f"{expect.gripper_action}/_action/status")
        if status is not None:
            seen.gripper_result = _last_gripper_result(node, expect.gripper_action, status)
        seen.messages = snapshot.messages
        description = seen.messages.get(GRIPPER_DESCRIPTION_TOPIC)
        seen.gripper_description = None if description is None else str(description.data)
    finally:
        executor.shutdown()
        thread.join(timeout=2.0)  # the spin loop must end before its context does
        for sub in subs:
            node.destroy_subscription(sub)
        node.destroy_node()
        rclpy.shutdown(context=context)
    return seen


def _read_graph(node: Any, seen: Observations) -> None:
    """Nodes, topics (with publisher / subscriber counts) and services as the graph has them."""
    seen.nodes = {("/" + ns.strip("/") + "/" + n).replace("//", "/")
                  for n, ns in node.get_node_names_and_namespaces()}
    seen.publishers, seen.subscribers = {}, {}
    for topic, _types in node.get_topic_names_and_types():
        seen.publishers[topic] = node.count_publishers(topic)
        seen.subscribers[topic] = node.count_subscribers(topic)
    seen.services = {name for name, _ in node.get_service_names_and_types()}


def _tf_subscriptions(node: Any, lock: threading.Lock) -> dict[str, str] | None:
    """child -> parent from /tf_static and /tf; None where tf2_msgs is not installed."""
    try:
        from tf2_msgs.msg import TFMessage  # type: ignore[import-not-found]
    except ImportError:
        return None
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    edges: dict[str, str] = {}

    def callback(msg: Any) -> None:
        with lock:
            for t in msg.transforms:
                edges[t.child_frame_id.lstrip("/")] = t.header.frame_id.lstrip("/")

    static = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(TFMessage, "/tf_static", callback, static)
    node.create_subscription(TFMessage, "/tf", callback, 100)
    return edges


def _list_controllers(node: Any, timeout: float = 3.0) -> dict[str, str] | None:
    """controller_manager's list_controllers (None where its messages are not installed)."""
    try:
        from controller_manager_msgs.srv import ListControllers  # type: ignore[import-not-found]
    except ImportError:
        return None
    client = node.create_client(ListControllers, "/controller_manager/list_controllers")
    if not client.wait_for_service(timeout_sec=timeout):
        return {}
    future = client.call_async(ListControllers.Request())
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.02)
    result = future.result() if future.done() else None
    if result is None:
        return {}
    return {c.name: c.state for c in result.controller}


def _last_gripper_result(node: Any, action: str, status: Any,
                         timeout: float = 2.0) -> tuple[bool, bool, float] | None:
    """(stalled, reached_goal, knuckle) of the newest finished ParallelGripperCommand goal in
    the action's status, asked of its get_result service (results stay there for a while)."""
    try:
        from control_msgs.action import (  # type: ignore[import-not-found]
            ParallelGripperCommand,
        )
    except ImportError:
        return None
    done = [s for s in status.status_list if s.status in (4, 6)]  # SUCCEEDED, ABORTED
    if not done:
        return None
    last = max(done, key=lambda s: (s.goal_info.stamp.sec, s.goal_info.stamp.nanosec))
    service = ParallelGripperCommand.Impl.GetResultService
    client = node.create_client(service, f"{action}/_action/get_result")
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            return None
        future = client.call_async(service.Request(goal_id=last.goal_info.goal_id))
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.02)
        response = future.result() if future.done() else None
    finally:
        node.destroy_client(client)
    if response is None or not len(response.result.state.position):
        return None
    r = response.result
    return bool(r.stalled), bool(r.reached_goal), float(r.state.position[0])


def _executor_parameter(node: Any, name: str, timeout: float = 3.0) -> float | None:
    """A double parameter of frankenbot_executor (rcl_interfaces GetParameters), or None."""
    from rcl_interfaces.srv import GetParameters

    client = node.create_client(GetParameters, "/frankenbot_executor/get_parameters")
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            return None
        future = client.call_async(GetParameters.Request(names=[name]))
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.02)
        result = future.result() if future.done() else None
        if result is None or not result.values or result.values[0].type != 3:  # DOUBLE
            return None
        return float(result.values[0].double_value)
    finally:
        node.destroy_client(client)


def run(setup: str, timeout: float = 5.0) -> list[Check]:
    expect = Expectations.from_setup(setup)
    return evaluate(expect, observe(expect, timeout))


# --- CLI ------------------------------------------------------------------------------------
def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check a running system and say what is missing",
                       description="Listen on the ROS graph and check the driver (topics, "
                       "controllers, External Control program), the camera (topics, pose), "
                       "the gripper and the brain's nodes, as the setup's parameter file "
                       "expects them. Exit code 1 when something is missing.")
    p.add_argument("--setup", choices=("sim", "real_ur5e", "gazebo"), default="real_ur5e")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to listen")
    p.set_defaults(func=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    import os

    if not (math.isfinite(args.timeout) and args.timeout > 0):
        from frankenbot.errors import ConfigError

        raise ConfigError(f"--timeout must be > 0 s, got {args.timeout}")
    checks = run(args.setup, args.timeout)
    print(f"frankenbot doctor: setup {args.setup}, ROS_DOMAIN_ID="
          f"{os.environ.get('ROS_DOMAIN_ID', '0')}, listened {args.timeout:g} s")
    for check in checks:
        print(check.line())
    missing = [c for c in checks if c.status == Status.MISSING]
    print(f"{len(checks) - len(missing)} of {len(checks)} present"
          + (f"; missing: {', '.join(c.name for c in missing)}" if missing else ""))
    return 1 if missing else 0



"""The frankenbot_executor node over real DDS: sim node + executor node in their own processes.

The test side publishes a fresh (empty) /frankenbot/scene, as perception would, sends
ExecuteProgram goals and watches /frankenbot/tree_state and /frankenbot/events.
"""

from __future__ import annotations

import json
import sys
import time

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

rclpy = pytest.importorskip("rclpy")

from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402

from frankenbot.nodes.scene_msgs import scene_to_msg  # noqa: E402
from frankenbot.nodes.spin import make_executor, spin_once  # noqa: E402
from frankenbot.state import Scene  # noqa: E402
from frankenbot_interfaces.action import ExecuteProgram  # noqa: E402
from frankenbot_interfaces.msg import AnomalyEvent, SceneObjects, TreeState  # noqa: E402

OK_PROGRAM = 'task "settle" { main { home() wait(seconds=0.3) exit success } }'
LONG_WAIT = 'task "long" { main { wait(seconds=20) exit success } }'


class Client:
    def __init__(self, context) -> None:
        self.node = rclpy.create_node("executor_node_test_client", context=context)
        self.executor = make_executor(4, context=context)
        self.executor.add_node(self.node)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.trees: list[TreeState] = []
        self.events: list[AnomalyEvent] = []
        self.feedback: list = []
        self.node.create_subscription(TreeState, "/frankenbot/tree_state", self.trees.append,
                                      latched)
        self.node.create_subscription(AnomalyEvent, "/frankenbot/events", self.events.append, 50)
        self.scene_pub = self.node.create_publisher(SceneObjects, "/frankenbot/scene", 5)
        self.estop_pub = self.node.create_publisher(Bool, "/frankenbot/estop", 10)
        self.node.create_timer(0.1, self._publish_scene)
        self.action = ActionClient(self.node, ExecuteProgram, "/frankenbot/execute_program")

    def _publish_scene(self) -> None:
        now = self.node.get_clock().now().nanoseconds * 1e-9
        self.scene_pub.publish(scene_to_msg(Scene(stamp=now)))

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            spin_once(self.executor, 0.05)
        return bool(predicate())

    def run(self, program: str, *, during=None, timeout: float = 60.0):
        assert self.action.wait_for_server(timeout_sec=30.0)
        send = self.action.send_goal_async(
            ExecuteProgram.Goal(task_id=f"t{time.monotonic_ns()}", instruction="test",
                                program=program), feedback_callback=self.feedback.append)
        assert self.spin_until(send.done, 10.0)
        handle = send.result()
        if not handle.accepted:
            return None
        result = handle.get_result_async()
        if during is not None:
            during(handle)
        assert self.spin_until(result.done, timeout), "no result"
        return result.result().result


@pytest.fixture(scope="module")
def ros(request):
    import os
    import signal
    import subprocess
    import tempfile
    from pathlib import Path

    procs = []
    logs = []
    for cmd in (
        [sys.executable, "-m", "frankenbot.nodes.sim_node", "--ros-args", "-p", "render:=false",
         "-p", "task:=pick_up", "-p", "seed:=1"],
        [sys.executable, "-m", "frankenbot.nodes.executor_node", "--ros-args",
         "-p", "tier2_method:=rules", "-p", "scene_stale_after_s:=2.0"],
    ):
        log = Path(tempfile.mkstemp(prefix="fb-exec-node-", suffix=".log")[1])
        logs.append(log)
        procs.append(subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT,
                                      env=dict(os.environ), start_new_session=True))
    context = rclpy.context.Context()
    rclpy.init(context=context)
    client = Client(context)
    try:
        yield client
    finally:
        client.node.destroy_node()
        rclpy.shutdown(context=context)
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=5)
        for log in logs:
            sys.stderr.write(f"\n--- {log.name} ---\n{log.read_text(errors='replace')[-2500:]}\n")
            log.unlink(missing_ok=True)


def test_a_program_runs_to_success_with_trace_tree_state_and_feedback(ros):
    res = ros.run(OK_PROGRAM)
    assert res is not None and res.success, res.reason if res else "rejected"
    assert res.outcome == "success" and res.steps >= 3 and res.duration > 0.2
    assert res.final_program == OK_PROGRAM and res.replans == 0 and res.vlm_calls == 0
    trace = json.loads(res.trace_json)
    assert [e["node"] for e in trace if e["event"] == "enter"][:2] == ["home()",
                                                                     "wait(seconds=0.3)"]
    assert ros.spin_until(lambda: ros.trees and ros.trees[-1].phase == "done", 5.0)
    assert "main/0" in ros.trees[-1].node_paths
    assert ros.feedback, "no action feedback"


def test_invalid_program_ends_with_error_and_moves_nothing(ros):
    res = ros.run('task "bad" { main { fly(to=moon) } }')
    assert res is not None and not res.success
    assert res.outcome == "error" and "invalid program" in res.reason
    assert json.loads(res.trace_json) == []


def test_cancel_ends_the_goal_quickly_as_cancelled(ros):
    def cancel(handle) -> None:
        ros.spin_until(lambda: False, 1.0)
        handle.cancel_goal_async()

    t0 = time.monotonic()
    res = ros.run(LONG_WAIT, during=cancel)
    assert res.outcome == "cancelled" and not res.success
    assert time.monotonic() - t0 < 10.0


def test_estop_ends_the_program_with_estop_and_an_event(ros):
    def press(handle) -> None:
        ros.spin_until(lambda: False, 1.0)
        ros.estop_pub.publish(Bool(data=True))

    ros.events.clear()
    try:
        res = ros.run(LONG_WAIT, during=press)
    finally:
        ros.estop_pub.publish(Bool(data=False))
        ros.spin_until(lambda: False, 0.5)
    assert res.outcome == "estop" and not res.success
    assert any(a.kind == "estop" for a in res.anomalies)
    assert ros.spin_until(lambda: any(e.kind == "estop" for e in ros.events), 3.0)


def test_pixel_target_without_a_perception_node_fails_cleanly_and_moves_nothing(ros):
    """The pixel primitives ask frankenbot_perception/resolve_pixel; with no perception node
    the step fails with that reason and the arm stays where it was."""
    from sensor_msgs.msg import JointState

    states: list = []
    sub = ros.node.create_subscription(JointState, "/joint_states", states.append, 10)
    try:
        assert ros.spin_until(lambda: bool(states), 10.0), "no /joint_states from the sim"
        before = list(states[-1].position)
        res = ros.run('task "px" { main { move_above_pixel(u=320, v=300, height=0.1) '
                      'exit success } }', timeout=120.0)
        assert res is not None and not res.success
        said = " ".join([res.reason, res.trace_json] + [a.detail for a in res.anomalies])
        assert "resolve_pixel is not available" in said, said[:2000]
        states.clear()
        assert ros.spin_until(lambda: bool(states), 5.0)
        moved = max(abs(a - b) for a, b in zip(before, states[-1].position, strict=True))
        assert moved < 1e-3, f"the arm moved {moved:.4f} rad"
    finally:
        ros.node.destroy_subscription(sub)

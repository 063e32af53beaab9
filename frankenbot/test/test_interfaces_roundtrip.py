"""frankenbot_interfaces over real DDS: a service and an action served in one process, called from
another, every field round-tripped."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import FIXTURES, spin_until

pytestmark = pytest.mark.ros


def _plain(msg):
    if hasattr(msg, "get_fields_and_field_types"):
        return {name: _plain(getattr(msg, name)) for name in msg.get_fields_and_field_types()}
    if isinstance(msg, (list, tuple)) or type(msg).__name__ == "array":
        return [_plain(x) for x in msg]
    return msg


@pytest.fixture
def echo_server(spawn_process):
    return spawn_process([sys.executable, str(FIXTURES / "interfaces" / "echo_server.py")])


def _event(kind: str, tier: int):
    from builtin_interfaces.msg import Time

    from frankenbot_interfaces.msg import AnomalyEvent

    return AnomalyEvent(
        task_id="t-7", event_id=str(tier), kind=kind, anomaly_class="predictable", tier=tier,
        source="builtin:grasp_lost", node_path="main/2/place_in", detail="dropped at 0.3 m",
        detected_at=Time(sec=12, nanosec=5000), recovery_commanded_at=Time(sec=12, nanosec=9000),
        latency=0.004, action="handler dropped", outcome="recovered",
    )


def test_service_round_trips_every_request_field(ros_context, echo_server):
    import rclpy

    from frankenbot_interfaces.srv import RecordEpisode

    node = rclpy.create_node("fb_roundtrip_client", context=ros_context)
    try:
        client = node.create_client(RecordEpisode, "/fb_test/record_episode")
        assert spin_until(node, lambda: client.service_is_ready(), timeout=30.0), "no service"
        request = RecordEpisode.Request(
            task_id="t-7", instruction="put the red block in the green bowl",
            program='task "x" {\n  main {\n    exit success\n  }\n}', success=True,
            outcome="success", anomalies=[_event("grasp_lost", 1), _event("object_moved", 3)],
            vlm_calls=4, repair_calls=1, planning_time=2.25, execution_time=31.5,
            trace_json='[{"path": "main/0"}]',
        )
        future = client.call_async(request)
        assert spin_until(node, future.done, timeout=15.0)
        response = future.result()
        assert json.loads(response.message) == _plain(request)
        assert response.ok is True
        assert response.episode_id == 2004
        assert list(response.promoted_skills) == ["grasp_lost", "object_moved"]
    finally:
        node.destroy_node()


def test_action_round_trips_goal_feedback_and_result(ros_context, echo_server):
    import rclpy
    from rclpy.action import ActionClient

    from frankenbot_interfaces.action import ExecuteProgram

    node = rclpy.create_node("fb_roundtrip_action_client", context=ros_context)
    try:
        client = ActionClient(node, ExecuteProgram, "/fb_test/execute_program")
        assert spin_until(node, lambda: client.server_is_ready(), timeout=30.0), "no action server"
        feedback: list = []
        goal = ExecuteProgram.Goal(
            task_id="t-9", instruction="stack the blue block on the red block",
            program="pick(obj=blue_block)\nplace_on(obj=blue_block, target=red_block)",
        )
        send = client.send_goal_async(
            goal, feedback_callback=lambda fb: feedback.append(fb.feedback))
        assert spin_until(node, send.done, timeout=15.0)
        handle = send.result()
        assert handle.accepted
        result_future = handle.get_result_async()
        assert spin_until(node, result_future.done, timeout=15.0)
        spin_until(node, lambda: bool(feedback), timeout=2.0)
        result = result_future.result().result
        assert json.loads(result.reason) == _plain(goal)
        assert result.success and result.outcome == "success"
        assert result.final_program == goal.program
        assert (result.replans, result.vlm_calls, result.steps) == (2, 3, len(goal.program))
        assert result.duration == pytest.approx(1.5)
        assert [e.kind for e in result.anomalies] == ["grasp_lost"]
        assert result.anomalies[0].latency == pytest.approx(0.012)
        assert json.loads(result.trace_json) == [{"path": "main/0", "event": "enter"}]
        assert feedback, "no feedback arrived"
        assert feedback[0].phase == "executing" and feedback[0].active_line == 1
        assert feedback[0].active_node == "pick(obj=blue_block)"
        assert feedback[0].events[0].tier == 1
    finally:
        node.destroy_node()

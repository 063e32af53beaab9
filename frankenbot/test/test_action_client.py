"""The action client's send/response race (ros2/rclpy#1123), forced open and shown closed.

A proxy around the client's C handle waits after sending each request, so the response arrives
and is handled by the spinning thread before rclpy files the request: rclpy's own client loses
it (the future never completes), FrankenBot's completes. Real rclpy, one process, two nodes."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = pytest.mark.ros

SEND_LAG_S = 0.5  # s the sender stalls between sending and filing: the response lands meanwhile


class _LaggingHandle:
    """The client's rclpy handle, stalling the sender after each request it sends."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._handle, name)
        if not name.startswith("send_"):
            return attr

        def send(*args: Any) -> Any:
            sequence = attr(*args)
            time.sleep(SEND_LAG_S)
            return sequence
        return send


def _goal_and_result(ros_context, client_cls) -> tuple[bool, bool]:
    """Send one goal through ``client_cls`` with the lag; whether its acceptance arrived, and
    whether its result did."""
    import rclpy
    from rclpy.action import ActionServer
    from rclpy.callback_groups import ReentrantCallbackGroup

    from frankenbot.nodes.spin import Spinner, make_executor, wait_future
    from frankenbot_interfaces.action import RunTask

    def finish(goal_handle: Any) -> Any:
        goal_handle.succeed()
        return RunTask.Result(success=True)

    server_node = rclpy.create_node("race_server", context=ros_context)
    client_node = rclpy.create_node("race_client", context=ros_context)
    group = ReentrantCallbackGroup()
    ActionServer(server_node, RunTask, "race/run_task", execute_callback=finish,
                 callback_group=group)
    client = client_cls(client_node, RunTask, "race/run_task", callback_group=group)
    executor = make_executor(4, context=ros_context)
    executor.add_node(server_node)
    executor.add_node(client_node)
    spinner = Spinner(executor).start()
    try:
        assert client.wait_for_server(timeout_sec=20.0)
        client._client_handle = _LaggingHandle(client._client_handle)
        send = client.send_goal_async(RunTask.Goal(instruction="race"))
        if not wait_future(send, 5.0) or not send.result().accepted:
            return False, False
        result = send.result().get_result_async()
        return True, wait_future(result, 5.0) and result.result().result.success
    finally:
        spinner.stop()
        client.destroy()
        executor.shutdown()
        server_node.destroy_node()
        client_node.destroy_node()


def test_a_response_before_filing_is_kept(ros_context):
    from frankenbot.nodes.action_client import ActionClient

    assert _goal_and_result(ros_context, ActionClient) == (True, True)


def test_rclpy_client_loses_it_so_the_race_is_real(ros_context):
    # the same setup with rclpy's own client: the acceptance is dropped as "unexpected". If a
    # later rclpy files before sending, this fails and the subclass can go.
    from rclpy.action import ActionClient

    assert _goal_and_result(ros_context, ActionClient) == (False, False)

"""The CLI's and benchmarks' ROS client (bringup/ros_client.BrainClient) over real DDS."""

from __future__ import annotations

import os
import threading
import time

import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")


def test_a_raising_callback_does_not_stop_the_clients_spinning() -> None:
    """One callback that raises used to end the client's spin() silently; every later service
    answer was then lost (a soak lost all sim resets after one). It is logged and counted now,
    and the next call is answered."""
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import Header

    from frankenbot.bringup.ros_client import BrainClient
    from frankenbot_interfaces.srv import EvaluateTask

    ns = f"/rc_test_{os.getpid()}"
    context = rclpy.context.Context()
    rclpy.init(context=context)
    server = rclpy.create_node("frankenbot_sim", namespace=ns, context=context)

    def evaluate(request, response):
        response.success, response.details = True, "answered"
        return response

    server.create_service(EvaluateTask, "frankenbot_sim/evaluate", evaluate)
    pub = server.create_publisher(Header, "boom", 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(server)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        with BrainClient("rc_test_client", namespace=ns) as client:
            def explode(_msg) -> None:
                raise RuntimeError("a callback's bug")

            client.node.create_subscription(Header, "boom", explode, 10,
                                            callback_group=client._group)
            assert client.sim_evaluate(timeout=20.0).details == "answered"
            deadline = time.monotonic() + 20.0
            while client.spin_errors == 0 and time.monotonic() < deadline:
                pub.publish(Header(frame_id="x"))
                time.sleep(0.1)
            assert client.spin_errors >= 1, "the raising callback never ran"
            assert client._spinner.is_alive()
            assert client.sim_evaluate(timeout=20.0).details == "answered"
    finally:
        executor.shutdown(timeout_sec=1.0)
        server.destroy_node()
        rclpy.shutdown(context=context)

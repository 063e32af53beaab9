"""The executor node takes the scene's fixture map from the sim's latched topic (real rclpy, in
one process): primitives built on its provider see a scene change; a malformed map is ignored."""

from __future__ import annotations

import json
import time

import pytest

pytestmark = [pytest.mark.ros]

rclpy = pytest.importorskip("rclpy")

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402

TOPIC = "/test_fixture_map/fixture_map"


@pytest.fixture()
def node():
    from frankenbot.nodes.executor_node import ExecutorNode
    from frankenbot.primitives.factory import build_primitives
    from frankenbot.sim.robot_adapter import SimRobot
    from frankenbot.sim.world import SimWorld

    rclpy.init(args=["--ros-args", "-p", f"fixture_map_topic:={TOPIC}",
                     "-p", "tier2_method:=rules"])
    world = SimWorld(task="pick_up", seed=0, width=64, height=48)
    robot = SimRobot(world, physics_thread=False)
    holder: list = []
    prims = build_primitives(robot, fixture_map=lambda: holder[0].fixture_map())
    n = ExecutorNode(robot=robot, primitives=prims)
    holder.append(n)
    pub_node = rclpy.create_node("fixture_map_test_publisher")
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pub = pub_node.create_publisher(String, TOPIC, latched)
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(n)
    executor.add_node(pub_node)
    try:
        yield n, prims, pub, executor, world
    finally:
        executor.shutdown()
        n.destroy_node()
        pub_node.destroy_node()
        world.close()
        rclpy.shutdown()


def spin_until(executor, predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        executor.spin_once(timeout_sec=0.05)
    return bool(predicate())


def test_the_executor_node_follows_the_fixture_map_topic(node):
    n, prims, pub, executor, world = node
    # until a map arrives: the cell's file (the first waves' drawer and zone)
    assert prims.fixture_map().part("drawer") is not None
    assert prims.fixture_map().part("top_drawer") is None
    world.reset("open_cabinet_drawer", 0)
    pub.publish(String(data=json.dumps(world.fixture_map_data())))
    assert spin_until(executor, lambda: prims.fixture_map().part("top_drawer") is not None)
    assert prims.fixture_map().part("drawer") is None
    # a malformed map is ignored, the last good one stays
    pub.publish(String(data='{"fixtures": {"cabinet": {"shape": "teapot"}}}'))
    pub.publish(String(data="{not json"))
    for _ in range(20):
        executor.spin_once(timeout_sec=0.05)
    assert prims.fixture_map().part("top_drawer") is not None

"""MCAP recordings in ROS 2 encoding, the per-task splitter, and the live view's conversions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from rclpy.serialization import serialize_message

from frankenbot.errors import ConfigError, FrankenbotError
from frankenbot.eval.recording import McapRecorder, message_definition, summarise_mcap


def _decoded(path):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return [(c.topic, s.name, m) for s, c, _, m in reader.iter_decoded_messages()]


def test_definition_carries_every_dependency_once():
    text = message_definition("frankenbot_interfaces/msg/SceneObjects")
    assert text.startswith("# The perceived scene")
    for dep in ("std_msgs/Header", "builtin_interfaces/Time", "frankenbot_interfaces/SceneObject",
                "geometry_msgs/Pose", "geometry_msgs/Point", "geometry_msgs/Quaternion",
                "geometry_msgs/Vector3"):
        pkg, name = dep.split("/")
        assert text.count(f"\nMSG: {pkg}/msg/{name}\n") == 1, dep
    with pytest.raises(ConfigError, match="not a ROS 2 message type"):
        message_definition("Image")
    with pytest.raises(ConfigError, match="not installed"):
        message_definition("no_such_pkg/msg/Thing")


def test_recorded_messages_decode_back_with_their_fields(tmp_path):
    from sensor_msgs.msg import JointState

    from frankenbot_interfaces.msg import SceneObject, SceneObjects, TreeState

    path = tmp_path / "rec.mcap"
    with McapRecorder(path) as rec:
        for i in range(5):
            js = JointState(name=["shoulder_pan_joint"], position=[0.1 * i])
            js.header.stamp.sec = i
            rec.write("/joint_states", "sensor_msgs/msg/JointState", serialize_message(js),
                      log_time_ns=1_000_000_000 + i * 1000)
        tree = TreeState(task_id="t1", phase="executing", active_path="main/1",
                         node_paths=["main/0", "main/1"], node_statuses=["success", "running"])
        rec.write("/frankenbot/tree_state", "frankenbot_interfaces/msg/TreeState",
                  serialize_message(tree), log_time_ns=1_000_010_000)
        scene = SceneObjects(objects=[SceneObject(id="red_block", shape="block")])
        scene.objects[0].size.x = 0.04
        rec.write("/frankenbot/scene", "frankenbot_interfaces/msg/SceneObjects",
                  serialize_message(scene), log_time_ns=1_000_020_000)
    summary = summarise_mcap(path)
    assert summary.topics == {"/joint_states": ("sensor_msgs/msg/JointState", 5),
                              "/frankenbot/tree_state": ("frankenbot_interfaces/msg/TreeState", 1),
                              "/frankenbot/scene": ("frankenbot_interfaces/msg/SceneObjects", 1)}
    decoded = _decoded(path)
    joints = [m for t, _, m in decoded if t == "/joint_states"]
    assert [round(m.position[0], 3) for m in joints] == [0.0, 0.1, 0.2, 0.3, 0.4]
    (tree_back,) = [m for t, _, m in decoded if t == "/frankenbot/tree_state"]
    assert tree_back.node_statuses == ["success", "running"] and tree_back.phase == "executing"
    (scene_back,) = [m for t, _, m in decoded if t == "/frankenbot/scene"]
    assert scene_back.objects[0].id == "red_block"
    assert scene_back.objects[0].size.x == pytest.approx(0.04)


def test_unfinished_or_missing_recordings_are_clear_errors(tmp_path):
    with pytest.raises(FrankenbotError, match="no recording"):
        summarise_mcap(tmp_path / "none.mcap")


def _status(task_id: str, phase: str, done: bool = False) -> bytes:
    from frankenbot_interfaces.msg import TaskStatus

    return serialize_message(TaskStatus(task_id=task_id, phase=phase, done=done))


def test_up_records_one_file_per_task_each_primed_with_the_latched_state(tmp_path):
    from sensor_msgs.msg import JointState

    from frankenbot.bringup.tap import TOPICS_BY_NAME, PerTaskRecordingSink
    from frankenbot_interfaces.msg import TreeState

    closed = []
    sink = PerTaskRecordingSink(tmp_path, on_closed=closed.append)
    status = TOPICS_BY_NAME["/frankenbot/task_status"]
    tree = TOPICS_BY_NAME["/frankenbot/tree_state"]
    joints = TOPICS_BY_NAME["/joint_states"]
    js = serialize_message(JointState(name=["a"], position=[0.0]))
    sink.on_message(joints, js, 1)  # between tasks: not recorded
    sink.on_message(tree, serialize_message(TreeState(phase="idle")), 2)
    for task in ("task-1", "task-2"):
        sink.on_message(status, _status(task, "planning"), 3)
        for _ in range(3):
            sink.on_message(joints, js, 4)
        sink.on_message(status, _status(task, "done", done=True), 5)
        sink.on_message(joints, js, 6)  # after the task: not recorded
    sink.close()
    assert len(closed) == 2 and closed == sink.paths
    assert all(p.name.endswith(f"-task-{i + 1}.mcap") for i, p in enumerate(closed))
    for path in closed:
        topics = summarise_mcap(path).topics
        assert topics["/joint_states"][1] == 3
        assert topics["/frankenbot/task_status"][1] == 2
        assert topics["/frankenbot/tree_state"][1] == 1  # primed from the latest latched message


def test_scene_becomes_boxes_with_labels_and_stale_objects_are_deleted():
    from frankenbot.bringup.live_view import scene_boxes, scene_message
    from frankenbot_interfaces.msg import SceneObject, SceneObjects

    msg = SceneObjects(objects=[SceneObject(id="red_block", colour="red", confidence=0.9),
                                SceneObject(id="drawer", is_fixture=True)])
    msg.objects[0].pose.position.z = 0.02
    msg.objects[0].size.z = 0.04
    msg.header.frame_id = "base_link"
    boxes = scene_boxes(msg)
    assert [b.id for b in boxes] == ["red_block", "drawer"]
    assert boxes[0].label == "red_block (0.90)" and boxes[0].rgba[0] > 0.5
    assert boxes[0].orientation == (0.0, 0.0, 0.0, 1.0)  # a zero quaternion becomes identity
    assert boxes[1].rgba[3] < 0.5  # fixtures are translucent
    msg.stale = True
    assert scene_boxes(msg)[0].rgba[3] < boxes[0].rgba[3]  # a stale scene is dimmed
    assert scene_message(msg).encode()  # encodes to the foxglove schema


def test_arm_frames_chain_reproduces_forward_kinematics():
    from builtin_interfaces.msg import Time

    from frankenbot.bringup.live_view import ArmFrames, arm_chain
    from frankenbot.motion.kinematics import HOME_JOINTS, JOINT_NAMES, UR5eKinematics

    kin = UR5eKinematics()
    q = np.array(HOME_JOINTS) + np.array([0.3, -0.2, 0.4, 0.1, -0.5, 0.7])
    chain = arm_chain(kin, list(reversed(JOINT_NAMES)), list(reversed(q)))  # any order
    assert chain is not None
    assert [(a, b) for a, b, _ in chain][:2] == [("base_link", "ur_dh1"), ("ur_dh1", "ur_dh2")]
    assert chain[-2][1] == "tool0" and chain[-1][1] == "tcp"
    pose = np.eye(4)
    for _parent, child, rel in chain:
        pose = pose @ rel
        if child == "tool0":
            np.testing.assert_allclose(pose, kin.fk_tool0(q), atol=1e-9)
    np.testing.assert_allclose(pose, kin.fk(q), atol=1e-9)
    assert arm_chain(kin, ["shoulder_pan_joint"], [0.0]) is None
    transforms, arm = ArmFrames(kin).transforms(list(JOINT_NAMES), list(q), Time(sec=3))
    assert transforms.encode() and arm.encode()


def test_point_cloud_from_depth_puts_a_flat_wall_at_its_depth():
    from sensor_msgs.msg import CameraInfo, Image

    from frankenbot.bringup.live_view import depth_points, point_cloud_message

    raw = np.full((8, 8), 500, dtype=np.uint16)
    raw[0, 0] = 0  # a hole: no point
    depth = Image(height=8, width=8, encoding="16UC1", step=16, data=raw.tobytes())
    info = CameraInfo(height=8, width=8, k=[10.0, 0, 3.5, 0, 10.0, 3.5, 0, 0, 1])
    colour = Image(height=8, width=8, encoding="rgb8", step=24,
                   data=np.full((8, 8, 3), 7, dtype=np.uint8).tobytes())
    points = depth_points(depth, info, colour, stride=2)
    assert len(points) == 15
    assert np.allclose(points["z"], 0.5)
    assert points["x"].min() == pytest.approx((0 - 3.5) * 0.5 / 10.0)
    assert (points["rgba"][:, :3] == 7).all()
    assert point_cloud_message(depth, info, None, stride=2).encode()
    with pytest.raises(ConfigError, match="depth encoding"):
        depth_points(Image(height=1, width=1, encoding="rgb8", step=3, data=b"abc"), info, None)


def test_layout_file_is_current_and_shows_the_channels(package_root):
    from frankenbot.bringup.live_view import CHANNEL_TOPICS, foxglove_layout

    path = package_root / "config" / "foxglove_layout.json"
    assert json.loads(path.read_text()) == foxglove_layout(), \
        "config/foxglove_layout.json is stale: run frankenbot.bringup.live_view.write_layout()"
    text = path.read_text()
    for topic in ("/camera/color/image", "/frankenbot/annotated_image", "/frankenbot/scene",
                  "/frankenbot/tree_state", "/frankenbot/task_status", "/frankenbot/log",
                  "/joint_states", "/camera/points", "/frankenbot/arm"):
        assert topic in CHANNEL_TOPICS and f'"{topic}' in text, topic


def test_live_view_serves_channels_and_forwards_tapped_messages():
    """The server without a robot: serverInfo, adverts, a tapped tree state and scene arrive."""
    import asyncio

    import websockets

    from frankenbot.bringup.live_view import CHANNEL_TOPICS, LiveView, camera_transform
    from frankenbot.bringup.tap import TOPICS_BY_NAME
    from frankenbot_interfaces.msg import SceneObject, SceneObjects, TreeState

    assert camera_transform() is not None  # the sim's camera pose from config/camera.yaml
    view = LiveView(port=0, republish_period=0.2)

    async def client() -> dict:
        async with websockets.connect(f"ws://127.0.0.1:{view.port}", max_size=None,
                                      subprotocols=["foxglove.websocket.v1",
                                                    "foxglove.sdk.v1"]) as ws:
            info = json.loads(await ws.recv())
            channels: dict = {}
            while len(channels) < len(CHANNEL_TOPICS):
                msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
                channels.update({c["id"]: c["topic"] for c in msg.get("channels", [])})
            wanted = {cid: t for cid, t in channels.items()
                      if t in ("/frankenbot/tree_state", "/frankenbot/scene", "/frankenbot/log")}
            await ws.send(json.dumps({"op": "subscribe", "subscriptions": [
                {"id": cid, "channelId": cid} for cid in wanted]}))
            await asyncio.sleep(0.3)
            tree = TreeState(task_id="t9", phase="executing", active_path="main/1",
                             active_node="pick(obj=red_block)", active_line=4,
                             node_paths=["main/1"], node_statuses=["running"], steps=1)
            view.on_message(TOPICS_BY_NAME["/frankenbot/tree_state"], serialize_message(tree), 0)
            scene = SceneObjects(objects=[SceneObject(id="red_block", colour="red")])
            view.on_message(TOPICS_BY_NAME["/frankenbot/scene"], serialize_message(scene), 0)
            expect = {"/frankenbot/tree_state": b'"t9"', "/frankenbot/scene": b"red_block",
                      "/frankenbot/log": b"pick(obj=red_block)"}
            got: dict = {}
            while set(got) != set(expect):  # (the idle heartbeat may come first)
                data = await asyncio.wait_for(ws.recv(), 10)
                if isinstance(data, bytes) and data[0] == 1:
                    topic = wanted[int.from_bytes(data[1:5], "little")]
                    if expect[topic] in data[13:]:
                        got[topic] = data[13:]
            return {"info": info, "channels": channels, "got": got}

    try:
        out = asyncio.run(client())
    finally:
        view.close()
    assert out["info"]["op"] == "serverInfo" and out["info"]["name"] == "frankenbot"
    assert set(out["channels"].values()) == set(CHANNEL_TOPICS)
    tree = json.loads(out["got"]["/frankenbot/tree_state"])
    assert tree["task_id"] == "t9" and tree["nodes"] == [{"path": "main/1", "status": "running"}]
    assert b"red_block" in out["got"]["/frankenbot/scene"]
    assert b"pick(obj=red_block)" in out["got"]["/frankenbot/log"]

"""Bad messages on the topics the brain subscribes to: each is refused with a clear, rate-limited
log line and leaves a stale/failed state that moves nothing; no callback error kills a node."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402
from sensor_msgs.msg import JointState as JointStateMsg  # noqa: E402
from std_msgs.msg import Float64  # noqa: E402

from frankenbot.errors import PerceptionError  # noqa: E402
from frankenbot.motion.kinematics import JOINT_NAMES  # noqa: E402
from frankenbot.nodes.executor_node import goal_problem  # noqa: E402
from frankenbot.nodes.perception_node import check_frame  # noqa: E402
from frankenbot.nodes.robot_msgs import joint_state_problem  # noqa: E402
from frankenbot.nodes.ros_robot import JOINT_STATES_TOPIC, SCENE_TOPIC, RosRobot  # noqa: E402
from frankenbot.nodes.scene_msgs import (  # noqa: E402
    depth_from_image_msg,
    intrinsics_from_camera_info,
    rgb_from_image_msg,
    scene_from_msg,
    scene_to_msg,
)
from frankenbot.planner.planner import _instruction_problem  # noqa: E402
from frankenbot.state import Scene, SceneObject  # noqa: E402

GOOD = dict(name=list(JOINT_NAMES), position=[0.1] * 6, velocity=[0.0] * 6)


@pytest.mark.parametrize("change, words", [
    ({"position": [math.nan] + [0.0] * 5}, "not a finite"),
    ({"position": [math.inf] * 6}, "not a finite"),
    ({"position": [1e6] * 6}, "not a finite angle"),
    ({"velocity": [-math.inf] * 6}, "velocity"),
    ({"name": ["a", "b", "c", "d", "e", "f"]}, "missing"),
    ({"name": list(JOINT_NAMES[:5])}, "missing"),
    ({"position": [0.0] * 5}, "6 names but 5 positions"),
    ({"velocity": [0.0] * 2}, "6 names but 2 velocities"),
    ({"name": list(JOINT_NAMES[:5]) + [JOINT_NAMES[0]]}, "duplicate"),
])
def test_joint_state_problems_are_named(change, words) -> None:
    msg = JointStateMsg(**{**GOOD, **change})
    assert words in joint_state_problem(msg)


def test_a_valid_joint_state_has_no_problem() -> None:
    assert joint_state_problem(JointStateMsg(**GOOD)) == ""
    # velocities may be absent (some drivers), extra joints (the gripper) are fine
    extra = JointStateMsg(name=[*JOINT_NAMES, "robotiq_85_left_knuckle_joint"],
                          position=[0.0] * 7)
    assert joint_state_problem(extra) == ""


class _Logger:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, float]] = []

    def warning(self, text: str, throttle_duration_sec: float = 0.0) -> None:
        self.lines.append(("warning", text, throttle_duration_sec))

    warn = warning

    def info(self, text: str, throttle_duration_sec: float = 0.0) -> None:
        self.lines.append(("info", text, throttle_duration_sec))


@pytest.fixture
def robot(ros_context):
    node = rclpy.create_node("reliability_messages", context=ros_context)
    r = RosRobot(node, trajectory_topic="/nobody/joint_trajectory", estop_topic="/nobody/estop")
    log = _Logger()
    node.get_logger = lambda: log  # type: ignore[method-assign]
    yield r, log
    node.destroy_node()


def test_bad_joint_states_are_dropped_logged_and_leave_no_state(robot) -> None:
    r, log = robot
    r.joint_state_callback(JointStateMsg(name=list(JOINT_NAMES), position=[math.nan] * 6))
    r.joint_state_callback(JointStateMsg(name=["x"], position=[0.0]))
    assert r.joint_state() is None  # no state: every primitive refuses to move (NO_STATE)
    assert r.rejected[JOINT_STATES_TOPIC] == 2
    assert all(t >= 1.0 for _, _, t in log.lines)  # rate limited
    assert "rejected" in log.lines[0][1] and "motion stops" in log.lines[0][1]
    r.joint_state_callback(JointStateMsg(**GOOD))
    state = r.joint_state()
    assert state is not None and state.positions == (0.1,) * 6
    # a bad one after a good one does not overwrite the good one
    r.joint_state_callback(JointStateMsg(name=list(JOINT_NAMES), position=[math.inf] * 6))
    assert r.joint_state().positions == (0.1,) * 6


def _obj(oid: str = "red_block", x: float = 0.4) -> SceneObject:
    return SceneObject(oid, "red block", "block", "red", (x, 0.1, 0.02), (0.04, 0.04, 0.04))


def test_scene_with_a_nan_pose_is_rejected_and_the_scene_goes_stale(robot) -> None:
    r, log = robot
    good = scene_to_msg(Scene(objects=(_obj(),), stamp=5.0))
    r.scene_callback(good)
    assert not r.scene().stale and r.scene().objects[0].object_id == "red_block"
    bad = scene_to_msg(Scene(objects=(_obj(x=math.nan),), stamp=6.0))
    with pytest.raises(PerceptionError, match="not finite"):
        scene_from_msg(bad)
    r.scene_callback(bad)
    scene = r.scene()
    assert scene.stale and scene.objects[0].position[0] == pytest.approx(0.4)
    assert r.rejected[SCENE_TOPIC] == 1 and "stale" in log.lines[-1][1]


@pytest.mark.parametrize("mutate, words", [
    (lambda m: setattr(m.objects[0].size, "x", -1.0), "negative size"),
    (lambda m: setattr(m.objects[0].pose.position, "z", 1e9), "beyond"),
    (lambda m: setattr(m.objects[0].pose.orientation, "w", 0.0), "zero quaternion"),
    (lambda m: setattr(m.objects[0], "id", "bad\x00id"), "control characters"),
    (lambda m: m.objects.append(m.objects[0]), "duplicate"),
    (lambda m: setattr(m, "latency", math.inf), "latency"),
])
def test_scene_message_problems(mutate, words) -> None:
    msg = scene_to_msg(Scene(objects=(_obj(),), stamp=1.0))
    mutate(msg)
    with pytest.raises(PerceptionError, match=words):
        scene_from_msg(msg)


def test_speed_scaling_nan_is_logged_and_ignored(robot) -> None:
    r, log = robot
    r.speed_scaling_callback(Float64(data=50.0))  # percent
    r.speed_scaling_callback(Float64(data=math.nan))
    assert r.speed_scaling() == pytest.approx(0.5) and "rejected" in log.lines[-1][1]


def _image(h: int, w: int, encoding: str, data: bytes, step: int) -> Image:
    return Image(height=h, width=w, encoding=encoding, step=step, data=data)


@pytest.mark.parametrize("msg, words", [
    (_image(0, 0, "rgb8", b"", 0), "has 0 bytes"),
    (_image(2, 2, "yuv422", b"\0" * 8, 4), "not supported"),
    (_image(4, 4, "rgb8", b"\0" * 10, 12), "bytes"),
])
def test_bad_colour_images(msg, words) -> None:
    with pytest.raises(PerceptionError, match=words):
        rgb_from_image_msg(msg)


@pytest.mark.parametrize("msg, words", [
    (_image(0, 0, "16UC1", b"", 0), "bytes"),
    (_image(2, 2, "rgb8", b"\0" * 12, 6), "not supported"),
    (_image(4, 4, "16UC1", b"\0" * 7, 8), "bytes"),
])
def test_bad_depth_images(msg, words) -> None:
    with pytest.raises(PerceptionError, match=words):
        depth_from_image_msg(msg)


def _info(w: int = 4, h: int = 3, f: float = 500.0) -> CameraInfo:
    return CameraInfo(width=w, height=h, k=[f, 0.0, w / 2, 0.0, f, h / 2, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("info", [_info(f=0.0), _info(f=math.nan), _info(f=-3.0),
                                  _info(w=0), CameraInfo()])
def test_missing_or_zero_focal_camera_info(info) -> None:
    with pytest.raises(PerceptionError, match="camera_info"):
        intrinsics_from_camera_info(info)


def test_frames_that_disagree_or_have_no_depth_are_rejected() -> None:
    rgb = np.zeros((3, 4, 3), np.uint8)
    depth = np.full((3, 4), 700, np.uint16)
    check_frame(rgb, depth, _info())
    with pytest.raises(PerceptionError, match="no valid pixel"):
        check_frame(rgb, np.zeros((3, 4), np.uint16), _info())
    with pytest.raises(PerceptionError, match="no valid pixel"):
        check_frame(rgb, np.full((3, 4), np.nan, np.float32), _info())
    with pytest.raises(PerceptionError, match="differ in size"):
        check_frame(rgb, np.full((2, 4), 700, np.uint16), _info())
    with pytest.raises(PerceptionError, match="camera_info says"):
        check_frame(rgb, depth, _info(w=8, h=6))


def test_perception_camera_clock_jumping_back_resets_tracks_or_skips_late_frames() -> None:
    from frankenbot.perception import frame_sync as fs

    sync = fs.FrameSync(rate=0.0, sync_tolerance=0.05, max_latency=0.5)
    sync.processed(100.0)
    assert sync.admit(100.5) == fs.PROCESS  # newer: use it
    assert sync.admit(99.8) == fs.REPEATED  # a late frame: skip
    assert sync.admit(3.0) == fs.CLOCK_RESTARTED  # a restart: forget the tracks, use it


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("   ", "empty"), ("x" * 5000, "too long"),
    ("put the red block\x00 in the bowl", "control characters"),
    ("pick up \x1b[2J the block", "U+001B"),
])
def test_bad_instructions_are_refused(text, words) -> None:
    assert words in _instruction_problem(text)


def test_plain_instructions_pass() -> None:
    assert _instruction_problem("put the red block in the green bowl") == ""
    assert _instruction_problem("sort the blocks\n(by colour)") == ""


@pytest.mark.parametrize("goal, words", [
    (dict(program="  "), "empty"),
    (dict(program="x" * 200_001), "characters"),
    (dict(program="task t {}", task_id="a\x00b"), "control characters"),
    (dict(program="task t {}", instruction="y" * 5000), "instruction"),
])
def test_malformed_execute_program_goals_are_refused(goal, words) -> None:
    msg = SimpleNamespace(**{"program": "", "task_id": "t-1", "instruction": "", **goal})
    assert words in goal_problem(msg)


def test_a_stamp_that_is_not_a_time_is_refused() -> None:
    msg = scene_to_msg(Scene(objects=(_obj(),), stamp=1.0))
    msg.header.stamp = Time(sec=-5, nanosec=0)
    with pytest.raises(PerceptionError, match="not a time"):
        scene_from_msg(msg)


CRASHING_NODE = """
import sys, threading
from rclpy.node import Node
from frankenbot.nodes.spin import run_node

class Crashy(Node):
    def __init__(self):
        super().__init__("crashy")
        self.n = 0
        self.create_timer(0.05, self.tick)

    def tick(self):
        self.n += 1
        if self.n == 3:
            print("ticked", flush=True)
        if self.n % 2:
            raise ValueError("a malformed message nobody foresaw")

sys.exit(run_node(Crashy, num_threads=2))
"""


@pytest.mark.ros
def test_a_callback_error_is_logged_and_the_node_keeps_running(tmp_path) -> None:
    log = tmp_path / "crashy.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-c", CRASHING_NODE], stdout=out,
                                stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30.0
            while "ticked" not in log.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.1)
            time.sleep(1.0)
            assert proc.poll() is None, log.read_text()  # still up after several errors
        finally:
            proc.send_signal(2)
            code = proc.wait(timeout=20)
    text = log.read_text()
    assert "callback failed" in text and "ValueError" in text and "keeps running" in text
    assert text.count("callback failed") < 10  # rate limited (2 s), not one per error
    assert code == 0


class _Now:
    def __init__(self, ns: int) -> None:
        self.nanoseconds = ns


class _ScriptedClock:
    """Returns the scripted times (s) in turn, then keeps returning the last one + 1 ms steps."""

    def __init__(self, times: list[float]) -> None:
        self.times = list(times)
        self.t = times[-1]

    def now(self) -> _Now:
        if self.times:
            self.t = self.times.pop(0)
        else:
            self.t += 0.001
        return _Now(int(round(self.t * 1e9)))


def test_a_clock_jumping_back_during_a_wait_keeps_the_remaining_time(robot) -> None:
    r, log = robot
    clock = _ScriptedClock([10.0, 10.0, 10.5, 2.0, 2.3])  # 0.5 s of a 1 s wait left at 10.5
    r.node.get_clock = lambda: clock  # type: ignore[method-assign]
    t0 = time.monotonic()
    r.sleep(1.0)
    assert time.monotonic() - t0 < 2.0  # never waits out the 8.5 s jump
    assert 2.499 <= clock.t < 2.6  # 0.5 s after the jump, on the new clock
    assert any("jumped back" in text for _, text, _ in log.lines)

"""Bad input, safety rejections, cancel and e-stop: typed failures and no (or stopped) motion."""

from __future__ import annotations

import dataclasses
import math
import threading
import time

import numpy as np
import pytest
from primitives_support import ground_truth_scene

from frankenbot.common import FailureCode
from frankenbot.motion.kinematics import JOINT_NAMES
from frankenbot.motion.safety import SafetyConfig, SafetyEnvelope
from frankenbot.motion.trajectory import JointTrajectory, MotionLimits, TrajectoryPoint, joint_move
from frankenbot.ports import CancelToken
from frankenbot.primitives.factory import build_primitives
from frankenbot.sim.robot_adapter import SimRobot
from frankenbot.sim.runner import SimRunner
from frankenbot.sim.world import SimWorld
from frankenbot.state import Scene, SceneObject


class RecordingSimRobot(SimRobot):
    """SimRobot that counts trajectories sent and can fire an action at a sim time (lockstep)."""

    def __init__(self, world, scene_source, fire_at: float | None = None, action=None,
                 drop_joint_state: bool = False) -> None:
        super().__init__(world, scene_source=scene_source)
        self.sent: list[JointTrajectory] = []
        self.fire_at, self.action, self.fired_at = fire_at, action, None
        self.drop_joint_state = drop_joint_state

    def send_trajectory(self, trajectory: JointTrajectory) -> None:
        super().send_trajectory(trajectory)
        self.sent.append(trajectory)

    def joint_state(self):
        return None if self.drop_joint_state else super().joint_state()

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        if self.fire_at is not None and self.fired_at is None and self.now() >= self.fire_at:
            self.fired_at = self.now()
            self.action()


@pytest.fixture(scope="module")
def world():
    w = SimWorld(seed=0, width=64, height=48)
    yield w
    w.close()


def _ghost_scene(world, obj: SceneObject):
    base = ground_truth_scene(world)
    return lambda: Scene.of(base().objects + (obj,), stamp=world.time)


def _block(name: str, pos, yaw: float = 0.0) -> SceneObject:
    return SceneObject(name, name, "block", "red", tuple(pos), (0.04, 0.04, 0.04), yaw)


def _assert_no_motion(world, robot: RecordingSimRobot, q0: np.ndarray) -> None:
    assert robot.sent == []
    world.advance(0.2)
    assert np.allclose(world.joint_positions(), q0, atol=2e-3)


@pytest.mark.parametrize("name, args, code", [
    ("pick", {"obj": "unicorn_block"}, FailureCode.NOT_FOUND),
    ("place_at", {"obj": "$obj", "x": math.nan, "y": 0.1}, FailureCode.INVALID_ARGUMENT),
    ("move_above", {"obj": "$obj", "height": math.inf}, FailureCode.INVALID_ARGUMENT),
    ("pick", {"obj": 3.0}, FailureCode.INVALID_ARGUMENT),
    ("fly", {}, FailureCode.INVALID_ARGUMENT),
    ("open_drawer", {"drawer": "cupboard"}, FailureCode.NOT_FOUND),
    ("place_on", {"obj": "$obj", "target": "drawer"}, FailureCode.INVALID_ARGUMENT),
    ("wait", {"seconds": -1.0}, FailureCode.INVALID_ARGUMENT),
])
def test_bad_arguments_fail_typed_and_move_nothing(world, name, args, code) -> None:
    world.reset("pick_up", 0)
    robot = RecordingSimRobot(world, ground_truth_scene(world))
    prims = build_primitives(robot)
    q0 = world.joint_positions()
    args = {k: world.task.params["object"] if v == "$obj" else v for k, v in args.items()}
    result = prims.execute(name, args, CancelToken())
    assert result.code == code, result
    assert result.detail
    _assert_no_motion(world, robot, q0)


@pytest.mark.parametrize("obj, args, codes", [
    (_block("far_block", (1.30, 0.0, 0.02)), {}, {FailureCode.UNREACHABLE,
                                                  FailureCode.REJECTED_BY_SAFETY}),
    (_block("sunk_block", (0.5, 0.0, -0.30)), {"height": 0.02},
     {FailureCode.REJECTED_BY_SAFETY}),
    (_block("nan_block", (0.5, math.nan, 0.02)), {}, {FailureCode.INVALID_ARGUMENT}),
])
def test_unreachable_or_unsafe_targets_are_rejected_without_motion(world, obj, args,
                                                                   codes) -> None:
    world.reset("pick_up", 0)
    robot = RecordingSimRobot(world, _ghost_scene(world, obj))
    prims = build_primitives(robot)
    q0 = world.joint_positions()
    result = prims.execute("move_above", {"obj": obj.object_id, **args}, CancelToken())
    assert result.code in codes, result
    _assert_no_motion(world, robot, q0)


def test_unreachable_place_at_is_refused(world) -> None:
    world.reset("pick_up", 1)
    robot = RecordingSimRobot(world, ground_truth_scene(world))
    prims = build_primitives(robot)
    obj = world.task.params["object"]
    assert prims.execute("pick", {"obj": obj}, CancelToken()).ok
    sent = len(robot.sent)
    result = prims.execute("place_at", {"obj": obj, "x": 0.9, "y": 0.9}, CancelToken())
    assert result.code in (FailureCode.UNREACHABLE, FailureCode.REJECTED_BY_SAFETY), result
    assert len(robot.sent) == sent
    assert prims.held_object == obj  # still believed held: nothing was released


def test_missing_joint_state_means_no_motion(world) -> None:
    world.reset("pick_up", 0)
    robot = RecordingSimRobot(world, ground_truth_scene(world), drop_joint_state=True)
    prims = build_primitives(robot)
    q0 = world.joint_positions()
    result = prims.execute("home", {}, CancelToken())
    assert result.code == FailureCode.NO_STATE
    assert prims.execute("pick", {"obj": world.task.params["object"]},
                         CancelToken()).code == FailureCode.NO_STATE
    _assert_no_motion(world, robot, q0)


def test_trajectory_the_controller_rejects_is_an_abort_without_motion(world) -> None:
    """A permissive envelope lets an elbow target beyond pi through; the sim's JTC refuses."""
    world.reset("pick_up", 0)
    robot = RecordingSimRobot(world, ground_truth_scene(world))
    prims = build_primitives(robot)
    loose = SafetyConfig(joint_lower=(-7.0,) * 6, joint_upper=(7.0,) * 6, link_clearance=-1.0,
                         tcp_clearance=-1.0, min_radius=0.0,
                         workspace_min=(-2.0, -2.0, -2.0), workspace_max=(2.0, 2.0, 2.0))
    backend = prims.backend
    backend.envelope = SafetyEnvelope(loose, backend.kin)
    q0 = world.joint_positions()
    goal = q0.copy()
    goal[2] = 3.3
    outcome = backend.move_to_joints(goal, CancelToken())
    assert outcome.code == FailureCode.ABORTED
    assert "controller rejected" in outcome.detail and "elbow_joint" in outcome.detail
    world.advance(0.2)
    assert np.allclose(world.joint_positions(), q0, atol=2e-3)


def test_envelope_rejects_a_too_fast_trajectory_before_the_controller(world) -> None:
    world.reset("pick_up", 0)
    robot = RecordingSimRobot(world, ground_truth_scene(world))
    prims = build_primitives(robot)
    q0 = world.joint_positions()
    traj = joint_move(q0, q0 + np.array([1.0, 0, 0, 0, 0, 0]), MotionLimits())
    fast = JointTrajectory(JOINT_NAMES, tuple(
        TrajectoryPoint(p.time_from_start / 5, p.positions,
                        tuple(5 * v for v in p.velocities or ())) for p in traj.points))
    outcome = prims.backend.execute(fast, CancelToken())
    assert outcome.code == FailureCode.REJECTED_BY_SAFETY and "rad/s" in outcome.detail
    _assert_no_motion(world, robot, q0)


def test_cancel_mid_motion_stops_the_arm_within_one_poll(world) -> None:
    world.reset("pick_up", 2)
    token = CancelToken()
    robot = RecordingSimRobot(world, ground_truth_scene(world), fire_at=world.time + 0.8,
                              action=lambda: token.cancel("monitor fired"))
    prims = build_primitives(robot)
    result = prims.execute("pick", {"obj": world.task.params["object"]}, token)
    assert result.code == FailureCode.PREEMPTED and "monitor fired" in result.detail
    stopped_at = world.time
    # The hold is commanded at the first poll after the cancel: within one poll period.
    assert stopped_at - robot.fired_at <= prims.backend.execution.poll_period + 1e-9
    assert world.trajectory_status().reason == "hold requested"
    world.advance(0.3)
    assert np.max(np.abs(world.joint_velocities())) < 0.01


def test_estop_halts_motion_blocks_new_motion_until_released(world) -> None:
    world.reset("pick_up", 3)
    holder: dict[str, RecordingSimRobot] = {}
    robot = RecordingSimRobot(world, ground_truth_scene(world), fire_at=world.time + 0.8,
                              action=lambda: holder["r"].set_estop(True))
    holder["r"] = robot
    prims = build_primitives(robot)
    result = prims.execute("pick", {"obj": world.task.params["object"]}, CancelToken())
    assert result.code == FailureCode.ESTOP
    # The hold went out on the e-stop's own path, at the instant it engaged.
    assert world.trajectory_status().reason == "hold requested"
    world.advance(0.3)
    assert np.max(np.abs(world.joint_velocities())) < 0.01
    q_stop = world.joint_positions()
    sent = len(robot.sent)
    assert prims.execute("home", {}, CancelToken()).code == FailureCode.ESTOP
    assert prims.execute("close_gripper", {}, CancelToken()).code == FailureCode.ESTOP
    assert len(robot.sent) == sent
    world.advance(0.3)
    assert np.allclose(world.joint_positions(), q_stop, atol=2e-3)
    assert prims.snapshot().estop
    robot.set_estop(False)
    assert prims.execute("home", {}, CancelToken()).ok


@pytest.mark.wall_clock
def test_cancel_from_another_thread_with_physics_on_its_own_thread() -> None:
    """The executor's monitor thread cancels while the sim runs in real time on its thread."""
    world = SimWorld(seed=4, task="pick_up", width=64, height=48)
    runner = SimRunner(world, realtime_factor=2.0, render=False)
    robot = SimRobot(world, scene_source=ground_truth_scene(world), physics_thread=True)
    prims = build_primitives(robot)
    token = CancelToken()
    out: dict[str, object] = {}

    def control() -> None:
        out["result"] = prims.execute("home", {}, token)
        out["t"] = time.monotonic()

    with runner:
        thread = threading.Thread(target=control)
        thread.start()
        time.sleep(0.4)
        t_cancel = time.monotonic()
        token.cancel("operator")
        thread.join(timeout=5.0)
        assert not thread.is_alive()
    world.close()
    assert out["result"].code == FailureCode.PREEMPTED
    assert float(out["t"]) - t_cancel < 0.25  # wall seconds from cancel to return (loaded CI)


def test_snapshot_reflects_robot_state_and_beliefs(world) -> None:
    world.reset("pick_up", 5)
    robot = SimRobot(world, scene_source=ground_truth_scene(world))
    prims = build_primitives(robot)
    snap = prims.snapshot()
    assert np.allclose(snap.joint_positions, world.joint_positions())
    assert np.allclose(snap.tcp_position, world.tcp_position(), atol=1e-3)
    assert snap.held_object is None and not snap.estop
    assert prims.facts() == {}  # no drawer or door worked yet


def test_primitive_config_rejects_unknown_keys() -> None:
    from frankenbot import settings
    from frankenbot.errors import ConfigError
    from frankenbot.primitives.config import PrimitiveConfig

    with pytest.raises(ConfigError, match="unknown"):
        settings.build(PrimitiveConfig, {"approach_hieght": 0.1})
    assert dataclasses.replace(PrimitiveConfig(), approach_height=0.2).approach_height == 0.2


def test_robot_speed_scaling_slows_executed_motions(world) -> None:
    world.reset("pick_up", 0)
    robot = SimRobot(world, scene_source=ground_truth_scene(world))
    prims = build_primitives(robot)
    q0 = world.joint_positions()
    goal = q0 + np.array([0.4, 0.0, 0.0, 0.0, 0.0, 0.4])
    full = prims.backend.move_to_joints(goal, CancelToken())
    robot.set_speed_scaling(0.5)
    half = prims.backend.move_to_joints(q0, CancelToken())
    assert full.ok and half.ok
    assert half.duration > 1.7 * full.duration
    with pytest.raises(ValueError):
        robot.set_speed_scaling(1.5)


def test_slider_at_20_percent_scales_a_motion_once_not_twice(world) -> None:
    """At a 20 % slider the trajectory sent is the full-speed one (the scaled JTC applies the
    slider) and the motion takes ~5x as long, not 25x. Planning with the slider as well made
    the first pick of a real run outlast the 60 s timeout."""
    world.reset("pick_up", 0)
    robot = RecordingSimRobot(world, ground_truth_scene(world))
    backend = build_primitives(robot).backend
    q0 = world.joint_positions()
    goal = q0 + np.array([0.5, 0.0, 0.0, 0.0, 0.0, 0.5])
    robot.set_speed_scaling(1.0)
    full = backend.move_to_joints(goal, CancelToken())
    robot.set_speed_scaling(0.2)
    slow = backend.move_to_joints(q0, CancelToken())
    robot.set_speed_scaling(1.0)
    assert full.ok and slow.ok, (full, slow)
    planned_full, planned_slow = robot.sent[-2].duration, robot.sent[-1].duration
    assert planned_slow == pytest.approx(planned_full, rel=0.01)  # the same path back
    ratio = slow.duration / full.duration
    assert 4.0 < ratio < 6.0, f"20 % slider took {ratio:.1f}x the full-speed time"


def test_sim_controller_runs_trajectory_time_at_the_slider_fraction() -> None:
    """The sim's JTC advances a trajectory's clock by the slider's fraction, as
    scaled_joint_trajectory_controller does; the goal-time window counts real time after."""
    from frankenbot.sim.controller import JointTrajectoryController
    from frankenbot.sim.controller import TrajectoryPoint as SimPoint

    ctrl = JointTrajectoryController(JOINT_NAMES, np.full(6, -7.0), np.full(6, 7.0))
    ctrl.speed_scaling = 0.2
    ctrl.start(0.0, np.zeros(6), JOINT_NAMES, [SimPoint(1.0, (1.0,) + (0.0,) * 5)])
    t = 0.0
    while t < 4.9:
        t += 0.002
        q, _ = ctrl.desired(t)
    assert q[0] == pytest.approx(0.98, abs=0.01)  # 4.9 s at 20 % = 0.98 s of the trajectory
    q, dq = ctrl.desired(5.2)
    assert q[0] == pytest.approx(1.0) and dq[0] == 0.0


def test_backend_nan_and_malformed_targets_are_invalid_without_motion(world) -> None:
    world.reset("pick_up", 0)
    robot = RecordingSimRobot(world, ground_truth_scene(world))
    backend = build_primitives(robot).backend
    q0 = world.joint_positions()
    pose = np.eye(4)
    pose[:3, 3] = (0.5, math.nan, 0.2)
    for outcome in (backend.move_to_pose(pose, CancelToken()),
                    backend.move_linear(pose, CancelToken()),
                    backend.move_to_pose(np.eye(3), CancelToken()),
                    backend.move_to_joints([math.nan] * 6, CancelToken()),
                    backend.move_to_joints([0.0] * 5, CancelToken()),
                    backend.move_linear(np.eye(4), CancelToken(), speed=0.0)):
        assert outcome.code == FailureCode.INVALID_ARGUMENT, outcome
    _assert_no_motion(world, robot, q0)

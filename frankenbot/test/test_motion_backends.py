"""Backend selection, the MoveIt backend's pure parts, and fixture loading for the primitives.

MoveIt itself does not install here: the backend must say so clearly instead of failing later.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.errors import ConfigError
from frankenbot.motion.kinematics import JOINT_NAMES
from frankenbot.nodes.moveit_backend import (
    MoveItUnavailable,
    _trajectory_from_robot_trajectory,
    moveit_motion,
)
from frankenbot.primitives.factory import build_primitives
from frankenbot.sim.world import SimWorld


@pytest.fixture(scope="module")
def robot():
    from frankenbot.sim.robot_adapter import SimRobot

    world = SimWorld(seed=0, width=64, height=48)
    yield SimRobot(world)
    world.close()


def test_moveit_backend_without_moveit_says_so(robot) -> None:
    pytest.importorskip("rclpy")
    try:
        import moveit  # noqa: F401
    except ImportError:
        with pytest.raises(MoveItUnavailable, match="moveit_py"):
            build_primitives(robot, motion=moveit_motion(None))
    else:  # pragma: no cover - a full ROS install
        pytest.skip("moveit_py is installed here; exercised on the real install")


def test_moveit_plan_conversion_reorders_joints() -> None:
    pytest.importorskip("trajectory_msgs")
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    names = list(reversed(JOINT_NAMES))
    msg = JointTrajectory(joint_names=names)
    for k in range(3):
        p = JointTrajectoryPoint(positions=[float(i + k) for i in range(6)],
                                 velocities=[0.0] * 6)
        p.time_from_start.sec, p.time_from_start.nanosec = k, 500_000_000
        msg.points.append(p)

    class Plan:  # what moveit's RobotTrajectory offers
        def get_robot_trajectory_msg(self):
            class Msg:
                joint_trajectory = msg
            return Msg()

    traj = _trajectory_from_robot_trajectory(Plan())
    assert traj.joint_names == JOINT_NAMES
    assert traj.points[1].positions == tuple(float(5 - i + 1) for i in range(6))
    assert traj.times().tolist() == [0.5, 1.5, 2.5]


def test_primitives_read_the_drawer_from_the_fixture_map_file(robot, tmp_path) -> None:
    from frankenbot.fixture_map import FixtureMap

    shipped = build_primitives(robot).fixture_map()  # config/scene_fixtures.yaml (the sim's)
    drawer = shipped.part("drawer")
    assert drawer is not None and drawer.travel > 0
    assert math.isclose(float(np.linalg.norm(drawer.axis)), 1.0)
    custom = tmp_path / "fixtures.yaml"
    custom.write_text("fixtures:\n  drawer:\n    position: [0.6, 0.1, 0.06]\n"
                      "    size: [0.2, 0.26, 0.12]\n    handle: [0.5, 0.1, 0.08]\n"
                      "    pull_axis: [0.0, -1.0, 0.0]\n    stroke: 0.2\n")
    d = build_primitives(robot, fixtures=custom).fixture_map().part("drawer")
    assert d is not None and d.handle == (0.5, 0.1, 0.08) and d.travel == 0.2
    assert d.handle_at(0.2) == pytest.approx((0.5, -0.1, 0.08))
    bad = tmp_path / "bad.yaml"
    bad.write_text("fixtures:\n  drawer:\n    position: [0.5, 0.1]\n    size: [1, 1, 1]\n")
    with pytest.raises(ConfigError, match="3"):
        build_primitives(robot, fixtures=bad)
    axis = tmp_path / "axis.yaml"
    axis.write_text("fixtures:\n  drawer:\n    position: [0.5, 0.1, 0.0]\n    size: [1, 1, 1]"
                    "\n    pull_axis: [0.0, 0.0, 0.0]\n")
    with pytest.raises(ConfigError, match="zero"):
        FixtureMap.load(axis)
    with pytest.raises(ConfigError, match="not found"):
        build_primitives(robot, fixtures=tmp_path / "missing.yaml")


def test_every_catalog_primitive_is_implemented(robot) -> None:
    from frankenbot.program.catalog import default_catalog

    prims = build_primitives(robot)
    assert set(prims.names) == {s.name for s in default_catalog().primitives}


def test_moveit_plans_are_slowed_to_the_tcp_speed_limit(monkeypatch) -> None:
    """A MoveIt plan timed by joint limits alone (as its time parameterisation does) swings the
    TCP at ~0.8 m/s on a 1.5 rad shoulder turn; the envelope allows 0.5 m/s and used to
    reject it. The backend now slows the plan to the planning TCP limit, path unchanged."""
    import sys
    import types

    pytest.importorskip("trajectory_msgs")
    from trajectory_msgs.msg import JointTrajectory as TrajectoryMsg
    from trajectory_msgs.msg import JointTrajectoryPoint

    from frankenbot.motion.config import load_arm_config
    from frankenbot.motion.kinematics import HOME_JOINTS, UR5eKinematics
    from frankenbot.motion.safety import SafetyEnvelope
    from frankenbot.motion.trajectory import MotionLimits, joint_move
    from frankenbot.nodes import moveit_backend as mb

    for name in ("moveit", "moveit.planning", "moveit_configs_utils"):  # TEST-ONLY stand-ins
        module = types.ModuleType(name)
        module.MoveItPy = module.PlanRequestParameters = module.MoveItConfigsBuilder = object
        monkeypatch.setitem(sys.modules, name, module)
    cfg = load_arm_config()
    kin = UR5eKinematics(cfg.kinematics)
    envelope = SafetyEnvelope(cfg.safety, kin)
    start = np.array(HOME_JOINTS)
    goal = start + np.array([1.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    joints_only = joint_move(start, goal, MotionLimits())  # no kin: joint limits only
    msg = TrajectoryMsg(joint_names=list(JOINT_NAMES))
    for t, q, v in zip(joints_only.times(), joints_only.positions(), joints_only.velocities(),
                       strict=True):
        point = JointTrajectoryPoint(positions=q.tolist(), velocities=v.tolist())
        point.time_from_start.sec = int(t)
        point.time_from_start.nanosec = int(round((t - int(t)) * 1e9)) % 1_000_000_000
        msg.points.append(point)

    class Result:  # moveit's PlanningComponent.plan() result
        trajectory = types.SimpleNamespace(get_robot_trajectory_msg=lambda: types.SimpleNamespace(
            joint_trajectory=msg))

        def __bool__(self) -> bool:
            return True

    class Arm:
        def set_start_state_to_current_state(self) -> None: ...
        def set_goal_state(self, **kw) -> None: ...
        def plan(self, single_plan_parameters=None) -> Result:
            return Result()

    backend = mb.MoveItBackend(robot=None, kinematics=kin, envelope=envelope, limits=cfg.limits,
                               execution=cfg.execution)
    backend._moveit, backend._arm = object(), Arm()
    backend._params_cls = lambda moveit, namespace: types.SimpleNamespace()
    with pytest.raises(Exception, match="TCP speed"):
        envelope.check_trajectory(joints_only, start)  # MoveIt's own timing: rejected
    traj = backend.plan_pose(start, kin.fk(goal))
    tcp = kin.link_points(traj.positions())[:, -1, :]
    speed = np.linalg.norm(np.diff(tcp, axis=0), axis=1) / np.diff(traj.times())
    assert float(np.max(speed)) <= cfg.limits.max_cartesian_speed * 1.001
    assert np.allclose(traj.positions(), joints_only.positions())  # same path, slower
    assert traj.duration > joints_only.duration

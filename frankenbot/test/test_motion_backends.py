"""Backend selection, the MoveIt backend's pure parts, and fixture loading for the primitives.

MoveIt itself does not install here: the backend must say so clearly instead of failing later.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.errors import ConfigError
from frankenbot.motion.kinematics import JOINT_NAMES, rot_z
from frankenbot.motion.moveit_backend import (
    MoveItUnavailable,
    _quaternion,
    _trajectory_from_robot_trajectory,
)
from frankenbot.primitives.factory import build_primitives
from frankenbot.sim.world import SimWorld


@pytest.fixture(scope="module")
def robot():
    from frankenbot.sim.robot_adapter import SimRobot

    world = SimWorld(seed=0, width=64, height=48)
    yield SimRobot(world)
    world.close()


def test_unknown_backend_is_a_config_error(robot) -> None:
    with pytest.raises(ConfigError, match="unknown motion backend"):
        build_primitives(robot, backend="teleport")


def test_moveit_backend_without_moveit_says_so(robot) -> None:
    pytest.importorskip("rclpy")
    try:
        import moveit  # noqa: F401
    except ImportError:
        with pytest.raises(MoveItUnavailable, match="moveit_py"):
            build_primitives(robot, backend="moveit")
    else:  # pragma: no cover - a full ROS install
        pytest.skip("moveit_py is installed here; exercised on the real install")


def test_quaternion_matches_the_rotation() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        angle = rng.uniform(-math.pi, math.pi)
        kx = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        r = np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx
        w, x, y, z = _quaternion(r)
        expect = (math.cos(angle / 2), *(axis * math.sin(angle / 2)))
        sign = 1.0 if w * expect[0] >= 0 else -1.0
        assert np.allclose(sign * np.array([w, x, y, z]), expect, atol=1e-9)
    assert np.allclose(_quaternion(rot_z(math.pi)), (0, 0, 0, 1), atol=1e-9) or np.allclose(
        _quaternion(rot_z(math.pi)), (0, 0, 0, -1), atol=1e-9)


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

"""Motion backend that plans with MoveIt 2 (moveit_py, ROS 2 Jazzy API) on a full ROS install.

UNTESTED HERE: moveit_py, moveit_configs_utils, moveit_msgs and ur_moveit_config do not install
on these machines; everything MoveIt-specific is imported lazily, so this module imports (and
its "not installed" error path is tested) without them. Written against the Jazzy API:
``MoveItPy(node_name=..., config_dict=...)``, ``get_planning_component("ur_manipulator")``,
``set_start_state_to_current_state()``, ``set_goal_state(pose_stamped_msg=..., pose_link=
"tool0")`` / ``set_goal_state(robot_state=...)``, ``plan(single_plan_parameters=
PlanRequestParameters(robot, "<namespace>"))`` and the planning scene monitor.

Why a planner swap and not ``robot.execute``: MoveIt plans (collision-aware, OMPL for free moves
and Pilz LIN for straight lines, see config/moveit_cpp.yaml), then the plan goes through the same
safety envelope and the same watched execution as the JTC backend (``JtcBackend.execute``), so
cancel, e-stop, typed failures and the envelope behave identically on both backends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from frankenbot import resources
from frankenbot.common import FailureCode
from frankenbot.errors import MotionError
from frankenbot.motion.jtc_backend import ExecutionConfig, JtcBackend, PlanningError
from frankenbot.motion.kinematics import JOINT_NAMES, UR5eKinematics
from frankenbot.motion.safety import SafetyEnvelope
from frankenbot.motion.trajectory import JointTrajectory, MotionLimits, TrajectoryPoint
from frankenbot.ports import RobotInterface

PLANNING_GROUP = "ur_manipulator"
TIP_LINK = "tool0"
FREE_MOTION_PARAMS = "ompl"  # namespaces in moveit_cpp.yaml
LINEAR_MOTION_PARAMS = "pilz_lin"
TABLE_ID = "frankenbot_table"


class MoveItUnavailable(MotionError):
    """moveit_py (or ur_moveit_config) is not installed: use the jtc backend here."""


def _moveit_modules() -> tuple[Any, Any, Any]:
    try:
        from moveit.planning import MoveItPy, PlanRequestParameters  # type: ignore[import-not-found]
        from moveit_configs_utils import MoveItConfigsBuilder  # type: ignore[import-not-found]
    except ImportError as e:
        raise MoveItUnavailable(
            f"the moveit backend needs moveit_py and moveit_configs_utils (a ROS 2 Jazzy install "
            f"with ros-jazzy-moveit-py and ur_moveit_config): {e}") from e
    return MoveItPy, PlanRequestParameters, MoveItConfigsBuilder


def _trajectory_from_robot_trajectory(robot_trajectory: Any) -> JointTrajectory:
    """moveit RobotTrajectory -> our JointTrajectory in UR joint order."""
    msg = robot_trajectory.get_robot_trajectory_msg().joint_trajectory
    names = list(msg.joint_names)
    missing = [n for n in JOINT_NAMES if n not in names]
    if missing:
        raise PlanningError(FailureCode.ABORTED, f"MoveIt plan lacks joints {missing}")
    order = [names.index(n) for n in JOINT_NAMES]
    points = []
    for p in msg.points:
        t = float(p.time_from_start.sec) + float(p.time_from_start.nanosec) * 1e-9
        vel = tuple(float(p.velocities[i]) for i in order) if len(p.velocities) else None
        points.append(TrajectoryPoint(t, tuple(float(p.positions[i]) for i in order), vel))
    return JointTrajectory(JOINT_NAMES, points)


class MoveItBackend(JtcBackend):
    """JtcBackend whose planning is done by MoveIt (OMPL free moves, Pilz LIN straight lines)."""

    def __init__(self, robot: RobotInterface, *, kinematics: UR5eKinematics,
                 envelope: SafetyEnvelope, limits: MotionLimits | None = None,
                 execution: ExecutionConfig | None = None, node: Any = None,
                 config_file: str | Path | None = None, node_name: str = "moveit_py",
                 table_z: float = 0.0) -> None:
        super().__init__(robot, kinematics=kinematics, envelope=envelope, limits=limits,
                         execution=execution)
        self._config_file = (Path(config_file) if config_file is not None
                             else resources.config_dir() / "moveit_cpp.yaml")
        self._node_name = node_name
        self._node = node  # unused by moveit_py itself; kept for logging
        self._table_z = table_z
        self._moveit: Any = None
        self._arm: Any = None
        self._params_cls: Any = None
        _moveit_modules()  # fail at construction, with a clear message, when not installed

    # --- MoveIt session -------------------------------------------------------------------
    def _session(self) -> tuple[Any, Any]:
        if self._moveit is None:
            moveit_py, params_cls, builder = _moveit_modules()
            config = (builder(robot_name="ur", package_name="ur_moveit_config")
                      .moveit_cpp(file_path=str(self._config_file))
                      .to_moveit_configs().to_dict())
            self._moveit = moveit_py(node_name=self._node_name, config_dict=config)
            self._arm = self._moveit.get_planning_component(PLANNING_GROUP)
            self._params_cls = params_cls
            self._add_table()
        return self._moveit, self._arm

    def _add_table(self) -> None:
        """The table as a collision box whose top is at ``table_z``."""
        from geometry_msgs.msg import Pose
        from moveit_msgs.msg import CollisionObject  # type: ignore[import-not-found]
        from shape_msgs.msg import SolidPrimitive  # type: ignore[import-not-found]

        box = SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[2.0, 2.0, 0.1])
        pose = Pose()
        pose.position.z = self._table_z - 0.05 - 0.002
        pose.orientation.w = 1.0
        co = CollisionObject(id=TABLE_ID, operation=CollisionObject.ADD)
        co.header.frame_id = "base_link"
        co.primitives.append(box)
        co.primitive_poses.append(pose)
        with self._moveit.get_planning_scene_monitor().read_write() as scene:
            scene.apply_collision_object(co)
            scene.current_state.update()

    def _plan(self, namespace: str, speed_scaling: float) -> JointTrajectory:
        moveit, arm = self._session()
        params = self._params_cls(moveit, namespace)
        params.max_velocity_scaling_factor = float(self.limits.velocity_scale * speed_scaling)
        params.max_acceleration_scaling_factor = float(
            self.limits.acceleration_scale * speed_scaling)
        result = arm.plan(single_plan_parameters=params)
        if not result:
            raise PlanningError(FailureCode.UNREACHABLE, f"MoveIt ({namespace}) found no plan")
        return _trajectory_from_robot_trajectory(result.trajectory)

    def _tool0_pose_msg(self, tcp_pose: np.ndarray) -> Any:
        from geometry_msgs.msg import PoseStamped

        tool0 = np.asarray(tcp_pose, dtype=float).copy()
        tool0[:3, 3] -= tool0[:3, 2] * self.kin.config.tcp_offset
        qw, qx, qy, qz = _quaternion(tool0[:3, :3])
        msg = PoseStamped()
        msg.header.frame_id = "base_link"
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = map(float, tool0[:3, 3])
        o = msg.pose.orientation
        o.w, o.x, o.y, o.z = qw, qx, qy, qz
        return msg

    # --- planning overrides ---------------------------------------------------------------
    def plan_joints(self, start: Sequence[float], goal: Sequence[float],
                    speed_scaling: float = 1.0) -> JointTrajectory:
        from moveit.core.robot_state import RobotState  # type: ignore[import-not-found]

        moveit, arm = self._session()
        goal_arr = np.asarray(goal, dtype=float)
        if goal_arr.shape != (6,) or not np.all(np.isfinite(goal_arr)):
            raise PlanningError(FailureCode.INVALID_ARGUMENT,
                                f"joint goal must be 6 finite numbers, got {goal_arr.tolist()}")
        state = RobotState(moveit.get_robot_model())
        state.set_joint_group_positions(PLANNING_GROUP, goal_arr)
        arm.set_start_state_to_current_state()
        arm.set_goal_state(robot_state=state)
        traj = self._plan(FREE_MOTION_PARAMS, speed_scaling)
        self._check(traj, start)
        return traj

    def plan_pose(self, start: Sequence[float], tcp_pose: np.ndarray,
                  speed_scaling: float = 1.0) -> JointTrajectory:
        pose = self._valid_pose(tcp_pose)
        _, arm = self._session()
        arm.set_start_state_to_current_state()
        arm.set_goal_state(pose_stamped_msg=self._tool0_pose_msg(pose), pose_link=TIP_LINK)
        traj = self._plan(FREE_MOTION_PARAMS, speed_scaling)
        self._check(traj, start)
        return traj

    def plan_linear(self, start: Sequence[float], tcp_pose: np.ndarray,
                    speed_scaling: float = 1.0) -> JointTrajectory:
        pose = self._valid_pose(tcp_pose)
        _, arm = self._session()
        arm.set_start_state_to_current_state()
        arm.set_goal_state(pose_stamped_msg=self._tool0_pose_msg(pose), pose_link=TIP_LINK)
        traj = self._plan(LINEAR_MOTION_PARAMS, speed_scaling)
        self._check(traj, start)
        return traj


def _quaternion(r: np.ndarray) -> tuple[float, float, float, float]:
    """(w, x, y, z) of a rotation matrix (Shepperd's method)."""
    tr = float(np.trace(r))
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        return (0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s,
                (r[1, 0] - r[0, 1]) / s)
    i = int(np.argmax(np.diag(r)))
    if i == 0:
        s = 2.0 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        return ((r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s,
                (r[0, 2] + r[2, 0]) / s)
    if i == 1:
        s = 2.0 * np.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        return ((r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s,
                (r[1, 2] + r[2, 1]) / s)
    s = 2.0 * np.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
    return ((r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s,
            0.25 * s)

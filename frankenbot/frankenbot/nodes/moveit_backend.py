"""Motion backend that plans with MoveIt 2 (moveit_py, ROS 2 Jazzy API) on a full ROS install.

UNTESTED HERE: moveit_py, moveit_configs_utils, moveit_msgs and ur_moveit_config do not install
on these machines; everything MoveIt-specific is imported lazily, so this module imports (and
its "not installed" error path is tested) without them. Written against the Jazzy API:
``MoveItPy(node_name=..., config_dict=...)``, ``get_planning_component("ur_manipulator")``,
``set_start_state_to_current_state()``, ``set_goal_state(pose_stamped_msg=..., pose_link=
"tool0")`` / ``set_goal_state(robot_state=...)``, ``plan(single_plan_parameters=
PlanRequestParameters(robot, "<namespace>"))`` and the planning scene monitor.

Configuration (``moveit_config_dict``): ur_moveit_config's own files through
MoveItConfigsBuilder, with the SRDF from ``srdf/ur.srdf.xacro`` mapped with ``name`` = ur_type
(as upstream's ur_moveit.launch.py does; the builder's default ``config/ur.srdf`` does not exist
there), then config/moveit_cpp.yaml deep-merged on top. ``to_dict()`` merges moveit_cpp shallowly,
so a top-level key equal to a pipeline name (``ompl``) would replace that pipeline's whole
config and MoveItPy would fail with "Planning plugin name is empty". The robot description
itself comes from the driver's ``/robot_description`` topic (ur_moveit_config ships no URDF).
MoveItPy runs under its own node name (``MOVEIT_NODE_NAME``), not the executor's, and gets its
parameters from the dict, not from the launch file.

Gripper: ur_moveit_config's ``ur_manipulator`` group and the driver's URDF have no gripper, so
the Robotiq is added to the planning scene as a box attached to tool0 (``GRIPPER_BOX``), which
makes MoveIt check gripper-table and gripper-object collisions on every plan.

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
from frankenbot.motion.trajectory import (
    JointTrajectory,
    MotionLimits,
    TrajectoryPoint,
    limit_tcp_speed,
)
from frankenbot.ports import RobotInterface
from frankenbot.transforms import quat_from_matrix

MOVEIT_NODE_NAME = "frankenbot_moveit_py"  # not the executor's name: two nodes, two names
PLANNING_GROUP = "ur_manipulator"
TIP_LINK = "tool0"
SRDF_XACRO = Path("srdf") / "ur.srdf.xacro"  # in ur_moveit_config (Jazzy)
PIPELINES = ("ompl", "pilz_industrial_motion_planner")
FREE_MOTION_PARAMS = "frankenbot_free"  # plan_request_params namespaces in moveit_cpp.yaml
LINEAR_MOTION_PARAMS = "frankenbot_linear"
TABLE_ID = "frankenbot_table"
GRIPPER_ID = "frankenbot_gripper"
# Robotiq 2F-85 on tool0 as one box (m): 0.09 wide across the fingers, 0.07 deep, 0.16 long
# along tool0's z (coupling + body + open fingers), centred 0.08 out.
GRIPPER_BOX = ((0.09, 0.07, 0.16), (0.0, 0.0, 0.08))
GRIPPER_TOUCH_LINKS = ("wrist_3_link", "flange", "tool0")


def deep_merge(base: dict, override: dict) -> dict:
    """``override`` merged into a copy of ``base``, recursively (mappings merge, rest replaces)."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def default_moveit_cpp_file() -> Path:
    """config/moveit_cpp.yaml (the package's config folder)."""
    return resources.config_dir() / "moveit_cpp.yaml"


def moveit_config_dict(builder_cls: Any, *, ur_type: str = "ur5e",
                       moveit_cpp_file: str | Path | None = None) -> dict:
    """The parameter dict for ``MoveItPy(config_dict=...)`` (see the module docstring).

    ``builder_cls`` is moveit_configs_utils.MoveItConfigsBuilder (passed in so this runs, and is
    tested, where MoveIt is not installed).
    """
    import yaml

    path = Path(moveit_cpp_file) if moveit_cpp_file is not None else default_moveit_cpp_file()
    overrides = yaml.safe_load(path.read_text()) or {}
    if not isinstance(overrides, dict):
        raise MoveItUnavailable(f"{path} must be a mapping")
    builder = (builder_cls(robot_name="ur", package_name="ur_moveit_config")
               .robot_description_semantic(SRDF_XACRO, {"name": ur_type})
               .planning_pipelines(default_planning_pipeline=PIPELINES[0],
                                   pipelines=list(PIPELINES)))
    return deep_merge(builder.to_moveit_configs().to_dict(), overrides)


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


def moveit_motion(node: Any) -> Any:
    """The ``motion`` factory of ``primitives.factory.build_primitives`` for this backend."""

    def make(robot: RobotInterface, cfg: Any, kinematics: UR5eKinematics,
             envelope: SafetyEnvelope) -> "MoveItBackend":
        return MoveItBackend(robot, kinematics=kinematics, envelope=envelope, limits=cfg.limits,
                             execution=cfg.execution, node=node, table_z=cfg.safety.table_z)

    return make


class MoveItBackend(JtcBackend):
    """JtcBackend whose planning is done by MoveIt (OMPL free moves, Pilz LIN straight lines)."""

    def __init__(self, robot: RobotInterface, *, kinematics: UR5eKinematics,
                 envelope: SafetyEnvelope, limits: MotionLimits | None = None,
                 execution: ExecutionConfig | None = None, node: Any = None,
                 config_file: str | Path | None = None, node_name: str = MOVEIT_NODE_NAME,
                 table_z: float = 0.0, ur_type: str = "ur5e") -> None:
        super().__init__(robot, kinematics=kinematics, envelope=envelope, limits=limits,
                         execution=execution)
        self._config_file = (Path(config_file) if config_file is not None
                             else default_moveit_cpp_file())
        self._node_name = node_name
        self._node = node  # unused by moveit_py itself; kept for logging
        self._table_z = table_z
        self._ur_type = ur_type
        self._moveit: Any = None
        self._arm: Any = None
        self._params_cls: Any = None
        _moveit_modules()  # fail at construction, with a clear message, when not installed

    # --- MoveIt session -------------------------------------------------------------------
    def _session(self) -> tuple[Any, Any]:
        if self._moveit is None:
            moveit_py, params_cls, builder = _moveit_modules()
            config = moveit_config_dict(builder, ur_type=self._ur_type,
                                        moveit_cpp_file=self._config_file)
            self._moveit = moveit_py(node_name=self._node_name, config_dict=config)
            self._arm = self._moveit.get_planning_component(PLANNING_GROUP)
            self._params_cls = params_cls
            self._add_table()
            self._attach_gripper()
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

    def _attach_gripper(self) -> None:
        """The gripper as a box attached to tool0, so plans keep it clear of the table."""
        from geometry_msgs.msg import Pose
        from moveit_msgs.msg import (  # type: ignore[import-not-found]
            AttachedCollisionObject,
            CollisionObject,
        )
        from shape_msgs.msg import SolidPrimitive  # type: ignore[import-not-found]

        size, centre = GRIPPER_BOX
        pose = Pose()
        pose.position.x, pose.position.y, pose.position.z = centre
        pose.orientation.w = 1.0
        co = CollisionObject(id=GRIPPER_ID, operation=CollisionObject.ADD)
        co.header.frame_id = TIP_LINK
        co.primitives.append(SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(size)))
        co.primitive_poses.append(pose)
        aco = AttachedCollisionObject(link_name=TIP_LINK, object=co,
                                      touch_links=list(GRIPPER_TOUCH_LINKS))
        with self._moveit.get_planning_scene_monitor().read_write() as scene:
            scene.process_attached_collision_object(aco)
            scene.current_state.update()

    def _plan(self, namespace: str, speed_scaling: float) -> JointTrajectory:
        """``speed_scaling`` is the motion's own factor; the pendant slider is applied once, by
        the scaled JTC at execution (jtc_backend's docstring)."""
        moveit, arm = self._session()
        params = self._params_cls(moveit, namespace)
        params.max_velocity_scaling_factor = float(self.limits.velocity_scale * speed_scaling)
        params.max_acceleration_scaling_factor = float(
            self.limits.acceleration_scale * speed_scaling)
        result = arm.plan(single_plan_parameters=params)
        if not result:
            raise PlanningError(FailureCode.UNREACHABLE, f"MoveIt ({namespace}) found no plan")
        # MoveIt's time parameterisation bounds joint speeds only: a long swing can move the
        # TCP faster than the envelope allows, so the plan is slowed to the TCP limit here
        return limit_tcp_speed(_trajectory_from_robot_trajectory(result.trajectory), self.kin,
                               0.95 * self.limits.max_cartesian_speed * speed_scaling)

    def _tool0_pose_msg(self, tcp_pose: np.ndarray) -> Any:
        from geometry_msgs.msg import PoseStamped

        tool0 = np.asarray(tcp_pose, dtype=float).copy()
        tool0[:3, 3] -= tool0[:3, 2] * self.kin.config.tcp_offset
        qw, qx, qy, qz = quat_from_matrix(tool0)
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

"""The robot's ROS messages and ours: trajectories, joint states, the stop, gripper goals.

Pure conversions (no node): ``RosRobot`` (``nodes/ros_robot.py``) sends and reads them on the
UR driver's interfaces, the perception node checks joint states with ``joint_state_problem``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from sensor_msgs.msg import JointState as JointStateMsg
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from frankenbot.motion.kinematics import JOINT_NAMES
from frankenbot.motion.trajectory import JointTrajectory

STOP_RAMP = 0.05  # s: the shortest stop (the JTC blends into its point, no jump)
STOP_DECELERATION = 2.5  # rad/s^2 per joint while stopping (the planning limit; safety max 5)
MAX_STATE_AGE = 0.2  # s: a joint state older than this is not extrapolated further


def _duration(seconds: float) -> Any:
    from builtin_interfaces.msg import Duration

    sec = math.floor(seconds)
    return Duration(sec=int(sec), nanosec=int(round((seconds - sec) * 1e9)) % 1_000_000_000)


def trajectory_to_msg(traj: JointTrajectory) -> JointTrajectoryMsg:
    """Our JointTrajectory -> trajectory_msgs/JointTrajectory (header stamp 0 = start now)."""
    msg = JointTrajectoryMsg()
    msg.joint_names = list(traj.joint_names)
    vel = traj.velocities().tolist() if traj.has_velocities else None
    for i, (t, q) in enumerate(zip(traj.times().tolist(), traj.positions().tolist(),
                                   strict=True)):
        point = JointTrajectoryPoint()
        point.positions = q
        if vel is not None:
            point.velocities = vel[i]
        point.time_from_start = _duration(t)
        msg.points.append(point)
    return msg


def trajectory_from_msg(msg: JointTrajectoryMsg) -> JointTrajectory:
    from frankenbot.motion.trajectory import TrajectoryPoint

    pts = tuple(TrajectoryPoint(
        float(p.time_from_start.sec) + float(p.time_from_start.nanosec) * 1e-9,
        tuple(float(v) for v in p.positions),
        tuple(float(v) for v in p.velocities) if len(p.velocities) else None)
        for p in msg.points)
    return JointTrajectory(tuple(msg.joint_names), pts)


MAX_ABS_POSITION = 4.0 * math.pi  # rad: beyond any UR joint's range (+-2 pi) by a margin
MAX_ABS_VELOCITY = 20.0  # rad/s: an order of magnitude above the UR5e's joint speed limits


def joint_state_problem(msg: JointStateMsg, names: Sequence[str] = JOINT_NAMES) -> str:
    """Why ``msg`` cannot be the arm's state ('' when it can): names, counts, values.

    A message that fails here is dropped whole (never half-used): the adapter then keeps the
    last good state until it goes stale, and motion stops for want of a fresh state.
    """
    if len(set(msg.name)) != len(msg.name):
        return f"duplicate joint names {list(msg.name)}"
    missing = [n for n in names if n not in msg.name]
    if missing:
        return f"joints {missing} missing (got {list(msg.name)[:10]})"
    if len(msg.position) != len(msg.name):
        return f"{len(msg.name)} names but {len(msg.position)} positions"
    if len(msg.velocity) not in (0, len(msg.name)):
        return f"{len(msg.name)} names but {len(msg.velocity)} velocities"
    index = {n: i for i, n in enumerate(msg.name)}
    for n in names:
        q = float(msg.position[index[n]])
        if not math.isfinite(q) or abs(q) > MAX_ABS_POSITION:
            return f"{n} position {q} is not a finite angle within +-{MAX_ABS_POSITION:.2f}"
        if len(msg.velocity):
            v = float(msg.velocity[index[n]])
            if not math.isfinite(v) or abs(v) > MAX_ABS_VELOCITY:
                return f"{n} velocity {v} is not finite or above {MAX_ABS_VELOCITY} rad/s"
    return ""


def joint_state_from_msg(msg: JointStateMsg, names: Sequence[str] = JOINT_NAMES
                         ) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(positions, velocities) in ``names`` order, or None when ``joint_state_problem`` finds
    one (a joint missing, counts that disagree, a value not finite or out of range)."""
    if joint_state_problem(msg, names):
        return None
    index = {n: i for i, n in enumerate(msg.name)}
    pos = tuple(float(msg.position[index[n]]) for n in names)
    has_vel = len(msg.velocity) == len(msg.name)
    vel = tuple(float(msg.velocity[index[n]]) for n in names) if has_vel else (0.0,) * len(names)
    return pos, vel


def hold_msg(positions: Sequence[float], ramp: float = STOP_RAMP,
             names: Sequence[str] = JOINT_NAMES) -> JointTrajectoryMsg:
    """The stop: one point at the measured joints, at rest, ``ramp`` s from now.

    The Jazzy JTC rejects an empty trajectory ("Empty trajectory received."), so stopping means
    replacing the running trajectory with a hold. A short ramp instead of 0 lets the controller
    blend from its current state rather than step the position command.
    """
    msg = JointTrajectoryMsg()
    msg.joint_names = list(names)
    point = JointTrajectoryPoint()
    point.positions = [float(v) for v in positions]
    point.velocities = [0.0] * len(point.positions)
    point.time_from_start = _duration(max(0.0, float(ramp)))
    msg.points.append(point)
    return msg


def stop_msg(positions: Sequence[float], velocities: Sequence[float], *, age: float = 0.0,
             deceleration: float = STOP_DECELERATION, ramp: float = STOP_RAMP,
             names: Sequence[str] = JOINT_NAMES) -> JointTrajectoryMsg:
    """The topic-mode stop: one point at rest, reached with a uniform deceleration.

    The arm is where the joint state said plus ``velocities * age`` (the state is ``age`` s old
    when the stop goes out). Every joint decelerates from its velocity to rest in the same time
    T = max(ramp, max|v| / deceleration), so it stops at ``q_now + v * T / 2``: ahead of the arm
    along its motion, never behind it. The JTC joins its current state to this point with a
    cubic that, with these end conditions, is exactly that constant deceleration.
    """
    q = [float(v) for v in positions]
    v = [float(x) for x in velocities] if len(velocities) == len(q) else [0.0] * len(q)
    age = min(max(float(age), 0.0), MAX_STATE_AGE)
    now = [qi + vi * age for qi, vi in zip(q, v, strict=True)]
    duration = max(float(ramp), max((abs(vi) for vi in v), default=0.0) / float(deceleration))
    return hold_msg([qi + vi * duration / 2.0 for qi, vi in zip(now, v, strict=True)],
                    duration, names)


def parallel_gripper_goal(action_type: Any, joint: str, position: float) -> Any:
    """A ParallelGripperCommand goal: ``command`` is a JointState with one joint, in radians.

    Velocity and effort stay empty: parallel_gripper_action_controller then uses its own
    ``max_velocity`` / ``max_effort`` parameters (robotiq_controllers.yaml).
    """
    goal = action_type.Goal()
    goal.command.name = [str(joint)]
    goal.command.position = [float(position)]
    return goal


def gripper_command_goal(action_type: Any, position: float, max_effort: float) -> Any:
    """A GripperCommand goal (grippers whose controller is still gripper_action_controller)."""
    goal = action_type.Goal()
    goal.command.position = float(position)
    goal.command.max_effort = float(max_effort)
    return goal

"""When ros2_control's joint_trajectory_controller refuses a trajectory, and why.

The controller (ros2_controllers jazzy, ``validate_trajectory_msg``; the UR driver's scaled JTC
inherits it) rejects a goal or topic message without telling the sender why: the reason only
reaches its own log. One function holds those rules so that the sim's driver twin refuses what
the real controller refuses, and the robot adapter can name the likely reason when the real one
says no. Wording follows the controller's log lines so they can be found in a driver log.

Pure data in, a sentence out ('' = accepted); no ROS types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

FLOAT_EPS = 1.1920929e-07  # std::numeric_limits<float>::epsilon(): the controller's "zero"


@dataclass(frozen=True)
class PointData:
    """One trajectory point as the controller sees it (empty sequences = field not given)."""

    time_from_start: float
    positions: Sequence[float] = ()
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()
    effort: Sequence[float] = ()


def trajectory_problem(joint_names: Sequence[str], points: Sequence[PointData],
                       controller_joints: Sequence[str], *, start_time: float = 0.0,
                       now: float = 0.0, allow_partial_joints_goal: bool = False,
                       allow_nonzero_velocity_at_trajectory_end: bool = False,
                       has_effort_command_interface: bool = False) -> str:
    """Why the controller would refuse this trajectory ('' when it accepts it).

    The checks run in the controller's order. Joint names may come in any order (the controller
    sorts them into its own). One check is stricter than upstream: repeated names, which the
    controller would sort into a wrong command, and non-finite numbers, which it would pass to
    the hardware. ``start_time`` is the header stamp (0 = start now) and ``now`` the
    controller's clock, both in seconds.
    """
    names = list(joint_names)
    if not allow_partial_joints_goal and len(names) != len(controller_joints):
        return ("Joints on incoming trajectory don't match the controller joints "
                f"(got {len(names)} names {names[:8]}, the controller has "
                f"{list(controller_joints)})")
    if not names:
        return "Empty joint names on incoming trajectory."
    if not points:
        return "Empty trajectory received."
    for name in names:
        if name not in controller_joints:
            return f"Incoming joint {name} doesn't match the controller's joints."
    if len(set(names)) != len(names):
        return f"Incoming joint names repeat: {names}"
    if not allow_nonzero_velocity_at_trajectory_end:
        for i, v in enumerate(points[-1].velocities):
            if abs(float(v)) > FLOAT_EPS:
                return (f"Velocity of last trajectory point of joint {names[i]} is not zero: "
                        f"{float(v):.15f}")
    if start_time != 0.0 and start_time + float(points[-1].time_from_start) < now:
        return (f"Received trajectory with non-zero start time ({start_time:f}) that ends in "
                f"the past ({start_time + float(points[-1].time_from_start):f})")
    previous = 0.0
    for i, p in enumerate(points):
        t = float(p.time_from_start)
        if not math.isfinite(t):
            return f"time_from_start of point {i} is not finite: {t}"
        if i > 0 and t <= previous:
            return (f"Time between points {i - 1} and {i} is not strictly increasing, it is "
                    f"{previous:f} and {t:f} respectively")
        previous = t
        for field, values, may_be_empty in (("positions", p.positions, False),
                                            ("velocities", p.velocities, True),
                                            ("accelerations", p.accelerations, True)):
            if may_be_empty and len(values) == 0:
                continue
            if len(values) != len(names):
                return (f"Mismatch between joint_names size ({len(names)}) and {field} "
                        f"({len(values)}) at point #{i}.")
            if not all(math.isfinite(float(v)) for v in values):
                return f"{field} of point #{i} are not all finite: {list(values)}"
        if not has_effort_command_interface and len(p.effort):
            return ("Trajectories with effort fields are only supported for controllers using "
                    "the 'effort' command interface.")
    return ""

"""Universal_Robots_ROS2_Driver (Jazzy) conventions shared by the ROS adapter, the sim and doctor.

Names and units are the driver's (checked against its jazzy sources), so the sim node can speak
exactly what the robot speaks and ``frankenbot doctor`` can say what is missing by name.
"""

from __future__ import annotations

import math

TRAJECTORY_CONTROLLER = "scaled_joint_trajectory_controller"
TRAJECTORY_TOPIC = f"/{TRAJECTORY_CONTROLLER}/joint_trajectory"  # trajectory_msgs/JointTrajectory
FOLLOW_ACTION = f"/{TRAJECTORY_CONTROLLER}/follow_joint_trajectory"  # FollowJointTrajectory
JOINT_STATES_TOPIC = "/joint_states"
# The broadcaster publishes the factor times 100 (percent), on every driver version of Jazzy.
SPEED_SCALING_TOPIC = "/speed_scaling_state_broadcaster/speed_scaling"  # std_msgs/Float64, %
# std_msgs/Bool, transient local: True while the External Control URCap program runs.
PROGRAM_RUNNING_TOPIC = "/io_and_status_controller/robot_program_running"
# The controllers ur_control.launch.py starts active (the ones FrankenBot relies on).
ACTIVE_CONTROLLERS = ("joint_state_broadcaster", "io_and_status_controller",
                      "speed_scaling_state_broadcaster", TRAJECTORY_CONTROLLER)

PROGRAM_NOT_RUNNING = "External Control program is not running — press Play on the pendant"


def speed_fraction(percent: float) -> float | None:
    """The broadcaster's percent -> a fraction in [0, 1]; None for a non-finite value.

    Always percent: a value of 1.0 is 1 %, not full speed (reading values <= 1 as fractions
    would run the arm 100 times faster than the pendant's slider allows).
    """
    value = float(percent)
    if not math.isfinite(value):
        return None
    return min(max(value / 100.0, 0.0), 1.0)

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
# ur_dashboard_msgs/SafetyMode on the io_and_status_controller (latched, on change).
SAFETY_MODE_TOPIC = "/io_and_status_controller/safety_mode"
SAFETY_OK = (1, 2)  # NORMAL, REDUCED: the arm may move
SAFETY_MODES = {1: "normal", 2: "reduced", 3: "protective stop", 4: "recovery",
                5: "safeguard stop", 6: "system emergency stop", 7: "robot emergency stop",
                8: "violation", 9: "fault", 10: "validate joint id", 11: "undefined safety mode",
                12: "automatic mode safeguard stop", 13: "three-position enabling stop"}
LIST_CONTROLLERS_SERVICE = "/controller_manager/list_controllers"
CONTROLLER_INACTIVE = ("activate it (ros2 control switch_controllers --activate "
                       "scaled_joint_trajectory_controller) or restart the driver")


def safety_mode_fault(mode: int) -> str:
    """The sentence for a safety mode that stops the arm (what to do about it)."""
    name = SAFETY_MODES.get(int(mode), f"safety mode {mode}")
    if int(mode) == 3:
        return (f"the robot is in a {name}: find the cause, unlock it on the pendant (or "
                "dashboard_client/unlock_protective_stop), then press Play")
    return f"the robot's safety system stopped it ({name}): clear it on the pendant, then Play"


def speed_fraction(percent: float) -> float | None:
    """The broadcaster's percent -> a fraction in [0, 1]; None for a non-finite value.

    Always percent: a value of 1.0 is 1 %, not full speed (reading values <= 1 as fractions
    would run the arm 100 times faster than the pendant's slider allows).
    """
    value = float(percent)
    if not math.isfinite(value):
        return None
    return min(max(value / 100.0, 0.0), 1.0)

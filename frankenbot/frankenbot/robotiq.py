"""Robotiq 2F-85 gripper conventions shared by the sim, the gripper adapters and perception.

The real gripper's ROS controller (and the sim) speak in knuckle position: 0.0 fully open,
``CLOSED_POSITION`` fully closed. The brain reasons in finger gap (metres). The mapping is taken
as linear, which is within a few millimetres over the 2F-85's stroke.
"""

from __future__ import annotations

STROKE = 0.085  # m, finger gap when fully open
CLOSED_POSITION = 0.8  # knuckle position (rad) when fully closed
KNUCKLE_JOINT = "robotiq_85_left_knuckle_joint"  # name in /joint_states
COMMAND_TOPIC = "/gripper_position_controller/commands"  # std_msgs/Float64MultiArray [position]
# Jazzy: parallel_gripper_action_controller, control_msgs/action/ParallelGripperCommand (goal:
# a JointState naming KNUCKLE_JOINT, radians). Under robotiq_gripper.launch.py the controller
# manager is namespaced: /robotiq/robotiq_gripper_controller/gripper_cmd.
ACTION_NAME = "/robotiq_gripper_controller/gripper_cmd"
NOT_ACTIVATED = ("the Robotiq is not activated or faulted — reactivate it "
                 "(/robotiq/robotiq_activation_controller/reactivate_gripper) or power-cycle it")


def width_to_position(width: float, closed: float = CLOSED_POSITION) -> float:
    """Finger gap (m) -> knuckle position (rad, ``closed`` when shut), clamped to the range."""
    w = min(max(width, 0.0), STROKE)
    return closed * (1.0 - w / STROKE)


def position_to_width(position: float, closed: float = CLOSED_POSITION) -> float:
    """Knuckle position (rad) -> finger gap (m), clamped to the physical range."""
    p = min(max(position, 0.0), closed)
    return STROKE * (1.0 - p / closed)

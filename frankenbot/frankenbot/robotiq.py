"""Robotiq 2F-85 gripper conventions shared by the sim, the gripper adapters and perception.

The real gripper's ROS controller (and the sim) speak in knuckle position: 0.0 fully open,
``CLOSED_POSITION`` fully closed. The brain reasons in finger gap (metres). The mapping is taken
as linear, which is within a few millimetres over the 2F-85's stroke.
"""

from __future__ import annotations

from typing import Any, Mapping

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


# What the 2F-85's ros2_control hardware exports, by hardware kind (ros2_robotiq_gripper:
# robotiq_description/urdf/2f_85.ros2_control.xacro and robotiq_driver/src/hardware_interface.cpp).
# The real driver adds set_gripper_max_velocity / set_gripper_max_effort to the URDF's position
# command; mock_components/GenericSystem exports exactly what the URDF declares.
EXPORTED_INTERFACES: dict[str, dict[str, frozenset[str]]] = {
    "hardware": {
        "command": frozenset({f"{KNUCKLE_JOINT}/position",
                              f"{KNUCKLE_JOINT}/set_gripper_max_velocity",
                              f"{KNUCKLE_JOINT}/set_gripper_max_effort",
                              "reactivate_gripper/reactivate_gripper_cmd",
                              "reactivate_gripper/reactivate_gripper_response"}),
        "state": frozenset({f"{KNUCKLE_JOINT}/position", f"{KNUCKLE_JOINT}/velocity"}),
    },
    "mock": {
        "command": frozenset({f"{KNUCKLE_JOINT}/position",
                              "reactivate_gripper/reactivate_gripper_cmd",
                              "reactivate_gripper/reactivate_gripper_response"}),
        "state": frozenset({f"{KNUCKLE_JOINT}/position", f"{KNUCKLE_JOINT}/velocity"}),
    },
}
PARALLEL_GRIPPER_TYPE = "parallel_gripper_action_controller/GripperActionController"


def parallel_gripper_claims(params: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(command, state) interfaces parallel_gripper_action_controller claims with ``params``
    (ros2_controllers jazzy: parallel_gripper_action_controller_impl.hpp,
    command_interface_configuration / state_interface_configuration)."""
    joint = str(params.get("joint", ""))
    command = {f"{joint}/position"}
    for key in ("max_effort_interface", "max_velocity_interface"):
        if params.get(key):
            command.add(str(params[key]))
    states = params.get("state_interfaces", ["position", "velocity"])
    return command, {f"{joint}/{s}" for s in states}


def controller_interface_problems(controllers_yaml: Mapping[str, Any], hardware: str
                                  ) -> list[str]:
    """Why a parallel gripper controller of ``controllers_yaml`` (a controller-manager
    parameter file) could not activate on ``hardware`` ("hardware" or "mock"): every
    interface it claims must be exported, or the controller manager refuses to activate it
    and the gripper action server never appears."""
    exported = EXPORTED_INTERFACES[hardware]
    types: dict[str, str] = {}
    params: dict[str, Mapping[str, Any]] = {}
    for key, section in controllers_yaml.items():
        node = str(key).rsplit("/", 1)[-1]
        values = (section or {}).get("ros__parameters", {}) if isinstance(section, Mapping) else {}
        if node == "controller_manager":
            types.update({name: str(v.get("type", "")) for name, v in values.items()
                          if isinstance(v, Mapping)})
        else:
            params[node] = values
    problems = []
    for name, kind in types.items():
        if kind != PARALLEL_GRIPPER_TYPE:
            continue
        command, state = parallel_gripper_claims(params.get(name, {}))
        for what, claimed, have in (("command", command, exported["command"]),
                                    ("state", state, exported["state"])):
            for missing in sorted(claimed - have):
                problems.append(f"{name} claims the {what} interface {missing!r}, which the "
                                f"{hardware} Robotiq does not export (it exports "
                                f"{sorted(have)})")
    return problems

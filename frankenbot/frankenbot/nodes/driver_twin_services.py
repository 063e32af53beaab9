"""The driver twin's services: dashboard, controller manager, Robotiq activation, faults, TF.

Split from ``frankenbot.nodes.driver_twin`` (the controllers); every handler changes the twin's
``DriverState`` under its lock and lets the twin reconcile the arm with it (see that module's
docstring for the names and types).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from std_srvs.srv import Trigger

from frankenbot.errors import FrankenbotError, SimError
from frankenbot.sim import driver_twin as dt

if TYPE_CHECKING:
    from frankenbot.nodes.driver_twin import DriverTwin

DASHBOARD = ("play", "stop", "pause", "unlock_protective_stop", "power_on", "power_off",
             "brake_release")


class CellServices:
    """The UR dashboard client's, the controller managers', the Robotiq activation's and the
    fault-injection services of one twin, in their own callback group."""

    def __init__(self, node: Node, twin: "DriverTwin") -> None:
        from controller_manager_msgs.srv import ListControllers, SwitchController
        from ur_dashboard_msgs.srv import (
            GetProgramState,
            GetRobotMode,
            GetSafetyMode,
            IsProgramRunning,
        )

        from frankenbot_interfaces.srv import InjectAnomaly

        self.twin = twin
        group = MutuallyExclusiveCallbackGroup()

        def srv(kind: Any, name: str, fn: Callable[[Any, Any], Any]) -> None:
            node.create_service(kind, name, fn, callback_group=group)

        for command in DASHBOARD:
            srv(Trigger, f"dashboard_client/{command}", self._dashboard_callback(command))
        srv(GetProgramState, "dashboard_client/program_state", self._program_state)
        srv(GetSafetyMode, "dashboard_client/get_safety_mode", self._get_safety_mode)
        srv(GetRobotMode, "dashboard_client/get_robot_mode", self._get_robot_mode)
        srv(IsProgramRunning, "dashboard_client/program_running", self._is_program_running)
        srv(ListControllers, "controller_manager/list_controllers", self._list_controllers(
            lambda: twin.state.controllers, dt.UR_CONTROLLERS))
        srv(SwitchController, "controller_manager/switch_controller", self._switch)
        srv(ListControllers, "robotiq/controller_manager/list_controllers",
            self._list_controllers(lambda: twin.state.robotiq_controllers(),
                                   dt.ROBOTIQ_CONTROLLERS))
        srv(Trigger, "robotiq/robotiq_activation_controller/reactivate_gripper",
            self._reactivate)
        srv(InjectAnomaly, "~/inject_fault", self._inject)

    def _dashboard_callback(self, command: str) -> Callable[[Any, Any], Any]:
        def callback(request: Any, response: Any) -> Any:
            with self.twin.lock:
                response.success, response.message = self.twin.state.dashboard(command)
                self.twin.reconcile()
            self.twin.publish_states()
            return response
        return callback

    def _program_state(self, request: Any, response: Any) -> Any:
        with self.twin.lock:
            program = self.twin.state.program
        response.state.state = program
        response.program_name = "external_control.urp"
        response.answer = f"{program} external_control.urp"
        response.success = True
        return response

    def _get_safety_mode(self, request: Any, response: Any) -> Any:
        with self.twin.lock:
            mode = self.twin.state.safety_mode
        response.safety_mode.mode = mode
        response.answer = f"Safetymode: {dt.SAFETY_NAMES.get(mode, mode)}"
        response.success = True
        return response

    def _get_robot_mode(self, request: Any, response: Any) -> Any:
        with self.twin.lock:
            response.robot_mode.mode = self.twin.state.robot_mode
        response.answer, response.success = f"Robotmode: {response.robot_mode.mode}", True
        return response

    def _is_program_running(self, request: Any, response: Any) -> Any:
        with self.twin.lock:
            response.program_running = self.twin.state.program_running
        response.answer, response.success = f"Program running: {response.program_running}", True
        return response

    def _list_controllers(self, states: Callable[[], dict[str, str]],
                          types: dict[str, tuple[str, bool]]) -> Callable[[Any, Any], Any]:
        from controller_manager_msgs.msg import ControllerState

        def callback(request: Any, response: Any) -> Any:
            with self.twin.lock:
                current = dict(states())
            response.controller = [ControllerState(name=name, state=state,
                                                   type=types[name][0])
                                   for name, state in current.items()]
            return response
        return callback

    def _switch(self, request: Any, response: Any) -> Any:
        with self.twin.lock:
            response.ok, response.message = self.twin.state.switch_controllers(
                list(request.activate_controllers), list(request.deactivate_controllers))
            self.twin.reconcile()
        return response

    def _reactivate(self, request: Any, response: Any) -> Any:
        with self.twin.lock:
            self.twin.state.gripper_activated = True
        response.success, response.message = True, "gripper reactivated"
        return response

    def _inject(self, request: Any, response: Any) -> Any:
        try:
            params = json.loads(request.params_json) if request.params_json.strip() else {}
            if not isinstance(params, dict):
                raise SimError(f"params_json must be a JSON object, got {request.params_json!r}")
            with self.twin.lock:
                response.message = self.twin.state.arm(request.kind, request.phase, params)
                self.twin.reconcile()
        except json.JSONDecodeError as e:
            response.ok, response.message = False, f"params_json is not valid JSON: {e}"
            return response
        except (FrankenbotError, ValueError) as e:
            response.ok, response.message = False, str(e)
            return response
        response.ok, response.anomaly_class = True, "driver_fault"
        self.twin.node.get_logger().warning(f"driver fault: {response.message}")
        self.twin.publish_states()
        return response


def static_transforms(tf_message: Any) -> Any:
    """What real_ur5e.launch.py's static publishers put on /tf_static: the camera pose
    (the sim's nominal one, as config/camera.yaml holds it) and the UR description's fixed
    frames (ur_description: base, flange, tool0)."""
    from geometry_msgs.msg import TransformStamped

    def transform(parent: str, child: str, xyz: Sequence[float],
                  quat: Sequence[float]) -> Any:
        t = TransformStamped()
        t.header.frame_id, t.child_frame_id = parent, child
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (
            float(v) for v in xyz)
        (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
         t.transform.rotation.w) = (float(v) for v in quat)
        return t

    def rpy(r: float, p: float, y: float) -> tuple[float, float, float, float]:
        cr, sr, cp, sp = math.cos(r / 2), math.sin(r / 2), math.cos(p / 2), math.sin(p / 2)
        cy, sy = math.cos(y / 2), math.sin(y / 2)
        return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)

    from frankenbot.sim.config_files import camera_config

    cam = camera_config()  # what config/camera.yaml (the calibration file) says
    return tf_message(transforms=[
        transform(cam["parent"], cam["frame"], cam["translation"], cam["quaternion"]),
        transform("base_link", "base", (0, 0, 0), rpy(0, 0, math.pi)),
        transform("base_link", "base_link_inertia", (0, 0, 0), rpy(0, 0, math.pi)),
        transform("wrist_3_link", "flange", (0, 0, 0), rpy(0, -math.pi / 2, -math.pi / 2)),
        transform("flange", "tool0", (0, 0, 0), rpy(math.pi / 2, 0, math.pi / 2)),
    ])

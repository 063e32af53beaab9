"""What the real-robot and Gazebo launch files start, decided from their arguments in plain Python.

The launch files (launch/*.launch.py) only translate a ``LaunchPlan`` into launch actions inside
an OpaqueFunction, after every argument is known. So a package is looked up (and must be
installed) only when the plan includes something of it: ur_moveit_config only with
``motion_backend:=moveit``, ur_robot_driver only with ``launch_driver:=true``, realsense2_camera
only with ``launch_camera:=true``, robotiq_description only with ``launch_gripper:=true``. The
plan is tested here; ``ros2 launch`` itself does not run on the development machines.

Gripper: the Robotiq gets its own controller manager under the ``/robotiq`` namespace
(ros2_control_node, robot_state_publisher, joint_state_broadcaster, the parallel gripper action
controller, the activation controller), with its description rooted at the UR's ``tool0``.
Why namespaced and not one combined UR + Robotiq description: the UR driver's launch, URDF and
controller files stay exactly upstream's (nothing to keep in sync with driver releases), the
gripper's serial link cannot stall the UR's 500 Hz control loop, and either side can be
restarted alone. The price: the gripper is not in the UR's robot_description, so MoveIt adds it
as an attached box (nodes/moveit_backend.py), and its joint states come on
``/robotiq/joint_states`` (the executor's ``gripper_joint_states_topic``).

Launch arguments: ``ros2 launch`` keeps one set of launch configurations for the whole launch,
and an IncludeLaunchDescription does not scope it (ros2/launch jazzy:
include_launch_description.py sets its arguments into the parent's configurations;
declare_launch_argument.py applies a default only when the name is not set yet). So every
argument a parent declares reaches every file it includes, and further down: our
``kinematics_params_file`` default "" reached ur_rsp.launch.py (included by ur_control.launch.py)
instead of its own default, and xacro failed on ``kinematics_params:=``. Every include is
therefore wrapped in ``GroupAction(scoped=True, forwarding=False)`` (group_action.py): the
included file starts from exactly the arguments the plan passes, and upstream defaults apply to
the rest.

Camera pose: rs_launch runs with ``publish_tf:=false`` and the plan publishes one static
transform parent -> colour optical frame from the calibration file (`frankenbot calibrate
camera` writes it: translation + quaternion of the optical frame in base_link). Publishing
base_link -> camera_link instead would need the camera's internal camera_link -> optical
extrinsics, which differ per unit; the optical frame is what perception and calibration use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from frankenbot.errors import ConfigError

BRAIN_NODES = ("perception", "memory", "planner", "executor")
MOTION_BACKENDS = ("jtc", "moveit")
GRIPPER_NAMESPACE = "robotiq"
GRIPPER_CONNECTIONS = ("tool", "usb")
TOOL_VOLTAGES = ("0", "12", "24")
# The 2F-85's Modbus RTU line settings on the UR's tool connector (ur_control.launch.py's
# tool_* arguments; Robotiq 2F-85 manual: 115200 baud, no parity, 1 stop bit).
ROBOTIQ_TOOL_SERIAL = {"tool_parity": "0", "tool_baud_rate": "115200", "tool_stop_bits": "1",
                       "tool_rx_idle_chars": "1.5", "tool_tx_idle_chars": "3.5"}
GRIPPER_CONTROLLERS = ("joint_state_broadcaster", "robotiq_gripper_controller",
                       "robotiq_activation_controller")
GZ_CAMERA = "/world/tabletop/model/rgbd_camera/link/link/sensor/rgbd/"
GZ_CAMERA_BRIDGE = {  # gz topic -> (ROS topic, bridge spec)
    GZ_CAMERA + "image": ("/camera/camera/color/image_raw", "sensor_msgs/msg/Image[gz.msgs.Image"),
    GZ_CAMERA + "depth_image": ("/camera/camera/aligned_depth_to_color/image_raw",
                                "sensor_msgs/msg/Image[gz.msgs.Image"),
    GZ_CAMERA + "camera_info": ("/camera/camera/color/camera_info",
                                "sensor_msgs/msg/CameraInfo[gz.msgs.CameraInfo"),
}


@dataclass(frozen=True)
class Include:
    """An upstream launch file: ``<share of package>/launch/<launch_file>`` with arguments."""

    package: str
    launch_file: str
    arguments: dict[str, str]


@dataclass(frozen=True)
class NodeSpec:
    """A launch_ros Node. ``parameters`` items are file paths (str) or dicts; a dict value
    ``XacroDescription`` becomes the processed URDF string."""

    package: str
    executable: str
    name: str = ""
    namespace: str = ""
    parameters: tuple[Any, ...] = ()
    arguments: tuple[str, ...] = ()
    remappings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class XacroDescription:
    """A robot_description to render with xacro at launch time (path in this package)."""

    path: str
    mappings: dict[str, str]


@dataclass(frozen=True)
class TcpOffsetOf:
    """A parameter value: the TCP offset of a gripper description, computed when the
    description is rendered (frankenbot.tcp: the one source of the real robot's offset)."""

    description: XacroDescription


@dataclass
class LaunchPlan:
    includes: list[Include] = field(default_factory=list)
    nodes: list[NodeSpec] = field(default_factory=list)

    def packages(self) -> set[str]:
        """Every ROS package the plan needs at launch time (besides frankenbot)."""
        return ({i.package for i in self.includes}
                | {n.package for n in self.nodes if n.package != "frankenbot"})


def _flag(args: Mapping[str, str], name: str) -> bool:
    value = str(args.get(name, "false")).strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(f"launch argument {name} must be true or false, got {value!r}")
    return value == "true"


def camera_static_transform(calibration_file: str | Path) -> NodeSpec:
    """tf2_ros static_transform_publisher: parent -> optical frame from the calibration."""
    import yaml

    from frankenbot.perception.camera import camera_pose_from_mapping

    path = Path(calibration_file)
    if not path.is_file():
        raise ConfigError(f"camera calibration {path} not found: run `frankenbot calibrate "
                          f"camera` (or pass camera_calibration:=<file>)")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"camera calibration {path} must be a mapping")
    parent, frame, xyz, quaternion = camera_pose_from_mapping(data)
    return static_transform(parent, frame, xyz, quaternion)


def static_transform(parent: str, child: str, xyz: Any, quaternion: Any,
                     **node: Any) -> NodeSpec:
    """tf2_ros static_transform_publisher parent -> child (quaternion x, y, z, w)."""
    (x, y, z), (qx, qy, qz, qw) = xyz, quaternion
    numbers = {"--x": x, "--y": y, "--z": z, "--qx": qx, "--qy": qy, "--qz": qz, "--qw": qw}
    arguments: list[str] = []
    for flag, value in numbers.items():
        arguments += [flag, f"{float(value):.9f}"]
    arguments += ["--frame-id", parent, "--child-frame-id", child]
    return NodeSpec("tf2_ros", "static_transform_publisher", name="frankenbot_camera_pose",
                    arguments=tuple(arguments), **node)


# gz camera link (x forward, y left, z up) -> optical frame (x right, y down, z forward)
LINK_TO_OPTICAL = ((0.0, 0.0, 1.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))


def gazebo_camera_transform(sdf_path: str | Path, model: str = "rgbd_camera") -> NodeSpec:
    """base_link -> the Gazebo camera's image frame, from the world file itself.

    The bridged images carry the sensor's ``gz_frame_id``; perception looks that frame up in
    TF (config/gazebo.yaml: camera_config ""), so it must be published. The world frame is
    base_link (ur_simulation_gz spawns the arm at the origin). One source: the SDF's pose.
    """
    import math
    import xml.etree.ElementTree as ET

    import numpy as np

    from frankenbot.transforms import quat_from_matrix

    root = ET.parse(sdf_path).getroot()
    found = next((m for m in root.iter("model") if m.get("name") == model), None)
    if found is None:
        raise ConfigError(f"{sdf_path} has no model {model!r}")
    pose_text = found.findtext("pose", default="0 0 0 0 0 0")
    frame = found.findtext(".//sensor/gz_frame_id", default="")
    if not frame:
        raise ConfigError(f"{sdf_path}: the {model} sensor has no gz_frame_id, so its images "
                          f"carry a frame nobody publishes")
    x, y, z, roll, pitch, yaw = (float(v) for v in pose_text.split())
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                              math.cos(yaw), math.sin(yaw))
    link = np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])  # SDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll)
    optical = link @ np.array(LINK_TO_OPTICAL)
    return static_transform("base_link", frame, (x, y, z),
                            quat_from_matrix(optical).xyzw(),
                            parameters=({"use_sim_time": True},))


def brain_nodes(config: str, planner: str, *, use_sim_time: bool,
                extra: Mapping[str, Mapping[str, Any]] | None = None) -> list[NodeSpec]:
    """The four brain nodes with one parameter file (and per-node overrides)."""
    out = []
    for exe in BRAIN_NODES:
        params: list[Any] = [config]
        if use_sim_time:
            params.append({"use_sim_time": True})
        if exe == "planner":
            params.append({"planner_mode": planner})
        if extra and exe in extra:
            params.append(dict(extra[exe]))
        out.append(NodeSpec("frankenbot", exe, name=f"frankenbot_{exe}", parameters=tuple(params)))
    return out


def gripper_description(share: Path, *, com_port: str, use_fake_hardware: bool
                        ) -> XacroDescription:
    """urdf/robotiq_on_tool0.urdf.xacro with the serial port and the hardware kind."""
    return XacroDescription(str(share / "urdf" / "robotiq_on_tool0.urdf.xacro"),
                            {"com_port": com_port,
                             "use_fake_hardware": "true" if use_fake_hardware else "false"})


def gripper_nodes(share: Path, *, com_port: str, use_fake_hardware: bool) -> list[NodeSpec]:
    """The Robotiq's own controller manager and friends under /robotiq (see module docstring)."""
    ns = GRIPPER_NAMESPACE
    description = {"robot_description": gripper_description(
        share, com_port=com_port, use_fake_hardware=use_fake_hardware)}
    controllers = str(share / "config" / "robotiq_controllers.yaml")
    check_gripper_controllers(controllers, mock=use_fake_hardware)
    nodes = [
        NodeSpec("controller_manager", "ros2_control_node", name="controller_manager",
                 namespace=ns, parameters=(description, controllers),
                 remappings=(("~/robot_description", f"/{ns}/robot_description"),)),
        NodeSpec("robot_state_publisher", "robot_state_publisher",
                 name="robot_state_publisher", namespace=ns, parameters=(description,)),
    ]
    for controller in GRIPPER_CONTROLLERS:
        nodes.append(NodeSpec("controller_manager", "spawner", name=f"spawner_{controller}",
                              namespace=ns,
                              arguments=(controller, "--controller-manager",
                                         f"/{ns}/controller_manager")))
    return nodes


def check_gripper_controllers(path: str | Path, *, mock: bool) -> None:
    """ConfigError when the gripper controller claims an interface the hardware lacks (it
    would never activate, so no gripper action server, and every grasp would fail later)."""
    import yaml

    from frankenbot import robotiq

    data = yaml.safe_load(Path(path).read_text()) or {}
    problems = robotiq.controller_interface_problems(data, "mock" if mock else "hardware")
    if problems:
        raise ConfigError(f"{path}: " + "; ".join(problems))


def real_robot_plan(args: Mapping[str, str], share: Path) -> LaunchPlan:
    """real_ur5e.launch.py: driver, camera, gripper, MoveIt and the brain as the args say."""
    backend = str(args.get("motion_backend", "jtc"))
    if backend not in MOTION_BACKENDS:
        raise ConfigError(f"motion_backend must be one of {MOTION_BACKENDS}, got {backend!r}")
    launch_driver = _flag(args, "launch_driver")
    mock = _flag(args, "use_mock_hardware")
    ur_type = str(args.get("ur_type", "ur5e"))
    launch_gripper = _flag(args, "launch_gripper")
    connection = str(args.get("gripper_connection", "tool"))
    if connection not in GRIPPER_CONNECTIONS:
        raise ConfigError(f"gripper_connection must be one of {GRIPPER_CONNECTIONS}, got "
                          f"{connection!r}")
    tool_voltage = str(args.get("tool_voltage", "24"))
    if tool_voltage not in TOOL_VOLTAGES:
        raise ConfigError(f"tool_voltage must be one of {TOOL_VOLTAGES} (volts), got "
                          f"{tool_voltage!r}")
    tool_device = str(args.get("tool_device_name", "/tmp/ttyUR"))
    gripper_on_tool = launch_gripper and connection == "tool"
    if gripper_on_tool and not mock and tool_voltage != "24":
        raise ConfigError("the 2F-85 on the tool connector needs tool_voltage:=24")
    plan = LaunchPlan()
    if launch_driver:
        robot_ip = str(args.get("robot_ip", ""))
        if not robot_ip and not mock:
            raise ConfigError("robot_ip:=<address of the UR controller> is required with "
                              "launch_driver:=true (or use_mock_hardware:=true)")
        driver_args = {
            "ur_type": ur_type, "robot_ip": robot_ip or "0.0.0.0",
            "use_mock_hardware": "true" if mock else "false",
            "initial_joint_controller": "scaled_joint_trajectory_controller",
            "launch_rviz": str(args.get("launch_rviz", "false")),
        }
        kinematics = str(args.get("kinematics_params_file", ""))
        if kinematics:  # ur_calibration's output: reaches ur_rsp.launch.py through the include
            if not Path(kinematics).is_file():
                raise ConfigError(f"kinematics_params_file {kinematics} not found (make it with "
                                  f"`ros2 launch ur_calibration calibration_correction.launch.py"
                                  f" robot_ip:=... target_filename:=...`)")
            driver_args["kinematics_params_file"] = kinematics
        if gripper_on_tool and not mock:  # the driver bridges the tool's RS-485 to a device
            driver_args.update({"use_tool_communication": "true", "tool_voltage": tool_voltage,
                                "tool_device_name": tool_device, **ROBOTIQ_TOOL_SERIAL})
        plan.includes.append(Include("ur_robot_driver", "ur_control.launch.py", driver_args))
    if _flag(args, "launch_camera"):
        plan.includes.append(Include("realsense2_camera", "rs_launch.py", {
            "align_depth.enable": "true", "enable_sync": "true", "publish_tf": "false",
            "rgb_camera.color_profile": "640x480x30", "depth_module.depth_profile": "640x480x30",
        }))
    calibration = str(args.get("camera_calibration", ""))
    if calibration:
        plan.nodes.append(camera_static_transform(calibration))
    if launch_gripper:
        com_port = (tool_device if connection == "tool"
                    else str(args.get("gripper_com_port", "/dev/ttyUSB0")))
        plan.nodes += gripper_nodes(share, com_port=com_port, use_fake_hardware=mock)
        described = gripper_description(share, com_port=com_port, use_fake_hardware=mock)
    if backend == "moveit":
        plan.includes.append(Include("ur_moveit_config", "ur_moveit.launch.py", {
            "ur_type": ur_type, "launch_rviz": str(args.get("launch_rviz", "false"))}))
    executor_extra: dict[str, Any] = {"motion_backend": backend}
    if launch_gripper:  # the TCP from the gripper's description, not a hand-typed number
        executor_extra["tcp_offset"] = TcpOffsetOf(described)
    plan.nodes += brain_nodes(str(share / "config" / "real_ur5e.yaml"),
                              str(args.get("planner", "auto")), use_sim_time=False,
                              extra={"executor": executor_extra})
    return plan


def gazebo_plan(args: Mapping[str, str], share: Path) -> LaunchPlan:
    """gazebo.launch.py: ur_simulation_gz with the tabletop world, the camera bridge, the brain."""
    plan = LaunchPlan()
    plan.includes.append(Include("ur_simulation_gz", "ur_sim_control.launch.py", {
        "ur_type": str(args.get("ur_type", "ur5e")),
        "world_file": str(share / "config" / "gazebo_tabletop.sdf"),
        "initial_joint_controller": "scaled_joint_trajectory_controller",
        "launch_rviz": "false",
    }))
    plan.nodes.append(gazebo_camera_transform(share / "config" / "gazebo_tabletop.sdf"))
    plan.nodes.append(NodeSpec(
        "ros_gz_bridge", "parameter_bridge", name="frankenbot_camera_bridge",
        parameters=({"use_sim_time": True},),
        arguments=tuple(f"{gz}@{spec}" for gz, (_, spec) in GZ_CAMERA_BRIDGE.items()),
        remappings=tuple((gz, ros) for gz, (ros, _) in GZ_CAMERA_BRIDGE.items())))
    plan.nodes += brain_nodes(str(share / "config" / "gazebo.yaml"),
                              str(args.get("planner", "auto")), use_sim_time=True)
    return plan


def to_launch_actions(plan: LaunchPlan, share_of: Any) -> list[Any]:
    """Translate a plan into launch actions (``launch`` / ``launch_ros`` are imported here, so
    this runs only under ``ros2 launch``). ``share_of(package)`` is the package's share path."""
    from launch.actions import GroupAction, IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch_ros.actions import Node

    actions: list[Any] = []
    for inc in plan.includes:
        source = PythonLaunchDescriptionSource(
            str(Path(share_of(inc.package)) / "launch" / inc.launch_file))
        include = IncludeLaunchDescription(source, launch_arguments=list(inc.arguments.items()))
        # not forwarded: our own arguments must never stand in for the included file's defaults
        actions.append(GroupAction([include], scoped=True, forwarding=False))
    for spec in plan.nodes:
        kwargs: dict[str, Any] = {"package": spec.package, "executable": spec.executable,
                                  "output": "screen"}
        if spec.name:
            kwargs["name"] = spec.name
        if spec.namespace:
            kwargs["namespace"] = spec.namespace
        if spec.parameters:
            kwargs["parameters"] = [_render(p) for p in spec.parameters]
        if spec.arguments:
            kwargs["arguments"] = list(spec.arguments)
        if spec.remappings:
            kwargs["remappings"] = list(spec.remappings)
        actions.append(Node(**kwargs))
    return actions


def _render(parameter: Any) -> Any:
    if not isinstance(parameter, dict):
        return parameter
    out = {}
    for key, value in parameter.items():
        if isinstance(value, XacroDescription):
            value = _xacro(value)
        elif isinstance(value, TcpOffsetOf):
            from frankenbot.tcp import tcp_offset_from_description

            value = tcp_offset_from_description(_xacro(value.description))
        out[key] = value
    return out


def _xacro(description: XacroDescription) -> str:
    import xacro  # ROS package xacro (exec_depend); only with launch_gripper:=true

    return xacro.process_file(description.path, mappings=dict(description.mappings)).toxml()

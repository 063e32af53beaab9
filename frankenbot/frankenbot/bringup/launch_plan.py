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
    parent, frame, (x, y, z), (qx, qy, qz, qw) = camera_pose_from_mapping(data)
    numbers = {"--x": x, "--y": y, "--z": z, "--qx": qx, "--qy": qy, "--qz": qz, "--qw": qw}
    arguments: list[str] = []
    for flag, value in numbers.items():
        arguments += [flag, f"{value:.9f}"]
    arguments += ["--frame-id", parent, "--child-frame-id", frame]
    return NodeSpec("tf2_ros", "static_transform_publisher", name="frankenbot_camera_pose",
                    arguments=tuple(arguments))


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


def gripper_nodes(share: Path, *, com_port: str, use_fake_hardware: bool) -> list[NodeSpec]:
    """The Robotiq's own controller manager and friends under /robotiq (see module docstring)."""
    ns = GRIPPER_NAMESPACE
    description = {"robot_description": XacroDescription(
        str(share / "urdf" / "robotiq_on_tool0.urdf.xacro"),
        {"com_port": com_port, "use_fake_hardware": "true" if use_fake_hardware else "false"})}
    controllers = str(share / "config" / "robotiq_controllers.yaml")
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


def real_robot_plan(args: Mapping[str, str], share: Path) -> LaunchPlan:
    """real_ur5e.launch.py: driver, camera, gripper, MoveIt and the brain as the args say."""
    backend = str(args.get("motion_backend", "jtc"))
    if backend not in MOTION_BACKENDS:
        raise ConfigError(f"motion_backend must be one of {MOTION_BACKENDS}, got {backend!r}")
    launch_driver = _flag(args, "launch_driver")
    mock = _flag(args, "use_mock_hardware")
    ur_type = str(args.get("ur_type", "ur5e"))
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
        plan.includes.append(Include("ur_robot_driver", "ur_control.launch.py", driver_args))
    if _flag(args, "launch_camera"):
        plan.includes.append(Include("realsense2_camera", "rs_launch.py", {
            "align_depth.enable": "true", "enable_sync": "true", "publish_tf": "false",
            "rgb_camera.color_profile": "640x480x30", "depth_module.depth_profile": "640x480x30",
        }))
    calibration = str(args.get("camera_calibration", ""))
    if calibration:
        plan.nodes.append(camera_static_transform(calibration))
    if _flag(args, "launch_gripper"):
        plan.nodes += gripper_nodes(share, com_port=str(args.get("gripper_com_port",
                                                                  "/dev/ttyUSB0")),
                                    use_fake_hardware=mock)
    if backend == "moveit":
        plan.includes.append(Include("ur_moveit_config", "ur_moveit.launch.py", {
            "ur_type": ur_type, "launch_rviz": str(args.get("launch_rviz", "false"))}))
    executor_extra: dict[str, Any] = {"motion_backend": backend}
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
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch_ros.actions import Node

    actions: list[Any] = []
    for inc in plan.includes:
        source = PythonLaunchDescriptionSource(
            str(Path(share_of(inc.package)) / "launch" / inc.launch_file))
        actions.append(IncludeLaunchDescription(source,
                                                launch_arguments=list(inc.arguments.items())))
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
            import xacro  # ROS package xacro (exec_depend); only with launch_gripper:=true

            value = xacro.process_file(value.path, mappings=dict(value.mappings)).toxml()
        out[key] = value
    return out

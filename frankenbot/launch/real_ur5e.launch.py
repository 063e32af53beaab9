"""FrankenBot on a real UR5e with a RealSense D4xx and a Robotiq 2F-85.

    ros2 launch frankenbot real_ur5e.launch.py robot_ip:=192.168.56.101 \
        [motion_backend:=jtc|moveit] [planner:=auto|offline|vlm] [launch_driver:=true]

Includes ur_robot_driver's ur_control.launch.py (scaled_joint_trajectory_controller),
realsense2_camera's rs_launch.py with depth aligned to colour, and, with motion_backend:=moveit,
ur_moveit_config's ur_moveit.launch.py; then starts the five FrankenBot brain nodes with
config/real_ur5e.yaml. Not runnable on the development machines (no ROS apt install there): see
the README's "verified here" table.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node

BRAIN_NODES = ("perception", "memory", "planner")


def _share(package: str) -> Path:
    return Path(get_package_share_directory(package))


def _include(package: str, launch_file: str, arguments: dict, condition=None):
    source = PythonLaunchDescriptionSource(str(_share(package) / "launch" / launch_file))
    return IncludeLaunchDescription(source, launch_arguments=arguments.items(),
                                    condition=condition)


def _executor(context):
    """The executor node; with the MoveIt backend it also carries moveit_py's parameters."""
    config = str(_share("frankenbot") / "config" / "real_ur5e.yaml")
    backend = LaunchConfiguration("motion_backend").perform(context)
    params: list = [config, {"motion_backend": backend}]
    if backend == "moveit":
        from moveit_configs_utils import MoveItConfigsBuilder  # only on a MoveIt install

        moveit = (MoveItConfigsBuilder(robot_name="ur", package_name="ur_moveit_config")
                  .moveit_cpp(file_path=str(_share("frankenbot") / "config" / "moveit_cpp.yaml"))
                  .to_moveit_configs())
        params.append(moveit.to_dict())
    # moveit_py requires the ROS node name to equal MoveItPy's node_name (frankenbot_executor).
    return [Node(package="frankenbot", executable="executor", name="frankenbot_executor",
                 output="screen", parameters=params)]


def generate_launch_description() -> LaunchDescription:
    config = str(_share("frankenbot") / "config" / "real_ur5e.yaml")
    robot_ip = LaunchConfiguration("robot_ip")
    launch_driver = LaunchConfiguration("launch_driver")
    use_moveit = PythonExpression(["'", LaunchConfiguration("motion_backend"), "' == 'moveit'"])
    args = [
        DeclareLaunchArgument("robot_ip", description="IP address of the UR5e controller"),
        DeclareLaunchArgument("ur_type", default_value="ur5e"),
        DeclareLaunchArgument("motion_backend", default_value="jtc",
                              choices=["jtc", "moveit"],
                              description="jtc: analytic IK + joint trajectory controller; "
                                          "moveit: MoveItPy collision-aware planning"),
        DeclareLaunchArgument("planner", default_value="auto",
                              description="auto (VLM when OPENAI_API_KEY is set) | offline | vlm"),
        DeclareLaunchArgument("launch_driver", default_value="true",
                              description="start ur_robot_driver and the RealSense camera too"),
        DeclareLaunchArgument("launch_rviz", default_value="false"),
    ]
    driver = _include("ur_robot_driver", "ur_control.launch.py", {
        "ur_type": LaunchConfiguration("ur_type"), "robot_ip": robot_ip,
        "initial_joint_controller": "scaled_joint_trajectory_controller",
        "launch_rviz": LaunchConfiguration("launch_rviz"),
    }, condition=IfCondition(launch_driver))
    camera = _include("realsense2_camera", "rs_launch.py", {
        "align_depth.enable": "true", "enable_sync": "true",
        "rgb_camera.color_profile": "640x480x30", "depth_module.depth_profile": "640x480x30",
    }, condition=IfCondition(launch_driver))
    moveit = _include("ur_moveit_config", "ur_moveit.launch.py", {
        "ur_type": LaunchConfiguration("ur_type"),
        "launch_rviz": LaunchConfiguration("launch_rviz"),
    }, condition=IfCondition(use_moveit))
    brain = [
        Node(package="frankenbot", executable=exe, name=f"frankenbot_{exe}", output="screen",
             parameters=[config]
             + ([{"planner_mode": LaunchConfiguration("planner")}] if exe == "planner" else []))
        for exe in BRAIN_NODES
    ]
    return LaunchDescription([*args, driver, camera, moveit, *brain,
                              OpaqueFunction(function=_executor)])

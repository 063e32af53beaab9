"""FrankenBot in Gazebo (ur_simulation_gz) with a table scene and a fixed RGB-D camera.

    ros2 launch frankenbot gazebo.launch.py [planner:=auto|offline|vlm]

Starts ur_simulation_gz's ur_sim_control.launch.py with config/gazebo_tabletop.sdf (table,
blocks, bowls and an rgbd_camera sensor placed where config/camera.yaml says), bridges the camera
to the RealSense topic names with ros_gz_bridge, and starts the brain nodes with
config/gazebo.yaml. Gazebo's depth image is 32FC1 in metres; perception accepts it. Not runnable
on the development machines (no Gazebo there): see the README.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

BRAIN_NODES = ("perception", "memory", "planner", "executor")
GZ_CAMERA = "/world/tabletop/model/rgbd_camera/link/link/sensor/rgbd/"
CAMERA_BRIDGE = {  # gz topic -> (ROS topic, bridge spec)
    GZ_CAMERA + "image": ("/camera/camera/color/image_raw", "sensor_msgs/msg/Image[gz.msgs.Image"),
    GZ_CAMERA + "depth_image": ("/camera/camera/aligned_depth_to_color/image_raw",
                                "sensor_msgs/msg/Image[gz.msgs.Image"),
    GZ_CAMERA + "camera_info": ("/camera/camera/color/camera_info",
                                "sensor_msgs/msg/CameraInfo[gz.msgs.CameraInfo"),
}


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory("frankenbot"))
    config = str(share / "config" / "gazebo.yaml")
    world = str(share / "config" / "gazebo_tabletop.sdf")
    sim = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(Path(get_package_share_directory("ur_simulation_gz"))
                                          / "launch" / "ur_sim_control.launch.py")),
        launch_arguments={"ur_type": "ur5e", "world_file": world, "launch_rviz": "false"}.items(),
    )
    bridge = Node(
        package="ros_gz_bridge", executable="parameter_bridge", name="frankenbot_camera_bridge",
        arguments=[f"{gz}@{spec}" for gz, (_, spec) in CAMERA_BRIDGE.items()],
        remappings=[(gz, ros) for gz, (ros, _) in CAMERA_BRIDGE.items()],
        parameters=[{"use_sim_time": True}],
    )
    brain = [
        Node(package="frankenbot", executable=exe, name=f"frankenbot_{exe}", output="screen",
             parameters=[config, {"use_sim_time": True}]
             + ([{"planner_mode": LaunchConfiguration("planner")}] if exe == "planner" else []))
        for exe in BRAIN_NODES
    ]
    return LaunchDescription([
        DeclareLaunchArgument("planner", default_value="auto"), sim, bridge, *brain])

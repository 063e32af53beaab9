"""FrankenBot in Gazebo (ur_simulation_gz) with a table scene and a fixed RGB-D camera.

    ros2 launch frankenbot gazebo.launch.py [planner:=auto|offline|vlm]

Starts ur_simulation_gz's ur_sim_control.launch.py with config/gazebo_tabletop.sdf (table,
blocks, bowls and an rgbd_camera sensor placed where config/camera.yaml says) and
initial_joint_controller:=scaled_joint_trajectory_controller, bridges the camera to the RealSense
topic names with ros_gz_bridge, publishes base_link -> the camera's image frame from the SDF's
camera pose (static TF; perception looks it up), and starts the brain nodes with
config/gazebo.yaml. Gazebo's depth image is 32FC1 in metres; perception accepts it.
ur_simulation_gz's arm has no gripper, so grasps cannot succeed there (the MuJoCo sim has
one). Not runnable on the development machines (no Gazebo there): see docs/REAL_ROBOT.md.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration

from frankenbot.bringup.launch_plan import gazebo_plan, to_launch_actions

ARGUMENTS = {
    "planner": ("auto", "auto (VLM when OPENAI_API_KEY is set) | offline | vlm"),
    "ur_type": ("ur5e", "UR model"),
}


def _setup(context):
    args = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    plan = gazebo_plan(args, Path(get_package_share_directory("frankenbot")))
    return to_launch_actions(plan, get_package_share_directory)


def generate_launch_description() -> LaunchDescription:
    declared = [DeclareLaunchArgument(name, default_value=default, description=text)
                for name, (default, text) in ARGUMENTS.items()]
    return LaunchDescription([*declared, OpaqueFunction(function=_setup)])

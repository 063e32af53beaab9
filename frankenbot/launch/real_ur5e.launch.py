"""FrankenBot on a real UR5e with a RealSense D4xx and a Robotiq 2F-85.

    ros2 launch frankenbot real_ur5e.launch.py robot_ip:=192.168.56.101 \
        camera_calibration:=$HOME/.config/frankenbot/camera.yaml \
        [kinematics_params_file:=$HOME/ur5e_calibration.yaml] [motion_backend:=jtc|moveit] \
        [planner:=auto|offline|vlm] [launch_driver:=true] [launch_camera:=true] \
        [launch_gripper:=true] [gripper_connection:=tool|usb] [tool_voltage:=24] \
        [tool_device_name:=/tmp/ttyUR] [gripper_com_port:=/dev/ttyUSB0] \
        [use_mock_hardware:=false]

Includes ur_robot_driver's ur_control.launch.py (scaled_joint_trajectory_controller, the
calibration passed through), realsense2_camera's rs_launch.py (depth aligned to colour, no TF of
its own), the Robotiq under its own /robotiq controller manager, a static transform base_link ->
camera_color_optical_frame from the calibration file, with motion_backend:=moveit
ur_moveit_config's ur_moveit.launch.py, and the four brain nodes with config/real_ur5e.yaml.
What starts is decided by frankenbot.bringup.launch_plan once the arguments are known, so a
package is needed only when something of it starts. Not runnable on the development machines
(no ROS apt install there): see docs/REAL_ROBOT.md.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration

from frankenbot.bringup.launch_plan import real_robot_plan, to_launch_actions

ARGUMENTS = {  # name -> (default, description)
    "robot_ip": ("", "IP address of the UR5e controller (needed with launch_driver:=true)"),
    "ur_type": ("ur5e", "UR model"),
    "motion_backend": ("jtc", "jtc: analytic IK + joint trajectory controller; moveit: MoveItPy "
                              "collision-aware planning"),
    "planner": ("auto", "auto (VLM when OPENAI_API_KEY is set) | offline | vlm"),
    "launch_driver": ("true", "start ur_robot_driver"),
    "launch_camera": ("true", "start the RealSense camera"),
    "launch_gripper": ("true", "start the Robotiq under its own /robotiq controller manager"),
    "gripper_connection": ("tool", "tool: the Robotiq on the wrist's tool connector (e-Series "
                                   "kit; the driver forwards the tool's RS-485 to "
                                   "tool_device_name, needs the rs485 URCap) | usb: on its own "
                                   "USB adapter at gripper_com_port"),
    "tool_voltage": ("24", "tool connector supply in volts with gripper_connection:=tool "
                           "(the 2F-85 needs 24)"),
    "tool_device_name": ("/tmp/ttyUR", "the local device the driver creates for the tool's "
                                       "RS-485 (gripper_connection:=tool)"),
    "gripper_com_port": ("/dev/ttyUSB0", "the Robotiq's serial port with gripper_connection:=usb"),
    "use_mock_hardware": ("false", "UR driver and gripper without hardware (smoke tests)"),
    "camera_calibration": ("", "camera pose file (`frankenbot calibrate camera`): published as "
                               "base_link -> camera_color_optical_frame; '' = none"),
    "kinematics_params_file": ("", "the arm's factory calibration (ur_calibration); '' = "
                                   "nominal kinematics"),
    "launch_rviz": ("false", "RViz from the driver (and MoveIt)"),
}


def _setup(context):
    args = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    share = Path(get_package_share_directory("frankenbot"))
    plan = real_robot_plan(args, share)
    return to_launch_actions(plan, get_package_share_directory)


def generate_launch_description() -> LaunchDescription:
    declared = [DeclareLaunchArgument(name, default_value=default, description=text)
                for name, (default, text) in ARGUMENTS.items()]
    return LaunchDescription([*declared, OpaqueFunction(function=_setup)])

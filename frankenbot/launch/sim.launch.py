"""FrankenBot on the MuJoCo sim: the sim node plus the five brain nodes.

    ros2 launch frankenbot sim.launch.py [task:=put_in_bowl] [seed:=3] [planner:=offline] \
        [namespace:=arm1]

The sim node speaks the UR driver's and the RealSense camera's topics, so the brain nodes run
exactly as on the real robot. Machines without `ros2 launch` use `frankenbot up --sim` instead.
With ``namespace:=arm1`` every node, topic, service and action moves under /arm1 (all FrankenBot
names are relative) and the brain follows that sim's own /arm1/clock, so several sims and brains
share one graph; the parameter file's ``/**/`` keys match the nodes in any namespace.
Not runnable here (no `ros2 launch`); `frankenbot up --sim --namespace` is the tested path.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

BRAIN_NODES = ("perception", "memory", "planner", "executor")
# the nodes that read the ROS clock (sim time); see SIM_CLOCK_NODES in bringup/processes.py
CLOCK_NODES = ("planner", "executor")


def generate_launch_description() -> LaunchDescription:
    config = str(Path(get_package_share_directory("frankenbot")) / "config" / "sim.yaml")
    args = [
        DeclareLaunchArgument("task", default_value="put_in_bowl",
                              description="sim task family to set up at start"),
        DeclareLaunchArgument("seed", default_value="0", description="scene randomisation seed"),
        DeclareLaunchArgument("planner", default_value="auto",
                              description="auto (VLM when OPENAI_API_KEY is set) | offline | vlm"),
        DeclareLaunchArgument("namespace", default_value="",
                              description="ROS namespace of this sim and brain ('' = root)"),
    ]
    namespace = LaunchConfiguration("namespace")
    sim = Node(
        package="frankenbot", executable="sim", name="frankenbot_sim", output="screen",
        namespace=namespace, parameters=[config, {"task": LaunchConfiguration("task"),
                             "seed": LaunchConfiguration("seed")}],
    )
    brain = [
        Node(package="frankenbot", executable=exe, name=f"frankenbot_{exe}", output="screen",
             namespace=namespace, remappings=[("/clock", "clock")],
             parameters=[config, {"use_sim_time": exe in CLOCK_NODES}]
             + ([{"planner_mode": LaunchConfiguration("planner")}] if exe == "planner" else []))
        for exe in BRAIN_NODES
    ]
    return LaunchDescription([*args, sim, *brain])

"""The ``frankenbot_executor`` node's settings schema (``frankenbot.settings``): how it reaches
the arm, the gripper, the local expert and the planner, plus every ``ExecutorParams`` setting
under its own name. The node declares them as typed ROS parameters from here."""

from __future__ import annotations

from dataclasses import dataclass

from frankenbot import settings
from frankenbot.execution.executor import ExecutorParams
from frankenbot.settings import section, setting


@dataclass(frozen=True)
class ExecutorNodeSettings:
    params: ExecutorParams = section(ExecutorParams, "")
    local_expert_model: str = setting(
        "gemma3-270m", "gemma3-270m (packaged GGUF, in-process) | an http(s) URL of `frankenbot "
        "llm serve` (e.g. http://127.0.0.1:8080/v1) | tiny (random, tests) | none; used only "
        "when tier2_method uses the LM")
    local_expert_threads: int = setting(2, "torch threads for the local expert", low=1)
    trajectory_mode: str = setting("topic", "topic (the JTC's joint_trajectory topic: sim and "
                                   "real) | action (FollowJointTrajectory)",
                                   choices=("topic", "action"))
    gripper_mode: str = setting(
        "topic", "topic (position command, the sim) | parallel (control_msgs "
        "ParallelGripperCommand: the Jazzy Robotiq controller) | gripper_command (control_msgs "
        "GripperCommand: other grippers)", choices=("topic", "parallel", "gripper_command"))
    gripper_action: str = setting("robotiq_gripper_controller/gripper_cmd",
                                  "gripper action server (parallel and gripper_command modes)")
    gripper_joint: str = setting("robotiq_85_left_knuckle_joint", "the gripper joint commanded "
                                 "(parallel mode) and read from joint states")
    gripper_closed_position: float = setting(0.8, "gripper joint position when fully closed",
                                             unit="rad", low=0.0)
    gripper_joint_states_topic: str = setting("joint_states", "where the gripper joint is "
                                              "published (a namespaced gripper: "
                                              "/robotiq/joint_states)")
    program_running_topic: str = setting(
        "io_and_status_controller/robot_program_running", "the UR driver's External Control "
        "program state (std_msgs/Bool, latched); '' = not watched")
    action_server_wait: float = setting(10.0, "wait at start (and before a goal) for the "
                                        "trajectory and gripper action servers", unit="s",
                                        low=0.0)
    motion_backend: str = setting("jtc", "jtc (analytic IK + joint trajectory controller) | "
                                  "moveit (MoveItPy collision-aware planning; real ROS install "
                                  "only)", choices=("jtc", "moveit"))
    replan_timeout: float = setting(120.0, "wait for /frankenbot/replan", unit="s", low=1.0,
                                    live=True)
    feedback_rate_hz: float = setting(10.0, "largest rate of action feedback and tree_state "
                                      "messages", unit="Hz", low=0.1, live=True)
    reset_topic: str = setting("", "std_msgs/Header topic announcing a new world (the sim's "
                               "~/scene_reset): held-object and drawer beliefs are dropped; '' = "
                               "none")
    tcp_offset: float = setting(-1.0, "tool0 to the finger pads' centre; < 0 = "
                                "config/safety.yaml's (the sim gripper's). real_ur5e.launch.py "
                                "sets it from the gripper's description (frankenbot.tcp); "
                                "`frankenbot doctor` checks it", unit="m", low=-1.0, high=0.5)
    pixel_service: str = setting("frankenbot_perception/resolve_pixel", "service that "
                                 "back-projects set-of-mark pixels for place_at_pixel, "
                                 "move_above_pixel and push_to_pixel; '' = no pixel targets")
    fixture_map_topic: str = setting("", "std_msgs/String topic carrying the scene's fixture map "
                                     "as JSON (the sim's latched ~/fixture_map); '' = the "
                                     "fixtures_path file only")
    fixtures_path: str = setting("", "the cell's fixture map file ('' = the package's "
                                 "config/scene_fixtures.yaml; a bare name is looked up in "
                                 "config/)")

    def __post_init__(self) -> None:
        settings.validate(self, "frankenbot_executor")

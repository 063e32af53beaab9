"""The ``frankenbot_sim`` node's settings schema (``frankenbot.settings``): the first scene, the
pace, the rates of the driver's and camera's topics and the camera's sensor model."""

from __future__ import annotations

from dataclasses import dataclass

from frankenbot import settings
from frankenbot.settings import setting
from frankenbot.sim.sensor import NOISE_PROFILES


@dataclass(frozen=True)
class SimNodeSettings:
    task: str = setting("", "task family of the first scene; empty = every object, no task")
    seed: int = setting(0, "seed of the first scene (same seed, same scene)", low=0)
    realtime_factor: float = setting(1.0, "sim seconds per wall second (1.0 = real time)",
                                     low=0.01, high=100.0)
    joint_state_rate: float = setting(125.0, "joint-state rate of sim time (the UR driver "
                                      "gives 500; below 100 is warned about)", unit="Hz",
                                      low=1.0, high=1000.0)
    clock_rate: float = setting(50.0, "/clock rate of sim time (at most joint_state_rate; sent "
                                "with a joint state): every node following sim time pays an "
                                "rclpy callback per message, ~0.1 of a core each at 125 Hz; 50 "
                                "Hz = 20 ms steps", unit="Hz", low=0.1, high=1000.0)
    camera_rate: float = setting(15.0, "RGB-D frame rate of sim time", unit="Hz", low=0.1,
                                 high=90.0)
    camera_width: int = setting(640, "image width (D435-like intrinsics, ~69 deg HFOV)",
                                unit="px", low=16, high=4096)
    camera_height: int = setting(480, "image height", unit="px", low=16, high=4096)
    render: bool = setting(True, "publish camera topics (false: joint states and clock only)")
    render_process: bool = setting(True, "render in a child process so GL work never delays "
                                   "joint states")
    sensor_noise: str = setting("none", "camera sensor model: none | realistic | harsh "
                                "(D435-like depth and colour noise, drift, lights, camera-pose "
                                "error; docs/CAMERA.md)", choices=NOISE_PROFILES)
    sensor_seed: int = setting(0, "seed of the sensor model: the camera-pose error (an "
                               "installation's miscalibration) and, with each scene seed, the "
                               "noise streams", low=0)
    sensor_overrides: str = setting("", "sensor parameters over the profile, 'name=value,...' "
                                    "(e.g. 'pose_error_m=0,light_direction_deg=0')")
    realtime_priority: int = setting(0, "SCHED_FIFO priority of the physics thread, like "
                                     "ros2_control's control loop (0 = normal scheduling, the "
                                     "default: on a 2-core machine a FIFO thread starves the "
                                     "brain's nodes; needs CAP_SYS_NICE, else falls back)",
                                     low=0, high=99)
    speed_slider: float = setting(100.0, "the pendant's speed slider: published on the speed "
                                  "scaling topic and applied by the sim's trajectory controller "
                                  "at execution, as the UR driver's scaled JTC does", unit="%",
                                  low=0.0, high=100.0)
    driver_twin: bool = setting(False, "also serve the real UR driver's, Robotiq's and "
                                "controller manager's interfaces (FollowJointTrajectory, "
                                "ParallelGripperCommand, dashboard, program state, faults): "
                                "frankenbot up --driver-twin")

    def __post_init__(self) -> None:
        settings.validate(self, "frankenbot_sim")

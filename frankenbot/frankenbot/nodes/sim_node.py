"""ROS adapter for the MuJoCo tabletop: the ``frankenbot_sim`` node.

It speaks the UR driver's and the RealSense driver's interfaces, so the brain cannot tell the sim
from the robot. All physics, tasks, oracle and anomalies live in ``frankenbot.sim``; a
``SimRunner`` steps the world on its own threads and this node only converts messages.

Publishes
  /joint_states (sensor_msgs/JointState): 6 UR joints + the Robotiq knuckle, at joint_state_rate
  /clock (rosgraph_msgs/Clock): sim time, with a joint state every 1 / clock_rate
  /speed_scaling_state_broadcaster/speed_scaling (std_msgs/Float64): ``speed_slider`` (percent,
      as the driver's broadcaster publishes it; at ~10 Hz); the sim's controller runs
      trajectories at that fraction, as the scaled JTC does
  /camera/camera/color/image_raw (sensor_msgs/Image, rgb8), at camera_rate (sim time)
  /camera/camera/aligned_depth_to_color/image_raw (sensor_msgs/Image, 16UC1 millimetres)
  /camera/camera/color/camera_info (sensor_msgs/CameraInfo, frame camera_color_optical_frame)
  ~/scene_reset (std_msgs/Header, latched): after every ~/reset, stamped with the sim time of
      the new scene, frame_id = its task id; perception forgets its tracks on it
  ~/fixture_map (std_msgs/String, latched): the scene's fixture map as JSON (the
      ``frankenbot.fixture_map`` format: where each fixture and part stands, not its state),
      published before ~/scene_reset: a robot cell's config/scene_fixtures.yaml, per scene
Subscribes
  /scaled_joint_trajectory_controller/joint_trajectory (trajectory_msgs/JointTrajectory);
      starts on receipt (header.stamp is not used), replaces the running one; an empty one is
      rejected as by the Jazzy JTC (a stop is a one-point hold)
  robotiq.COMMAND_TOPIC (std_msgs/Float64MultiArray [knuckle position 0 .. 0.8])
Services
  ~/reset (frankenbot_interfaces/srv/ResetScene), ~/inject_anomaly (InjectAnomaly),
  ~/evaluate (EvaluateTask)
Driver twin (``driver_twin:=true``, ``frankenbot.nodes.driver_twin``): the real stack's actions,
  dashboard, controller manager, program state, /tf_static and fault injection besides the
  above; /joint_states then carries the six UR joints only (the knuckle moves to
  /robotiq/joint_states), the speed scaling follows the twin's slider, the camera topics use the
  RealSense's QoS and fall silent on the camera fault.
Parameters
  task, seed, realtime_factor, joint_state_rate, camera_rate, camera_width, camera_height,
  render, render_process, realtime_priority, sensor_noise, sensor_seed, sensor_overrides,
  speed_slider, driver_twin (``sim.settings.SimNodeSettings``: types, units, ranges,
  defaults; read at start-up)

Bad input (unknown joint names, NaN, targets beyond limits, unknown tasks or anomalies) is
rejected with a logged message and nothing moves. Messages are stamped with sim time.
"""

from __future__ import annotations

import array
import json
import math
import sys
import threading
from typing import Any

from builtin_interfaces.msg import Time
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_msgs.msg import Float64, Float64MultiArray, Header, String
from trajectory_msgs.msg import JointTrajectory

from frankenbot import robotiq, settings, ur_driver
from frankenbot.errors import FrankenbotError, SimError
from frankenbot.nodes.parameters import NodeSettings
from frankenbot.nodes.spin import run_node
from frankenbot.sim.runner import Frame, JointStateSample, SimRunner
from frankenbot.sim.sensor import SensorModel, parse_overrides, sensor_params
from frankenbot.sim.settings import SimNodeSettings
from frankenbot.sim.world import SimWorld, TrajectoryPoint
from frankenbot_interfaces.srv import EvaluateTask, InjectAnomaly, ResetScene

# Relative: a namespaced sim (several tables on one graph) speaks under /<ns>/.
TRAJECTORY_TOPIC = ur_driver.TRAJECTORY_TOPIC.lstrip("/")
SPEED_SCALING_TOPIC = ur_driver.SPEED_SCALING_TOPIC.lstrip("/")
COLOR_TOPIC = "camera/camera/color/image_raw"
DEPTH_TOPIC = "camera/camera/aligned_depth_to_color/image_raw"
INFO_TOPIC = "camera/camera/color/camera_info"

FRAME_LOG_S = 10.0  # s (wall) between the camera timing log lines


def to_time(seconds: float) -> Time:
    sec = int(math.floor(seconds))
    return Time(sec=sec, nanosec=int(round((seconds - sec) * 1e9)) % 1_000_000_000)


def _byte_array(image: Any) -> array.array:
    """The image's bytes as an array.array('B'), copied once from its buffer."""
    import numpy as np

    out = array.array("B")
    out.frombytes(memoryview(np.ascontiguousarray(image)).cast("B"))
    return out


def duration_seconds(d: Any) -> float:
    return float(d.sec) + float(d.nanosec) * 1e-9


def trajectory_points(msg: JointTrajectory) -> list[TrajectoryPoint]:
    """JointTrajectory -> TrajectoryPoints (velocities kept only when every point has them)."""
    pts = []
    for p in msg.points:
        vel = list(p.velocities) if len(p.velocities) else None
        pts.append(TrajectoryPoint(duration_seconds(p.time_from_start), list(p.positions), vel))
    return pts


class SimNode(Node):
    """Serves a SimWorld over the UR driver's and RealSense topics; see the module docstring."""

    def __init__(self) -> None:
        super().__init__("frankenbot_sim")
        v = settings.values_of(NodeSettings(self, SimNodeSettings).value)
        if float(v["joint_state_rate"]) < 100.0:
            self.get_logger().warning("joint_state_rate below 100 Hz; the UR driver gives 500")
        params = sensor_params(str(v["sensor_noise"]),
                               parse_overrides(str(v["sensor_overrides"])))
        self.world = SimWorld(seed=int(v["seed"]), task=str(v["task"]) or None,
                              width=int(v["camera_width"]), height=int(v["camera_height"]),
                              sensor=SensorModel(params, int(v["sensor_seed"])))
        self._info = self.world.camera_info()
        slider = float(v["speed_slider"])
        if not (math.isfinite(slider) and 0.0 <= slider <= 100.0):
            raise SimError(f"speed_slider must be a percentage in [0, 100], got {slider}")
        self._speed_slider = slider
        self.world.set_speed_scaling(slider / 100.0)
        self._instabilities_seen = 0
        self._ticks = 0
        self._pub_lock = threading.Lock()  # publishers are used from the runner's threads
        sensor_qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
        info_qos = sensor_qos
        if bool(v["driver_twin"]):  # realsense2_camera: images SYSTEM_DEFAULT, info DEFAULT
            from rclpy.qos import qos_profile_system_default

            sensor_qos, info_qos = qos_profile_system_default, QoSProfile(depth=10)
        self.joint_pub = self.create_publisher(JointState, "joint_states", 20)
        self.clock_pub = self.create_publisher(Clock, "clock", 20)
        clock_rate = float(v["clock_rate"])
        if not (clock_rate > 0) or not math.isfinite(clock_rate):
            raise SimError(f"clock_rate must be > 0, got {clock_rate}")
        # a small slack: a tick a float-rounding short of the period still sends the clock
        self._clock_period = 1.0 / clock_rate - 1e-6
        self._next_clock = -math.inf
        self.scaling_pub = self.create_publisher(Float64, SPEED_SCALING_TOPIC, 5)
        self.color_pub = self.create_publisher(Image, COLOR_TOPIC, sensor_qos)
        self.depth_pub = self.create_publisher(Image, DEPTH_TOPIC, sensor_qos)
        self.info_pub = self.create_publisher(CameraInfo, INFO_TOPIC, info_qos)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.reset_pub = self.create_publisher(Header, "~/scene_reset", latched)
        self.fixture_pub = self.create_publisher(String, "~/fixture_map", latched)
        self._publish_fixture_map()
        commands = MutuallyExclusiveCallbackGroup()
        services = MutuallyExclusiveCallbackGroup()
        self.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self.trajectory_callback, 10,
                                 callback_group=commands)
        self.create_subscription(Float64MultiArray, robotiq.COMMAND_TOPIC.lstrip("/"),
                                 self.gripper_callback,
                                 10, callback_group=commands)
        self.create_service(ResetScene, "~/reset", self.reset_callback, callback_group=services)
        self.create_service(InjectAnomaly, "~/inject_anomaly", self.inject_callback,
                            callback_group=services)
        self.create_service(EvaluateTask, "~/evaluate", self.evaluate_callback,
                            callback_group=services)
        self.twin: Any = None
        if bool(v["driver_twin"]):
            from frankenbot.nodes.driver_twin import DriverTwin, gripper_config

            self.twin = DriverTwin(self, self.world, gripper=gripper_config())
            self.twin.state.speed_slider = self._speed_slider / 100.0
        self.runner = SimRunner(self.world, realtime_factor=float(v["realtime_factor"]),
                                rate_hz=float(v["joint_state_rate"]),
                                camera_rate=float(v["camera_rate"]), render=bool(v["render"]),
                                render_process=bool(v["render_process"]),
                                realtime_priority=int(v["realtime_priority"]))
        self.runner.on_joint_state(self.publish_joint_state)
        self.runner.on_frame(self.publish_frame)
        self.runner.start()
        if bool(v["render"]):
            self.create_timer(FRAME_LOG_S, self._log_frame_times)
        task = self.world.task
        self.get_logger().info(
            f"sim ready: {task.task_id} {task.instruction!r}; realtime x{v['realtime_factor']}, "
            f"joint states {v['joint_state_rate']} Hz, camera {v['camera_rate']} Hz")

    # ------------------------------------------------------------------ publishing
    def publish_joint_state(self, s: JointStateSample) -> None:
        values = [*s.positions, *s.velocities, s.gripper_position]
        if not all(math.isfinite(x) for x in values):  # never publish NaNs
            return
        stamp = to_time(s.stamp)
        msg = JointState()
        msg.header.stamp = stamp
        msg.name = [*SimWorld.JOINT_NAMES, robotiq.KNUCKLE_JOINT]
        msg.position = [*map(float, s.positions), float(s.gripper_position)]
        msg.velocity = [*map(float, s.velocities), 0.0]
        msg.effort = []
        scaling = self._speed_slider  # percent
        if self.twin is not None:  # the UR's joint_state_broadcaster: the arm only
            self.twin.tick(s.stamp, s.positions)
            del msg.name[-1], msg.position[-1], msg.velocity[-1]
            scaling = self.twin.speed_percent
        with self._pub_lock:
            # on the clock's grid; restarted from now when behind (or when sim time went back)
            if s.stamp >= self._next_clock or s.stamp < self._next_clock - 2 * self._clock_period:
                self.clock_pub.publish(Clock(clock=stamp))
                ahead = self._next_clock + self._clock_period
                self._next_clock = (ahead if s.stamp < ahead <= s.stamp + self._clock_period
                                    else s.stamp + self._clock_period)
            self.joint_pub.publish(msg)
            self._ticks += 1
            if self._ticks % 12 == 0:
                self.scaling_pub.publish(Float64(data=scaling))
        if len(self.world.instabilities) != self._instabilities_seen:
            self._instabilities_seen = len(self.world.instabilities)
            event = self.world.instabilities[-1]
            self.get_logger().error(f"physics went unstable ({event.reason}) in "
                                    f"{event.task_id}; the episode was reset")

    def publish_frame(self, f: Frame) -> None:
        if self.twin is not None and not self.twin.camera_publishing:
            return  # the camera fault: the RealSense topics fall silent
        stamp = to_time(f.stamp)
        info = self._info
        h, w = f.depth.shape
        color = Image(height=h, width=w, encoding="rgb8", is_bigendian=0, step=w * 3)
        color.header.stamp, color.header.frame_id = stamp, info.frame_id
        # an array.array skips rosidl's per-element check (~100 ms a frame with the GIL held);
        # filled straight from the frame's buffer (one copy, not tobytes' and then another)
        color.data = _byte_array(f.rgb)
        depth = Image(height=h, width=w, encoding="16UC1", is_bigendian=0, step=w * 2)
        depth.header.stamp, depth.header.frame_id = stamp, info.frame_id
        depth.data = _byte_array(f.depth.astype("<u2", copy=False))
        ci = CameraInfo(height=h, width=w, distortion_model=info.distortion_model)
        ci.header.stamp, ci.header.frame_id = stamp, info.frame_id
        ci.d = [0.0] * 5
        ci.k = list(info.k)
        ci.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        ci.p = [info.fx, 0.0, info.cx, 0.0, 0.0, info.fy, info.cy, 0.0, 0.0, 0.0, 1.0, 0.0]
        with self._pub_lock:
            self.color_pub.publish(color)
            self.depth_pub.publish(depth)
            self.info_pub.publish(ci)

    def _log_frame_times(self) -> None:
        times = self.runner.frame_times()
        if not times:
            return
        draw = sorted(t[0] for t in times)
        out = sorted(t[1] for t in times)
        self.get_logger().info(
            f"camera frames (latest {len(times)}): draw + sensor model median "
            f"{draw[len(draw) // 2] * 1000:.0f} ms (max {draw[-1] * 1000:.0f}), publish median "
            f"{out[len(out) // 2] * 1000:.0f} ms (max {out[-1] * 1000:.0f})")

    # ------------------------------------------------------------------ commands
    def trajectory_callback(self, msg: JointTrajectory) -> None:
        if self.twin is not None:  # the controller's own rules, and only while it is active
            problem = self.twin.topic_trajectory(msg)
            if problem:
                self.get_logger().error(f"trajectory ignored: {problem}",
                                        throttle_duration_sec=2.0)
            return
        try:
            self.world.command_trajectory(list(msg.joint_names), trajectory_points(msg))
        except (SimError, ValueError, TypeError, OverflowError) as e:
            self.get_logger().error(f"trajectory rejected (the running one, if any, "
                                    f"continues): {e}", throttle_duration_sec=2.0)

    def gripper_callback(self, msg: Float64MultiArray) -> None:
        if len(msg.data) != 1:
            self.get_logger().error(f"gripper command needs exactly one value [position], got "
                                    f"{list(msg.data)[:8]}", throttle_duration_sec=2.0)
            return
        if self.twin is not None and not self.twin.gripper_activated:
            return  # the Robotiq ignores every command until it is reactivated
        try:
            self.world.command_gripper(float(msg.data[0]))
        except SimError as e:
            self.get_logger().error(f"gripper command rejected: {e}", throttle_duration_sec=2.0)

    # ------------------------------------------------------------------ services
    def reset_callback(self, request: Any, response: Any) -> Any:
        try:
            task = self.world.reset(request.task or None, int(request.seed))
        except FrankenbotError as e:
            response.ok, response.message = False, str(e)
            self.get_logger().error(f"reset rejected: {e}")
            return response
        response.ok = True
        response.message = f"scene {task.task_id} ready"
        response.instruction = task.instruction
        response.task_id = task.task_id
        response.object_names = list(self.world.object_names())
        self._publish_fixture_map()
        # Frames stamped from now on show the new scene; perception forgets the old one.
        self.reset_pub.publish(Header(stamp=to_time(self.world.time), frame_id=task.task_id))
        self.get_logger().info(f"reset to {task.task_id}: {task.instruction!r}")
        return response

    def _publish_fixture_map(self) -> None:
        self.fixture_pub.publish(String(data=json.dumps(self.world.fixture_map_data())))

    def inject_callback(self, request: Any, response: Any) -> Any:
        try:
            params = json.loads(request.params_json) if request.params_json.strip() else {}
            if not isinstance(params, dict):
                raise SimError(f"params_json must be a JSON object, got {request.params_json!r}")
            cls = self.world.inject(request.kind, request.phase, params)
        except json.JSONDecodeError as e:
            response.ok, response.message = False, f"params_json is not valid JSON: {e}"
            return response
        except FrankenbotError as e:
            response.ok, response.message = False, str(e)
            self.get_logger().error(f"inject_anomaly rejected: {e}")
            return response
        last = self.world.anomaly_log()[-1]
        response.ok = True
        response.anomaly_class = cls.value
        response.message = f"{last.kind} {last.event} (phase {last.phase}) {last.detail}".strip()
        self.get_logger().info(f"anomaly: {response.message}")
        return response

    def evaluate_callback(self, request: Any, response: Any) -> Any:
        verdict = self.world.evaluate(float(request.stability_window))
        response.success = verdict.success
        response.task_id = str(verdict.details.get("task_id", ""))
        response.details = verdict.text
        response.details_json = json.dumps(verdict.details, default=str)
        return response

    def destroy_node(self) -> None:
        self.runner.close()
        st = self.runner.deadline_stats()
        # one parseable line (the benchmark reads it): the node's own view of its tick schedule
        self.get_logger().info(f"joint-state deadlines: ticks={st.ticks} missed={st.missed} "
                               f"share={st.missed_share:.4f} worst_late_ms="
                               f"{st.worst_late_s * 1000:.1f}")
        self.world.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    # hand the GIL over every 1 ms (default 5): the physics thread must not wait behind the
    # executor's or the frame publisher's Python code for more than a fraction of a tick
    sys.setswitchinterval(0.001)
    # 6: the driver twin's action goals each hold a thread while they run
    return run_node(SimNode, num_threads=6, args=args)


if __name__ == "__main__":
    sys.exit(main())

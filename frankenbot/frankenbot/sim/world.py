"""SimWorld: the MuJoCo tabletop behind the UR driver's and the camera's interfaces.

Pure Python over mujoco (no rclpy) so the same core serves in-process tests, benchmarks and the
``frankenbot_sim`` node. Every method takes ``_lock`` (an RLock over model and data), so a physics
thread, a render thread and ROS callbacks can share one world. Rendering copies the state under
the lock and draws outside it, so a 20 ms frame never stalls the 2 ms physics step.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import mujoco
import numpy as np

from frankenbot import robotiq
from frankenbot.common import AnomalyClass
from frankenbot.errors import SimError
from frankenbot.sim import families, layout, tasks
from frankenbot.sim import fixtures as fixtures_mod
from frankenbot.sim import model as model_mod
from frankenbot.sim.anomalies import AnomalyEngine, InjectedAnomaly
from frankenbot.sim.camera import (
    CameraInfo,
    CameraRenderer,
    RenderSettings,
    camera_info_for,
    mujoco_camera_quat,
    place_static_camera_and_lights,
)
from frankenbot.sim.controller import (
    JointTrajectoryController,
    TrajectoryPoint,
    TrajectoryStatus,
)
from frankenbot.sim.fixture_rig import SLEEP_ALLOWED, SLEEP_NEVER, FixtureRig
from frankenbot.sim.kinematics import HOME
from frankenbot.sim.scene_spec import SCENE_FAMILY, SceneSpec
from frankenbot.sim.sensor import SensorModel, SensorSpec
from frankenbot.sim.tasks import ObjectState, OracleView, TaskInstance
from frankenbot.transforms import quat_from_yaw

_log = logging.getLogger(__name__)

FINGER_SPEED = 0.075  # m/s per finger (the 2F-85 closes its 85 mm stroke in ~0.6 s)
SETTLE_TIME = 0.3  # s of physics after a reset so objects come to rest
POLL_EVERY = 10  # steps between anomaly-phase and stability checks
DEFAULT_WINDOW = 0.5
_FF = np.array(model_mod.ARM_KV) / np.array(model_mod.ARM_KP)  # velocity feed-forward gain

__all__ = ["SimWorld", "TrajectoryPoint", "TaskInstance", "Verdict", "ObjectState"]

_XML_CACHE: dict[str, str] = {}
_SLEEP = int(mujoco.mjtEnableBit.mjENBL_SLEEP)


@dataclass(frozen=True)
class Verdict:
    """The oracle's judgement: success, machine-readable details, one line per condition."""

    success: bool
    details: dict[str, Any] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class InstabilityEvent:
    time: float
    task_id: str
    reason: str


def _compiled_model() -> mujoco.MjModel:
    """A fresh MjModel (each world edits contact flags at run time, so models are not shared)."""
    if "xml" not in _XML_CACHE:
        _XML_CACHE["xml"] = model_mod.build_model().xml
    return mujoco.MjModel.from_xml_string(_XML_CACHE["xml"])


class SimWorld:
    """The simulated UR5e cell. See the module docstring; the contract is in issue #4."""

    JOINT_NAMES: tuple[str, ...] = model_mod.JOINT_NAMES

    def __init__(self, *, seed: int = 0, task: str | None = None, width: int = 640,
                 height: int = 480, sensor: SensorModel | None = None) -> None:
        self._renderers: dict[int, CameraRenderer] = {}
        if not (16 <= width <= 1280 and 16 <= height <= 960):
            raise SimError(f"camera size must be within 16x16 .. 1280x960, got {width}x{height}")
        self._lock = threading.RLock()
        self._render_lock = threading.Lock()
        self.width, self.height = int(width), int(height)
        m = _compiled_model()
        self.model = m
        self.data = mujoco.MjData(m)
        self._render_data = mujoco.MjData(m)
        # The nominal camera (what config/camera.yaml and camera_pose() tell the brain) and the
        # scene's own lights, before the sensor model moves the true camera and the lights.
        mujoco.mj_kinematics(m, self._render_data)
        place_static_camera_and_lights(m, self._render_data)
        cid = m.camera(model_mod.CAMERA_NAME).id
        nominal = np.eye(4)
        nominal[:3, :3] = self._render_data.cam_xmat[cid].reshape(3, 3) @ np.diag([1, -1, -1])
        nominal[:3, 3] = self._render_data.cam_xpos[cid]
        self._nominal_camera = nominal
        self._base_render = RenderSettings.of_model(m)
        self._sensor_lock = threading.Lock()  # the sensor's drift state
        self._sensor = sensor or SensorModel()
        self._sensor_episode = 0  # counts reset_episode calls (a render process follows them)
        self._render_vec = self._base_render.vector()
        qadr = [int(m.joint(n).qposadr[0]) for n in self.JOINT_NAMES]
        vadr = [int(m.joint(n).dofadr[0]) for n in self.JOINT_NAMES]
        # the arm comes first in the model: slices are views, cheaper than index arrays per step
        assert qadr == list(range(6)) and vadr == list(range(6)), (qadr, vadr)
        self._arm_qadr = slice(0, 6)
        self._arm_vadr = slice(0, 6)
        self._finger_qadr = np.array([m.joint(n).qposadr[0] for n in model_mod.FINGER_JOINTS])
        self._drawer_qadr = int(m.joint("drawer_slide").qposadr[0])
        self._drawer_dof = int(m.joint("drawer_slide").dofadr[0])
        self._fixtures = FixtureRig(m, (model_mod.fixture_parking(i)
                                        for i in range(len(fixtures_mod.INSTANCES))))
        self._pads = {m.geom("left_pad").id, m.geom("right_pad").id}
        self._tcp_site = m.site("tcp").id
        self._bodies = {o.name: m.body(o.name).id for o in layout.OBJECTS}
        self._obj_qadr = {o.name: int(m.joint(f"{o.name}_free").qposadr[0])
                          for o in layout.OBJECTS}
        self._obj_vadr = {o.name: int(m.joint(f"{o.name}_free").dofadr[0])
                          for o in layout.OBJECTS}
        self._obj_geoms = {n: np.nonzero(m.geom_bodyid == b)[0] for n, b in self._bodies.items()}
        # Sleeping: what waits under the floor (unused objects and fixtures) is left to MuJoCo's
        # island sleeping, so it costs no integration or collision time; what is on the table
        # never sleeps, so it moves exactly as it did before sleeping existed.
        m.opt.enableflags |= _SLEEP
        self._obj_tree = {n: int(m.body_treeid[b]) for n, b in self._bodies.items()}
        self._contype = m.geom_contype.copy()
        self._conaffinity = m.geom_conaffinity.copy()
        lower = m.jnt_range[[m.joint(n).id for n in self.JOINT_NAMES], 0]
        upper = m.jnt_range[[m.joint(n).id for n in self.JOINT_NAMES], 1]
        self.joint_lower, self.joint_upper = lower.copy(), upper.copy()
        self._ctrl = JointTrajectoryController(self.JOINT_NAMES, lower, upper)
        self._gripper_cmd = 0.0
        self._gripper_open_until = -1.0  # anomaly: fingers forced open until this sim time
        self._stuck_until: dict[str, float] = {}  # fixture part -> sim time it frees again
        self._camera_frozen_until = -1.0
        self._active: list[str] = []
        self._task = TaskInstance("", "scene-0", "", {})
        self._family: str | None = None
        self._seed = 0
        self._steps = 0
        self._bad_warnings = 0
        self._last_good_time = 0.0
        self.instabilities: list[InstabilityEvent] = []
        self._anomalies = AnomalyEngine()
        self._scene_spec: SceneSpec | None = None
        self._scene: tasks.SampledScene | None = None
        self.reset(task, seed)

    # ------------------------------------------------------------------ lifecycle
    def reset(self, task: str | None = None, seed: int = 0, *,
              scene: tasks.SampledScene | None = None) -> TaskInstance:
        """Build the scene of ``task`` (a family name; None/"" = objects only) for ``seed``, or
        the given ``scene`` (a variant of a sampled one: the selftest's, with its own task)."""
        family = task or None
        if scene is not None:
            family = scene.task.family or None
        if family is not None and family not in tasks.TASK_FAMILIES:
            raise SimError(f"unknown task {family!r}; valid: {', '.join(tasks.TASK_FAMILIES)}")
        sampled = scene if scene is not None else (
            tasks.sample_task(family, seed) if family else tasks.sample_free_scene(seed))
        self._scene_spec = None
        self._scene = scene
        return self._load(sampled, family, seed)

    def reset_scene(self, spec: SceneSpec) -> TaskInstance:
        """Build a scene given as data (``sim/scene_spec.py``), judged by its goal expression
        (SimError, and the world unchanged, when a name in it is unknown)."""
        spec.validate()
        task = TaskInstance(SCENE_FAMILY, spec.task_id, spec.instruction, spec.params())
        states = dict(spec.fixture_states)
        sampled = tasks.SampledScene(task, tuple(spec.placements), states.get("drawer", 0.0),
                                     tuple(spec.fixtures), states)
        self._scene_spec = spec
        self._scene = None
        return self._load(sampled, SCENE_FAMILY, spec.seed)

    def _load(self, sampled: tasks.SampledScene, family: str | None, seed: int
              ) -> TaskInstance:
        with self._lock:
            m, d = self.model, self.data
            t = float(d.time) if math.isfinite(d.time) else 0.0
            mujoco.mj_resetData(m, d)
            d.time = t
            d.qpos[self._arm_qadr] = HOME
            d.ctrl[:6] = HOME
            d.ctrl[6:8] = 0.0
            self._ctrl.reset(HOME)
            self._gripper_cmd = 0.0
            self._gripper_open_until = self._camera_frozen_until = -1.0
            self._stuck_until = {}
            states = {"drawer": sampled.drawer_opening, **sampled.fixture_states}
            self._fixtures.place(d, sampled.fixtures, states)
            self._fixture_map = families.fixture_map(sampled.fixtures)
            for name in self._bodies:
                self._park(name)
            self._active = []
            for p in sampled.placements:
                spec = layout.OBJECT_BY_NAME[p.name]
                z = p.z if p.z is not None else layout.TABLE_TOP_Z + spec.size[2] / 2 + 0.0005
                self._activate(p.name)
                self._set_pose(p.name, (p.x, p.y, z), p.yaw)
                self._wake(p.name)
            self._task, self._family, self._seed = sampled.task, family, int(seed)
            self._anomalies.reset(self)
            self._new_sensor_episode()
            mujoco.mj_forward(m, d)
            self._bad_warnings = self._bad_count()
            self._last_good_time = float(d.time)
            self._step_n(int(round(SETTLE_TIME / m.opt.timestep)), check=False)
            _log.info("reset: %s seed %d: %s", sampled.task.task_id, seed,
                      sampled.task.instruction)
            return self._task

    def close(self) -> None:
        """Free the renderers (safe to call twice)."""
        with self._render_lock:
            for r in self._renderers.values():
                r.close()
            self._renderers.clear()

    def close_renderer_of_this_thread(self) -> None:
        """Free the GL context the calling thread made (threads that render then exit)."""
        with self._render_lock:
            renderer = self._renderers.pop(threading.get_ident(), None)
        if renderer is not None:
            renderer.close()

    def __enter__(self) -> "SimWorld":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ objects (internal)
    def _park(self, name: str) -> None:
        """Move an object to the hidden shelf and take it out of collision and gravity."""
        idx = [o.name for o in layout.OBJECTS].index(name)
        px, py = layout.parking_position(idx)
        geoms = self._obj_geoms[name]
        self.model.geom_contype[geoms] = 0
        self.model.geom_conaffinity[geoms] = 0
        self.model.body_gravcomp[self._bodies[name]] = 1.0
        self.model.tree_sleep_policy[self._obj_tree[name]] = SLEEP_ALLOWED
        self._set_pose(name, (px, py, layout.PARKING_Z + 0.2), 0.0)
        if name in self._active:
            self._active.remove(name)

    def _activate(self, name: str) -> None:
        geoms = self._obj_geoms[name]
        self.model.geom_contype[geoms] = self._contype[geoms]
        self.model.geom_conaffinity[geoms] = self._conaffinity[geoms]
        self.model.body_gravcomp[self._bodies[name]] = 0.0
        self.model.tree_sleep_policy[self._obj_tree[name]] = SLEEP_NEVER
        if name not in self._active:
            self._active.append(name)

    def _wake(self, name: str) -> None:
        """Wake a parked object's tree the way MuJoCo wakes one itself: a sleeping tree that
        moves is woken, with the island it sleeps in, at the next step. (Writing its
        ``tree_asleep`` directly broke the island's cycle: the object then flew off with no
        contacts, or the physics went non-finite.)"""
        v = self._obj_vadr[name]
        if self.data.tree_asleep[self._obj_tree[name]] >= 0:
            self.data.qvel[v + 2] = -1e-6  # m/s down: nothing it could feel

    def _set_pose(self, name: str, pos: Sequence[float], yaw: float) -> None:
        a, v = self._obj_qadr[name], self._obj_vadr[name]
        self.data.qpos[a:a + 3] = pos
        self.data.qpos[a + 3:a + 7] = quat_from_yaw(yaw)  # MuJoCo order: QuatWXYZ
        self.data.qvel[v:v + 6] = 0.0
        mujoco.mj_kinematics(self.model, self.data)  # positions readable before the next step

    def _substitute(self, old: str, new: str) -> None:
        """The task now means ``new`` wherever it meant ``old`` (an object swapped for another
        of the same colour: "the red block" is the one red block on the table). Oracle only."""
        def sub(v: object) -> object:
            if v == old:
                return new
            if isinstance(v, tuple):
                return tuple(sub(x) for x in v)
            return v

        params = {k: sub(v) for k, v in self._task.params.items()}
        self._task = replace(self._task, params=params)

    def _object_position(self, name: str) -> np.ndarray:
        return self.data.xpos[self._bodies[name]].copy()

    def _held(self) -> set[str]:
        """Objects touching both finger pads."""
        d, m = self.data, self.model
        if d.ncon == 0:
            return set()
        g1, g2 = d.contact.geom1[:d.ncon], d.contact.geom2[:d.ncon]
        touching: dict[int, set[int]] = {}
        for pad in self._pads:
            others = np.concatenate([g2[g1 == pad], g1[g2 == pad]])
            for body in set(m.geom_bodyid[others].tolist()):
                touching.setdefault(body, set()).add(pad)
        by_body = {b: n for n, b in self._bodies.items()}
        return {by_body[b] for b, pads in touching.items() if len(pads) == 2 and b in by_body}

    # ------------------------------------------------------------------ time
    @property
    def time(self) -> float:
        return float(self.data.time)

    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def task(self) -> TaskInstance:
        return self._task

    def step(self, n: int = 1) -> None:
        """Advance physics by ``n`` steps of ``timestep`` (2 ms)."""
        if n < 0:
            raise SimError(f"step count must be >= 0, got {n}")
        with self._lock:
            self._step_n(int(n))

    def advance(self, seconds: float) -> None:
        if not math.isfinite(seconds) or seconds < 0:
            raise SimError(f"advance needs a finite, non-negative duration, got {seconds}")
        self.step(int(round(seconds / self.timestep)))

    def _step_n(self, n: int, check: bool = True) -> None:
        m, d = self.model, self.data
        for _ in range(n):
            q_des, qd_des = self._ctrl.desired(d.time)
            d.ctrl[:6] = q_des + _FF * qd_des
            target = model_mod.FINGER_TRAVEL * min(max(self._gripper_cmd, 0.0),
                                                   robotiq.CLOSED_POSITION) / (
                robotiq.CLOSED_POSITION)
            if d.time < self._gripper_open_until:
                target = 0.0
            delta = FINGER_SPEED * m.opt.timestep
            for k in (6, 7):
                c = float(d.ctrl[k])
                d.ctrl[k] = min(max(target, c - delta), c + delta)
            mujoco.mj_step(m, d)
            self._fixtures.pin(d)
            self._ctrl.supervise(d.time, d.qpos[:6])
            self._steps += 1
            if check and self._steps % POLL_EVERY == 0:
                if not self._stable():
                    return
                self._expire_timed_effects()
                self._fixtures.poll(d)
                self._anomalies.poll(self)

    def _bad_count(self) -> int:
        """MuJoCo's own divergence warnings (it auto-resets the data when it raises them)."""
        w = self.data.warning
        return sum(int(w[k].number) for k in (mujoco.mjtWarning.mjWARN_BADQACC,
                                              mujoco.mjtWarning.mjWARN_BADQVEL,
                                              mujoco.mjtWarning.mjWARN_BADQPOS))

    def _stable(self) -> bool:
        d = self.data
        bad = self._bad_count()
        # MuJoCo's auto-reset also zeroes the clock: time going backwards means it happened
        if bad == self._bad_warnings and d.time >= self._last_good_time and np.all(
                np.isfinite(d.qpos)) and np.all(
                np.isfinite(d.qvel)) and float(np.max(np.abs(d.qvel))) < 1e3:
            self._last_good_time = float(d.time)
            return True
        reason = "diverged (MuJoCo warning)" if bad != self._bad_warnings else "non-finite state"
        event = InstabilityEvent(self._last_good_time, self._task.task_id, reason)
        self.instabilities.append(event)
        _log.error("physics went unstable (%s) in %s; resetting the episode", reason,
                   self._task.task_id)
        d.time = self._last_good_time  # keep sim time monotonic for /clock
        if self._scene_spec is not None:
            self.reset_scene(self._scene_spec)
        else:
            self.reset(self._family, self._seed, scene=self._scene)
        return False

    def _expire_timed_effects(self) -> None:
        for part, until in list(self._stuck_until.items()):
            if until <= self.data.time:
                self._fixtures.release(part)
                del self._stuck_until[part]

    def stick_part(self, part_id: str, duration: float) -> None:
        """Freeze a fixture part where it is for ``duration`` s (a drawer that sticks)."""
        with self._lock:
            value = self.fixture_states().get(part_id)
            if value is None:
                raise SimError(f"no fixture part {part_id!r} in this scene")
            self._fixtures.stick(part_id, value)
            self._stuck_until[part_id] = self.time + duration

    def set_fixture_state(self, part_id: str, value: float) -> None:
        """Move a fixture part (drawer opening m, door/knob angle rad, light 1/0) at once."""
        with self._lock:
            self._fixtures.set_state(self.data, part_id, value)
            mujoco.mj_forward(self.model, self.data)

    # ------------------------------------------------------------------ arm
    def joint_positions(self) -> np.ndarray:
        with self._lock:
            return self.data.qpos[self._arm_qadr].copy()

    def arm_joints_of(self, qpos: np.ndarray) -> tuple[float, ...]:
        """The 6 arm joints of a qpos (e.g. ``render_state``'s: the arm a frame shows)."""
        return tuple(float(v) for v in qpos[self._arm_qadr])

    def joint_velocities(self) -> np.ndarray:
        with self._lock:
            return self.data.qvel[self._arm_vadr].copy()

    def command_trajectory(self, joint_names: Sequence[str],
                           points: Sequence[TrajectoryPoint]) -> None:
        """Start a trajectory (JTC semantics; SimError on bad input, nothing moves)."""
        with self._lock:
            self._ctrl.start(float(self.data.time), self.data.qpos[self._arm_qadr].copy(),
                             joint_names, points)

    def trajectory_active(self) -> bool:
        with self._lock:
            return self._ctrl.active

    def trajectory_status(self) -> TrajectoryStatus:
        with self._lock:
            return self._ctrl.status

    def set_speed_scaling(self, fraction: float) -> None:
        """The pendant's speed slider (0..1): the trajectory controller runs its trajectories'
        time at this fraction of real time, as the UR driver's scaled JTC does (SimError
        outside [0, 1], nothing changes)."""
        value = float(fraction)
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise SimError(f"speed scaling must be within [0, 1], got {fraction}")
        with self._lock:
            self._ctrl.speed_scaling = value

    def hold(self) -> None:
        """Stop any trajectory and hold the current joint positions."""
        with self._lock:
            self._ctrl.hold(self.data.qpos[self._arm_qadr].copy(), "hold requested")

    def check_trajectory(self, joint_names: Sequence[str],
                         points: Sequence[TrajectoryPoint]) -> None:
        """Raise SimError where ``command_trajectory`` would (nothing starts either way)."""
        with self._lock:
            self._ctrl.validate(joint_names, points)

    def trajectory_progress(self) -> tuple[np.ndarray, float, float]:
        """(desired joints now, trajectory time, its end; -inf without a trajectory)."""
        with self._lock:
            return self._ctrl.progress(float(self.data.time))

    def _abort_trajectory(self, reason: str) -> None:
        self._ctrl.abort(self.data.qpos[self._arm_qadr].copy(), reason)

    def tcp_position(self) -> np.ndarray:
        """Centre of the finger pads in base_link (ground truth, for tests and scripting)."""
        with self._lock:
            return self.data.site_xpos[self._tcp_site].copy()

    # ------------------------------------------------------------------ gripper
    def command_gripper(self, position: float) -> None:
        """Robotiq knuckle position: 0 open .. 0.8 closed (SimError outside, nothing moves)."""
        p = float(position)
        if not math.isfinite(p) or not 0.0 <= p <= robotiq.CLOSED_POSITION + 1e-9:
            raise SimError(f"gripper position must be in [0, {robotiq.CLOSED_POSITION}], "
                           f"got {position}")
        with self._lock:
            self._gripper_cmd = p

    def gripper_command(self) -> float:
        with self._lock:
            return self._gripper_cmd

    def gripper_width(self) -> float:
        """Finger gap (m) measured from the finger joints."""
        with self._lock:
            q = self.data.qpos[self._finger_qadr]
            return float(min(max(robotiq.STROKE - float(q[0] + q[1]), 0.0), robotiq.STROKE))

    def gripper_position(self) -> float:
        """Measured knuckle position (the unit of /joint_states' knuckle joint)."""
        return robotiq.width_to_position(self.gripper_width())

    # ------------------------------------------------------------------ camera
    def camera_info(self) -> CameraInfo:
        return camera_info_for(self.model, self.width, self.height)

    def camera_pose(self) -> np.ndarray:
        """4x4 T_base_optical (x right, y down, z forward) the brain is given: the nominal pose
        of config/camera.yaml. With a sensor pose error the true camera differs (see
        ``true_camera_pose``), as an imperfect calibration does on a robot."""
        return self._nominal_camera.copy()

    def true_camera_pose(self) -> np.ndarray:
        """The pose the camera really renders from (scoring and calibration tests ONLY)."""
        with self._sensor_lock:
            return self._sensor.true_camera_pose(self._nominal_camera)

    @property
    def sensor(self) -> SensorModel:
        return self._sensor

    def set_sensor(self, sensor: SensorModel) -> None:
        """Swap the sensor model (noise profile, pose error); the episode seed is kept."""
        with self._lock:
            with self._sensor_lock:
                self._sensor = sensor
            self._new_sensor_episode()

    def _new_sensor_episode(self) -> None:
        """Reseed the sensor for this episode and place the true camera and lights."""
        with self._sensor_lock:
            s = self._sensor
            s.reset_episode(self._seed)
            self._sensor_episode += 1
            true = s.true_camera_pose(self._nominal_camera)
            base = self._base_render
            n = self.model.nlight
            dirs = np.array(base.light_dir).reshape(n, 3)
            if n:
                dirs[0] = s.key_light_rotation @ dirs[0]
            gain = s.light_intensity
            settings = RenderSettings(
                tuple(map(float, true[:3, 3])), mujoco_camera_quat(true),
                tuple(map(float, dirs.reshape(-1))),
                tuple(float(v) * gain for v in base.light_diffuse),
                tuple(float(v) * gain for v in base.headlight))
            vec = settings.vector()
        with self._render_lock:
            self._render_vec = vec
            RenderSettings.apply(self.model, vec)

    def render_settings(self) -> np.ndarray:
        """The camera-and-lights vector a render process applies before drawing."""
        with self._render_lock:
            return self._render_vec.copy()

    def sense(self, rgb: np.ndarray, depth: np.ndarray, stamp: float
              ) -> tuple[np.ndarray, np.ndarray]:
        """The sensor model over a clean render taken at sim time ``stamp``: what the camera
        delivers. Every frame that leaves the sim goes through here."""
        with self._sensor_lock:
            return self._sensor.apply(rgb, depth, stamp, self.camera_info().fx)

    def sensor_spec(self) -> SensorSpec:
        """What a render process needs to apply the sensor model itself, frame for frame as
        ``sense`` would (same parameters, seeds and episode: the same noise streams). The
        world's own model is then not applied; nothing else reads its noise state."""
        with self._sensor_lock:
            s = self._sensor
            return SensorSpec(self._sensor_episode, s.params, s.sensor_seed, self._seed,
                              float(self.camera_info().fx))

    def camera_frozen(self) -> bool:
        """True while a camera_freeze anomaly holds: front ends stop publishing frames."""
        with self._lock:
            return self.data.time < self._camera_frozen_until

    @property
    def model_xml(self) -> str:
        """The MJCF this world was compiled from (a render process compiles its own copy)."""
        return _XML_CACHE["xml"]

    def render_state(self) -> tuple[float, np.ndarray]:
        """(sim time, qpos copy): everything a renderer needs, taken atomically."""
        with self._lock:
            return float(self.data.time), self.data.qpos.copy()

    def render_rgbd(self) -> tuple[np.ndarray, np.ndarray]:
        """(rgb uint8 HxWx3, depth uint16 HxW mm, 0 = no return) of the current state, as the
        sensor delivers it (noise model applied)."""
        stamp, qpos = self.render_state()
        return self.sense(*self.render_qpos(qpos), stamp)

    def render_clean(self) -> tuple[np.ndarray, np.ndarray]:
        """The noiseless render of the current state (scoring ONLY: the brain gets
        ``render_rgbd``)."""
        return self.render_qpos(self.render_state()[1])

    def render_qpos(self, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Clean render of the scene at joint/object positions ``qpos`` (see ``render_state``);
        pass it through ``sense`` before anyone but the scorer sees it."""
        # Forward kinematics of the render data with sleeping off: MuJoCo's kinematics update
        # only the bodies it believes awake, and the render data is never stepped, so with it
        # on a fixture placed after a scene without it stayed where it was last drawn. The
        # flag is the physics thread's too: it is switched under the world's lock (lock order:
        # _lock, then _render_lock, as everywhere), for the ~0.1 ms the kinematics take.
        with self._lock:  # released before drawing: physics goes on meanwhile
            self._render_lock.acquire()
            flags = self.model.opt.enableflags
            try:
                self.model.opt.enableflags = flags & ~_SLEEP
                self._render_data.qpos[:] = qpos
                mujoco.mj_kinematics(self.model, self._render_data)
                place_static_camera_and_lights(self.model, self._render_data)
            except BaseException:
                self._render_lock.release()
                raise
            finally:
                self.model.opt.enableflags = flags
        try:
            tid = threading.get_ident()
            renderer = self._renderers.get(tid)
            if renderer is None:
                renderer = CameraRenderer(self.model, self.width, self.height)
                self._renderers[tid] = renderer
            return renderer.render(self._render_data)
        finally:
            self._render_lock.release()

    # ------------------------------------------------------------------ ground truth / oracle
    def object_names(self) -> tuple[str, ...]:
        with self._lock:
            parts = tuple(p for p, j in self._fixtures.parts.items()
                          if j.fixture in self._fixtures.present and p not in
                          self._fixtures.present)
            return tuple(self._active) + tuple(self._fixtures.present) + parts + ("zone",)

    def drawer_opening(self) -> float:
        with self._lock:
            return float(self.data.qpos[self._drawer_qadr])

    def fixture_states(self) -> dict[str, float]:
        """Every part of the scene's fixtures: opening (m), angle (rad), lit 1/0 (oracle and
        perception scoring ONLY)."""
        with self._lock:
            return self._fixtures.states(self.data)

    def fixture_map_data(self) -> dict[str, Any]:
        """The scene's fixture map (``frankenbot.fixture_map`` YAML data): what the brain is
        told about the fixtures, as a robot cell's ``config/scene_fixtures.yaml`` would."""
        from frankenbot.sim.config_files import fixtures_config

        return fixtures_config(self.fixture_placements())

    def fixture_placements(self) -> tuple[tasks.FixturePlacement, ...]:
        """The scene's fixtures and where they stand: the installation's map (what a robot cell
        is configured with), not their state."""
        with self._lock:
            return tuple(self._fixtures.present.values())

    def object_states(self) -> dict[str, ObjectState]:
        """Ground truth of the active movable objects (oracle and perception scoring ONLY)."""
        with self._lock:
            held = self._held()
            out = {}
            for name in self._active:
                spec = layout.OBJECT_BY_NAME[name]
                b = self._bodies[name]
                v = self.data.qvel[self._obj_vadr[name]:self._obj_vadr[name] + 3]
                out[name] = ObjectState(
                    name, spec.shape, spec.colour, tuple(map(float, self.data.xpos[b])),
                    tuple(map(float, self.data.xquat[b])), spec.size,
                    float(np.linalg.norm(v)), name in held)
            return out

    def evaluate(self, stability_window: float = DEFAULT_WINDOW) -> Verdict:
        """Judge the task from simulator state: the predicate must hold over the window.

        The world is stepped through the window (the arm keeps following its commands), checking
        the predicate every 50 ms; a single failing sample fails the verdict.
        """
        window = float(stability_window) if stability_window and stability_window > 0 else (
            DEFAULT_WINDOW)
        with self._lock:
            task = self._task
            if not task.family:
                return Verdict(False, {"task_id": task.task_id, "error": "no task loaded"},
                               "no task loaded (reset with a task family first)")
            samples = max(1, int(round(window / 0.05)))
            ok_all, lines = True, []
            for i in range(samples + 1):
                view = OracleView(self.object_states(), self.drawer_opening(),
                                  self._fixtures.states(self.data), self._fixture_map)
                ok, lines = tasks.check(task, view)
                if not ok:
                    ok_all = False
                    break
                if i < samples:
                    self._step_n(int(round(0.05 / self.timestep)))
            held_for = i * 0.05
            text = "\n".join([f"{'SUCCESS' if ok_all else 'FAILURE'}: {task.instruction}"]
                             + lines)
            details = {"task_id": task.task_id, "family": task.family,
                       "instruction": task.instruction, "checks": lines,
                       "stability_window": window, "held_for": held_for,
                       "instabilities": len(self.instabilities),
                       "params": {k: (list(v) if isinstance(v, tuple) else v)
                                  for k, v in task.params.items()}}
            return Verdict(ok_all, details, text)

    # ------------------------------------------------------------------ anomalies
    def inject(self, kind: str, phase: str = "",
               params: Mapping[str, Any] | None = None) -> AnomalyClass:
        """Arm (or, phase ``now``, apply) an anomaly; SimError names valid kinds/phases."""
        with self._lock:
            return self._anomalies.arm(self, kind, phase, dict(params or {}))

    def anomaly_log(self) -> list[InjectedAnomaly]:
        with self._lock:
            return self._anomalies.log()

    # ------------------------------------------------------------------ scene variants
    def remove_object(self, name: str) -> None:
        """Take an object off the table (parked out of sight): a scene with fewer objects (an
        object alone on the table to enrol it; a measurement variant). The task's oracle is
        unchanged."""
        if name not in self._obj_geoms:
            raise SimError(f"unknown object {name!r}; known: {', '.join(self._obj_geoms)}")
        with self._lock:
            self._park(name)

    def add_object(self, name: str, position: Sequence[float], yaw: float = 0.0) -> None:
        """Bring a parked catalogue object onto the table at ``position`` (its centre, m) after
        a reset: measurement variants of a task (a tower beside the carry path). The oracle of
        the task is unchanged."""
        if name not in self._obj_geoms:
            raise SimError(f"unknown object {name!r}; known: {', '.join(self._obj_geoms)}")
        if name in self._active:
            raise SimError(f"{name} is already on the table")
        with self._lock:
            self._activate(name)
            self._set_pose(name, position, yaw)
            self._wake(name)

"""The primitives: the whitelisted robot operations a program may call (see program/catalog.py).

``Primitives`` implements the interpreter's ``PrimitiveExecutor`` port. Each primitive reads the
current scene from the robot interface, turns the object into TCP poses and runs them through a
motion backend that checks every trajectory against the safety envelope. Blocks are grasped from
above with a yaw that follows theirs (their 90-degree symmetry turns the wrist as little as
possible); everything else through grasp synthesis from its points (``grasps.py``, aimed by
``grasp_aim.py``). Fixtures (drawers, doors, controls) are worked by
``fixture_primitives.py`` from the current fixture map.
Every outcome is a typed ``PrimitiveResult``; robot failures never raise.

Beliefs the primitives keep (read by monitors and predicates through ``snapshot()`` and
``facts()``): which object is held (set by a successful pick, cleared by a place or an opened
gripper) and how each drawer or door was left (``open:<part>``). A cancel token set from another
thread (the monitor loop) stops the arm within one poll period and the primitive returns
PREEMPTED.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from frankenbot import shapes, spatial
from frankenbot.common import FailureCode
from frankenbot.errors import MotionError
from frankenbot.fixture_map import FixtureMap, FixtureMapProvider, FixturePart
from frankenbot.motion.backend import MotionBackend, MotionOutcome
from frankenbot.motion.kinematics import (
    UnreachableError,
    UR5eKinematics,
    symmetric_yaws,
    top_down_pose,
    wrap_angle,
)
from frankenbot.ports import (
    CancelToken,
    EstopEngaged,
    PixelResolver,
    PrimitiveResult,
    RobotInterface,
    Value,
)
from frankenbot.primitives.config import PrimitiveConfig
from frankenbot.primitives.control_primitives import ControlPrimitives
from frankenbot.primitives.fixture_primitives import FixturePrimitives
from frankenbot.primitives.grasp_aim import GraspAim
from frankenbot.primitives.grasps import GripperModel
from frankenbot.primitives.gripper import GripperTiming, StepFailed, move_gripper
from frankenbot.primitives.place_primitives import PlacePrimitives
from frankenbot.primitives.targets import TargetPrimitives
from frankenbot.state import CLOCKS_APART_S, RobotSnapshot, Scene, SceneObject

WAIT_POLL = 0.01  # s of robot time between cancel checks in wait()
SLIP_WIDTH_CHANGE = 0.008  # m: a held object keeps the finger gap it was grasped at
ROUND_FOOTPRINT = frozenset(shapes.ROUND - {"mug"})  # a disc seen from above (stood upright)
# a place's pre-place pose is high enough for the held object to pass this far over whatever
# stands within PRE_PLACE_NEIGHBOURHOOD of its footprint at the spot
PRE_PLACE_NEIGHBOURHOOD = 0.06  # m
PRE_PLACE_CLEARANCE = 0.03  # m
TABLE_LEVEL = 0.005  # m over the table where a release still counts as onto the table
REGRASP_SEEN_WITHIN = 0.03  # m from where it was put down: the camera's view of it is trusted


@dataclass(frozen=True)
class _Held:
    object_id: str
    size: tuple[float, float, float]
    grasp_offset: float  # TCP z minus the object's bottom z at the grasp
    yaw_in_gripper: float  # object yaw minus gripper yaw at the grasp
    shape: str = "block"
    grip: float = 0.0  # finger gap the fingers closed to on it (m)
    seen: SceneObject | None = None  # the object as the camera showed it at the grasp
    offset: float = 0.0  # m: the object's centre from the TCP along the gripper's x axis

    def extents(self) -> tuple[float, float]:
        """The object's horizontal extent along the gripper's x axis and along its fingers."""
        if self.shape in ROUND_FOOTPRINT and self.size[2] >= 0.8 * max(self.size[:2]) or (
                self.shape in ("apple", "ball", "plate", "bowl")):
            return max(self.size[:2]), max(self.size[:2])  # a disc turns into itself
        c, s = abs(math.cos(self.yaw_in_gripper)), abs(math.sin(self.yaw_in_gripper))
        return c * self.size[0] + s * self.size[1], s * self.size[0] + c * self.size[1]


class Primitives:
    """Executes primitives by name on one robot. Thread-safe for ``snapshot()``/``facts()``."""

    def __init__(self, robot: RobotInterface, *, kinematics: UR5eKinematics,
                 backend: MotionBackend, config: PrimitiveConfig | None = None,
                 home: tuple[float, ...] = (0.0, -math.pi / 2, math.pi / 2, -math.pi / 2,
                                            -math.pi / 2, 0.0),
                 pixels: PixelResolver | None = None,
                 fixture_map: FixtureMap | FixtureMapProvider | None = None,
                 gripper: GripperModel | None = None) -> None:
        self.robot = robot
        self.pixels = pixels  # back-projects set-of-mark pixels (None: no depth camera)
        self.kin = kinematics
        self.backend = backend
        self.config = config or PrimitiveConfig()
        self.gripper = gripper or GripperModel()
        self.home_joints = tuple(float(v) for v in home)
        # the current fixture map (a scene change, e.g. a sim reset, replaces it)
        if fixture_map is None or isinstance(fixture_map, FixtureMap):
            fixed = fixture_map or FixtureMap()
            self.fixture_map: FixtureMapProvider = lambda: fixed
        else:
            self.fixture_map = fixture_map
        # guards _held, _placed, _open, _angle, _closed_cmd, _regrasping
        self._beliefs_lock = threading.Lock()
        self._held: _Held | None = None
        # object -> (centre where it was let go, robot time): until the camera sees it again
        # object id -> (where it was let go, robot time then, the object as seen at its grasp)
        self._placed: dict[str, tuple[tuple[float, float, float], float,
                                      SceneObject | None]] = {}
        self._open: dict[str, tuple[bool, float | None]] = {}  # part -> (open, opening)
        self._angle: dict[str, float] = {}  # switch / knob -> angle left at (rad)
        self._closed_cmd = False
        self._regrasping = False  # a place put its object down to take it again (``regrasp``)
        self._gripper_timing = GripperTiming(self.config.gripper_timeout,
                                             self.config.gripper_settle)
        self._handlers: dict[str, Callable[[Mapping[str, Value], CancelToken],
                                           PrimitiveResult]] = {
            "home": self._home, "detect": self._detect, "move_above": self._move_above,
            "pick": self._pick, "push_to": self._push_to,
            "open_gripper": self._open_gripper, "close_gripper": self._close_gripper,
            "wait": self._wait,
        }
        self._aim = GraspAim(self)
        self._fixture_ops = FixturePrimitives(self)
        self._handlers.update(self._fixture_ops.handlers())
        self._handlers.update(ControlPrimitives(self._fixture_ops).handlers())
        self._handlers.update(PlacePrimitives(self).handlers())
        self._handlers.update(TargetPrimitives(self).handlers())

    # --- PrimitiveExecutor ----------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._handlers)

    def execute(self, name: str, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        handler = self._handlers.get(name)
        if handler is None:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"unknown primitive {name!r}; known: "
                                           f"{', '.join(self._handlers)}")
        if cancel.cancelled:
            return PrimitiveResult.failure(FailureCode.PREEMPTED,
                                           f"{name} cancelled before start: {cancel.reason}")
        try:
            return handler(args, cancel)
        except StepFailed as stop:
            return stop.result
        except EstopEngaged as e:
            return PrimitiveResult.failure(FailureCode.ESTOP, str(e))
        except MotionError as e:
            return PrimitiveResult.failure(FailureCode.ABORTED, f"{name}: {e}")

    # --- beliefs --------------------------------------------------------------------------
    @property
    def held_object(self) -> str | None:
        with self._beliefs_lock:
            return self._held.object_id if self._held else None

    def facts(self) -> dict[str, bool]:
        """Boolean facts for predicates: how this robot left each drawer or door,
        ``{"open:top_drawer": True}`` (nothing for parts it has not worked: the camera says)."""
        with self._beliefs_lock:
            return {f"open:{k}": v for k, (v, _) in self._open.items()}

    def believed_scene(self, scene: Scene) -> Scene:
        """``scene`` with each object this robot let go and the camera has not seen since
        where it was let go (a block put into a drawer is hidden by the drawer's walls and the
        arm above it; its track still holds where the camera last saw it, in the gripper, or,
        let go out of the camera's sight, the tracker has dropped it). A sighting after the
        release wins and ends the belief: of the object itself, or of a new one of its colour
        and shape (it may be that object, fallen elsewhere). Only objects let go out of sight,
        or on the table and not shown by the first frame after the retreat (the arm above
        them), are added back: elsewhere a dropped track is the camera's to explain, and
        adding it back beside the object's new track made two of it."""
        with self._beliefs_lock:
            if not self._placed:
                return scene
            objects = []
            for obj in scene.objects:
                placed = self._placed.get(obj.object_id)
                # seen since; or stamped on another clock than the robot's (never comparable)
                if placed is not None and (obj.last_seen > placed[1] or abs(
                        scene.stamp - placed[1]) > CLOCKS_APART_S):
                    del self._placed[obj.object_id]
                    placed = None
                objects.append(obj if placed is None else replace(obj, position=placed[0]))
            present = {o.object_id for o in objects}
            for oid, (position, stamp, seen) in list(self._placed.items()):
                if oid in present or seen is None:
                    continue
                if abs(scene.stamp - stamp) > CLOCKS_APART_S or any(
                        (o.colour, o.shape) == (seen.colour, seen.shape) and o.last_seen > stamp
                        and o.object_id not in self._placed for o in scene.objects):
                    del self._placed[oid]
                    continue
                objects.append(replace(seen, position=position, occluded=True))
        return replace(scene, objects=tuple(objects))

    def believed_opening(self, part: FixturePart) -> float | None:
        """How far ``part`` was left open by these primitives (None: not worked by them); a
        switch or knob: the angle it was left at."""
        with self._beliefs_lock:
            if part.part_id in self._angle:
                return self._angle[part.part_id]
            belief = self._open.get(part.part_id)
        if belief is None:
            return None
        is_open, opening = belief
        if opening is not None:
            return opening
        return part.travel if is_open else 0.0

    def set_open(self, part_id: str, is_open: bool | None, opening: float | None) -> None:
        """Record how a drawer or door was left (None: unknown, the camera will say)."""
        with self._beliefs_lock:
            if is_open is None:
                self._open.pop(part_id, None)
            else:
                self._open[part_id] = (is_open, opening)

    def set_angle(self, part_id: str, angle: float) -> None:
        with self._beliefs_lock:
            self._angle[part_id] = angle

    def forget_held(self) -> None:
        """Drop the belief that something is held (a monitor saw the grasp lost)."""
        with self._beliefs_lock:
            self._held = None

    def reset_beliefs(self) -> None:
        """Forget what is held and how drawers, doors and controls were left (the world was
        replaced: a sim reset, or the table rearranged by hand)."""
        with self._beliefs_lock:
            self._held = None
            self._placed = {}
            self._open = {}
            self._angle = {}

    def _held_per_fingers(self) -> str | None:
        """The held object, unless the fingers contradict the belief: closed on nothing, or open
        wider than the object could be held (someone took it, or the world was reset). A
        contradicted belief is dropped, so the next pick is not refused for a phantom."""
        with self._beliefs_lock:
            held = self._held
        if held is None:
            return None
        grip = self.robot.gripper_state()
        if grip is not None:
            cfg = self.config
            widest = max(held.size[0], held.size[1]) + cfg.release_margin + cfg.held_slack
            if grip.width < cfg.min_grasp_width or grip.width > widest:
                with self._beliefs_lock:
                    if self._held is held:
                        self._held = None
                return None
        return held.object_id

    def snapshot(self) -> RobotSnapshot:
        """Robot state plus beliefs for monitors and predicates (cheap: one FK)."""
        state = self.robot.joint_state()
        grip = self.robot.gripper_state()
        with self._beliefs_lock:
            held = self._held.object_id if self._held else None
            closed = self._closed_cmd and not self._regrasping
        releasing = held is not None and not closed  # a place opened the fingers on it
        if state is None:
            return RobotSnapshot(gripper_width=grip.width if grip else 0.0,
                                 gripper_closed_cmd=closed, held_object=held,
                                 releasing=releasing, estop=self.robot.estop_engaged(),
                                 stamp=self.robot.now())
        speed = max(abs(v) for v in state.velocities) if state.velocities else 0.0
        return RobotSnapshot(
            joint_positions=state.positions, joint_velocities=state.velocities,
            tcp_position=self.kin.tcp_position(state.positions),
            gripper_width=grip.width if grip else 0.0, gripper_closed_cmd=closed,
            held_object=held, releasing=releasing, moving=speed > 0.02,
            estop=self.robot.estop_engaged(), stamp=state.stamp,
            speed_scaling=self.robot.speed_scaling())

    # --- argument and scene helpers -------------------------------------------------------
    @staticmethod
    def _obj_arg(args: Mapping[str, Value], key: str) -> str:
        value = args.get(key)
        if not isinstance(value, str) or not value:
            raise StepFailed(PrimitiveResult.failure(
                FailureCode.INVALID_ARGUMENT, f"argument {key!r} must be an object id, got "
                f"{value!r}"))
        return value

    @staticmethod
    def _num_arg(args: Mapping[str, Value], key: str, default: float | None = None) -> float:
        value = args.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
                float(value)):
            raise StepFailed(PrimitiveResult.failure(
                FailureCode.INVALID_ARGUMENT, f"argument {key!r} must be a finite number, got "
                f"{value!r}"))
        return float(value)

    def _find(self, object_id: str) -> SceneObject:
        obj = self.robot.scene().get(object_id)
        if obj is None:
            raise StepFailed(PrimitiveResult.failure(FailureCode.NOT_FOUND,
                                                f"{object_id} is not in the scene"))
        if not all(math.isfinite(v) for v in obj.position + obj.size + (obj.yaw,)):
            raise StepFailed(PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                                f"{object_id} has a non-finite pose in the scene"))
        return obj

    def _find_soon(self, object_id: str, cancel: CancelToken) -> SceneObject:
        """``_find``, but an object missing from the scene gets up to ``detect_timeout`` to
        appear: perception can lose an object for a frame or two (it just fell, the arm hid it,
        the tracks were reset) and a pick should not fail on that alone."""
        start = self.robot.now()
        while self.robot.scene().get(object_id) is None:
            if self.robot.now() - start >= self.config.detect_timeout or cancel.cancelled:
                break
            self.robot.sleep(0.05)
        return self._find(object_id)

    def _newer_view(self, object_id: str, cancel: CancelToken) -> SceneObject | None:
        """The object in the first fresh scene stamped after now (None: none in look_timeout)."""
        scene = self.newer_scene(cancel)
        return scene.get(object_id) if scene is not None else None

    def newer_scene(self, cancel: CancelToken) -> Scene | None:
        """The first fresh scene stamped after now (None: none in ``look_timeout``)."""
        start = self.robot.now()
        while self.robot.now() - start < self.config.look_timeout and not cancel.cancelled:
            scene = self.robot.scene()
            if not scene.stale and scene.stamp > start:
                return scene
            self.robot.sleep(0.02)
        return None

    def _q(self) -> np.ndarray:
        state = self.robot.joint_state()
        if state is None:
            raise StepFailed(PrimitiveResult.failure(FailureCode.NO_STATE,
                                                "no joint state: not moving"))
        return np.asarray(state.positions, dtype=float)

    def _current_yaw(self) -> float:
        rot = self.kin.fk(self._q())[:3, :3]
        return math.atan2(rot[1, 0], rot[0, 0])

    def _best_yaw(self, x: float, y: float, z: float, candidates: tuple[float, ...]) -> float:
        """The candidate yaw whose top-down pose needs the least joint motion from here."""
        q = self._q()
        best, best_cost = None, math.inf
        for yaw in candidates:
            try:
                sol = self.kin.ik(top_down_pose(x, y, z, yaw), q)
            except UnreachableError:
                continue
            cost = float(np.sum((sol - q) ** 2))
            if cost < best_cost:
                best, best_cost = yaw, cost
        if best is None:
            raise StepFailed(PrimitiveResult.failure(
                FailureCode.UNREACHABLE, f"no top-down pose at ({x:.3f}, {y:.3f}, {z:.3f}) m is "
                f"reachable"))
        return best

    # --- motion helpers -------------------------------------------------------------------
    @staticmethod
    def _check(outcome: MotionOutcome, step: str) -> None:
        if not outcome.ok:
            raise StepFailed(PrimitiveResult.failure(outcome.code, f"{step}: {outcome.detail}"))

    def _to_pose(self, pose: np.ndarray, cancel: CancelToken, step: str) -> None:
        self._check(self.backend.move_to_pose(pose, cancel), step)

    def _line(self, pose: np.ndarray, cancel: CancelToken, step: str,
              speed: float = 1.0) -> None:
        self._check(self.backend.move_linear(pose, cancel, speed), step)

    def _gripper(self, width: float, cancel: CancelToken) -> float:
        """Command a finger gap, wait until the fingers stop; returns the measured gap."""
        with self._beliefs_lock:
            self._closed_cmd = width < 0.005
        return move_gripper(self.robot, width, cancel, self._gripper_timing)

    # --- primitives -----------------------------------------------------------------------
    def _home(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        self._check(self.backend.move_to_joints(self.home_joints, cancel), "home")
        return PrimitiveResult.success("at home")

    def _detect(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        object_id = self._obj_arg(args, "obj")
        start = self.robot.now()
        while True:
            scene = self.robot.scene()
            obj = scene.get(object_id)
            if obj is not None and not scene.stale:
                return PrimitiveResult.success(
                    f"{object_id} at ({obj.position[0]:.3f}, {obj.position[1]:.3f}, "
                    f"{obj.position[2]:.3f})", position=obj.position, size=obj.size, yaw=obj.yaw)
            if self.robot.now() - start >= self.config.detect_timeout:
                why = "the scene is stale" if scene.stale else "not in the scene"
                return PrimitiveResult.failure(FailureCode.NOT_FOUND, f"{object_id}: {why}")
            if cancel.cancelled:
                return PrimitiveResult.failure(FailureCode.PREEMPTED,
                                               f"preempted: {cancel.reason}")
            self.robot.sleep(0.05)

    def _move_above(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        object_id = self._obj_arg(args, "obj")
        height = self._num_arg(args, "height", 0.10)
        if height < 0.0:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"height must be >= 0, got {height}")
        obj = self._find(object_id)
        z = obj.top_z + height
        yaw = self._best_yaw(obj.position[0], obj.position[1], z,
                             symmetric_yaws(self._current_yaw(), math.pi))
        self._to_pose(top_down_pose(obj.position[0], obj.position[1], z, yaw), cancel,
                      "move above")
        return PrimitiveResult.success(f"above {obj.object_id}")

    def _pick(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        object_id = self._obj_arg(args, "obj")
        held = self._held_per_fingers()
        if held is not None and held == object_id:
            return self._finish_lift(object_id, cancel)
        if held is not None:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"already holding {held}; place it first")
        obj = self._find_soon(object_id, cancel)
        if obj.is_fixture:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"{object_id} is a fixture and cannot be picked")
        if obj.shape not in shapes.GRASPABLE:
            return PrimitiveResult.failure(
                FailureCode.INVALID_ARGUMENT, f"{object_id} is a {obj.shape}: things are put in "
                "or on it, it is not picked up")
        return self._take(obj, cancel)

    def _take(self, obj: SceneObject, cancel: CancelToken,
              off_centre: float = 0.0) -> PrimitiveResult:
        """Grasp ``obj`` (a pick's motions, from the pre-grasp to the lift) and hold it;
        ``off_centre``: grasp it at least that far from its centre (``grasps.synthesize``)."""
        cfg = self.config
        object_id = obj.object_id
        aim = self._aim.aim(obj, off_centre)  # checked (size, collisions, reach) first
        x, y, bottom, grasp_z, above_z, yaw, open_width = aim
        self._gripper(open_width, cancel)
        self._to_pose(top_down_pose(x, y, above_z, yaw), cancel, "pre-grasp")
        # Look before descending: the pose the pick started from may be a frame or two old (an
        # object that just fell or was nudged). Re-aim when a newer view has it elsewhere.
        seen = self._newer_view(object_id, cancel)
        if seen is not None and math.hypot(seen.position[0] - obj.position[0],
                                           seen.position[1] - obj.position[1]
                                           ) > cfg.realign_distance:
            obj = seen
            x, y, bottom, grasp_z, above_z, yaw, wider = self._aim.aim(obj, off_centre)
            if abs(wider - open_width) > 1e-4:
                open_width = wider
                self._gripper(open_width, cancel)
            self._to_pose(top_down_pose(x, y, above_z, yaw), cancel, "re-aimed pre-grasp")
        self._line(top_down_pose(x, y, grasp_z, yaw), cancel, "approach")
        closed = self._gripper(0.0, cancel)
        if closed < cfg.min_grasp_width:
            self._gripper(open_width, cancel)
            self._line(top_down_pose(x, y, above_z, yaw), cancel, "retreat after a miss")
            return PrimitiveResult.failure(
                FailureCode.GRASP_FAILED, f"fingers closed on nothing ({closed * 1000:.1f} mm)",
                grasp_width=closed)
        with self._beliefs_lock:
            offset = ((obj.position[0] - x) * math.cos(yaw)
                      + (obj.position[1] - y) * math.sin(yaw))
            self._held = _Held(object_id, obj.size, grasp_z - bottom, wrap_angle(obj.yaw - yaw),
                               obj.shape, closed, obj, offset)
            self._placed.pop(object_id, None)
        self._line(top_down_pose(x, y, above_z, yaw), cancel, "lift")
        grip = self.robot.gripper_state()
        # fingers closed on nothing, or no longer at the width they closed to on the object
        # (pushed open, or closing further on nothing): it slipped
        if grip is not None and (grip.width < cfg.min_grasp_width
                                 or abs(grip.width - closed) > SLIP_WIDTH_CHANGE):
            self.forget_held()
            return PrimitiveResult.failure(FailureCode.GRASP_FAILED,
                                           f"{object_id} slipped out while lifting",
                                           grasp_width=grip.width)
        return PrimitiveResult.success(f"holding {object_id}", grasp_width=closed)

    def _finish_lift(self, object_id: str, cancel: CancelToken) -> PrimitiveResult:
        """``pick`` of the object already in the hand (its lift was cut short, or a replanned
        program picks again): lift it straight up to the carry height if it is lower; the
        pick's goal, held and lifted, then holds."""
        with self._beliefs_lock:
            held = self._held
        if held is None or held.object_id != object_id:
            return PrimitiveResult.failure(FailureCode.GRASP_FAILED, f"{object_id} is not held")
        tcp = self.kin.fk(self._q())
        x, y, z = float(tcp[0, 3]), float(tcp[1, 3]), float(tcp[2, 3])
        lift_z = held.size[2] + self.config.approach_height  # above an object on the table
        if z < lift_z - 0.005:
            self._line(top_down_pose(x, y, lift_z, self._current_yaw()), cancel, "lift")
        return PrimitiveResult.success(f"holding {object_id}")

    def others_than_held(self, held: _Held, objects: Sequence[SceneObject]
                         ) -> list[SceneObject]:
        """``objects`` but the held one and anything in the fingers with it: the gripper hides
        part of what it holds, and the part in view may be tracked under a name of its own
        (the end of a lying bottle seen as a ball); it is not something to place beside."""
        tcp = self.kin.fk(self._q())[:3, 3]
        reach = 0.5 * max(held.size) + spatial.IN_HAND_MARGIN
        return [o for o in objects if o.object_id != held.object_id
                and math.dist(o.position, tcp) > reach]

    def _held_or_stop(self, object_id: str) -> _Held:
        with self._beliefs_lock:
            held = self._held
        if held is None or held.object_id != object_id:
            what = held.object_id if held else "nothing"
            raise StepFailed(PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                                f"not holding {object_id} (holding {what})"))
        grip = self.robot.gripper_state()
        if grip is not None and grip.width < self.config.min_grasp_width:
            self.forget_held()
            raise StepFailed(PrimitiveResult.failure(FailureCode.GRASP_FAILED,
                                                f"{object_id} is no longer in the gripper"))
        return held

    def _release_at(self, held: _Held, x: float, y: float, support_z: float, yaw: float,
                    clear_z: float, cancel: CancelToken,
                    approach: float | None = None, drop: float = 0.0,
                    out_of_sight: bool = False, keep_held: bool = False,
                    contained: bool = False) -> PrimitiveResult:
        """Lower the held object to rest its bottom on ``support_z`` (let go ``drop`` m over
        it), open, retreat upwards (``approach`` m over ``clear_z``; default the config's).
        ``(x, y)`` is the TCP's; an object held off its middle rests ``held.offset`` m from it.
        ``out_of_sight``: the place hides it from the camera (into a drawer): should the
        camera's tracker drop it, it still counts where it was let go; so does an object let go
        on the table, or into an open container (``contained``: a bowl, a basket), that the
        first camera frame after the retreat does not show.
        ``keep_held``: put down to be taken again at once (``regrasp``): it stays in the
        robot's care, held for the predicates."""
        cfg = self.config
        release_z = max(support_z + cfg.place_clearance + held.grasp_offset + drop,
                        cfg.min_tcp_z)
        above_z = max(clear_z, release_z) + (cfg.approach_height if approach is None
                                             else approach)
        # the move to the pre-place pose is not a straight line down: the held object must
        # pass over what stands near the spot (a tall carton beside which it is put)
        reach = spatial.footprint_radius(held.size, held.shape) + PRE_PLACE_NEIGHBOURHOOD
        tops = [o.top_z for o in self.others_than_held(held, self.robot.scene().objects)
                if not o.is_fixture
                and math.hypot(o.position[0] - x, o.position[1] - y)
                - spatial.footprint_radius(o.size, o.shape) < reach]
        if tops:
            above_z = max(above_z, max(tops) + PRE_PLACE_CLEARANCE + held.grasp_offset)
        self._to_pose(top_down_pose(x, y, above_z, yaw), cancel, "pre-place")
        self._line(top_down_pose(x, y, release_z, yaw), cancel, "lower")
        section = (min(held.size[0], held.size[1]) if held.shape == "block" or held.grip <= 0.0
                   else held.grip)
        self._gripper(min(0.085, section + cfg.release_margin), cancel)
        # The object counts as held until the gripper has retreated and a camera frame taken
        # since shows it at its new place: judged on an older frame (the camera's latency grows
        # with load), a drop monitor (`not holding(x) and not in(x, c) during place_in`) would
        # take the intended release for a drop.
        # Let go on the table where the camera does not see it now (the arm retreated above
        # it hides it; its track was dropped when its old place was seen empty): believed
        # where it was let go until the camera finds it, as for a place out of sight. Not on
        # another object: a block let go on a tower, not yet reported by the first frame,
        # came back as a new track beside its belief ("which block: orange or orange?").
        on_table = support_z <= cfg.table_z + TABLE_LEVEL
        seen_after: SceneObject | None = None
        ox, oy = x + held.offset * math.cos(yaw), y + held.offset * math.sin(yaw)
        try:
            self._line(top_down_pose(x, y, above_z, yaw), cancel, "retreat")
            if not keep_held:
                seen_after = self._newer_view(held.object_id, cancel)
        finally:
            with self._beliefs_lock:
                if self._held is held and not keep_held:
                    # (a red apple let go into a green bowl, the gripper retreating over
                    # it: unseen, it was "not in the scene" and the program aborted)
                    hidden = out_of_sight or (seen_after is None and (on_table or contained))
                    self._placed[held.object_id] = ((ox, oy, support_z + held.size[2] / 2.0),
                                                    self.robot.now(),
                                                    held.seen if hidden else None)
                    self._held = None
        return PrimitiveResult.success(f"released {held.object_id}",
                                       position=(ox, oy, support_z))

    def regrasp(self, held: _Held, off_centre: float, cancel: CancelToken) -> _Held:
        """Put the held object down where it was picked up and take it again at least
        ``off_centre`` m from its middle (a long object for a drawer's short open part: held
        near one end, the palm stays in front of the cabinet while its other end reaches in).
        It stays held for the predicates throughout (in the robot's care, not dropped).
        StepFailed when it is not taken again (then it is no longer held)."""
        cfg = self.config
        seen = held.seen
        if seen is None:
            raise StepFailed(PrimitiveResult.failure(
                FailureCode.BLOCKED, f"{held.object_id}: where it was picked up is not known"))
        x, y = seen.position[0], seen.position[1]
        bottom = seen.position[2] - seen.size[2] / 2.0
        yaw = self._place_yaw(held, x, y, bottom + held.size[2] + cfg.approach_height, None)
        x -= held.offset * math.cos(yaw)  # the object back on its own footprint
        y -= held.offset * math.sin(yaw)
        with self._beliefs_lock:
            self._regrasping = True
        try:
            return self._put_down_and_take(held, x, y, bottom, yaw, off_centre, cancel)
        finally:
            with self._beliefs_lock:
                self._regrasping = False

    def _put_down_and_take(self, held: _Held, x: float, y: float, bottom: float, yaw: float,
                           off_centre: float, cancel: CancelToken) -> _Held:
        seen = held.seen
        assert seen is not None
        self._release_at(held, x, y, bottom, yaw, bottom + held.size[2], cancel, keep_held=True)
        # taken again as the camera now shows it, or, where it shows it elsewhere (a track
        # still on its way with the hand), as it was let go
        obj = self._newer_view(held.object_id, cancel)
        if obj is None or math.dist(obj.position, seen.position) > REGRASP_SEEN_WITHIN:
            obj = replace(seen, yaw=wrap_angle(yaw + held.yaw_in_gripper))
        try:
            result = self._take(obj, cancel, off_centre)
        except StepFailed as stop:
            result = stop.result
        with self._beliefs_lock:
            again = self._held
        if not result.ok or again is None or again is held:
            self.forget_held()
            raise StepFailed(PrimitiveResult.failure(
                result.code if not result.ok else FailureCode.GRASP_FAILED,
                f"{held.object_id} was put down to be taken nearer one end, and was not taken "
                f"again: {result.detail}"))
        return again

    def _place_yaw(self, held: _Held, x: float, y: float, z: float,
                   target_yaw: float | None) -> float:
        """Gripper yaw for placing: align the held block with ``target_yaw`` if given."""
        if target_yaw is None:
            return self._best_yaw(x, y, z, symmetric_yaws(self._current_yaw(), math.pi))
        base = wrap_angle(target_yaw - held.yaw_in_gripper)
        return self._best_yaw(x, y, z, symmetric_yaws(base, self.config.block_symmetry))

    def _push_to(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        obj = self._find(self._obj_arg(args, "obj"))
        target = self._find(self._obj_arg(args, "target"))
        return self._push_to_xy(obj, (target.position[0], target.position[1]),
                                target.object_id, cancel)

    def _push_to_xy(self, obj: SceneObject, goal: tuple[float, float], what: str,
                    cancel: CancelToken) -> PrimitiveResult:
        """Push ``obj`` along the table until its centre is on ``goal`` (x, y)."""
        cfg = self.config
        held = self._held_per_fingers()
        if held is not None:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"holding {held}; place it first")
        d = np.array(goal) - np.array(obj.position[:2])
        dist = float(np.linalg.norm(d))
        if dist < 0.01:
            return PrimitiveResult.success(f"{obj.object_id} is already at {what}")
        d /= dist
        yaw_push = math.atan2(d[1], d[0])
        # Closed fingers form a flat face across tool y; face the push direction with it.
        yaw = self._best_yaw(float(obj.position[0]), float(obj.position[1]),
                             obj.top_z + cfg.approach_height,
                             symmetric_yaws(yaw_push, math.pi))
        reach = spatial.push_reach(obj.size, cfg.push_standoff)
        start = np.array(obj.position[:2]) - d * reach
        # Stop when the object's centre is on the target's centre (contact side leads by half).
        end = np.array(goal) - d * (reach - cfg.push_standoff)
        z = max(cfg.push_height, cfg.min_tcp_z)
        above = obj.top_z + cfg.approach_height
        self._gripper(0.0, cancel)
        self._to_pose(top_down_pose(start[0], start[1], above, yaw), cancel, "pre-push")
        self._line(top_down_pose(start[0], start[1], z, yaw), cancel, "lower for push")
        self._line(top_down_pose(end[0], end[1], z, yaw), cancel, "push", cfg.push_speed)
        self._line(top_down_pose(end[0], end[1], above, yaw), cancel, "retreat")
        return PrimitiveResult.success(f"pushed {obj.object_id} to {what}", distance=dist)

    def _open_gripper(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        width = self._gripper(0.085, cancel)
        with self._beliefs_lock:
            self._held = None
        return PrimitiveResult.success("gripper open", width=width)

    def _close_gripper(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        width = self._gripper(0.0, cancel)
        return PrimitiveResult.success("gripper closed", width=width)

    def _wait(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        seconds = self._num_arg(args, "seconds")
        if seconds < 0:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"seconds must be >= 0, got {seconds}")
        return self.wait_for(seconds, cancel)

    def wait_for(self, seconds: float, cancel: CancelToken) -> PrimitiveResult:
        """Robot time passes (cancel and e-stop polled every WAIT_POLL)."""
        end = self.robot.now() + seconds
        while True:
            remaining = end - self.robot.now()
            if remaining <= 1e-9:
                return PrimitiveResult.success(f"waited {seconds:g} s")
            if cancel.cancelled:
                return PrimitiveResult.failure(FailureCode.PREEMPTED,
                                               f"preempted: {cancel.reason}")
            if self.robot.estop_engaged():
                return PrimitiveResult.failure(FailureCode.ESTOP, "e-stop engaged")
            self.robot.sleep(min(WAIT_POLL, remaining))

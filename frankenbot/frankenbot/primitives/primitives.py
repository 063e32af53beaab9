"""The primitives: the whitelisted robot operations a program may call (see program/catalog.py).

``Primitives`` implements the interpreter's ``PrimitiveExecutor`` port. Each primitive reads the
current scene from the robot interface, turns the object into TCP poses (top-down grasps whose yaw
follows the object's, using a block's 90-degree symmetry to turn the wrist as little as possible),
and runs them through a motion backend that checks every trajectory against the safety envelope.
Every outcome is a typed ``PrimitiveResult``; robot failures never raise.

Beliefs the primitives keep (read by monitors and predicates through ``snapshot()`` and
``facts()``): which object is held (set by a successful pick, cleared by a place or an opened
gripper) and whether each drawer is open. A cancel token set from another thread (the monitor
loop) stops the arm within one poll period and the primitive returns PREEMPTED.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from frankenbot.common import FailureCode
from frankenbot.errors import MotionError
from frankenbot.motion.backend import MotionBackend, MotionOutcome
from frankenbot.motion.kinematics import (
    UnreachableError,
    UR5eKinematics,
    front_pose,
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
from frankenbot.primitives.gripper import GripperTiming, StepFailed, move_gripper
from frankenbot.primitives.placement import Palm, occupants, spot_in_container
from frankenbot.primitives.targets import TargetPrimitives
from frankenbot.state import RobotSnapshot, SceneObject

WAIT_POLL = 0.01  # s of robot time between cancel checks in wait()
SLIP_WIDTH_CHANGE = 0.008  # m: a held object keeps the finger gap it was grasped at
STACKED_BOTTOM_Z = 0.02  # m: an object whose bottom is this high stands on another one


@dataclass(frozen=True)
class _Held:
    object_id: str
    size: tuple[float, float, float]
    grasp_offset: float  # TCP z minus the object's bottom z at the grasp
    yaw_in_gripper: float  # object yaw minus gripper yaw at the grasp


class Primitives:
    """Executes primitives by name on one robot. Thread-safe for ``snapshot()``/``facts()``."""

    def __init__(self, robot: RobotInterface, *, kinematics: UR5eKinematics,
                 backend: MotionBackend, config: PrimitiveConfig | None = None,
                 home: tuple[float, ...] = (0.0, -math.pi / 2, math.pi / 2, -math.pi / 2,
                                            -math.pi / 2, 0.0),
                 pixels: PixelResolver | None = None) -> None:
        self.robot = robot
        self.pixels = pixels  # back-projects set-of-mark pixels (None: no depth camera)
        self.kin = kinematics
        self.backend = backend
        self.config = config or PrimitiveConfig()
        self.home_joints = tuple(float(v) for v in home)
        self._beliefs_lock = threading.Lock()  # guards _held, _drawer_open, _closed_cmd
        self._held: _Held | None = None
        self._drawer_open: dict[str, bool] = {self.config.drawer.name: False}
        self._closed_cmd = False
        self._gripper_timing = GripperTiming(self.config.gripper_timeout,
                                             self.config.gripper_settle)
        self._handlers: dict[str, Callable[[Mapping[str, Value], CancelToken],
                                           PrimitiveResult]] = {
            "home": self._home, "detect": self._detect, "move_above": self._move_above,
            "pick": self._pick, "place_on": self._place_on, "place_in": self._place_in,
            "place_at": self._place_at, "push_to": self._push_to,
            "open_drawer": self._open_drawer, "close_drawer": self._close_drawer,
            "open_gripper": self._open_gripper, "close_gripper": self._close_gripper,
            "wait": self._wait,
        }
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
        """Boolean facts for predicates, e.g. ``{"drawer_open:drawer": False}``."""
        with self._beliefs_lock:
            return {f"drawer_open:{k}": v for k, v in self._drawer_open.items()}

    def drawer_is_open(self, drawer: str) -> bool:
        with self._beliefs_lock:
            return self._drawer_open.get(drawer, False)

    def forget_held(self) -> None:
        """Drop the belief that something is held (a monitor saw the grasp lost)."""
        with self._beliefs_lock:
            self._held = None

    def reset_beliefs(self) -> None:
        """Forget what is held and which drawers are open (the world was replaced: a sim
        reset, or the table rearranged by hand)."""
        with self._beliefs_lock:
            self._held = None
            self._drawer_open = {self.config.drawer.name: False}

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
            closed = self._closed_cmd
        if state is None:
            return RobotSnapshot(gripper_width=grip.width if grip else 0.0,
                                 gripper_closed_cmd=closed, held_object=held,
                                 estop=self.robot.estop_engaged(), stamp=self.robot.now())
        speed = max(abs(v) for v in state.velocities) if state.velocities else 0.0
        return RobotSnapshot(
            joint_positions=state.positions, joint_velocities=state.velocities,
            tcp_position=self.kin.tcp_position(state.positions),
            gripper_width=grip.width if grip else 0.0, gripper_closed_cmd=closed,
            held_object=held, moving=speed > 0.02, estop=self.robot.estop_engaged(),
            stamp=state.stamp, speed_scaling=self.robot.speed_scaling())

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
        start = self.robot.now()
        while self.robot.now() - start < self.config.look_timeout and not cancel.cancelled:
            scene = self.robot.scene()
            if not scene.stale and scene.stamp > start:
                return scene.get(object_id)
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
        cfg = self.config
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
        width = min(obj.size[0], obj.size[1])
        if width + 0.005 > 0.085:
            return PrimitiveResult.failure(
                FailureCode.GRASP_FAILED, f"{object_id} is {width * 1000:.0f} mm wide: too wide "
                "for the gripper")
        # The gripper's own 180-degree symmetry plus the block's 90: choose the least wrist turn.
        sym = cfg.block_symmetry if obj.shape == "block" else math.pi
        x, y, bottom, grasp_z, above_z, yaw = self._grasp_aim(obj, sym)
        self._gripper(min(0.085, width + cfg.open_margin), cancel)
        self._to_pose(top_down_pose(x, y, above_z, yaw), cancel, "pre-grasp")
        # Look before descending: the pose the pick started from may be a frame or two old (an
        # object that just fell or was nudged). Re-aim when a newer view has it elsewhere.
        seen = self._newer_view(object_id, cancel)
        if seen is not None and math.hypot(seen.position[0] - x,
                                           seen.position[1] - y) > cfg.realign_distance:
            obj = seen
            x, y, bottom, grasp_z, above_z, yaw = self._grasp_aim(obj, sym)
            self._to_pose(top_down_pose(x, y, above_z, yaw), cancel, "re-aimed pre-grasp")
        self._line(top_down_pose(x, y, grasp_z, yaw), cancel, "approach")
        closed = self._gripper(0.0, cancel)
        if closed < cfg.min_grasp_width:
            self._gripper(min(0.085, width + cfg.open_margin), cancel)
            self._line(top_down_pose(x, y, above_z, yaw), cancel, "retreat after a miss")
            return PrimitiveResult.failure(
                FailureCode.GRASP_FAILED, f"fingers closed on nothing ({closed * 1000:.1f} mm)",
                grasp_width=closed)
        with self._beliefs_lock:
            self._held = _Held(object_id, obj.size, grasp_z - bottom, wrap_angle(obj.yaw - yaw))
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

    def _grasp_aim(self, obj: SceneObject, sym: float
                   ) -> tuple[float, float, float, float, float, float]:
        """(x, y, the object's bottom z, grasp TCP z, pre-grasp TCP z, yaw) of a top-down grasp
        of ``obj`` whose yaw repeats every ``sym`` radians."""
        cfg = self.config
        x, y = obj.position[0], obj.position[1]
        bottom = obj.position[2] - obj.size[2] / 2
        # the pads keep the same clearance above whatever the object stands on as above the
        # table: a block lifted off a stack must not squeeze (and drag) the block below it
        grasp_z = max(obj.top_z - min(cfg.grasp_depth, obj.size[2] / 2), cfg.min_tcp_z)
        if bottom > STACKED_BOTTOM_Z:
            grasp_z = max(grasp_z, bottom + cfg.min_tcp_z)
        above_z = obj.top_z + cfg.approach_height
        yaw = self._best_yaw(x, y, above_z, symmetric_yaws(obj.yaw, sym))
        return x, y, bottom, grasp_z, above_z, yaw

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
                    clear_z: float, cancel: CancelToken) -> PrimitiveResult:
        """Lower the held object to rest its bottom on ``support_z``, open, retreat upwards."""
        cfg = self.config
        release_z = max(support_z + cfg.place_clearance + held.grasp_offset, cfg.min_tcp_z)
        above_z = max(clear_z, release_z) + cfg.approach_height
        self._to_pose(top_down_pose(x, y, above_z, yaw), cancel, "pre-place")
        self._line(top_down_pose(x, y, release_z, yaw), cancel, "lower")
        width = min(0.085, min(held.size[0], held.size[1]) + cfg.release_margin)
        self._gripper(width, cancel)
        # The object counts as held until the gripper has retreated: until the camera shows it
        # at its new place, a drop monitor (`not holding(x) and not in(x, c) during place_in`)
        # would otherwise take the intended release for a drop.
        try:
            self._line(top_down_pose(x, y, above_z, yaw), cancel, "retreat")
        finally:
            with self._beliefs_lock:
                self._held = None
        return PrimitiveResult.success(f"released {held.object_id}",
                                       position=(x, y, support_z))

    def _place_yaw(self, held: _Held, x: float, y: float, z: float,
                   target_yaw: float | None) -> float:
        """Gripper yaw for placing: align the held block with ``target_yaw`` if given."""
        if target_yaw is None:
            return self._best_yaw(x, y, z, symmetric_yaws(self._current_yaw(), math.pi))
        base = wrap_angle(target_yaw - held.yaw_in_gripper)
        return self._best_yaw(x, y, z, symmetric_yaws(base, self.config.block_symmetry))

    def _place_on(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        object_id = self._obj_arg(args, "obj")
        target_id = self._obj_arg(args, "target")
        if target_id == object_id:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"cannot place {object_id} on itself")
        held = self._held_or_stop(object_id)
        target = self._find(target_id)
        x, y = target.position[0], target.position[1]
        above = target.top_z + held.size[2] + self.config.approach_height
        yaw = self._place_yaw(held, x, y, above,
                              target.yaw if target.shape == "block" else None)
        return self._release_at(held, x, y, target.top_z, yaw, target.top_z + held.size[2],
                                cancel)

    def _place_in(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        cfg = self.config
        object_id = self._obj_arg(args, "obj")
        container_id = self._obj_arg(args, "container")
        held = self._held_or_stop(object_id)
        drawer = cfg.drawer
        if container_id == drawer.name:
            if not self.drawer_is_open(container_id):
                return PrimitiveResult.failure(FailureCode.BLOCKED,
                                               f"{container_id} is closed: open it first")
            cx, cy, cz = drawer.cavity_at(drawer.stroke)
            floor = cz - drawer.cavity_size[2] / 2
            top = cz + drawer.cavity_size[2] / 2
            # Into the exposed part of the open drawer, palm's narrow side towards the cabinet.
            ax, ay = drawer.pull_axis[0], drawer.pull_axis[1]
            x, y = cx + ax * cfg.drawer_place_offset, cy + ay * cfg.drawer_place_offset
            yaw = self._best_yaw(x, y, top + held.size[2] + cfg.approach_height,
                                 symmetric_yaws(math.atan2(ay, ax), math.pi))
            return self._release_at(held, x, y, floor, yaw, top, cancel)
        else:
            box = self._find(container_id)
            if box.object_id == object_id:
                return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                               f"cannot place {object_id} in itself")
            x, y = box.position[0], box.position[1]
            bottom = box.position[2] - box.size[2] / 2
            top = box.top_z
            if box.shape in ("plate", "zone"):
                floor = top  # flat: rest on its surface
            elif box.shape in ("bowl", "bin", "drawer", "unknown"):
                floor = bottom + cfg.container_floor
                inside = occupants(box, self.robot.scene().objects, exclude=(object_id,))
                spot = spot_in_container(box, floor, held.size, inside, Palm(
                    cfg.palm_half_along, cfg.palm_half_across, cfg.rim_clearance))
                # tool y (the finger axis) is (sin yaw, -cos yaw): yaw = axis + 90 degrees
                yaw = self._best_yaw(spot.x, spot.y, top + held.size[2] + cfg.approach_height,
                                     symmetric_yaws(spot.finger_axis + math.pi / 2, math.pi))
                return self._release_at(held, spot.x, spot.y, spot.support_z, yaw, top, cancel)
            else:
                return PrimitiveResult.failure(
                    FailureCode.INVALID_ARGUMENT,
                    f"{container_id} is a {box.shape}, not a container")
        yaw = self._place_yaw(held, x, y, top + held.size[2] + cfg.approach_height, None)
        return self._release_at(held, x, y, floor, yaw, top, cancel)

    def _place_at(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        object_id = self._obj_arg(args, "obj")
        x = self._num_arg(args, "x")
        y = self._num_arg(args, "y")
        held = self._held_or_stop(object_id)
        z = self.config.table_z
        yaw = self._place_yaw(held, x, y, z + held.size[2] + self.config.approach_height, None)
        return self._release_at(held, x, y, z, yaw, z, cancel)

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
        reach = 0.5 * max(obj.size[0], obj.size[1]) + 0.012 + cfg.push_standoff
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

    def _drawer_motion(self, args: Mapping[str, Value], cancel: CancelToken,
                       opening: bool) -> PrimitiveResult:
        cfg = self.config
        name = self._obj_arg(args, "drawer")
        drawer = cfg.drawer
        if name != drawer.name:
            return PrimitiveResult.failure(FailureCode.NOT_FOUND,
                                           f"no drawer named {name!r} (known: {drawer.name})")
        held = self._held_per_fingers()
        if held is not None:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"holding {held}; place it first")
        if self.drawer_is_open(name) == opening:
            return PrimitiveResult.success(f"{name} is already {'open' if opening else 'closed'}")
        start = np.array(drawer.handle_at(0.0 if opening else drawer.stroke))
        end = np.array(drawer.handle_at(drawer.stroke if opening else 0.0))
        axis = np.array(drawer.pull_axis)
        into = -axis
        pre = start + axis * cfg.handle_approach
        self._gripper(cfg.handle_open_width, cancel)
        self._to_pose(front_pose(pre, into), cancel, "in front of the handle")
        self._line(front_pose(start, into), cancel, "onto handle")
        closed = self._gripper(cfg.drawer_hold_width, cancel)
        if closed < cfg.handle_min_width:
            self._gripper(cfg.handle_open_width, cancel)
            self._line(front_pose(pre, into), cancel, "back off")
            return PrimitiveResult.failure(FailureCode.GRASP_FAILED,
                                           f"missed the {name} handle ({closed * 1000:.1f} mm)")
        verb = "pull" if opening else "push"
        outcome = self.backend.move_linear(front_pose(end, into), cancel, cfg.push_speed)
        grip = self.robot.gripper_state()
        slipped = grip is not None and grip.width < cfg.handle_min_width
        self._gripper(cfg.handle_open_width, cancel)
        here = np.array(self.kin.tcp_position(self._q()))
        self._line(front_pose(here + axis * cfg.handle_approach, into), cancel, "back off")
        if not outcome.ok:
            code = FailureCode.BLOCKED if outcome.code == FailureCode.ABORTED else outcome.code
            return PrimitiveResult.failure(code, f"{verb} {name}: {outcome.detail}")
        if slipped:  # the arm moved but the handle left the fingers: the drawer did not follow
            return PrimitiveResult.failure(
                FailureCode.BLOCKED, f"{verb} {name}: the handle slipped out of the fingers "
                f"(drawer stuck?)", grip_width=grip.width if grip else 0.0)
        with self._beliefs_lock:
            self._drawer_open[name] = opening
        here = np.array(self.kin.tcp_position(self._q()))
        self._line(front_pose(here + np.array([0.0, 0.0, cfg.approach_height]), into),
                   cancel, "rise")
        return PrimitiveResult.success(f"{name} {'opened' if opening else 'closed'}")

    def _open_drawer(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        return self._drawer_motion(args, cancel, opening=True)

    def _close_drawer(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        return self._drawer_motion(args, cancel, opening=False)

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

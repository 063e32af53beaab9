"""Anomaly injection: kinds, their class, the phases that trigger them, and their effects.

An anomaly is armed for a phase of the manipulation, detected from simulator state (never from
the brain): ``moving`` (the arm moves, whatever the task), ``before_pick`` (the open gripper
hovers just above a block), ``grasp_closing`` (the fingers are closing around a block), ``lift``
(a just-grasped block rises), ``transport`` (a held block is lifted and carried sideways),
``before_place`` (a held block descends), ``after_place`` (a block was just released),
``opening`` (a drawer is being pulled and is a third to a half open), ``after_open`` (a door
was opened and let go), or ``now``. When the phase is seen the effect is applied once and
logged with its class (frankenbot.common AnomalyClass), so the benchmark can mix predictable /
semi-predictable / unpredictable anomalies.

The catalogue (``KINDS``) has recoverable kinds in every class; the kinds that make the task
impossible (the object is gone, the container is out of reach, the camera is dead) carry
``impossible=True``: for them the correct handling is a clean stop that says why, and the
benchmark counts them apart. The engine manipulates the world through its private helpers; the
world holds its lock throughout. Effects that change the model (lights, a recoloured block) are
undone by ``reset``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from frankenbot.common import AnomalyClass
from frankenbot.errors import SimError
from frankenbot.sim import layout

if TYPE_CHECKING:  # pragma: no cover
    from frankenbot.sim.world import SimWorld

_logger = logging.getLogger(__name__)

PHASES: tuple[str, ...] = ("now", "moving", "before_pick", "grasp_closing", "lift", "transport",
                           "before_place", "after_place", "opening", "after_open")
# containers and plates are not what a pick phase watches (a gripper retreating open above a
# bowl it just filled is not about to pick the bowl)
_NOT_PICKED = ("bowl", "plate", "bin", "basket", "tray")
_FIXTURE_KINDS = ("drawer_sticks_half", "door_swings_back")  # act on a fixture part


@dataclass(frozen=True)
class KindSpec:
    anomaly_class: AnomalyClass
    default_phase: str
    description: str
    impossible: bool = False  # no correct handling but a clean stop that says why

    @property
    def catalogue_class(self) -> str:
        """predictable | semi_predictable | unpredictable | impossible (the benchmark's split:
        impossible kinds are unpredictable ones that no repair can undo)."""
        return "impossible" if self.impossible else self.anomaly_class.value


KINDS: dict[str, KindSpec] = {
    "drop_in_transport": KindSpec(AnomalyClass.PREDICTABLE, "transport",
                                  "the fingers slip open for a moment and the block falls"),
    "nudge_before_grasp": KindSpec(AnomalyClass.PREDICTABLE, "grasp_closing",
                                   "the block is pushed a few cm as the fingers close"),
    "displace_before_pick": KindSpec(AnomalyClass.PREDICTABLE, "before_pick",
                                     "the block moves to another free spot before the pick"),
    "abort_trajectory": KindSpec(AnomalyClass.PREDICTABLE, "transport",
                                 "the controller aborts the running trajectory"),
    "grasp_slip": KindSpec(AnomalyClass.PREDICTABLE, "lift",
                           "the block slips out of the fingers as it is lifted"),
    "camera_blip": KindSpec(AnomalyClass.PREDICTABLE, "transport",
                            "camera frames stop briefly (params: duration s, default 1.0)"),
    "occupy_target": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "before_place",
                              "another block appears on the place target"),
    "topple_stack": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "after_place",
                             "the top block of a stack is knocked off"),
    "drawer_stuck": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "now",
                             "the drawer does not slide for a while (params: duration s)"),
    "rotate_object": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "before_pick",
                              "the block is turned by 30-50 degrees and shifted a little"),
    "lighting_change": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "now",
                                "the lights dim suddenly to 40-60% (params: factor)"),
    "move_container": KindSpec(AnomalyClass.UNPREDICTABLE, "transport",
                               "the target container is moved to another reachable place"),
    "block_on_target": KindSpec(AnomalyClass.UNPREDICTABLE, "before_place",
                                "a block is put on top of the object being placed on"),
    # Recoverable in principle (open the drawer, take the block out), but this cell's fixed
    # camera cannot see into the open drawer (its side wall hides the inside), so here the
    # correct handling is the search (open the drawer) and then a clean stop: impossible here.
    "shut_in_drawer": KindSpec(AnomalyClass.UNPREDICTABLE, "before_pick",
                               "the block to pick is put in the drawer and the drawer shut",
                               impossible=True),
    "obstacle_on_path": KindSpec(AnomalyClass.UNPREDICTABLE, "now",
                                 "a spare block is put halfway between the object and its "
                                 "destination"),
    "swap_object": KindSpec(AnomalyClass.UNPREDICTABLE, "before_pick",
                            "the block is swapped for another one of the same colour elsewhere"),
    "remove_object": KindSpec(AnomalyClass.UNPREDICTABLE, "before_pick",
                              "the target object disappears from the table", impossible=True),
    "move_container_away": KindSpec(AnomalyClass.UNPREDICTABLE, "transport",
                                    "the target container is moved out of reach",
                                    impossible=True),
    "camera_dead": KindSpec(AnomalyClass.UNPREDICTABLE, "transport",
                            "the camera stops for good", impossible=True),
    "camera_freeze": KindSpec(AnomalyClass.UNPREDICTABLE, "now",
                              "camera frames stop (params: duration s, default until reset)",
                              impossible=True),
    # the fixtures-and-everyday-objects world
    "drawer_sticks_half": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "opening",
                                   "a drawer being pulled sticks a third to half open for a "
                                   "while (params: duration s, default 3)"),
    "door_swings_back": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "after_open",
                                 "an opened door swings most of the way shut once let go"),
    "object_rolls": KindSpec(AnomalyClass.SEMI_PREDICTABLE, "after_place",
                             "a round object (ball, apple, lemon) rolls away 10-25 cm once let "
                             "go, or now (params: object)"),
}


@dataclass(frozen=True)
class InjectedAnomaly:
    """One log line: an anomaly armed, fired (applied) or skipped."""

    time: float
    kind: str
    phase: str
    anomaly_class: AnomalyClass
    event: str  # armed | fired | skipped
    target: str = ""
    detail: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Armed:
    kind: str
    phase: str
    params: dict[str, Any]


class AnomalyEngine:
    """Holds armed anomalies, detects their phases, applies effects, keeps the log."""

    def __init__(self) -> None:
        self._armed: list[_Armed] = []
        self._log: list[InjectedAnomaly] = []
        self._prev_held: set[str] = set()
        self._prev_tcp: np.ndarray | None = None
        self._released: dict[str, float] = {}
        self._saved_model: dict[str, np.ndarray] = {}
        self._saved_headlight: tuple[np.ndarray, np.ndarray] | None = None
        self._rng = np.random.default_rng(0)

    def reset(self, world: "SimWorld | None" = None) -> None:
        """Forget armed anomalies; with ``world``, undo the model changes effects made."""
        self._armed.clear()
        self._prev_held = set()
        self._prev_tcp = None
        self._released = {}
        if world is not None:
            for attr, saved in self._saved_model.items():
                getattr(world.model, attr)[:] = saved
            if self._saved_headlight is not None:
                world.model.vis.headlight.ambient[:] = self._saved_headlight[0]
                world.model.vis.headlight.diffuse[:] = self._saved_headlight[1]
        self._saved_model = {}
        self._saved_headlight = None

    def save_model_field(self, world: "SimWorld", attr: str) -> np.ndarray:
        """The model array ``attr`` (e.g. ``light_diffuse``), saved once for ``reset``."""
        arr = getattr(world.model, attr)
        self._saved_model.setdefault(attr, arr.copy())
        return arr

    def log(self) -> list[InjectedAnomaly]:
        return list(self._log)

    # ------------------------------------------------------------------ arming
    def arm(self, world: "SimWorld", kind: str, phase: str, params: dict[str, Any]
            ) -> AnomalyClass:
        if kind not in KINDS:
            raise SimError(f"unknown anomaly kind {kind!r}; valid: {', '.join(KINDS)}")
        spec = KINDS[kind]
        phase = phase or spec.default_phase
        if phase not in PHASES:
            raise SimError(f"unknown phase {phase!r}; valid: {', '.join(PHASES)}")
        for key in ("duration", "distance", "factor"):
            if key in params:
                try:
                    value = float(params[key])
                except (TypeError, ValueError) as e:
                    raise SimError(f"anomaly parameter {key} must be a number, got "
                                   f"{params[key]!r}") from e
                if not math.isfinite(value) or value < 0:
                    raise SimError(f"anomaly parameter {key} must be finite and >= 0, got "
                                   f"{value}")
        for key in ("object", "target"):
            if key in params and params[key] not in layout.OBJECT_BY_NAME and params[key] not in (
                    "drawer", "zone") and params[key] not in world.fixture_states():
                raise SimError(f"anomaly parameter {key}: unknown object {params[key]!r}")
        self._rng = np.random.default_rng([len(self._log), int(world.time * 1000)])
        self._log.append(InjectedAnomaly(world.time, kind, phase, spec.anomaly_class, "armed",
                                       params=dict(params)))
        armed = _Armed(kind, phase, dict(params))
        if phase == "now":
            target = (str(params.get("target") or world.task.params.get("target") or "")
                      if kind in _FIXTURE_KINDS else self._default_object(world, params))
            self._fire(world, armed, target)
        else:
            self._armed.append(armed)
        return spec.anomaly_class

    # ------------------------------------------------------------------ phase detection
    def poll(self, world: "SimWorld") -> None:
        """Called every few physics steps (under the world's lock)."""
        if not self._armed:  # nothing to detect: keep the physics loop cheap
            self._prev_tcp = None
            self._prev_held = set()
            return
        tcp = world.data.site_xpos[world._tcp_site].copy()
        dt = world.timestep * 10
        vel = np.zeros(3) if self._prev_tcp is None else (tcp - self._prev_tcp) / dt
        self._prev_tcp = tcp
        held = world._held()
        for name in self._prev_held - held:
            self._released[name] = world.time
        self._prev_held = held
        for armed in list(self._armed):
            target = self._detect(world, armed, tcp, vel, held)
            if target is not None:
                self._armed.remove(armed)
                self._fire(world, armed, target)

    def _detect(self, world: "SimWorld", armed: _Armed, tcp: np.ndarray, vel: np.ndarray,
                held: set[str]) -> str | None:
        if armed.phase == "moving":
            return self._default_object(world, armed.params) if float(
                np.linalg.norm(vel)) > 0.05 else None
        if armed.phase in ("opening", "after_open"):
            return _fixture_phase(world, armed, tcp)
        want = armed.params.get("object")
        blocks = [n for n in world._active if layout.OBJECT_BY_NAME[n].shape not in _NOT_PICKED
                  and (want is None or n == want)]
        cmd_closed = world._gripper_cmd >= 0.4
        width = world.gripper_width()
        if armed.phase == "before_pick":
            if cmd_closed or width < 0.06:
                return None
            for n in blocks:
                p = world._object_position(n)
                if math.hypot(*(tcp[:2] - p[:2])) < 0.03 and 0.02 < tcp[2] - p[2] < 0.12:
                    return n
        elif armed.phase == "grasp_closing":
            if not cmd_closed:
                return None
            for n in blocks:
                p = world._object_position(n)
                size = min(layout.OBJECT_BY_NAME[n].size[:2])
                if n not in held and width > size + 0.003 and np.linalg.norm(tcp - p) < 0.03:
                    return n
        elif armed.phase in ("lift", "transport", "before_place"):
            for n in blocks:
                if n not in held:
                    continue
                lifted = world._object_position(n)[2] - layout.OBJECT_BY_NAME[n].size[2] / 2
                moving = float(np.linalg.norm(vel[:2]))  # carried sideways, not just lifted
                # high enough that the block falls clear of the pads (they reach 22.5 mm
                # below the TCP) and the fingers close on nothing, not on the block again
                if armed.phase == "lift" and 0.03 < lifted < 0.08 and vel[2] > 0.02:
                    return n
                if armed.phase == "transport" and lifted > 0.03 and moving > 0.05:
                    return n
                if armed.phase == "before_place" and vel[2] < -0.02 and lifted > 0.01:
                    return n
        elif armed.phase == "after_place":
            for n in blocks:
                t = self._released.get(n)
                if t is not None and world.time - t > 0.2 and not cmd_closed:
                    self._released.pop(n)
                    return n
        return None

    # ------------------------------------------------------------------ effects
    def _default_object(self, world: "SimWorld", params: dict[str, Any]) -> str:
        name = params.get("object") or world.task.params.get("object")
        if name is None:
            for candidates in (world.task.params.get("order"), world.task.params.get("objects")):
                if candidates:
                    name = list(candidates)[0]  # type: ignore[call-overload]
                    break
        if name is None:
            blocks = [n for n in world._active if layout.OBJECT_BY_NAME[n].shape == "block"]
            name = blocks[0] if blocks else ""
        return str(name)

    def _fire(self, world: "SimWorld", armed: _Armed, target: str) -> None:
        effect = _EFFECTS[armed.kind]
        try:
            detail = effect(self, world, armed.params, target)
            event = "fired"
        except SimError as e:
            if armed.phase == "now":
                self._log.append(InjectedAnomaly(world.time, armed.kind, armed.phase,
                                               KINDS[armed.kind].anomaly_class, "skipped",
                                               target, str(e), armed.params))
                raise
            detail, event = str(e), "skipped"
        self._log.append(InjectedAnomaly(world.time, armed.kind, armed.phase,
                                       KINDS[armed.kind].anomaly_class, event, target, detail,
                                       dict(armed.params)))
        _logger.info("anomaly %s %s at %.3f s (phase %s): %s", armed.kind, event, world.time,
                     armed.phase, detail)

    def _free_spot(self, world: "SimWorld", name: str, avoid: np.ndarray,
                   min_move: float, ignore: tuple[str, ...] | list[str] = ()
                   ) -> tuple[float, float]:
        r = layout.OBJECT_BY_NAME[name].radius
        others = [(world._object_position(n), layout.OBJECT_BY_NAME[n].radius)
                  for n in world._active if n != name and n not in ignore]
        for _ in range(300):
            x = float(self._rng.uniform(layout.SPAWN_X[0] + r, layout.SPAWN_X[1] - r))
            y = float(self._rng.uniform(layout.SPAWN_Y[0] + r, layout.SPAWN_Y[1] - r))
            if math.hypot(x - avoid[0], y - avoid[1]) < min_move:
                continue
            if all(math.hypot(x - p[0], y - p[1]) > r + pr + 0.02 for p, pr in others):
                return x, y
        raise SimError(f"no free spot to move {name} to")


def _need(world: "SimWorld", name: str) -> np.ndarray:
    if not name or name not in world._active:
        raise SimError(f"object {name!r} is not on the table")
    return world._object_position(name)


def _drop(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    duration = float(params.get("duration", 0.4))
    world._gripper_open_until = world.time + duration
    return f"fingers forced open for {duration:.2f} s while holding {target}"


def _nudge(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    p = _need(world, target)
    dist = float(params.get("distance", 0.035))
    a = float(eng._rng.uniform(0, 2 * math.pi))
    world._set_pose(target, (p[0] + dist * math.cos(a), p[1] + dist * math.sin(a), p[2]), a)
    return f"{target} nudged {dist:.3f} m"


def _displace(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    p = _need(world, target)
    x, y = eng._free_spot(world, target, p, float(params.get("distance", 0.10)))
    world._set_pose(target, (x, y, p[2]), float(eng._rng.uniform(-0.7, 0.7)))
    return f"{target} moved from ({p[0]:.3f}, {p[1]:.3f}) to ({x:.3f}, {y:.3f})"


def _abort(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    world._abort_trajectory("controller aborted the trajectory (injected anomaly)")
    return "trajectory aborted"


def _place_target(world: "SimWorld", params: dict[str, Any]) -> str:
    tp = world.task.params
    return str(params.get("target") or tp.get("resolved_target") or tp.get("target") or "")


def _occupy(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    dest = _place_target(world, params)
    if dest == "zone":
        x, y = layout.ZONE.centre
        z = layout.BLOCK_SIZE / 2 + 0.001
    else:
        p = _need(world, dest)
        spec = layout.OBJECT_BY_NAME[dest]
        x, y = float(p[0]), float(p[1])
        bottom = p[2] - spec.size[2] / 2
        z = (bottom + 0.008 if spec.shape in ("bowl", "bin") else bottom + spec.size[2]) + (
            layout.BLOCK_SIZE / 2 + 0.001)
    free = [f"{c}_block" for c in layout.BLOCK_COLOURS if f"{c}_block" not in world._active]
    if not free:
        raise SimError("no spare block left to occupy the target with")
    world._activate(free[0])
    world._set_pose(free[0], (x, y, z), 0.0)
    return f"{free[0]} put on {dest}"


def _topple(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    blocks = [n for n in world._active if layout.OBJECT_BY_NAME[n].shape == "block"]
    tops = []
    for a in blocks:
        pa = world._object_position(a)
        for b in blocks:
            pb = world._object_position(b)
            if a != b and math.hypot(*(pa[:2] - pb[:2])) < 0.03 and 0.03 < pa[2] - pb[2] < 0.05:
                tops.append((pa[2], a))
    if not tops:
        raise SimError("no stacked block to topple")
    _, top = max(tops)
    p = world._object_position(top)
    a = float(eng._rng.uniform(0, 2 * math.pi))
    world._set_pose(top, (p[0] + 0.06 * math.cos(a), p[1] + 0.06 * math.sin(a),
                          layout.BLOCK_SIZE / 2 + 0.002), a)
    return f"{top} knocked off the stack"


def _stuck(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    duration = float(params.get("duration", 5.0))
    world.stick_part("drawer", duration)  # a hard stop where it is now
    return f"drawer stuck for {duration:.1f} s"


def _remove(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    _need(world, target)
    world._park(target)
    return f"{target} removed from the table"


def _move_away(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any],
               target: str) -> str:
    dest = _place_target(world, params)
    if not dest or dest not in world._active or layout.OBJECT_BY_NAME[dest].shape not in (
            "bowl", "plate", "bin"):
        raise SimError(f"no movable container to move away (target {dest!r})")
    p = world._object_position(dest)
    x, y = layout.OUT_OF_REACH
    world._set_pose(dest, (x, y, p[2] + 0.002), 0.0)
    return f"{dest} moved out of reach to ({x:.2f}, {y:.2f})"


def _freeze(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    duration = float(params.get("duration", math.inf))
    world._camera_frozen_until = world.time + duration
    return "camera frames stopped" + ("" if math.isinf(duration) else f" for {duration:.1f} s")


def _slip(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    duration = float(params.get("duration", 0.6))
    world._gripper_open_until = world.time + duration
    return f"{target} slipped: fingers opened for {duration:.2f} s during the lift"


def _rotate(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    p = _need(world, target)
    turn = float(eng._rng.uniform(0.52, 0.87)) * float(eng._rng.choice([-1.0, 1.0]))
    q = world.data.xquat[world._bodies[target]]
    yaw = math.atan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] ** 2 + q[3] ** 2)) + turn
    a = float(eng._rng.uniform(0, 2 * math.pi))
    world._set_pose(target, (p[0] + 0.01 * math.cos(a), p[1] + 0.01 * math.sin(a), p[2]), yaw)
    return f"{target} turned by {math.degrees(turn):.0f} deg"


def _lighting(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any],
              target: str) -> str:
    # dimming by default: brightening saturates the camera (orange clips towards yellow), which
    # no exposure compensation can undo; pass factor > 1 to test that
    factor = float(params.get("factor", eng._rng.uniform(0.4, 0.6)))
    diffuse = eng.save_model_field(world, "light_diffuse")
    diffuse[:] = np.clip(diffuse * factor, 0.0, 1.0)
    head = world.model.vis.headlight
    eng._saved_headlight = eng._saved_headlight or (np.array(head.ambient, dtype=float),
                                                    np.array(head.diffuse, dtype=float))
    head.ambient[:] = np.clip(eng._saved_headlight[0] * factor, 0.0, 1.0)
    head.diffuse[:] = np.clip(eng._saved_headlight[1] * factor, 0.0, 1.0)
    return f"lights scaled by {factor:.2f}"


def _movable_container(world: "SimWorld", params: dict[str, Any]) -> str:
    dest = _place_target(world, params)
    if not dest or dest not in world._active or layout.OBJECT_BY_NAME[dest].shape not in (
            "bowl", "plate", "bin"):
        raise SimError(f"no movable container to move (target {dest!r})")
    return dest


def _move_container(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any],
                    target: str) -> str:
    dest = _movable_container(world, params)
    p = world._object_position(dest)
    held = world._held()
    avoid = [n for n in world._active if n in held]
    x, y = eng._free_spot(world, dest, p, float(params.get("distance", 0.12)), ignore=avoid)
    world._set_pose(dest, (x, y, p[2] + 0.002), 0.0)
    return f"{dest} moved from ({p[0]:.3f}, {p[1]:.3f}) to ({x:.3f}, {y:.3f})"


def _spare_block(world: "SimWorld") -> str:
    free = [f"{c}_block" for c in layout.BLOCK_COLOURS if f"{c}_block" not in world._active]
    if not free:
        raise SimError("no spare block left")
    return free[0]


def _base_below(world: "SimWorld", held_block: str) -> str:
    """The object a descending held block is about to be placed on (nearest below in xy)."""
    p = world._object_position(held_block)
    best, best_d = "", 0.05
    for n in world._active:
        if n == held_block:
            continue
        q = world._object_position(n)
        d = math.hypot(p[0] - q[0], p[1] - q[1])
        if d < best_d and q[2] < p[2]:
            best, best_d = n, d
    if not best:
        raise SimError(f"nothing below {held_block} to put a block on")
    return best


def _block_on_target(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any],
                     target: str) -> str:
    base = str(params.get("target") or _base_below(world, target))
    p = _need(world, base)
    spec = layout.OBJECT_BY_NAME[base]
    top = p[2] - spec.size[2] / 2 + (0.008 if spec.shape in ("bowl", "bin") else spec.size[2])
    spare = _spare_block(world)
    world._activate(spare)
    world._set_pose(spare, (float(p[0]), float(p[1]), top + layout.BLOCK_SIZE / 2 + 0.001), 0.0)
    return f"{spare} put on top of {base}"


def _shut_in_drawer(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any],
                    target: str) -> str:
    _need(world, target)
    d = layout.DRAWER
    world.data.qpos[world._drawer_qadr] = 0.0
    world.data.qvel[world._drawer_dof] = 0.0
    cx, cy, _ = d.cavity_centre(0.0)
    bottom = 2 * d.wall
    world._set_pose(target, (cx, cy, bottom + layout.BLOCK_SIZE / 2 + 0.002), 0.0)
    return f"{target} put in the drawer and the drawer shut"


def _obstacle(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    p = _need(world, target)
    dest = _place_target(world, params)
    if dest == "zone":
        goal = np.array([*layout.ZONE.centre, 0.0])
    elif dest == "drawer":
        goal = np.array(layout.DRAWER.handle_position(0.0))
    else:
        goal = _need(world, dest)
    spare = _spare_block(world)
    r = layout.OBJECT_BY_NAME[spare].radius
    others = [(world._object_position(n), layout.OBJECT_BY_NAME[n].radius)
              for n in world._active]
    for frac in (0.5, 0.4, 0.6, 0.3, 0.7):
        x, y = (p[:2] + frac * (goal[:2] - p[:2])).tolist()
        if all(math.hypot(x - q[0], y - q[1]) > r + qr + 0.01 for q, qr in others):
            world._activate(spare)
            world._set_pose(spare, (x, y, layout.BLOCK_SIZE / 2 + 0.001), 0.3)
            return f"{spare} put on the path of {target} at ({x:.3f}, {y:.3f})"
    raise SimError(f"no free spot on the path of {target}")


def _swap(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    p = _need(world, target)
    spare = _spare_block(world)
    rgba = eng.save_model_field(world, "geom_rgba")
    colour = np.array(layout.OBJECT_BY_NAME[target].rgba)
    rgba[world._obj_geoms[spare]] = colour
    world._activate(spare)
    x, y = eng._free_spot(world, spare, p, float(params.get("distance", 0.10)))
    world._park(target)
    world._set_pose(spare, (x, y, p[2]), float(eng._rng.uniform(-0.7, 0.7)))
    world._substitute(target, spare)
    return f"{target} swapped for {spare} (painted {layout.OBJECT_BY_NAME[target].colour}) " \
           f"at ({x:.3f}, {y:.3f})"


def _fixture_phase(world: "SimWorld", armed: _Armed, tcp: np.ndarray) -> str | None:
    """The part (a drawer being pulled, a door let go open) the fixture phases watch."""
    want = armed.params.get("target")
    fmap = world._fixture_map
    for pid, value in world.fixture_states().items():
        part = fmap.part(pid)
        if part is None or (want and pid != want) or part.handle is None:
            continue
        share = value / part.travel if part.travel else 0.0
        gap = float(np.linalg.norm(tcp - np.asarray(part.handle_at(value))))
        if armed.phase == "opening" and part.kind == "drawer" and 0.33 <= share <= 0.5 and (
                gap < 0.04):
            return pid
        if armed.phase == "after_open" and part.kind in ("hinged_door", "sliding_door") and (
                share >= 0.6 and gap > 0.10):
            return pid
    return None


def _sticks_half(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any],
                 target: str) -> str:
    duration = float(params.get("duration", 3.0))
    world.stick_part(target, duration)
    return f"{target} stuck at {world.fixture_states()[target]:.3f} for {duration:.1f} s"


def _swings_back(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any],
                 target: str) -> str:
    part = world._fixture_map.part(target)
    value = float(eng._rng.uniform(0.05, 0.2)) * (part.travel if part is not None else 1.0)
    world.set_fixture_state(target, value)
    return f"{target} swung back to {value:.3f}"


def _rolls(eng: AnomalyEngine, world: "SimWorld", params: dict[str, Any], target: str) -> str:
    p = _need(world, target)
    if layout.OBJECT_BY_NAME[target].shape not in ("ball", "apple", "lemon"):
        raise SimError(f"{target} does not roll")
    dist = float(eng._rng.uniform(0.10, 0.25))
    # a direction that keeps it on the table and in the spawn region (a ball gone off the
    # table is an object removed, another anomaly)
    centre = np.array([(layout.SPAWN_X[0] + layout.SPAWN_X[1]) / 2,
                       (layout.SPAWN_Y[0] + layout.SPAWN_Y[1]) / 2])
    to_c = centre - p[:2]
    a = math.atan2(to_c[1], to_c[0]) + float(eng._rng.uniform(-0.8, 0.8))
    r = layout.OBJECT_BY_NAME[target].size[2] / 2
    v = world._obj_vadr[target]
    # rolling without slipping (v = w r); rolling friction mu_r decelerates a solid sphere at
    # about 5/7 g mu_r / r, so it stops after about the distance drawn
    from frankenbot.sim.objects import ROLLING_FRICTION

    speed = math.sqrt(2 * 5 / 7 * 9.81 * ROLLING_FRICTION / r * dist)
    world.data.qvel[v:v + 3] = (speed * math.cos(a), speed * math.sin(a), 0.0)
    world.data.qvel[v + 3:v + 6] = (-speed / r * math.sin(a), speed / r * math.cos(a), 0.0)
    return f"{target} set rolling at {speed:.2f} m/s towards {math.degrees(a):.0f} deg"


_EFFECTS: dict[str, Callable[[AnomalyEngine, "SimWorld", dict[str, Any], str], str]] = {
    "drop_in_transport": _drop, "nudge_before_grasp": _nudge,
    "displace_before_pick": _displace, "abort_trajectory": _abort, "occupy_target": _occupy,
    "topple_stack": _topple, "drawer_stuck": _stuck, "remove_object": _remove,
    "move_container_away": _move_away, "camera_freeze": _freeze, "grasp_slip": _slip,
    "camera_blip": lambda e, w, p, t: _freeze(e, w, {"duration": 1.0, **p}, t),
    "camera_dead": lambda e, w, p, t: _freeze(e, w, {"duration": math.inf}, t),
    "rotate_object": _rotate, "lighting_change": _lighting, "move_container": _move_container,
    "block_on_target": _block_on_target, "shut_in_drawer": _shut_in_drawer,
    "obstacle_on_path": _obstacle, "swap_object": _swap,
    "drawer_sticks_half": _sticks_half, "door_swings_back": _swings_back,
    "object_rolls": _rolls,
}

"""The offline tier-3 replanner: a new program from the current perceived scene and the failure.

The plain offline planner re-plans the instruction from the scene it sees now, which already
follows a container that was moved, a block that was swapped or a stack that fell. What it cannot
do alone is undo what stands in the way, or say clearly that nothing can be done. This module
adds both, from the failure context the executor sends (the same text a VLM gets):

* a target that is occupied (a block put on the plate or on the block to stack on): put down
  what the hand holds, move the occupier to a free spot on the table, then the task's own plan;
* the task is impossible: the camera sends no more images, an object the task needs is gone
  (after the drawer was searched by tier 2), or an object the plan must reach is outside the
  arm's reach. An object that went missing is the one the person meant when they spoke: a
  re-plan that would pick another object instead (the next "block nearest to you" once the
  nearest one is gone) changes what was asked, so it stops instead; another object of the same
  colour and kind may stand in (a block swapped for one like it). Then there is no program,
  and the message says why ("the green bowl is no longer reachable: ..."), so the escalation
  ends in a clean stop with that reason.

Pure logic over the perceived scene: it never reads simulator ground truth. Deterministic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from frankenbot import shapes, spatial
from frankenbot.errors import PlannerError
from frankenbot.planner.offline import plan_offline
from frankenbot.planner.request import FailureContext
from frankenbot.state import Scene, SceneObject

# Where a cleared object may be put down: the table in front of the robot, inside the reach.
FREE_X = (0.28, 0.66)
FREE_Y = (-0.32, 0.24)
FREE_STEP = 0.02  # m between grid points searched for a free spot
FREE_CLEARANCE = 0.09  # m from a free spot's centre to any other object's centre, at least
PLACE_HEIGHT = 0.10  # m above an object where the top-down reach check is made
OBJECT_ARGS = ("obj", "target", "container", "drawer")


class RecoveryImpossible(PlannerError):
    """The task cannot be finished from here; the message says why."""


@dataclass(frozen=True)
class Failure:
    """The failure context in structured form (parsed from the text when not given)."""

    kind: str = ""
    objects: tuple[str, ...] = ()
    held_object: str | None = None
    failed_call: str = ""
    detail: str = ""


_PROBLEM = re.compile(r"^Problem: (?P<kind>[a-z ]+?) - (?P<detail>.*)$", re.M)
_HOLDING = re.compile(r"^Holding: (?P<held>\S+)", re.M)
_CONCERNS = re.compile(r"^Concerns: (?P<objs>.+)$", re.M)
_STEP_CALL = re.compile(r"^Step: .*\[(?P<call>[a-z_]+\(.*\))\]$", re.M)


def failure_of(context: FailureContext) -> Failure:
    """Structured fields when the caller gave them (in-process), else parsed from the text the
    executor node sends over ``/frankenbot/replan`` (``Situation.prompt_lines``)."""
    text = context.failure
    m = _PROBLEM.search(text)
    detail = m.group("detail").strip() if m else ""
    if context.kind:
        return Failure(context.kind, tuple(context.objects), context.held_object,
                       context.failed_call, detail)
    kind = m.group("kind").strip().replace(" ", "_") if m else ""
    held = _HOLDING.search(text)
    held_obj = held.group("held") if held and held.group("held") != "nothing" else None
    concerns = _CONCERNS.search(text)
    objects = tuple(o.strip() for o in concerns.group("objs").split(",")) if concerns else ()
    step = _STEP_CALL.search(text)
    return Failure(kind, objects, held_obj, step.group("call") if step else "", detail)


def plan_recovery(instruction: str, scene: Scene, context: FailureContext) -> tuple[str, str]:
    """(program text, what the recovery does). Raises RecoveryImpossible with the reason when the
    task cannot be finished, or the offline planner's PlannerError for an unknown instruction."""
    failure = failure_of(context)
    if scene.stale:
        raise RecoveryImpossible("the camera has stopped sending images, so the scene cannot be "
                                 "seen; stopping with the arm held")
    try:
        text = plan_offline(instruction, scene)
    except PlannerError as e:
        raise RecoveryImpossible(f"{_missing_reason(failure, scene)}: {e}") from e
    if failure.kind == "object_missing":
        _keep_referents(failure, scene, text, context.program)
    far = [o for o in _referenced(text, scene) if not o.is_fixture and not _reachable(o)]
    if far:
        o = far[0]
        dist = math.hypot(o.position[0], o.position[1])
        raise RecoveryImpossible(
            f"the {o.label or o.object_id} is no longer reachable: it is at ({o.position[0]:.2f}, "
            f"{o.position[1]:.2f}) m, {dist:.2f} m from the base, where no top-down grasp pose "
            "exists")
    occupier = _occupier(failure, scene)
    held = failure.held_object if failure.held_object and scene.get(
        failure.held_object) is not None else None
    if occupier is None:
        if held is None or _first_pick(text) in (held, None):
            return text, "re-planned the instruction from the current scene"
        x, y = free_spot(scene, [])  # the hand holds something the new plan does not start with
        return (_prepend(text, [f"place_at(obj={held}, x={x:.3f}, y={y:.3f})"]),
                f"puts {held} down at ({x:.2f}, {y:.2f}), then re-plans the instruction")
    pre: list[str] = []
    taken = _push_lane(failure, scene)  # cleared out of a push's way: not back into it
    if held is not None:
        x, y = free_spot(scene, taken)
        taken.append((x, y))
        pre.append(f"place_at(obj={held}, x={x:.3f}, y={y:.3f})")
    x, y = free_spot(scene, taken)
    pre += [f"pick(obj={occupier.object_id})",
            f"place_at(obj={occupier.object_id}, x={x:.3f}, y={y:.3f})"]
    return (_prepend(text, pre),
            f"clears {occupier.object_id} off the target to ({x:.2f}, {y:.2f}) first, then "
            "re-plans the instruction")


def _first_pick(text: str) -> str | None:
    m = re.search(r"\bpick\(obj=(\w+)\)", text)
    return m.group(1) if m else None


def _missing_reason(failure: Failure, scene: Scene) -> str:
    gone = [o for o in failure.objects + _call_objects(failure.failed_call)
            if scene.get(o) is None]
    if gone:
        where = " (nor in the drawer)" if scene.get("drawer") is not None else ""
        return f"the {gone[0].replace('_', ' ')} is no longer on the table{where}"
    return "the task no longer matches the scene"


def _kind_of(object_id: str) -> str:
    """``red_block_2`` -> ``red_block``: what an id says the object looks like."""
    return re.sub(r"_\d+$", "", object_id)


def _object_ids(text: str) -> list[str]:
    """Ids a program's calls name as object arguments, in order, once each."""
    return list(dict.fromkeys(m.group(2) for m in re.finditer(
        r"\b(" + "|".join(OBJECT_ARGS) + r")=(\w+)", text)))


def _keep_referents(failure: Failure, scene: Scene, text: str, old_program: str) -> None:
    """Refuse a re-plan that moves an object the old program never named, unlike every missing
    object, in their place (the task's referent changed). A re-plan that only drops the missing
    object (clear the table of the blocks still there) or moves one like it stands."""
    gone = [o for o in dict.fromkeys(failure.objects + _call_objects(failure.failed_call))
            if scene.get(o) is None]
    if not gone:
        return
    before = set(_object_ids(old_program))
    newcomers = {_kind_of(i) for i in set(_object_ids(text)) - before
                 if (o := scene.get(i)) is not None and not o.is_fixture}
    if newcomers and not newcomers & {_kind_of(g) for g in gone}:
        raise RecoveryImpossible(f"{_missing_reason(failure, scene)}; the instruction meant "
                                 "that object, so no other one is moved in its place")


def _call_objects(call: str) -> tuple[str, ...]:
    return tuple(m.group(2) for m in re.finditer(r"\b(obj|target|container)=(\w+)", call))


def _referenced(text: str, scene: Scene) -> list[SceneObject]:
    """Scene objects the program's calls name (object arguments only)."""
    return [o for o in (scene.get(i) for i in _object_ids(text)) if o is not None]


def _reachable(o: SceneObject) -> bool:
    """A top-down TCP pose above the object has an IK solution (the arm can get there)."""
    from frankenbot.motion.kinematics import UR5eKinematics, top_down_pose

    z = o.position[2] + o.size[2] / 2 + PLACE_HEIGHT
    kin = _kinematics(UR5eKinematics)
    return any(len(kin.ik_all(top_down_pose(o.position[0], o.position[1], z, yaw))) > 0
               for yaw in (0.0, math.pi / 2))


_KIN: list[object] = []


def _kinematics(factory: type) -> Any:
    if not _KIN:
        _KIN.append(factory())
    return _KIN[0]


def _occupier(failure: Failure, scene: Scene) -> SceneObject | None:
    """What sits on the place target, or stands where every grasp of the object to pick would
    hit it, for a target-occupied failure (None otherwise)."""
    if failure.kind != "target_occupied":
        return None
    # a pick names what its grasps would hit; a place beside a reference what stands on
    # its first choice of spot: graspable things, moved out of the way
    moved_aside = (failure.failed_call.startswith("pick(")
                   or _placed_beside(failure) is not None)
    for oid in failure.objects[1:]:  # the monitor reports (target, occupier), a pick
        o = scene.get(oid)          # (object, what its grasps would hit)
        if o is not None and not o.is_fixture and (
                o.shape in ("block", "unknown") or _pushed_past(failure, o)
                or (moved_aside and o.shape in shapes.GRASPABLE)):
            return o
    target = scene.get(failure.objects[0]) if failure.objects else None
    if target is None:
        return None
    for o in sorted(scene.objects, key=lambda s: s.object_id):
        if o.object_id in (target.object_id, failure.held_object) or o.is_fixture:
            continue
        half = max(target.size[0], target.size[1]) / 2 + 0.01
        if o.xy_distance(target) < half and o.position[2] > target.position[2]:
            return o
    return None


def _placed_beside(failure: Failure) -> re.Match[str] | None:
    """The failed call when it was a place beside a reference (``place_<relation>``)."""
    return re.match(rf"place_({'|'.join(spatial.DIRECTIONS)})\(obj=(\w+), ref=(\w+)",
                    failure.failed_call)


def _push(failure: Failure) -> re.Match[str] | None:
    """The failed call when it was a push beside a reference (``push_<relation>``)."""
    return re.match(r"push_\w+\(obj=(\w+), ref=(\w+)\)", failure.failed_call)


def _pushed_past(failure: Failure, o: SceneObject) -> bool:
    """Is ``o`` a graspable thing a push failed to get past (the push primitive names what
    stands in its way)?"""
    return _push(failure) is not None and o.shape in shapes.GRASPABLE


def _push_lane(failure: Failure, scene: Scene) -> list[tuple[float, float]]:
    """Points every few centimetres along a failed push (from its object to the spot beside
    its reference the push primitive aims at), and around that spot, for ``free_spot`` to keep
    away from; none for any other failure."""
    m = _push(failure)
    if m is None:
        return []
    obj, ref = scene.get(m.group(1)), scene.get(m.group(2))
    relation = failure.failed_call.split("(")[0].removeprefix("push_")
    if obj is None or ref is None or relation not in spatial.DIRECTIONS:
        return []
    try:
        spot = spatial.spot_beside(relation, ref, obj.size, scene.objects,
                                   held_id=obj.object_id)
    except spatial.NoFreeSpot:
        return []
    a, b = obj.position[:2], (spot.x, spot.y)
    n = max(1, int(math.dist(a, b) / FREE_STEP / 2))
    lane = [(a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n) for k in range(n + 1)]
    r = spatial.footprint_radius(obj.size, obj.shape)
    return lane + [(b[0] + r * math.cos(t), b[1] + r * math.sin(t))
                   for t in (0.0, math.pi / 2, math.pi, 3 * math.pi / 2)]


def free_spot(scene: Scene, taken: list[tuple[float, float]]) -> tuple[float, float]:
    """The grid point on the table farthest from every perceived object (and from spots already
    chosen); RecoveryImpossible when none keeps ``FREE_CLEARANCE``."""
    centres = [(o.position[0], o.position[1]) for o in scene.objects if o.shape != "zone"]
    centres += taken
    best, best_d = None, FREE_CLEARANCE
    nx = int(round((FREE_X[1] - FREE_X[0]) / FREE_STEP)) + 1
    ny = int(round((FREE_Y[1] - FREE_Y[0]) / FREE_STEP)) + 1
    for i in range(nx):
        for j in range(ny):
            x, y = FREE_X[0] + i * FREE_STEP, FREE_Y[0] + j * FREE_STEP
            d = min((math.hypot(x - cx, y - cy) for cx, cy in centres), default=1.0)
            if d > best_d:
                best, best_d = (x, y), d
    if best is None:
        raise RecoveryImpossible("there is no free spot on the table to clear the target to")
    return best


def _prepend(text: str, lines: list[str]) -> str:
    """Insert ``lines`` at the start of the program's main block."""
    marker = "  main {\n"
    head, sep, tail = text.partition(marker)
    if not sep:  # pragma: no cover - plan_offline always writes this line
        raise PlannerError("offline program without a main block")
    return head + sep + "".join(f"    {line}\n" for line in lines) + tail

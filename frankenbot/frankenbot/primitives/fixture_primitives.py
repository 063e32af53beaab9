"""Primitives that work fixtures: drawers, doors and controls, wherever the fixture map puts them.

Every part is found by name in the current fixture map (``frankenbot.fixture_map``; on a robot
the cell's file, in the sim the scene's map), so a cabinet of three drawers, the first waves'
one-drawer unit, a hinged or a sliding door, a push button, a rocker switch and a knob are all
worked the same way wherever they stand:

* a drawer: the fingers, approaching horizontally, close vertically on its horizontal handle bar
  (a cabinet's top overhangs it) and the arm pulls or pushes along the drawer's axis;
* a hinged door: a top-down grasp of its vertical handle bar, fingers closing along the door's
  face, then the TCP follows the handle's arc about the hinge in short straight segments while
  the wrist turns with the door; every waypoint is solved (IK) before anything moves, and a
  door whose handle would leave the arm's reach is opened as far as the reach allows or refused;
* a sliding door: the same grasp, then a straight pull along its rail;
* buttons, switches and knobs: ``control_primitives.py``.

How far a part is open (or turned) now comes from the scene (perception measures it) or, where
the scene says nothing, from what these primitives did last; a part whose state is needed and
unknown is refused with NO_STATE, nothing moved. What they leave behind is a belief
(``Primitives.facts``: ``open:<part>``) the predicates read.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Mapping

import numpy as np

from frankenbot.common import FailureCode
from frankenbot.fixture_map import FixturePart, measured_opening
from frankenbot.motion.kinematics import UnreachableError, front_pose, top_down_pose, wrap_angle
from frankenbot.ports import CancelToken, PrimitiveResult, Value
from frankenbot.primitives.gripper import StepFailed

if TYPE_CHECKING:  # Primitives imports this module
    from frankenbot.primitives.primitives import Primitives

Handler = Callable[[Mapping[str, Value], CancelToken], PrimitiveResult]

ALREADY_OPEN = 0.85  # share of the travel past which a drawer or door counts as already open
ALREADY_CLOSED = 0.008  # m (or rad) below which a drawer or door counts as already closed
PAD_HALF_HEIGHT = 0.0225  # m: the pads reach this far below the TCP
SLIDING_END = 0.01  # m short of a sliding door's end stop
DRAWER_PITCHES = (0.0, 0.5, 0.8, 1.0)  # rad the gripper tips down at a drawer's handle, in order
BAR_RADIUS = 0.007  # m: a handle bar's radius (the fixture map gives its centre line)
PALM_CLEARANCE = 0.008  # m between the palm and a vertical bar's upper end
RISE_CLEARANCE = 0.05  # m out past the farthest-out part above before rising from a handle
LINK_RADIUS = 0.055  # m around the wrist and forearm axes that must clear perceived objects
FINGER_LENGTH = 0.06  # m from the TCP back to where the gripper body starts (it may touch)


def _fail(code: FailureCode, detail: str, **data: object) -> StepFailed:
    return StepFailed(PrimitiveResult.failure(code, detail, **data))


class FixturePrimitives:
    """Drawer, door and control primitives over one ``Primitives`` (its robot, fixture map,
    beliefs, motion helpers and config)."""

    def __init__(self, prims: "Primitives") -> None:
        self.p = prims

    def handlers(self) -> dict[str, Handler]:
        return {
            "open_drawer": lambda a, c: self._drawer(a, c, opening=True),
            "close_drawer": lambda a, c: self._drawer(a, c, opening=False),
            "open_door": lambda a, c: self._door(a, c, opening=True),
            "close_door": lambda a, c: self._door(a, c, opening=False),
        }

    # ------------------------------------------------------------------ look-ups
    def part(self, name: str, kinds: tuple[str, ...], what: str) -> FixturePart:
        """The part ``name`` names (a part id, or a fixture with one such part) of one of
        ``kinds``; NOT_FOUND / INVALID_ARGUMENT otherwise."""
        fmap = self.p.fixture_map()
        part = fmap.part(name)
        if part is None and fmap.fixture(name) is not None:
            found = [q for q in fmap.fixture(name).all_parts() if q.kind in kinds]  # type: ignore[union-attr]
            if len(found) == 1:
                part = found[0]
            elif len(found) > 1:
                raise _fail(FailureCode.INVALID_ARGUMENT,
                            f"{name} has {len(found)} {what}s: name one of "
                            f"{', '.join(q.part_id for q in found)}")
        if part is None:
            known = [q.part_id for q in fmap.parts.values() if q.kind in kinds]
            raise _fail(FailureCode.NOT_FOUND, f"no {what} named {name!r} in the fixture map"
                        + (f" (known: {', '.join(known)})" if known else f" (it has no {what})"))
        if part.kind not in kinds:
            raise _fail(FailureCode.INVALID_ARGUMENT,
                        f"{part.part_id} is a {part.kind.replace('_', ' ')}, not a {what}")
        return part

    def opening(self, part: FixturePart) -> float | None:
        """How far ``part`` is open now: measured by the camera, else as last left by us."""
        objs = {o.object_id: o for o in self.p.robot.scene().objects}
        value = measured_opening(part, objs)
        if value is not None:
            return value
        return self.p.believed_opening(part)

    def hands_free(self) -> None:
        held = self.p._held_per_fingers()
        if held is not None:
            raise _fail(FailureCode.INVALID_ARGUMENT, f"holding {held}; place it first")

    def _start_opening(self, part: FixturePart, opening: bool) -> float:
        """How far ``part`` is open before a drawer or door is worked: measured or believed;
        unknown is taken as closed for opening, and refused (NO_STATE) for closing."""
        now = self.opening(part)
        if now is not None:
            return now
        if not opening:
            raise _fail(FailureCode.NO_STATE, f"how far {part.part_id} is open is unknown (not "
                        "measured, not opened by me): nothing moved")
        return 0.0

    # ------------------------------------------------------------------ drawers
    def _drawer(self, args: Mapping[str, Value], cancel: CancelToken,
                opening: bool) -> PrimitiveResult:
        p, cfg = self.p, self.p.config
        part = self.part(p._obj_arg(args, "drawer"), ("drawer",), "drawer")
        name = part.part_id
        now = self._start_opening(part, opening)
        # already as asked: done, whatever the hand holds (a replanned program opens the drawer
        # it is about to put the held object in)
        if opening and now >= ALREADY_OPEN * part.travel:
            p.set_open(name, True, now)
            return PrimitiveResult.success(f"{name} is already open")
        if not opening and now <= ALREADY_CLOSED:
            p.set_open(name, False, 0.0)
            return PrimitiveResult.success(f"{name} is already closed")
        self.hands_free()
        goal = part.travel if opening else 0.0
        start = np.array(part.handle_at(now))
        end = np.array(part.handle_at(goal))
        axis = np.array(part.axis, dtype=float)
        axis[2] = 0.0
        axis /= float(np.linalg.norm(axis))
        into = -axis
        # horizontal, or tipped down when the arm would otherwise sweep over what stands in
        # front of a low handle (the wrist hangs as low as the handle)
        options = []
        for pitch in DRAWER_PITCHES:
            tool_z = front_pose(start, into, pitch)[:3, 2]
            pre = start - tool_z * cfg.handle_approach
            qs = self.reachable([front_pose(pre, into, pitch), front_pose(start, into, pitch),
                                  front_pose(end, into, pitch)], f"{name}'s handle")
            hits = self._arm_hits(qs)
            options.append((hits, pitch, pre))
            if hits == 0:
                break
        _, pitch, pre = min(options, key=lambda o: o[0])  # the first clear, else the least bad
        back = -front_pose(start, into, pitch)[:3, 2]  # out of the handle, along the tool
        p._gripper(cfg.handle_open_width, cancel)
        p._to_pose(front_pose(pre, into, pitch), cancel, "in front of the handle")
        p._line(front_pose(start, into, pitch), cancel, "onto handle")
        closed = p._gripper(cfg.drawer_hold_width, cancel)
        if closed < cfg.handle_min_width:
            p._gripper(cfg.handle_open_width, cancel)
            p._line(front_pose(pre, into, pitch), cancel, "back off")
            return PrimitiveResult.failure(FailureCode.GRASP_FAILED,
                                           f"missed the {name} handle ({closed * 1000:.1f} mm)")
        verb = "pull" if opening else "push"
        outcome = p.backend.move_linear(front_pose(end, into, pitch), cancel, cfg.push_speed)
        grip = p.robot.gripper_state()
        slipped = grip is not None and grip.width < cfg.handle_min_width
        p._gripper(cfg.handle_open_width, cancel)
        here: np.ndarray = p.kin.fk(p._q())[:3, 3]
        p._line(front_pose(here + back * cfg.handle_approach, into, pitch), cancel, "back off")
        if not outcome.ok:
            code = FailureCode.BLOCKED if outcome.code == FailureCode.ABORTED else outcome.code
            return PrimitiveResult.failure(code, f"{verb} {name}: {outcome.detail}")
        if slipped:  # the arm moved but the handle left the fingers: the drawer did not follow
            return PrimitiveResult.failure(
                FailureCode.BLOCKED, f"{verb} {name}: the handle slipped out of the fingers "
                f"(drawer stuck?)", grip_width=grip.width if grip else 0.0)
        p.set_open(name, opening, goal)
        # out past what stands out above (a drawer above left ajar), then up
        here = p.kin.fk(p._q())[:3, 3]
        face, _ = self.front_above(part, float(here[2]))
        if face is not None:
            short = float((np.asarray(face) - here[:2]) @ axis[:2]) + RISE_CLEARANCE
            if short > 0:
                here = here + axis * short
                p._line(front_pose(here, into, pitch), cancel, "clear of the cabinet")
        p._line(front_pose(here + np.array([0.0, 0.0, cfg.approach_height]), into, pitch),
                cancel, "rise")
        # The arm went the whole way; whether the drawer did is for the camera to say (a
        # drawer that caught on something stays ajar while the fingers slid along its handle).
        seen = self.seen_opening(part, cancel)
        if seen is not None and not (part.is_open(seen) if opening else part.is_closed(seen)):
            p.set_open(name, part.is_open(seen), seen)
            return PrimitiveResult.failure(
                FailureCode.BLOCKED, f"{verb} {name}: the camera sees it {seen * 100:.1f} cm "
                f"open after the {verb}", opening=seen)
        return PrimitiveResult.success(f"{name} {'opened' if opening else 'closed'}")

    def seen_opening(self, part: FixturePart, cancel: CancelToken) -> float | None:
        """How far ``part`` is open in the first camera frame taken from now on (None: no such
        frame in the look timeout, or the part not measured in it)."""
        scene = self.p.newer_scene(cancel)
        if scene is None:
            return None
        return measured_opening(part, {o.object_id: o for o in scene.objects})

    def front_above(self, part: FixturePart, floor: float
                    ) -> tuple[tuple[float, float] | None, str]:
        """The point farthest out along ``part``'s pull axis of what a gripper over its open
        drawer must keep in front of (its cabinet's front face, and the handles or ajar fronts
        of the drawers above ``floor``), and the part that sets it ("" for the cabinet)."""
        fixture = self.p.fixture_map().fixture(part.fixture_id)
        if fixture is None:
            return None, ""
        out = np.array([part.axis[0], part.axis[1]], dtype=float)
        out /= float(np.linalg.norm(out))
        best = np.array(fixture.position[:2]) + out * fixture.size[0] / 2
        who = ""
        for other in fixture.parts:
            if other.part_id == part.part_id or other.handle is None or other.handle[2] <= floor:
                continue
            opening = self.opening(other) or 0.0
            q = np.array(other.handle_at(opening)[:2]) + out * BAR_RADIUS
            if float(q @ out) > float(best @ out) + 1e-6:
                best, who = q, other.part_id
        return (float(best[0]), float(best[1])), who

    def _arm_hits(self, qs: list[np.ndarray]) -> int:
        """How many points of the arm's wrist and forearm (its links as segments thickened by
        LINK_RADIUS) touch a perceived object's box (not a fixture) in the configurations
        ``qs``; 0 when clear."""
        objs = [o for o in self.p.robot.scene().objects
                if not o.is_fixture and o.size[2] > 0.005]
        if not objs or not qs:
            return 0
        frames = self.p.kin.link_frames(np.asarray(qs))
        pts = []
        for f in frames:
            joints = f[:, :3, 3]
            tcp, tool_z = joints[6], f[6, :3, 2]
            chain = [joints[2], joints[3], joints[4], joints[5], tcp - tool_z * FINGER_LENGTH]
            for a, b in zip(chain[:-1], chain[1:], strict=True):
                for t in np.linspace(0.0, 1.0, 6):
                    pts.append(a + (b - a) * t)
        arr = np.asarray(pts)
        hits = 0
        for o in objs:
            lx = np.array([o.local_xy(x, y) for x, y in arr[:, :2]])
            hits += int(np.sum((np.abs(lx[:, 0]) <= o.size[0] / 2 + LINK_RADIUS)
                               & (np.abs(lx[:, 1]) <= o.size[1] / 2 + LINK_RADIUS)
                               & (arr[:, 2] <= o.top_z + LINK_RADIUS)))
        return hits

    def reachable(self, poses: list[np.ndarray], what: str) -> list[np.ndarray]:
        """Joint solutions of ``poses`` in order, each from the previous one; UNREACHABLE (nothing
        moved) when one has none."""
        q = self.p._q()
        out = []
        for pose in poses:
            try:
                q = self.p.kin.ik(pose, q)
            except UnreachableError as e:
                x, y, z = pose[:3, 3]
                raise _fail(FailureCode.UNREACHABLE, f"{what} at ({x:.3f}, {y:.3f}, {z:.3f}) m "
                            "is out of the arm's reach: nothing moved") from e
            out.append(q)
        return out

    # ------------------------------------------------------------------ doors
    def _door(self, args: Mapping[str, Value], cancel: CancelToken,
              opening: bool) -> PrimitiveResult:
        p = self.p
        part = self.part(p._obj_arg(args, "door"), ("hinged_door", "sliding_door"), "door")
        now = self._start_opening(part, opening)
        if part.handle is None:
            return PrimitiveResult.failure(FailureCode.INVALID_ARGUMENT,
                                           f"{part.part_id} has no handle in the fixture map")
        if part.kind == "sliding_door":
            goal = max(0.0, part.travel - SLIDING_END) if opening else 0.0
        else:
            goal = min(part.travel, p.config.door_open_target) if opening else 0.0
        if opening and now >= min(goal, ALREADY_OPEN * part.travel) - 1e-3:
            p.set_open(part.part_id, True, now)
            return PrimitiveResult.success(f"{part.part_id} is already open")
        if not opening and now <= ALREADY_CLOSED:
            p.set_open(part.part_id, False, 0.0)
            return PrimitiveResult.success(f"{part.part_id} is already closed")
        self.hands_free()
        pull_to = goal
        if opening and part.kind == "hinged_door":
            # the handle swings away from the robot: pulled only so far, then the door's inside
            # face is pushed the rest of the way (nearer the hinge, so within reach)
            pull_to = min(goal, max(now, p.config.door_pull_limit))
        if abs(pull_to - now) > 1e-3:
            result = self._work_door(part, self._door_path(part, now, pull_to), opening, cancel)
            if not result.ok or abs(pull_to - goal) < 1e-6:
                return result
            seen = self.opening(part)  # where it really stopped (the camera), else where left
            now = float(seen if seen is not None else pull_to)
        return self._push_door(part, now, goal, cancel)

    def _door_path(self, part: FixturePart, start: float, goal: float
                   ) -> list[tuple[float, np.ndarray]]:
        """(opening, TCP pose) from ``start`` to ``goal``: a top-down grasp of the vertical bar,
        the fingers closing along the door's face, the wrist turning with a hinged door. Solved
        (IK) throughout before anything moves; a hinged door's opening goal is cut back to what
        the arm reaches (UNREACHABLE when that is not open enough, or the handle is out of reach
        where it is now)."""
        p, cfg = self.p, self.p.config
        # a vertical bar is grasped near its top: the palm (above the pads) clears the bar's
        # upper end and its standoff, the pads hold the bar below them
        drop = part.handle_length / 2 + BAR_RADIUS + PALM_CLEARANCE - p.gripper.palm_bottom

        def grip(opening: float) -> tuple[float, float, float]:
            x, y, z = part.handle_at(opening)
            return (x, y, z + drop)

        h0 = grip(start)
        n = part.door_normal_at(start)
        try:
            yaw0 = p._best_yaw(h0[0], h0[1], h0[2] + cfg.door_approach,
                               (wrap_angle(math.atan2(n[1], n[0])),
                                wrap_angle(math.atan2(n[1], n[0]) + math.pi)))
        except StepFailed as e:
            raise _fail(FailureCode.UNREACHABLE,
                        f"{part.part_id}'s handle at ({h0[0]:.3f}, {h0[1]:.3f}) m is out of the "
                        f"arm's reach where it is now ({self._fmt(part, start)} open): nothing "
                        "moved") from e
        turn = (1.0 if part.axis[2] >= 0 else -1.0) if part.kind == "hinged_door" else 0.0
        span = goal - start
        steps = 1
        if part.kind == "hinged_door":
            steps = max(1, int(math.ceil(abs(span) / cfg.door_step)))
        openings = [start + span * k / steps for k in range(steps + 1)]
        poses = [(o, top_down_pose(*grip(o), yaw0 + turn * (o - start))) for o in openings]
        above = top_down_pose(h0[0], h0[1], h0[2] + cfg.door_approach, yaw0)
        q = p._q()
        try:
            q = p.kin.ik(above, q)
        except UnreachableError as e:
            raise _fail(FailureCode.UNREACHABLE, f"{part.part_id}'s handle at ({h0[0]:.3f}, "
                        f"{h0[1]:.3f}, {h0[2]:.3f}) m is out of the arm's reach: nothing "
                        "moved") from e
        path: list[tuple[float, np.ndarray]] = []
        for o, pose in poses:
            try:
                q = p.kin.ik(pose, q)
            except UnreachableError as e:
                if not path:
                    raise _fail(FailureCode.UNREACHABLE,
                                f"{part.part_id}'s handle is out of the arm's reach where it "
                                f"is now ({self._fmt(part, start)} open): nothing moved") from e
                break
            path.append((o, pose))
        last = path[-1][0]
        if abs(last - goal) > 1e-6:  # the arm reaches only part of the way
            cut = last - math.copysign(cfg.door_reach_margin, span)
            wanted_open = goal > start
            if (wanted_open and not part.is_open(cut)) or (not wanted_open
                                                          and not part.is_closed(cut)):
                raise _fail(FailureCode.UNREACHABLE,
                            f"{part.part_id}: the arm reaches its handle only until it is "
                            f"{self._fmt(part, last)} open, not "
                            f"{'open' if wanted_open else 'closed'} enough: nothing moved")
            path = [(o, pose) for o, pose in path if (o - cut) * math.copysign(1, span) <= 0]
            path.append((cut, top_down_pose(*grip(cut), yaw0 + turn * (cut - start))))
        return path

    @staticmethod
    def _fmt(part: FixturePart, value: float) -> str:
        return (f"{math.degrees(value):.0f} deg" if part.kind == "hinged_door"
                else f"{value * 100:.1f} cm")

    def _work_door(self, part: FixturePart, path: list[tuple[float, np.ndarray]], opening: bool,
                   cancel: CancelToken) -> PrimitiveResult:
        p, cfg = self.p, self.p.config
        name = part.part_id
        grasp = path[0][1]
        above = grasp.copy()
        above[2, 3] += cfg.door_approach
        p._gripper(cfg.handle_open_width, cancel)
        p._to_pose(above, cancel, "above the door's handle")
        p._line(grasp, cancel, "onto handle")
        closed = p._gripper(cfg.door_hold_width, cancel)
        if closed < cfg.handle_min_width:
            p._gripper(cfg.handle_open_width, cancel)
            p._line(above, cancel, "back off")
            return PrimitiveResult.failure(FailureCode.GRASP_FAILED,
                                           f"missed the {name} handle ({closed * 1000:.1f} mm)")
        verb = "open" if opening else "close"
        reached = path[0][0]
        failure = None
        for o, pose in path[1:]:
            outcome = p.backend.move_linear(pose, cancel, cfg.push_speed)
            grip = p.robot.gripper_state()
            if not outcome.ok:
                code = (FailureCode.BLOCKED if outcome.code == FailureCode.ABORTED
                        else outcome.code)
                failure = PrimitiveResult.failure(code, f"{verb} {name}: {outcome.detail}")
                break
            if grip is not None and grip.width < cfg.handle_min_width:
                failure = PrimitiveResult.failure(
                    FailureCode.BLOCKED, f"{verb} {name}: the handle slipped out of the "
                    f"fingers (door stuck?)", grip_width=grip.width)
                break
            reached = o
        self._leave_bar(part, reached, cancel)
        if failure is not None:
            p.set_open(name, None, None)  # where it stopped is for the camera to say
            return failure
        p.set_open(name, opening, reached)
        return PrimitiveResult.success(f"{name} {'opened' if opening else 'closed'} "
                                       f"({self._fmt(part, reached)} open)", opening=reached)

    def _leave_bar(self, part: FixturePart, opening: float, cancel: CancelToken) -> None:
        """Let go of a vertical handle bar: fingers open, straight up off it."""
        p = self.p
        p._gripper(p.config.handle_open_width, cancel)
        up = p.kin.fk(p._q())
        up[2, 3] += p.config.door_approach
        p._line(up, cancel, "release the handle")

    def _push_door(self, part: FixturePart, start: float, goal: float,
                   cancel: CancelToken) -> PrimitiveResult:
        """Swing a hinged door on from ``start`` to ``goal`` by pushing its inside face with the
        closed fingers, low and nearer the hinge than the handle, the TCP following the face's
        arc (IK-checked first; the goal is cut back to what the arm reaches)."""
        p, cfg = self.p, self.p.config
        name = part.part_id
        assert part.hinge is not None and part.handle is not None
        hinge = np.asarray(part.hinge[:2], dtype=float)
        radius = cfg.door_push_radius * float(np.linalg.norm(np.asarray(part.handle[:2]) - hinge))
        # the pads' face touches the door's inside: half the door's and half the pads' depth
        offset = part.size[0] / 2 + p.gripper.pad_half_depth + 0.002
        z = max(cfg.min_tcp_z, part.position[2] - part.size[2] / 2 + PAD_HALF_HEIGHT + 0.01)

        def tcp(opening: float, back: float = 0.0) -> np.ndarray:
            hx, hy, _ = part.handle_at(opening)
            n = np.asarray(part.door_normal_at(opening)[:2])
            along = np.array([hx, hy]) - hinge  # the handle stands out of the door: project
            along -= n * float(along @ n)  # onto the door's plane
            along /= float(np.linalg.norm(along))
            xy = hinge + along * radius - n * (offset + back)
            yaw = math.atan2(n[1], n[0])
            return top_down_pose(float(xy[0]), float(xy[1]), z, yaw)

        steps = max(1, int(math.ceil(abs(goal - start) / cfg.door_step)))
        openings = [start + (goal - start) * k / steps for k in range(steps + 1)]
        pre = tcp(start, cfg.handle_approach / 2)
        above = pre.copy()  # over the door's top edge: the arm may come from its other side
        above[2, 3] = part.position[2] + part.size[2] / 2 + PAD_HALF_HEIGHT + PALM_CLEARANCE * 2
        q = p._q()
        try:
            for pose in (above, pre):
                q = p.kin.ik(pose, q)
        except UnreachableError as e:
            raise _fail(FailureCode.UNREACHABLE, f"{name}'s inside face is out of the arm's "
                        "reach: nothing moved") from e
        path = []
        for o in openings:
            try:
                q = p.kin.ik(tcp(o), q)
            except UnreachableError:
                break
            path.append(o)
        if len(path) < 2 or not part.is_open(path[-1]):
            return PrimitiveResult.failure(FailureCode.UNREACHABLE,
                                           f"{name}: the arm cannot push it open further than "
                                           f"{self._fmt(part, start)}")
        p._gripper(0.0, cancel)
        here = p.kin.fk(p._q())
        if here[2, 3] < above[2, 3]:  # up first, straight: never through the door
            here[2, 3] = above[2, 3]
            p._line(here, cancel, f"over {name}")
        p._line(above, cancel, f"over {name}'s inside")
        p._line(pre, cancel, f"down beside {name}")
        reached, failure = start, None
        for o in path:
            outcome = p.backend.move_linear(tcp(o), cancel, cfg.push_speed)
            if not outcome.ok:
                code = (FailureCode.BLOCKED if outcome.code == FailureCode.ABORTED
                        else outcome.code)
                failure = PrimitiveResult.failure(code, f"push {name} open: {outcome.detail}")
                break
            reached = o
        back = tcp(reached, cfg.handle_approach / 2)
        p._line(back, cancel, f"back from {name}")
        back[2, 3] += cfg.door_approach
        p._line(back, cancel, f"up from {name}")
        if failure is not None:
            p.set_open(name, None, None)
            return failure
        p.set_open(name, True, reached)
        return PrimitiveResult.success(f"{name} opened ({self._fmt(part, reached)} open)",
                                       opening=reached)

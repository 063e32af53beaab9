"""Primitives that work a fixture's controls: press a button, flip a rocker switch, turn a
knob. Found by name in the fixture map like the drawers and doors (``fixture_primitives.py``,
whose look-ups, reach checks and beliefs they share).

* press: closed fingers straight down onto the button by ``press_depth``, a moment there, up;
* toggle: the rocker's raised end (its measured angle says which) pressed down just past level,
  where its detent snaps it over; the pads never reach the pivot, which is already at its stop;
* turn: the knob's grip bar grasped from above across it, the wrist turned by the angle asked
  (positive: counter-clockwise seen from above), clipped to the knob's travel, released.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Mapping

from frankenbot.common import FailureCode
from frankenbot.motion.kinematics import top_down_pose, wrap_angle
from frankenbot.ports import CancelToken, PrimitiveResult, Value
from frankenbot.primitives.fixture_primitives import PAD_HALF_HEIGHT

if TYPE_CHECKING:  # Primitives imports this module
    from frankenbot.primitives.fixture_primitives import FixturePrimitives

Handler = Callable[[Mapping[str, Value], CancelToken], PrimitiveResult]

KNOB_SETTLED = 0.02  # rad: a knob within this of the asked angle needs no turn


class ControlPrimitives:
    """press, toggle and turn over the fixture primitives of one ``Primitives``."""

    def __init__(self, fixtures: "FixturePrimitives") -> None:
        self.f = fixtures
        self.p = fixtures.p

    def handlers(self) -> dict[str, Handler]:
        return {"press": self.press, "toggle": self.toggle, "turn": self.turn}

    def press(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        p, cfg = self.p, self.p.config
        part = self.f.part(p._obj_arg(args, "obj"), ("button",), "button")
        self.f.hands_free()
        x, y, zc = part.position
        top = zc + part.size[2] / 2
        return self._push_down(part.part_id, x, y, top + PAD_HALF_HEIGHT,
                               top - cfg.press_depth + PAD_HALF_HEIGHT, None, cancel,
                               f"pressed {part.part_id}")

    def toggle(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        p, cfg = self.p, self.p.config
        part = self.f.part(p._obj_arg(args, "obj"), ("switch",), "switch")
        self.f.hands_free()
        angle = self.f.opening(part)
        if angle is None:
            return PrimitiveResult.failure(
                FailureCode.NO_STATE, f"which end of {part.part_id} is up is unknown (its "
                "angle is not measured): nothing moved")
        # the rocker tilts about its y axis: at a negative angle its +x end is up
        end = 1.0 if angle < 0 else -1.0
        c, s = math.cos(part.yaw), math.sin(part.yaw)
        x = part.position[0] + end * cfg.switch_press_offset * c
        y = part.position[1] + end * cfg.switch_press_offset * s
        level_top = part.position[2] + part.size[2] / 2
        raised = level_top + cfg.switch_press_offset * math.sin(abs(angle))
        # the closed pads' long side (along the closing axis) lies along the rocker
        yaw = wrap_angle(part.yaw + math.pi / 2)
        result = self._push_down(part.part_id, x, y, raised + PAD_HALF_HEIGHT,
                                 level_top - cfg.switch_press_depth + PAD_HALF_HEIGHT, yaw,
                                 cancel, f"toggled {part.part_id}")
        if result.ok:
            p.set_angle(part.part_id, -math.copysign(part.travel, angle if angle else -1.0))
        return result

    def _push_down(self, name: str, x: float, y: float, touch_z: float, press_z: float,
                   yaw: float | None, cancel: CancelToken, done: str) -> PrimitiveResult:
        """Closed fingers straight down from above ``touch_z`` to ``press_z`` (TCP), a moment
        there, and back up."""
        p, cfg = self.p, self.p.config
        above_z = touch_z + cfg.approach_height
        start = p._current_yaw() if yaw is None else yaw
        yaw = p._best_yaw(x, y, above_z, (start, wrap_angle(start + math.pi)))
        self.f.reachable([top_down_pose(x, y, above_z, yaw), top_down_pose(x, y, press_z, yaw)],
                        name)
        p._gripper(0.0, cancel)
        p._to_pose(top_down_pose(x, y, above_z, yaw), cancel, f"above {name}")
        p._line(top_down_pose(x, y, touch_z + 0.01, yaw), cancel, f"down to {name}")
        outcome = p.backend.move_linear(top_down_pose(x, y, press_z, yaw), cancel,
                                        cfg.push_speed)
        if outcome.ok:
            p.wait_for(cfg.press_dwell, cancel)
        p._line(top_down_pose(x, y, above_z, yaw), cancel, f"up from {name}")
        if not outcome.ok:
            code = FailureCode.BLOCKED if outcome.code == FailureCode.ABORTED else outcome.code
            return PrimitiveResult.failure(code, f"press {name}: {outcome.detail}")
        return PrimitiveResult.success(done)

    def turn(self, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        p, cfg = self.p, self.p.config
        part = self.f.part(p._obj_arg(args, "obj"), ("knob",), "knob")
        degrees = p._num_arg(args, "degrees")
        self.f.hands_free()
        angle = self.f.opening(part)
        if angle is None:
            return PrimitiveResult.failure(
                FailureCode.NO_STATE, f"how far {part.part_id} is turned is unknown (not "
                "measured): its grip cannot be aimed at, nothing moved")
        goal = min(max(angle + math.radians(degrees), 0.0), part.travel)
        delta = goal - angle
        if abs(delta) < KNOB_SETTLED:
            return PrimitiveResult.success(
                f"{part.part_id} is already at {math.degrees(goal):.0f} deg (it turns "
                f"0..{math.degrees(part.travel):.0f} deg)", angle=goal)
        x, y, zc = part.position
        top = zc + part.size[2] / 2
        z = top - cfg.knob_grip_depth + PAD_HALF_HEIGHT
        # the grip bar runs along the knob's x axis, turned by its angle: fingers across it
        bar = part.yaw + angle
        yaw0 = p._best_yaw(x, y, z + cfg.approach_height, (wrap_angle(bar),
                                                           wrap_angle(bar + math.pi)))
        turn = 1.0 if part.axis[2] >= 0 else -1.0
        grasp, above = top_down_pose(x, y, z, yaw0), top_down_pose(x, y, z + cfg.approach_height,
                                                                   yaw0)
        end = top_down_pose(x, y, z, yaw0 + turn * delta)
        self.f.reachable([above, grasp, end], part.part_id)
        p._gripper(cfg.handle_open_width, cancel)
        p._to_pose(above, cancel, f"above {part.part_id}")
        p._line(grasp, cancel, f"onto {part.part_id}")
        closed = p._gripper(cfg.door_hold_width, cancel)
        if closed < cfg.handle_min_width:
            p._gripper(cfg.handle_open_width, cancel)
            p._line(above, cancel, "back off")
            return PrimitiveResult.failure(FailureCode.GRASP_FAILED,
                                           f"missed the grip of {part.part_id} "
                                           f"({closed * 1000:.1f} mm)")
        outcome = p.backend.move_linear(end, cancel, cfg.knob_speed)
        p._gripper(cfg.handle_open_width, cancel)
        tcp = p.kin.fk(p._q())
        up = tcp.copy()
        up[2, 3] += cfg.approach_height
        p._line(up, cancel, f"up from {part.part_id}")
        if not outcome.ok:
            code = FailureCode.BLOCKED if outcome.code == FailureCode.ABORTED else outcome.code
            return PrimitiveResult.failure(code, f"turn {part.part_id}: {outcome.detail}")
        p.set_angle(part.part_id, goal)
        return PrimitiveResult.success(f"turned {part.part_id} to {math.degrees(goal):.0f} deg",
                                       angle=goal)

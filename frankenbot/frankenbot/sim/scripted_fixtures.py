"""The scripted arm's fixture work for the sim's selftest: open and close every drawer and door,
press the button, flip the switch, turn the knob, from ground truth (the scene's fixture map and
its parts' true states).

Like ``scripted.py`` this checks the world (joints, ranges, the controls' logic, the oracle's
thresholds), not the brain: the brain's own fixture primitives live in ``primitives/``. The
motions are the plain ones a person would script: a drawer's handle grasped from the front and
pulled along its axis, a door's vertical handle grasped from above and led round its hinge (a
hinged door is then pushed on from its inside face, since its handle swings out of reach), a
button pressed with the closed fingers, the switch's raised end pressed past level, the knob's
grip bar turned with the wrist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frankenbot import robotiq
from frankenbot.errors import SimError
from frankenbot.fixture_map import FixtureMap, FixturePart
from frankenbot.motion.kinematics import KinematicsConfig, UR5eKinematics, front_pose
from frankenbot.sim.kinematics import ik_tool0
from frankenbot.sim.model import TCP_OFFSET
from frankenbot.sim.scripted import _TOOL0_FROM_TCP, CRUISE_SPEED, ScriptedArm, _yaw

HANDLE_OPEN = 0.035  # m: fingers straddle a 14 mm handle bar
APPROACH = 0.08  # m in front of (or above) a handle before moving onto it
PULL_SPEED = 0.08  # m/s while moving a drawer or a door
TIPS = (0.0, 0.5, 0.8, 1.0)  # rad a drawer's handle is grasped tipped down, first clear wins
LINK_RADIUS = 0.06  # m around the wrist's axes that must clear the objects' boxes
CLEAR_Z = 0.30  # m: over the light panel's lamp and the stove on the way to a control
DOOR_STEP = 0.12  # rad of a hinged door per straight segment
DOOR_PULL = 1.0  # rad a hinged door is pulled by its handle; then pushed from inside
DOOR_OPEN = 1.3  # rad a hinged door is pushed to
BAR_GRIP_DROP = 0.03  # m the TCP sits below a vertical bar's top end (the palm clears it)
PAD_HALF = 0.0225  # m the pads reach below the TCP


_KIN = UR5eKinematics(KinematicsConfig(tcp_offset=TCP_OFFSET))


def _near_box(p: np.ndarray, centre, size, yaw: float) -> bool:  # type: ignore[no-untyped-def]
    dx, dy = p[0] - centre[0], p[1] - centre[1]
    c, s = math.cos(yaw), math.sin(yaw)
    lx, ly = c * dx + s * dy, -s * dx + c * dy
    return (abs(lx) <= size[0] / 2 + LINK_RADIUS and abs(ly) <= size[1] / 2 + LINK_RADIUS
            and p[2] <= centre[2] + size[2] / 2 + LINK_RADIUS)


@dataclass
class ScriptedFixtures:
    arm: ScriptedArm

    @property
    def fmap(self) -> FixtureMap:
        return FixtureMap.from_data(self.arm.world.fixture_map_data())

    def _part(self, part_id: str) -> FixturePart:
        part = self.fmap.part(part_id)
        if part is None:
            raise SimError(f"no fixture part {part_id!r} in this scene")
        return part

    def _state(self, part_id: str) -> float:
        return float(self.arm.world.fixture_states()[part_id])

    def _open_fingers(self, width: float = HANDLE_OPEN) -> None:
        self.arm.gripper(robotiq.width_to_position(width), settle=0.5)

    # ------------------------------------------------------------------ drawers
    def drawer(self, part_id: str, opening: bool) -> None:
        part = self._part(part_id)
        arm = self.arm
        now = self._state(part_id)
        goal = part.travel - 0.008 if opening else 0.0
        axis = np.array([part.axis[0], part.axis[1], 0.0])
        axis /= float(np.linalg.norm(axis))
        start = np.array(part.handle_at(now))
        end = np.array(part.handle_at(goal))
        pitch = self._pitch(start, end, axis)
        tool_z = front_pose(start, -axis, pitch)[:3, 2]
        self._open_fingers()
        arm.move_pose(front_pose(start - tool_z * APPROACH, -axis, pitch), joint=True)
        arm.move_pose(front_pose(start, -axis, pitch))
        arm.gripper(robotiq.CLOSED_POSITION)
        arm.move_pose(front_pose(end, -axis, pitch), speed=PULL_SPEED)
        self._open_fingers()
        back = end - tool_z * APPROACH  # off the bar the way the fingers came
        arm.move_pose(front_pose(back, -axis, pitch))
        out = back + axis * 0.08  # clear of what stands out above (a drawer left ajar)
        arm.move_pose(front_pose(out, -axis, pitch))
        arm.move_pose(front_pose(out + np.array([0, 0, 0.10]), -axis, pitch))

    def _pitch(self, start: np.ndarray, end: np.ndarray, axis: np.ndarray) -> float:
        """Level, unless the wrist (as low as the handle) would then sweep an object standing
        in front of the drawer: tipped down as far as it takes (the least bad when nothing
        clears)."""
        boxes = [(st.position, st.size, _yaw(st.quaternion))
                 for st in self.arm.world.object_states().values()]
        q0 = self.arm.world.joint_positions()
        best, fewest = 0.0, None
        for pitch in TIPS:
            q, hits = q0, 0
            for target in (start - front_pose(start, -axis, pitch)[:3, 2] * APPROACH, start, end):
                q = ik_tool0(front_pose(target, -axis, pitch) @ _TOOL0_FROM_TCP, q)
                frames = _KIN.link_frames(q)
                chain = [frames[i, :3, 3] for i in (2, 3, 4, 5)]
                pts = [a + (b - a) * t for a, b in zip(chain[:-1], chain[1:], strict=True)
                       for t in np.linspace(0, 1, 5)]
                hits += sum(_near_box(p, *b) for p in pts for b in boxes)
            if hits == 0:
                return pitch
            if fewest is None or hits < fewest:
                best, fewest = pitch, hits
        return best

    # ------------------------------------------------------------------ doors
    def door(self, part_id: str, opening: bool) -> None:
        part = self._part(part_id)
        now = self._state(part_id)
        if part.kind == "sliding_door":
            self._lead_door(part, now, part.travel - 0.01 if opening else 0.0)
            return
        if opening:
            self._lead_door(part, now, max(now, DOOR_PULL))
            self._push_door(part, self._state(part_id), DOOR_OPEN)
        else:
            self._lead_door(part, now, 0.0)

    def _grip(self, part: FixturePart, opening: float) -> tuple[float, float, float, float]:
        """TCP (x, y, z) and yaw holding ``part``'s vertical bar near its top, the fingers
        closing along the door's face."""
        x, y, z = part.handle_at(opening)
        n = part.door_normal_at(opening)
        return x, y, z + part.handle_length / 2 - BAR_GRIP_DROP, math.atan2(n[1], n[0])

    def _lead_door(self, part: FixturePart, start: float, goal: float) -> None:
        arm = self.arm
        x, y, z, yaw0 = self._grip(part, start)
        self._open_fingers()
        arm.move_joint_to(x, y, z + 0.07, yaw0)
        arm.move_linear(x, y, z, yaw0)
        arm.gripper(robotiq.CLOSED_POSITION)
        steps = (max(1, int(math.ceil(abs(goal - start) / DOOR_STEP)))
                 if part.kind == "hinged_door" else 1)
        for k in range(1, steps + 1):
            o = start + (goal - start) * k / steps
            gx, gy, gz, _ = self._grip(part, o)
            turn = (o - start) if part.kind == "hinged_door" else 0.0
            arm.move_linear(gx, gy, gz, yaw0 + turn, speed=PULL_SPEED)
        self._open_fingers()
        tcp = arm.tcp_now()[:3, 3]
        arm.move_linear(tcp[0], tcp[1], tcp[2] + 0.07, arm._current_yaw(
            arm.world.joint_positions()))

    def _push_door(self, part: FixturePart, start: float, goal: float) -> None:
        """Push a hinged door's inside face (low, at 0.8 of the handle's radius) round to
        ``goal`` with the closed fingers."""
        arm = self.arm
        assert part.hinge is not None and part.handle is not None
        hinge = np.asarray(part.hinge[:2])
        radius = 0.8 * float(np.linalg.norm(np.asarray(part.handle[:2]) - hinge))
        offset = part.size[0] / 2 + 0.013
        z = max(0.027, part.position[2] - part.size[2] / 2 + PAD_HALF + 0.01)

        def at(o: float, back: float = 0.0) -> tuple[float, float, float]:
            n = np.asarray(part.door_normal_at(o)[:2])
            hx, hy, _ = part.handle_at(o)
            along = np.array([hx, hy]) - hinge
            along -= n * float(along @ n)
            along /= float(np.linalg.norm(along))
            p = hinge + along * radius - n * (offset + back)
            return float(p[0]), float(p[1]), math.atan2(n[1], n[0])

        over = part.position[2] + part.size[2] / 2 + PAD_HALF + 0.016
        arm.gripper(robotiq.CLOSED_POSITION, settle=0.5)
        tcp = arm.tcp_now()[:3, 3]
        yaw = arm._current_yaw(arm.world.joint_positions())
        if tcp[2] < over:
            arm.move_linear(tcp[0], tcp[1], over, yaw)
        x, y, yaw = at(start, 0.04)
        arm.move_linear(x, y, over, yaw, speed=CRUISE_SPEED)
        arm.move_linear(x, y, z, yaw)
        steps = max(1, int(math.ceil(abs(goal - start) / DOOR_STEP)))
        for k in range(steps + 1):
            x, y, yaw = at(start + (goal - start) * k / steps)
            arm.move_linear(x, y, z, yaw, speed=PULL_SPEED)
        x, y, yaw = at(goal, 0.04)
        arm.move_linear(x, y, z, yaw)
        arm.move_linear(x, y, over, yaw)

    # ------------------------------------------------------------------ controls
    def press(self, part_id: str) -> None:
        part = self._part(part_id)
        arm = self.arm
        x, y, zc = part.position
        top = zc + part.size[2] / 2
        yaw = arm._current_yaw(arm.world.joint_positions())
        arm.gripper(robotiq.CLOSED_POSITION, settle=0.5)
        self._over(x, y, yaw)
        arm.move_linear(x, y, top + PAD_HALF + 0.08, yaw, speed=CRUISE_SPEED)
        arm.move_linear(x, y, top - 0.0065 + PAD_HALF, yaw, speed=0.05)
        arm.world.advance(0.15)
        arm.move_linear(x, y, top + PAD_HALF + 0.08, yaw)

    def _over(self, x: float, y: float, yaw: float) -> None:
        """Up, then over (x, y) high: a straight line from home to a control near the table
        passes through the lamp."""
        arm = self.arm
        tcp = arm.tcp_now()[:3, 3]
        if tcp[2] < CLEAR_Z:
            arm.move_linear(tcp[0], tcp[1], CLEAR_Z, arm._current_yaw(
                arm.world.joint_positions()), speed=CRUISE_SPEED)
        arm.move_linear(x, y, CLEAR_Z, yaw, speed=CRUISE_SPEED)

    def toggle(self, part_id: str) -> None:
        part = self._part(part_id)
        arm = self.arm
        angle = self._state(part_id)
        end = 1.0 if angle < 0 else -1.0  # at a negative angle the +x end is up
        c, s = math.cos(part.yaw), math.sin(part.yaw)
        x = part.position[0] + end * 0.02 * c
        y = part.position[1] + end * 0.02 * s
        level = part.position[2] + part.size[2] / 2
        # the closed pads' long side (and the palm's) along the rocker, away from the lamp
        yaw = part.yaw + math.pi / 2
        arm.gripper(robotiq.CLOSED_POSITION, settle=0.5)
        self._over(x, y, yaw)
        arm.move_linear(x, y, level + PAD_HALF + 0.08, yaw, speed=CRUISE_SPEED)
        arm.move_linear(x, y, level - 0.001 + PAD_HALF, yaw, speed=0.05)
        arm.world.advance(0.15)
        arm.move_linear(x, y, level + PAD_HALF + 0.08, yaw)

    def turn(self, part_id: str, radians: float) -> None:
        part = self._part(part_id)
        arm = self.arm
        angle = self._state(part_id)
        goal = min(max(angle + radians, 0.0), part.travel)
        x, y, zc = part.position
        z = zc + part.size[2] / 2 - 0.005 + PAD_HALF
        yaw = part.yaw + angle  # fingers across the grip bar
        self._open_fingers()
        arm.move_linear(x, y, z + 0.08, yaw, speed=CRUISE_SPEED)
        arm.move_linear(x, y, z, yaw)
        arm.gripper(robotiq.CLOSED_POSITION)
        steps = max(1, int(math.ceil(abs(goal - angle) / 0.4)))
        for k in range(1, steps + 1):
            arm.move_linear(x, y, z, yaw + (goal - angle) * k / steps, speed=0.05)
        self._open_fingers()
        arm.move_linear(x, y, z + 0.08, arm._current_yaw(arm.world.joint_positions()))

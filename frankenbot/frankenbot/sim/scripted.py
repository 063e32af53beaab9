"""A small scripted arm for the sim's own checks (selftest, slip measurement, benchmarks).

Not the brain and not the motion stack (that is ``motion/``): it reads ground truth, uses the
analytic IK and sends joint trajectories through the same ``command_trajectory`` path as the
ROS node, so a passing selftest shows the world, the controller emulation, the gripper and the
oracle fit together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from frankenbot import robotiq
from frankenbot.errors import SimError
from frankenbot.sim import layout
from frankenbot.sim.controller import TrajectoryPoint, TrajectoryState
from frankenbot.sim.kinematics import fk_tool0, ik_tool0, tool_down
from frankenbot.sim.model import TCP_OFFSET
from frankenbot.sim.world import SimWorld
from frankenbot.transforms import QuatWXYZ

CRUISE_SPEED = 0.35  # m/s for free moves in Cartesian space
JOINT_SPEED = 0.8  # rad/s of the joint that moves most in a joint-space move
FLOOR = 0.008  # m: the floor of a bowl, bin, basket or tray above its bottom
LINEAR_SPEED = 0.15  # m/s for approach / retreat / push
HOVER = 0.12  # m above the grasp point before descending
OPEN_MARGIN = 0.03  # open this much wider than the object before descending
HANDLE_OPEN_WIDTH = 0.035  # straddle the drawer handle without touching the drawer front


@dataclass
class ScriptedArm:
    world: SimWorld
    max_wait: float = 8.0
    # TCP height minus the held object's centre height at its grasp (per object)
    held_offset: dict[str, float] = field(default_factory=dict)

    # ------------------------------------------------------------------ motion
    def _wait(self) -> None:
        w = self.world
        deadline = w.time + self.max_wait
        while w.trajectory_active() and w.time < deadline:
            w.advance(0.02)
        status = w.trajectory_status()
        if status.state == TrajectoryState.ABORTED:
            raise SimError(f"scripted motion aborted: {status.reason}")
        if w.trajectory_active():
            raise SimError("scripted motion did not finish in time")

    def tcp_pose(self, x: float, y: float, z: float, yaw: float) -> np.ndarray:
        return tool_down(x, y, z + TCP_OFFSET, yaw)

    def move_linear(self, x: float, y: float, z: float, yaw: float,
                    speed: float = LINEAR_SPEED, wait: bool = True) -> None:
        """Straight TCP line (sampled IK, cubic through the samples) at ``speed`` m/s; from a
        pose that is not top-down (a drawer's handle), a joint-space move instead."""
        w = self.world
        q = w.joint_positions()
        if fk_tool0(q)[2, 2] > -0.99:  # the tool does not point down
            self.move_pose(self.tcp_pose(x, y, z, yaw) @ np.linalg.inv(_TOOL0_FROM_TCP),
                           joint=True, wait=wait)
            return
        start = fk_tool0(q)[:3, 3] - np.array([0, 0, TCP_OFFSET])
        goal = np.array([x, y, z])
        dist = float(np.linalg.norm(goal - start))
        duration = max(dist / speed, 0.3)
        n = max(2, int(math.ceil(dist / 0.02)))
        points = []
        q_prev = q
        cur_yaw = self._current_yaw(q)
        # the parallel gripper is symmetric under a half turn: take the nearer equivalent yaw
        yaw = cur_yaw + ((yaw - cur_yaw + math.pi / 2) % math.pi - math.pi / 2)
        for i in range(1, n + 1):
            s = i / n
            s_smooth = s * s * (3 - 2 * s)  # ease in/out
            p = start + s_smooth * (goal - start)
            q_prev = ik_tool0(self.tcp_pose(*p, cur_yaw + s_smooth * (yaw - cur_yaw)), q_prev)
            points.append(TrajectoryPoint(duration * s, q_prev.tolist()))
        w.command_trajectory(w.JOINT_NAMES, points)
        if wait:
            self._wait()

    def _current_yaw(self, q: np.ndarray) -> float:
        T = fk_tool0(q)
        y_axis = T[:3, 1]
        return math.atan2(-y_axis[0], y_axis[1])

    def gripper(self, position: float, settle: float = 0.8) -> None:
        self.world.command_gripper(position)
        self.world.advance(settle)

    def move_pose(self, tcp: np.ndarray, speed: float = LINEAR_SPEED, joint: bool = False,
                  wait: bool = True) -> None:
        """To a TCP pose of any orientation: a straight line with the rotation turned evenly
        along it, or (``joint``) a joint-space move (from a top-down pose to a front one)."""
        w = self.world
        q = w.joint_positions()
        goal_tool0 = tcp @ _TOOL0_FROM_TCP
        if joint:
            q_goal = ik_tool0(goal_tool0, q)
            duration = max(float(np.max(np.abs(q_goal - q))) / JOINT_SPEED, 0.5)
            points = [TrajectoryPoint(duration * s, (q + (q_goal - q) * (s * s * (3 - 2 * s))
                                                     ).tolist()) for s in np.linspace(0.1, 1, 10)]
        else:
            start = fk_tool0(q) @ np.linalg.inv(_TOOL0_FROM_TCP)
            dist = float(np.linalg.norm(tcp[:3, 3] - start[:3, 3]))
            axis, angle = _rotation_between(start[:3, :3], tcp[:3, :3])
            duration = max(dist / speed, angle / 0.8, 0.3)
            n = max(2, int(math.ceil(max(dist / 0.02, angle / 0.05))))
            points, q_prev = [], q
            for i in range(1, n + 1):
                s = i / n
                s = s * s * (3 - 2 * s)
                pose = np.eye(4)
                pose[:3, :3] = start[:3, :3] @ _axis_angle(axis, angle * s)
                pose[:3, 3] = start[:3, 3] + s * (tcp[:3, 3] - start[:3, 3])
                q_prev = ik_tool0(pose @ _TOOL0_FROM_TCP, q_prev)
                points.append(TrajectoryPoint(duration * i / n, q_prev.tolist()))
        w.command_trajectory(w.JOINT_NAMES, points)
        if wait:
            self._wait()

    def move_joint_to(self, x: float, y: float, z: float, yaw: float) -> None:
        """Top-down at (x, y, z) by a joint-space move (far out, where a straight line would
        need the joints to race near the arm's full stretch)."""
        self.move_pose(self.tcp_pose(x, y, z, yaw) @ np.linalg.inv(_TOOL0_FROM_TCP), joint=True)

    def tcp_now(self) -> np.ndarray:
        """The TCP pose now (4x4, base_link)."""
        return fk_tool0(self.world.joint_positions()) @ np.linalg.inv(_TOOL0_FROM_TCP)

    # ------------------------------------------------------------------ skills
    def pick(self, name: str) -> None:
        st = self.world.object_states()[name]
        if st.shape != "block":
            self._pick_any(name)
            return
        x, y, z = st.position
        yaw = self._clear_grasp_yaw(name, _grasp_yaw(st.quaternion))
        self.gripper(robotiq.width_to_position(st.size[1] + OPEN_MARGIN), settle=0.6)
        self.move_linear(x, y, z + HOVER, yaw, speed=CRUISE_SPEED)
        self.move_linear(x, y, z + 0.003, yaw)
        self.gripper(robotiq.CLOSED_POSITION)
        self.move_linear(x, y, z + HOVER + 0.03, yaw)
        if self.world.gripper_width() < st.size[1] * 0.5:
            raise SimError(f"grasp of {name} failed (fingers closed on nothing)")

    def _pick_any(self, name: str) -> None:
        """Any category, from what the sim knows of it (``grasp_of``)."""
        st = self.world.object_states()[name]
        x, y, z, yaw, width = grasp_of(st)
        top = st.position[2] + st.size[2] / 2
        self.gripper(robotiq.width_to_position(min(robotiq.STROKE, width + OPEN_MARGIN)),
                     settle=0.6)
        self.move_linear(x, y, max(top, z) + HOVER, yaw, speed=CRUISE_SPEED)
        self.move_linear(x, y, z, yaw)
        self.gripper(robotiq.CLOSED_POSITION)
        self.held_offset[name] = z - st.position[2]
        self.move_linear(x, y, max(top, z) + HOVER + 0.03, yaw)
        if self.world.gripper_width() < min(width * 0.5, 0.005):
            raise SimError(f"grasp of {name} failed (fingers closed on nothing)")

    def _clear_grasp_yaw(self, name: str, yaw: float) -> float:
        """Of the block's two grasp yaws (90 deg apart), the one whose fingers land farthest
        from the nearest other object."""
        states = self.world.object_states()
        me = np.array(states[name].position[:2])
        others = [np.array(s.position[:2]) for n, s in states.items() if n != name]
        if not others:
            return yaw
        d = min(others, key=lambda p: float(np.linalg.norm(p - me))) - me
        ang = math.atan2(d[1], d[0])

        def clearance(a: float) -> float:  # |sin| of the angle between closing axis and d
            return abs(math.sin(ang - (a + math.pi / 2)))

        alt = yaw + math.pi / 2 if yaw < 0 else yaw - math.pi / 2
        return yaw if clearance(yaw) >= clearance(alt) else alt

    def place_at(self, x: float, y: float, z_release: float, yaw: float | None = None) -> None:
        if yaw is None:
            yaw = self._current_yaw(self.world.joint_positions())
        self.move_linear(x, y, z_release + HOVER, yaw, speed=CRUISE_SPEED)
        self.move_linear(x, y, z_release, yaw)
        self.gripper(0.0, settle=0.6)
        self.move_linear(x, y, z_release + HOVER, yaw)

    def place_in(self, name: str, container: str) -> None:
        c = self.world.object_states()[container]
        if name in self.held_offset:  # not a block: released resting on the floor or top
            half = layout.OBJECT_BY_NAME[name].size[2] / 2
            floor = c.position[2] - c.size[2] / 2 + FLOOR
            if c.shape in ("plate", "block", "box", "carton", "can"):
                floor = c.position[2] + c.size[2] / 2
            # fingers closing across the container's short side (its palm-long side along it)
            short = _yaw(c.quaternion) + (math.pi / 2 if c.size[0] >= c.size[1] else 0.0)
            yaw = short - math.pi / 2
            self.place_at(c.position[0], c.position[1],
                          floor + 0.008 + half + self.held_offset[name], yaw)
            return
        held = layout.OBJECT_BY_NAME[name].size[2]
        if c.shape == "block":
            z = c.position[2] + c.size[2] / 2 + held / 2 + 0.004
        elif c.shape == "plate":
            z = c.position[2] + c.size[2] / 2 + held / 2 + 0.006
        elif c.shape in ("bin", "bowl"):  # release above the rim: the fingers never touch it
            z = c.position[2] + c.size[2] / 2 + held / 2 + 0.015
        else:
            z = c.position[2] - c.size[2] / 2 + 0.01 + held / 2 + 0.01
        self.place_at(c.position[0], c.position[1], z)

    def open_drawer(self) -> None:
        d = layout.DRAWER
        hx, hy, hz = d.handle_position(self.world.drawer_opening())
        yaw = math.pi / 2  # fingers close along x around the bar
        self.gripper(robotiq.width_to_position(HANDLE_OPEN_WIDTH), settle=0.5)
        self.move_linear(hx, hy, hz + HOVER, yaw, speed=CRUISE_SPEED)
        self.move_linear(hx, hy, hz, yaw)
        self.gripper(robotiq.CLOSED_POSITION)
        end_x = d.handle_position(d.stroke - 0.008)[0]  # stop just short of the end stop
        self.move_linear(end_x, hy, hz, yaw, speed=0.1)
        self.gripper(robotiq.width_to_position(HANDLE_OPEN_WIDTH), settle=0.5)
        self.move_linear(end_x, hy, hz + HOVER, yaw)

    def close_drawer(self) -> None:
        d = layout.DRAWER
        hx, hy, hz = d.handle_position(self.world.drawer_opening())
        yaw = math.pi / 2
        self.gripper(robotiq.width_to_position(HANDLE_OPEN_WIDTH), settle=0.1)
        self.move_linear(hx, hy, hz + HOVER, yaw, speed=CRUISE_SPEED)
        self.move_linear(hx, hy, hz, yaw)
        self.gripper(robotiq.CLOSED_POSITION)
        self.move_linear(d.handle_position(0.0)[0], hy, hz, yaw, speed=0.1)
        self.gripper(0.0, settle=0.5)
        self.move_linear(d.handle_position(0.0)[0], hy, hz + HOVER, yaw)

    def push_to(self, name: str, x: float, y: float) -> None:
        """Push ``name`` along a straight line so its centre ends at (x, y).

        The fingers, 3 cm apart across the push direction, make a two-point pusher that keeps
        the block from spinning away.
        """
        st = self.world.object_states()[name]
        bx, by, _ = st.position
        direction = np.array([x - bx, y - by])
        u = direction / float(np.linalg.norm(direction))
        yaw = math.atan2(u[1], u[0])  # closing axis across the push direction
        face = st.size[0] / 2 + 0.011  # TCP to the pads' leading edge
        z = 0.027
        self.gripper(robotiq.width_to_position(0.03), settle=0.6)
        sx, sy = bx - u[0] * (face + 0.03), by - u[1] * (face + 0.03)
        self.move_linear(sx, sy, z + HOVER, yaw, speed=CRUISE_SPEED)
        self.move_linear(sx, sy, z, yaw)
        ex, ey = x - u[0] * face, y - u[1] * face
        self.move_linear(ex, ey, z, yaw, speed=0.08)
        self.move_linear(ex, ey, z + HOVER, yaw)


_TOOL0_FROM_TCP = np.eye(4)
_TOOL0_FROM_TCP[2, 3] = -TCP_OFFSET  # tool0 sits TCP_OFFSET back along the tool's z


def _yaw(quat: tuple[float, float, float, float]) -> float:
    return QuatWXYZ(*quat).yaw()


def _axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def _rotation_between(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """(axis, angle) of the rotation taking frame ``a`` to ``b``, in ``a``'s frame."""
    r = a.T @ b
    angle = math.acos(min(1.0, max(-1.0, (float(np.trace(r)) - 1) / 2)))
    if angle < 1e-9:
        return np.array([0.0, 0.0, 1.0]), 0.0
    axis = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    n = float(np.linalg.norm(axis))
    if n < 1e-9:  # half a turn: any axis the rotation keeps
        w, v = np.linalg.eigh(r + r.T)
        axis = v[:, int(np.argmax(w))]
        n = float(np.linalg.norm(axis))
    return axis / n, angle


# categories grasped at their waist: a ball's equator, a lying bottle's or marker's axis
_WAIST = ("apple", "ball", "lemon", "marker")


def grasp_of(st) -> tuple[float, float, float, float, float]:  # type: ignore[no-untyped-def]
    """(x, y, TCP z, yaw, width across the fingers) of a top-down grasp of an object of any
    category, from the sim's own knowledge of it (its catalogue entry and true pose): across
    its narrow side at its centre, a mug's cup across (the handle out of the way), a bowl by
    its rim on the side towards the robot, a ball at its equator, a bottle by its neck."""
    spec = layout.OBJECT_BY_NAME[st.name]
    x, y, zc = st.position
    yaw = _yaw(st.quaternion)
    top = zc + spec.size[2] / 2
    width = min(spec.size[0], spec.size[1])
    z = max(top - 0.03, 0.027)
    if spec.shape in _WAIST or spec.lying:
        z = max(zc, 0.027)
    elif spec.shape == "mug":
        reach = spec.dim("handle")
        x -= math.cos(yaw) * reach / 2  # the cup's axis
        y -= math.sin(yaw) * reach / 2
        width = 2 * spec.dim("radius")
        z = top - 0.04
    elif spec.shape == "bottle":
        z = top - 0.025  # the neck, under the palm's clearance
    elif spec.shape == "bowl":
        r = (spec.size[0] / 2 + spec.dim("inner")) / 2
        d = np.array([-x, -y]) / math.hypot(x, y)  # the rim's side towards the robot
        x, y = x + d[0] * r, y + d[1] * r
        yaw = math.atan2(-d[0], d[1])  # closing across the wall
        width = spec.size[0] / 2 - spec.dim("inner")
        z = top - 0.012
    elif spec.shape == "can":
        width = spec.size[0]
    return x, y, z, yaw, width


def _grasp_yaw(quat: tuple[float, float, float, float]) -> float:
    yaw = QuatWXYZ(*quat).yaw()
    return (yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4

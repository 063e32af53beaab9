"""The tool centre point from the gripper's description: one source for ``tcp_offset``.

The brain's TCP is the centre between the finger pads, ``tcp_offset`` metres along tool0's z.
On the real robot that number comes from the gripper's URDF (urdf/robotiq_on_tool0.urdf.xacro:
the UR-to-Robotiq coupling, the 2F-85 macro of ros2_robotiq_gripper and two pad frames,
``frankenbot_left_pad`` / ``frankenbot_right_pad``, at the centre of each finger pad's contact
face). The launch file computes it from the rendered description and hands it to the executor,
and ``frankenbot doctor`` checks the running executor's value against the description the
gripper's robot_state_publisher serves. A hand-typed offset (the sim gripper's 0.145 m, or a
pendant's 0.15 m) is off by up to a centimetre, which is most of the table clearance.

The 2F-85's fingertips move on a four-bar linkage, so the pad centre's height depends on the
opening (14 mm between open and closed here). The offset is taken at ``REFERENCE_WIDTH``, the
grip of the standard 4 cm block; ``tcp_range`` gives the spread over the whole stroke.

Pure Python (xml.etree + numpy): the URDF comes as text, from xacro at launch time or from the
robot_description topic.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from frankenbot import robotiq
from frankenbot.errors import ConfigError

ROOT_LINK = "tool0"
PAD_LINKS = ("frankenbot_left_pad", "frankenbot_right_pad")
REFERENCE_WIDTH = 0.04  # m of finger gap: the standard block the primitives grasp
TOLERANCE = 0.002  # m: configured and described TCP may differ by this much


@dataclass(frozen=True)
class Joint:
    name: str
    parent: str
    child: str
    origin: np.ndarray  # 4x4, parent -> joint frame
    kind: str
    axis: np.ndarray
    mimic: tuple[str, float, float] | None  # (leader joint, multiplier, offset)


# The 2F-85 linkage (ros2_robotiq_gripper robotiq_2f_85_macro.urdf.xacro): every finger joint
# turns with the knuckle by these factors, so the pads stay parallel. Upstream main dropped the
# mimic tags (the hardware drives them), so the couplings are applied here by name.
LINKAGE = {"robotiq_85_left_knuckle_joint": 1.0, "robotiq_85_right_knuckle_joint": -1.0,
           "robotiq_85_left_inner_knuckle_joint": 1.0,
           "robotiq_85_right_inner_knuckle_joint": -1.0,
           "robotiq_85_left_finger_tip_joint": -1.0, "robotiq_85_right_finger_tip_joint": 1.0}


def _rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                              math.cos(yaw), math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def parse_joints(urdf: str) -> dict[str, Joint]:
    """child link -> the joint that carries it (ConfigError on text that is not a URDF)."""
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as e:
        raise ConfigError(f"gripper description is not valid XML: {e}") from e
    joints: dict[str, Joint] = {}
    for j in root.iter("joint"):
        parent, child = j.find("parent"), j.find("child")
        if parent is None or child is None:
            continue
        origin = np.eye(4)
        o = j.find("origin")
        if o is not None:
            origin[:3, 3] = [float(v) for v in o.get("xyz", "0 0 0").split()]
            origin[:3, :3] = _rpy(*(float(v) for v in o.get("rpy", "0 0 0").split()))
        a = j.find("axis")
        axis = np.array([float(v) for v in (a.get("xyz", "1 0 0") if a is not None
                                            else "1 0 0").split()])
        m = j.find("mimic")
        mimic = None if m is None else (m.get("joint", ""), float(m.get("multiplier", "1")),
                                        float(m.get("offset", "0")))
        joints[child.get("link", "")] = Joint(j.get("name", ""), parent.get("link", ""),
                                              child.get("link", ""), origin,
                                              j.get("type", "fixed"), axis, mimic)
    return joints


def link_pose(joints: dict[str, Joint], link: str, positions: dict[str, float],
              root: str = ROOT_LINK) -> np.ndarray:
    """4x4 pose of ``link`` in ``root`` with joints at ``positions`` (by name; a mimic joint
    not named follows its leader; anything else stays at 0)."""
    chain: list[Joint] = []
    frame = link
    while frame != root:
        if frame not in joints or len(chain) > 64:
            raise ConfigError(f"gripper description has no chain {root} -> {link} "
                              f"(it stops at {frame})")
        chain.append(joints[frame])
        frame = joints[frame].parent
    pose = np.eye(4)
    for j in reversed(chain):
        pose = pose @ j.origin
        if j.kind in ("revolute", "continuous", "prismatic"):
            q = positions.get(j.name)
            if q is None and j.mimic is not None and j.mimic[0] in positions:
                q = j.mimic[1] * positions[j.mimic[0]] + j.mimic[2]
            move = np.eye(4)
            if j.kind == "prismatic":
                move[:3, 3] = j.axis / np.linalg.norm(j.axis) * float(q or 0.0)
            else:
                move[:3, :3] = _axis_angle(j.axis, float(q or 0.0))
            pose = pose @ move
    return pose


def pad_centre(urdf: str, knuckle: float) -> np.ndarray:
    """The point midway between the two pad frames, in tool0, at a knuckle angle (rad)."""
    joints = parse_joints(urdf)
    positions = {name: factor * knuckle for name, factor in LINKAGE.items()}
    pads = [link_pose(joints, pad, positions)[:3, 3] for pad in PAD_LINKS]
    return (pads[0] + pads[1]) / 2.0


def tcp_offset_from_description(urdf: str, width: float = REFERENCE_WIDTH) -> float:
    """tcp_offset (m along tool0 z) of the description at a finger gap of ``width``.

    ConfigError when the pads' centre is off tool0's z axis (then no single offset along z
    describes the TCP)."""
    centre = pad_centre(urdf, robotiq.width_to_position(width))
    if math.hypot(centre[0], centre[1]) > 0.003:
        raise ConfigError(f"the gripper description's pad centre is off tool0's z axis by "
                          f"({centre[0]:.4f}, {centre[1]:.4f}) m")
    return float(centre[2])


def tcp_range(urdf: str) -> tuple[float, float]:
    """(open, closed) pad-centre heights along tool0 z over the stroke."""
    return (float(pad_centre(urdf, 0.0)[2]),
            float(pad_centre(urdf, robotiq.CLOSED_POSITION)[2]))

"""Builds the MuJoCo model: UR5e (airo-models URDF), a 2F-85-like gripper, table, objects, camera.

The arm comes from the URDF shipped in the airo-models wheel (no download). MuJoCo converts it to
MJCF; the builder then edits that tree: gravity compensation and motor armature on the links,
position actuators, the gripper under ``tool0``, and the tabletop from ``layout``. Every object of
the catalogue is in every model (unused ones wait on a hidden shelf under the floor), so one
compiled model and one renderer serve every task and seed.
"""

from __future__ import annotations

import functools
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from frankenbot.errors import SimError
from frankenbot.sim import fixtures, layout, objects
from frankenbot.sim.objects import fmt as _fmt
from frankenbot.sim.objects import geom as _geom
from frankenbot.sim.objects import sub as _sub

JOINT_NAMES: tuple[str, ...] = (
    "shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
    "wrist_1_joint", "wrist_2_joint", "wrist_3_joint",
)
FINGER_JOINTS = ("left_finger_joint", "right_finger_joint")
FINGER_TRAVEL = 0.0425  # each finger, so the gap goes 85 mm -> 0
TCP_OFFSET = 0.145  # tool0 -> centre of the finger pads along tool0 z
TIMESTEP = 0.002

# Position-servo gains per joint (stiff like the UR's own controller; the feed-forward term in
# the controller removes the velocity lag). kv is applied implicitly by the integrator.
ARM_KP = (4000.0, 4000.0, 3000.0, 800.0, 800.0, 500.0)
ARM_KV = (400.0, 400.0, 250.0, 40.0, 40.0, 20.0)
ARM_FORCE = (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)
ARM_ARMATURE = (0.5, 0.5, 0.3, 0.05, 0.05, 0.05)
FINGER_KP = 1500.0
FINGER_FORCE = 40.0  # N per finger: closes firmly on a block without crushing the contact

CAMERA_NAME = "d435"
CAMERA_WIDTH = 640
CAMERA_HEIGHT = 480
CAMERA_HFOV_DEG = 69.0
CAMERA_POSITION = (1.15, -0.62, 0.78)
CAMERA_TARGET = (0.50, 0.0, 0.0)

ARM_CONTYPE, ARM_CONAFFINITY = 2, 1  # the arm collides with the world, not with itself


@dataclass(frozen=True)
class BuiltModel:
    model: mujoco.MjModel
    xml: str


def _urdf_path() -> Path:
    try:
        import airo_models
    except ImportError as e:  # pragma: no cover - the venv always has it
        raise SimError("the simulator needs the 'airo-models' package (UR5e URDF)") from e
    return Path(airo_models.__file__).parent / "arms" / "ur5e" / "ur5e.urdf"


def _arm_mjcf() -> tuple[ET.Element, Path]:
    """The UR5e as MJCF, converted by MuJoCo from the URDF (collision meshes used for drawing)."""
    urdf = _urdf_path()
    text = re.sub(r'\sdrake:[A-Za-z_]+="[^"]*"', "", urdf.read_text())
    text = text.replace(
        '<robot name="ur5e">',
        f'<robot name="ur5e"><mujoco><compiler meshdir="{urdf.parent}" discardvisual="true" '
        'fusestatic="false" strippath="false"/></mujoco>', 1)
    spec = mujoco.MjSpec.from_string(text)
    spec.compile()
    return ET.fromstring(spec.to_xml()), urdf.parent


def optical_pose(position, target) -> np.ndarray:
    """4x4 T_base_optical for a camera at ``position`` looking at ``target`` (x right, y down)."""
    p = np.asarray(position, float)
    z = np.asarray(target, float) - p
    z /= np.linalg.norm(z)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, y, z, p
    return T


def camera_fovy_deg(width: int = CAMERA_WIDTH, height: int = CAMERA_HEIGHT) -> float:
    fx = (width / 2) / math.tan(math.radians(CAMERA_HFOV_DEG) / 2)
    return math.degrees(2 * math.atan((height / 2) / fx))


def _add_gripper(tool0: ET.Element) -> None:
    """A parallel-jaw gripper with the 2F-85's stroke: palm plus two prismatic fingers.

    Fingers close along tool0's y axis; the pads' centre (the TCP) is TCP_OFFSET along tool0 z.
    """
    common = dict(contype=ARM_CONTYPE, conaffinity=ARM_CONAFFINITY)
    dark = "0.15 0.15 0.15 1"
    palm = _sub(tool0, "body", name="gripper_palm", gravcomp=1)
    _sub(palm, "inertial", pos="0 0 0.05", mass=0.9, diaginertia="0.002 0.002 0.001")
    _sub(palm, "geom", type="cylinder", size="0.038 0.02", pos="0 0 0.02", rgba=dark, **common)
    _sub(palm, "geom", type="box", size="0.03 0.055 0.03", pos="0 0 0.07", rgba=dark, **common)
    _sub(palm, "site", name="tcp", pos=f"0 0 {TCP_OFFSET}", size="0.005", rgba="1 0 0 0")
    pad_z = TCP_OFFSET
    for side, sign in (("left", 1), ("right", -1)):
        y0 = sign * (layout.BLOCK_SIZE * 0 + FINGER_TRAVEL)
        finger = _sub(palm, "body", name=f"{side}_finger", pos=f"0 {y0:.4f} 0", gravcomp=1)
        _sub(finger, "inertial", pos=f"0 {sign * 0.01} {pad_z - 0.02}", mass=0.05,
             diaginertia="2e-5 2e-5 1e-5")
        _sub(finger, "joint", name=f"{side}_finger_joint", type="slide",
             axis=f"0 {-sign} 0", range=f"0 {FINGER_TRAVEL}", damping=8, armature=0.01)
        # link from the palm down to the pad (outside the closing gap)
        _sub(finger, "geom", type="box", size="0.011 0.006 0.03",
             pos=f"0 {sign * 0.014} {pad_z - 0.05}", rgba=dark, **common)
        _sub(finger, "geom", name=f"{side}_pad", type="box", size="0.011 0.005 0.0225",
             pos=f"0 {sign * 0.005} {pad_z}", rgba="0.25 0.25 0.25 1", friction="1.5 0.02 0.001",
             condim=4, priority=1, solref="0.004 1", solimp="0.95 0.99 0.001", **common)


def gripper_description(closed: float) -> str:
    """The sim gripper of ``_add_gripper`` as a URDF rooted at tool0, as the real cell's gripper
    robot_state_publisher serves the 2F-85's (urdf/robotiq_on_tool0.urdf.xacro) on
    /robotiq/robot_description: the driver twin publishes it, so ``frankenbot doctor`` reads
    the TCP of the gripper the twin really has (frankenbot.tcp: the centre between
    ``frankenbot_left_pad`` and ``frankenbot_right_pad``, TCP_OFFSET here).

    The Robotiq's one joint, the knuckle (0 open .. ``closed`` rad, what /robotiq/joint_states
    carry), leads; each finger slides FINGER_TRAVEL over that range (mimic). The pad frames sit
    at the centre of each pad's contact face, which is the finger body's origin plane.
    """
    from frankenbot import robotiq, tcp

    if not (math.isfinite(closed) and closed > 0.0):
        raise SimError(f"closed knuckle position must be > 0 rad, got {closed}")
    robot = ET.Element("robot", name="frankenbot_sim_gripper")

    def joint(name: str, kind: str, parent: str, child: str, xyz: str,
              **extra: str) -> ET.Element:
        j = _sub(robot, "joint", name=name, type=kind)
        _sub(j, "parent", link=parent)
        _sub(j, "child", link=child)
        _sub(j, "origin", xyz=xyz, rpy="0 0 0")
        if "axis" in extra:
            _sub(j, "axis", xyz=extra["axis"])
        return j

    for link in ("tool0", "gripper_palm", "robotiq_85_left_knuckle_link", "left_finger",
                 "right_finger", *tcp.PAD_LINKS):
        _sub(robot, "link", name=link)
    joint("gripper_palm_joint", "fixed", "tool0", "gripper_palm", "0 0 0")
    knuckle = joint(robotiq.KNUCKLE_JOINT, "revolute", "gripper_palm",
                    "robotiq_85_left_knuckle_link", "0 0 0", axis="0 -1 0")
    _sub(knuckle, "limit", lower="0", upper=f"{closed:.6g}", effort="10", velocity="2")
    for side, sign, pad in (("left", 1, tcp.PAD_LINKS[0]), ("right", -1, tcp.PAD_LINKS[1])):
        finger = joint(f"{side}_finger_joint", "prismatic", "gripper_palm", f"{side}_finger",
                       f"0 {sign * FINGER_TRAVEL:.6g} 0", axis=f"0 {-sign} 0")
        _sub(finger, "limit", lower="0", upper=f"{FINGER_TRAVEL:.6g}", effort="40",
             velocity="0.15")
        _sub(finger, "mimic", joint=robotiq.KNUCKLE_JOINT,
             multiplier=f"{FINGER_TRAVEL / closed:.9g}", offset="0")
        joint(f"{pad}_joint", "fixed", f"{side}_finger", pad, f"0 0 {TCP_OFFSET:.6g}")
    return ET.tostring(robot, encoding="unicode")


def _add_arm_settings(root: ET.Element) -> None:
    for body in root.iter("body"):
        if body.get("name") not in ("base_link", "base_link_inertia", "base", None):
            body.set("gravcomp", "1")
    for geom in root.iter("geom"):
        geom.set("contype", str(ARM_CONTYPE))
        geom.set("conaffinity", str(ARM_CONAFFINITY))
        geom.set("rgba", "0.62 0.66 0.70 1")
    by_name = {j.get("name"): j for j in root.iter("joint")}
    for name, arm in zip(JOINT_NAMES, ARM_ARMATURE, strict=True):
        by_name[name].set("armature", str(arm))
        by_name[name].set("actuatorgravcomp", "true")


def _add_table(world: ET.Element) -> None:
    cx, cy = layout.TABLE_CENTRE
    hx, hy = layout.TABLE_HALF
    _geom(world, name="floor", type="box", size="3 3 0.05", pos=f"0 0 {layout.FLOOR_Z - 0.05}",
          rgba="0.35 0.35 0.38 1")
    _geom(world, name="parking_shelf", type="box", size="4 4 0.05",
          pos=f"0 0 {layout.PARKING_Z - 0.05}", rgba="0.2 0.2 0.2 1")
    _geom(world, name="table", type="box", size=f"{hx} {hy} 0.02",
          pos=f"{cx} {cy} {layout.TABLE_TOP_Z - 0.02}", rgba="0.72 0.60 0.45 1",
          friction="0.8 0.005 0.0001")
    zone = layout.ZONE
    _geom(world, name="zone", type="box", contype=0, conaffinity=0,
          size=f"{zone.size[0] / 2} {zone.size[1] / 2} 0.0005",
          pos=f"{zone.centre[0]} {zone.centre[1]} {layout.TABLE_TOP_Z + 0.0005}",
          rgba=_fmt(zone.rgba))


def _add_objects(world: ET.Element) -> None:
    for index, spec in enumerate(layout.OBJECTS):
        px, py = layout.parking_position(index)
        objects.build_object(world, spec, (px, py, layout.PARKING_Z + 0.2))


def fixture_parking(index: int) -> tuple[float, float, float]:
    """Where fixture ``index`` waits when a scene has none of its kind: under the floor, above
    the objects' shelf, far apart."""
    return (-3.0 + 1.2 * index, 3.0, layout.PARKING_Z + 1.0)


def _add_fixtures(root: ET.Element, world: ET.Element) -> None:
    fixtures.add_assets(root)
    for index, inst in enumerate(fixtures.INSTANCES):
        fixtures.build_fixture(world, inst, fixture_parking(index))


def _add_camera(world: ET.Element) -> None:
    T = optical_pose(CAMERA_POSITION, CAMERA_TARGET)
    x_mj, y_mj = T[:3, 0], -T[:3, 1]  # MuJoCo cameras: x right, y up, look along -z
    _sub(world, "camera", name=CAMERA_NAME, pos=_fmt(CAMERA_POSITION),
         xyaxes=_fmt(np.concatenate([x_mj, y_mj])), fovy=f"{camera_fovy_deg():.6f}")
    _sub(world, "light", name="key", pos="0.4 -0.3 2.0", dir="0 0.1 -1", castshadow="false",
         diffuse="0.7 0.7 0.7")
    _sub(world, "light", name="fill", pos="1.5 0.5 1.5", dir="-1 -0.3 -1", castshadow="false",
         diffuse="0.35 0.35 0.35")


def build_model() -> BuiltModel:
    """Compile the complete tabletop model (arm, gripper, table, every object, drawer, camera)."""
    root, meshdir = _arm_mjcf()
    _add_arm_settings(root)
    tool0 = next(b for b in root.iter("body") if b.get("name") == "tool0")
    _add_gripper(tool0)
    compiler = root.find("compiler")
    if compiler is None:
        compiler = _sub(root, "compiler")
    compiler.set("meshdir", str(meshdir))
    root.insert(1, ET.Element("option", {"timestep": str(TIMESTEP), "integrator": "implicitfast",
                                         "cone": "elliptic", "impratio": "5"}))
    visual = ET.Element("visual")
    _sub(visual, "quality", offsamples=0, shadowsize=0)
    _sub(visual, "map", znear=0.02, zfar=20)
    _sub(visual, "global", offwidth=1280, offheight=960)
    _sub(visual, "headlight", ambient="0.35 0.35 0.35", diffuse="0.3 0.3 0.3")
    root.insert(2, visual)
    world = root.find("worldbody")
    assert world is not None
    _add_table(world)
    _add_objects(world)
    _add_fixtures(root, world)
    _add_camera(world)
    actuator = _sub(root, "actuator")
    for name, kp, kv, frc in zip(JOINT_NAMES, ARM_KP, ARM_KV, ARM_FORCE, strict=True):
        _sub(actuator, "position", name=f"{name}_servo", joint=name, kp=kp, kv=kv,
             forcerange=f"{-frc} {frc}", ctrlrange="-6.2832 6.2832")
    for jname in FINGER_JOINTS:
        _sub(actuator, "position", name=f"{jname}_servo", joint=jname, kp=FINGER_KP,
             forcerange=f"{-FINGER_FORCE} {FINGER_FORCE}", ctrlrange=f"0 {FINGER_TRAVEL}")
    # the two arm bodies that meet at the base never need contact checks with the table
    contact = _sub(root, "contact")
    _sub(contact, "exclude", body1="shoulder_link", body2="world")
    for inst in fixtures.INSTANCES:  # pinned fixture bodies standing on (or 1 mm over) the table
        _sub(contact, "exclude", body1=inst.fid, body2="world")
    xml = ET.tostring(root, encoding="unicode")
    try:
        model = mujoco.MjModel.from_xml_string(xml)
    except ValueError as e:
        raise SimError(f"could not compile the sim model: {e}") from e
    return BuiltModel(model=model, xml=xml)


@functools.lru_cache(maxsize=1)
def arm_home_boxes() -> tuple[tuple[tuple[float, float, float], tuple[float, float, float]], ...]:
    """World-axis boxes (centre, half extents) bounding the arm's and gripper's geoms at HOME.

    What the camera sees of the arm at every reset: the task sampler uses them (with the
    objects) to keep task objects in the camera's line of sight. Each geom's own bounding box
    (MuJoCo's ``geom_aabb``) rotated into the world and bounded again (conservative).
    """
    from frankenbot.sim.kinematics import HOME

    m = build_model().model
    d = mujoco.MjData(m)
    for i, name in enumerate(JOINT_NAMES):
        d.qpos[int(m.joint(name).qposadr[0])] = HOME[i]
    mujoco.mj_forward(m, d)
    out = []
    for g in range(m.ngeom):
        if int(m.geom_contype[g]) != ARM_CONTYPE:
            continue
        rot = d.geom_xmat[g].reshape(3, 3)
        local_centre, local_half = m.geom_aabb[g][:3], m.geom_aabb[g][3:]
        centre = d.geom_xpos[g] + rot @ local_centre
        half = np.abs(rot) @ local_half
        out.append((tuple(float(v) for v in centre), tuple(float(v) for v in half)))
    return tuple(out)

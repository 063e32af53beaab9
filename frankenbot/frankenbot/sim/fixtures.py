"""Articulated fixtures: a cabinet of three drawers, a hinged-door box, a sliding-door cupboard,
a light panel (push button, toggle switch, lamp), a stove (knob, burner) and the first waves'
one-drawer unit.

Each kind is described once, in its own frame: origin at the centre of its footprint on the
table, x from the front (-x, where its handles are) to the back, z up. ``build`` turns the
description into MJCF; ``parts`` into the geometry the brain's fixture map carries (where each
handle is when closed, which way it opens and how far); the world reads each part's state from
its joint. A placed fixture is a pose (x, y, yaw) on the table: its root body has a free joint
that the world pins to that pose every step (or parks under the floor when the scene has no
such fixture), so one compiled model serves every scene and a render process, which only gets
``qpos``, draws the fixtures where they are.

Lit things (the lamp's bulb, the stove's burner) are two geoms: the dark one is always there,
the glowing one rides on a slide joint the world sets from the fixture's logic: up and covering
the dark one when on, sunk inside the body when off. The image alone shows the state.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from frankenbot.sim.objects import fmt, geom, sub

WOOD = "0.60 0.40 0.22 1"
WOOD_INNER = "0.68 0.48 0.28 1"
DARK = "0.1 0.1 0.1 1"
METAL = "0.78 0.78 0.80 1"
LIT_DROP = 0.08  # m a glowing geom sinks when off (inside its housing)
FIXTURE_MASS = 40.0  # root body mass: pinned every step, heavy so contacts barely move it


@dataclass(frozen=True)
class PartSpec:
    """One part of a fixture in the fixture's frame (metres, radians).

    ``kind``: drawer | hinged_door | sliding_door | button | switch | knob | light | burner.
    ``position``/``size``: the part's box (a drawer's sliding box, a door's panel, a button)
    when closed or off. ``handle``: the handle bar's centre when closed; ``bar``: its axis
    ("y" horizontal across the front, "z" vertical). ``axis``: opening direction of a drawer
    or sliding door; for a hinged door the hinge's axis direction (the door opens by a positive
    turn about it) and ``hinge`` a point on it. ``travel``: full opening (m or rad).
    ``controls``: the ids (suffixes) of the lights/burners a control switches.
    """

    suffix: str
    kind: str
    joint: str  # joint suffix in the MJCF ("" for parts without a joint: light, burner)
    position: tuple[float, float, float]
    size: tuple[float, float, float]
    handle: tuple[float, float, float] | None = None
    bar: str = ""
    axis: tuple[float, float, float] = (-1.0, 0.0, 0.0)
    hinge: tuple[float, float, float] | None = None
    travel: float = 0.0
    cavity_centre: tuple[float, float, float] | None = None
    cavity_size: tuple[float, float, float] | None = None
    controls: tuple[str, ...] = ()
    handle_length: float = 0.0


@dataclass(frozen=True)
class FixtureKind:
    """A kind of fixture: its outer box, colour, parts and which of them it opens by name."""

    kind: str
    size: tuple[float, float, float]  # depth (x), width (y), height (z)
    colour: str
    label: str
    parts: tuple[PartSpec, ...] = ()
    top_surface: bool = False  # its top is a place to put things on
    cavity_centre: tuple[float, float, float] | None = None  # inside, behind a door
    cavity_size: tuple[float, float, float] | None = None
    extra: tuple[tuple[str, float], ...] = field(default=())


# ------------------------------------------------------------------------------ the kinds
# The cabinet of three drawers (the field's "top/middle/bottom drawer of the cabinet").
CAB_D, CAB_W, CAB_H, CAB_WALL = 0.26, 0.30, 0.36, 0.012
CAB_STROKE = 0.16
CAB_HANDLE_OUT = 0.05
CAB_BAY = (CAB_H - 2 * CAB_WALL) / 3


def _cabinet_parts() -> tuple[PartSpec, ...]:
    parts = []
    box_len = CAB_D - CAB_WALL - 0.004
    inner_w = CAB_W - 2 * CAB_WALL - 0.004
    for k, name in enumerate(("bottom", "middle", "top")):
        z0 = CAB_WALL + k * CAB_BAY  # bay floor
        zc = z0 + CAB_BAY / 2
        box_h = CAB_BAY - 0.012
        front = -CAB_D / 2
        cx = front + box_len / 2
        cav_len, cav_w, cav_h = box_len - 0.02, inner_w - 0.016, box_h - 0.01
        parts.append(PartSpec(
            f"{name}_drawer", "drawer", f"{name}_drawer_slide",
            position=(cx, 0.0, zc), size=(box_len, inner_w, box_h),
            handle=(front - CAB_HANDLE_OUT, 0.0, zc), bar="y", axis=(-1.0, 0.0, 0.0),
            travel=CAB_STROKE, cavity_centre=(cx + 0.005, 0.0, z0 + 0.004 + 0.008 + cav_h / 2),
            cavity_size=(cav_len, cav_w, cav_h), handle_length=0.10))
    return tuple(parts)


CABINET = FixtureKind("cabinet", (CAB_D, CAB_W, CAB_H), "brown", "cabinet", _cabinet_parts(),
                      top_surface=True)

# A box with a hinged door on its front (microwave-like). The hinge is on the +y edge; the
# door's free edge, with a vertical handle bar, is at -y.
MW_D, MW_W, MW_H, MW_WALL = 0.24, 0.32, 0.22, 0.012
MW_DOOR_T = 0.014
MW_HANDLE_OUT = 0.04
MW_TRAVEL = 1.75  # rad, a little past square


def _box_door(kind: str, label: str, colour: str, sliding: bool) -> FixtureKind:
    """A box with a door on its front. Standing on the left of the table facing -y (yaw pi/2),
    local +y points towards the robot. A hinged door turns about its +y edge (the robot's side),
    so its handle, on the far edge, swings towards the robot as it opens and stays in reach; a
    sliding door's handle is on its +y edge and it slides +y, towards the robot."""
    front = -MW_D / 2
    zc = MW_H / 2
    cav = (MW_D - 2 * MW_WALL - 0.01, MW_W - 2 * MW_WALL - 0.01, MW_H - 2 * MW_WALL - 0.01)
    cav_c = (front + MW_WALL + 0.005 + cav[0] / 2, 0.0, MW_WALL + 0.005 + cav[2] / 2)
    out_x = front - MW_DOOR_T - MW_HANDLE_OUT
    panel = dict(position=(front - MW_DOOR_T / 2, 0.0, zc), size=(MW_DOOR_T, MW_W, MW_H - 0.01))
    if sliding:
        part = PartSpec(f"{kind}_door", "sliding_door", "door_slide",
                        handle=(out_x, MW_W / 2 - 0.035, zc), bar="z", axis=(0.0, 1.0, 0.0),
                        travel=MW_W - 0.06, handle_length=0.10,
                        **panel)  # type: ignore[arg-type]
    else:
        part = PartSpec(f"{kind}_door", "hinged_door", "door_hinge",
                        handle=(out_x, -MW_W / 2 + 0.035, zc), bar="z", axis=(0.0, 0.0, -1.0),
                        hinge=(front - MW_DOOR_T / 2, MW_W / 2, 0.0), travel=MW_TRAVEL,
                        handle_length=0.10, **panel)  # type: ignore[arg-type]
    return FixtureKind(kind, (MW_D, MW_W, MW_H), colour, label, (part,),
                       top_surface=True, cavity_centre=cav_c, cavity_size=cav)


MICROWAVE = _box_door("microwave", "microwave", "white", sliding=False)
CUPBOARD = _box_door("cupboard", "cupboard", "brown", sliding=True)

# The light panel: a flat base with a push button and a toggle switch, a lamp on a post.
LP_D, LP_W, LP_H = 0.14, 0.22, 0.025
LAMP_Z, LAMP_R = 0.17, 0.03
BUTTON_TRAVEL = 0.008
SWITCH_TRAVEL = 0.22  # rad each side of centre


def _light_parts() -> tuple[PartSpec, ...]:
    return (
        PartSpec("button", "button", "button_press", position=(-0.02, -0.06, LP_H + 0.009),
                 size=(0.03, 0.03, 0.018), axis=(0.0, 0.0, -1.0), travel=BUTTON_TRAVEL,
                 controls=("light",)),
        PartSpec("switch", "switch", "switch_rock", position=(-0.02, 0.0, LP_H + 0.008),
                 size=(0.05, 0.026, 0.016), axis=(0.0, 1.0, 0.0), travel=SWITCH_TRAVEL,
                 controls=("light",)),
        PartSpec("light", "light", "light_glow", position=(0.03, 0.07, LAMP_Z),
                 size=(2 * LAMP_R, 2 * LAMP_R, 2 * LAMP_R)),
    )


LIGHT_PANEL = FixtureKind("light_panel", (LP_D, LP_W, LAMP_Z + LAMP_R), "gray", "light panel",
                          _light_parts())

# The stove: a low box with a burner plate on top and a knob at the front right.
ST_D, ST_W, ST_H = 0.26, 0.30, 0.03
KNOB_TRAVEL = 1.6  # rad
KNOB_ON = 0.6  # rad turned at which the burner lights


def _stove_parts() -> tuple[PartSpec, ...]:
    return (
        PartSpec("stove_knob", "knob", "knob_turn", position=(-0.09, -0.11, ST_H + 0.0125),
                 size=(0.04, 0.04, 0.025), axis=(0.0, 0.0, 1.0), travel=KNOB_TRAVEL,
                 controls=("stove_burner",)),
        PartSpec("stove_burner", "burner", "burner_glow", position=(0.02, 0.03, ST_H + 0.002),
                 size=(0.16, 0.16, 0.004)),
    )


STOVE = FixtureKind("stove", (ST_D, ST_W, ST_H), "black", "stove", _stove_parts(),
                    top_surface=True)


# The first waves' cabinet with one drawer (kept exactly: the old task families use it).
@dataclass(frozen=True)
class DrawerUnit:
    """A cabinet with one drawer that slides along ``pull_axis`` towards the robot (world frame:
    the unit stands at ``body_centre`` facing -x)."""

    name: str = "drawer"
    body_centre: tuple[float, float, float] = (0.72, 0.38, 0.06)  # cabinet centre
    body_size: tuple[float, float, float] = (0.20, 0.26, 0.12)  # cabinet outer extent
    pull_axis: tuple[float, float, float] = (-1.0, 0.0, 0.0)
    stroke: float = 0.12
    wall: float = 0.01
    handle_offset: float = 0.05  # handle bar distance in front of the drawer face
    handle_length: float = 0.10
    handle_radius: float = 0.007
    handle_z: float = 0.07  # handle height above the table

    @property
    def front_x(self) -> float:
        return self.body_centre[0] - self.body_size[0] / 2

    def handle_position(self, opening: float = 0.0) -> tuple[float, float, float]:
        """Handle bar centre when the drawer is open by ``opening`` metres."""
        return (self.front_x - self.handle_offset - opening, self.body_centre[1], self.handle_z)

    @property
    def box_length(self) -> float:
        """Outer length of the sliding box along the pull axis (front panel flush when closed)."""
        return self.body_size[0] - self.wall - 0.002

    def box_centre_x(self, opening: float = 0.0) -> float:
        return self.front_x + self.box_length / 2 - opening

    @property
    def cavity_size(self) -> tuple[float, float, float]:
        """Inner extent of the drawer box (x, y, z); a few mm of play inside the cabinet."""
        sx, sy, sz = self.body_size
        w = self.wall
        return (self.box_length - 2 * w, sy - 4 * w - 0.004, sz - 3 * w - 0.004)

    def cavity_centre(self, opening: float = 0.0) -> tuple[float, float, float]:
        """Centre of the drawer's inner cavity (bottom face + half height) at ``opening``."""
        return (self.box_centre_x(opening), self.body_centre[1],
                2 * self.wall + self.cavity_size[2] / 2)


DRAWER = DrawerUnit()
DRAWER_UNIT = FixtureKind("drawer", DRAWER.body_size, "brown", "drawer")

KINDS: dict[str, FixtureKind] = {k.kind: k for k in (CABINET, MICROWAVE, CUPBOARD, LIGHT_PANEL,
                                                     STOVE, DRAWER_UNIT)}


@dataclass(frozen=True)
class FixtureInstance:
    """A fixture of the model: its id (the MJCF root body's name) and its kind."""

    fid: str
    kind: str

    @property
    def spec(self) -> FixtureKind:
        return KINDS[self.kind]

    def part_id(self, suffix: str) -> str:
        """The part's scene id: its suffix when the fixture is the only one of its kind and
        named after it (``top_drawer``), else prefixed (``left_cabinet_top_drawer``)."""
        return suffix if self.fid == self.kind or suffix.startswith(self.fid) else (
            f"{self.fid}_{suffix}")

    def joint(self, part: PartSpec) -> str:
        return f"{self.fid}_{part.joint}" if self.kind != "drawer" else "drawer_slide"


# every fixture in the model (each kind once; the model holds them all, parked when unused)
INSTANCES: tuple[FixtureInstance, ...] = tuple(FixtureInstance(k, k) for k in KINDS)
INSTANCE_BY_ID = {f.fid: f for f in INSTANCES}


# ------------------------------------------------------------------------------ MJCF
def _box(body: ET.Element, centre, half, rgba: str, **kw) -> None:
    geom(body, type="box", size=fmt(half), pos=fmt(centre), rgba=rgba, **kw)


def _handle_bar(body: ET.Element, name: str, centre, bar: str, length: float,
                out: float) -> None:
    """A bar on two standoffs reaching back ``out`` along +x to the face it is mounted on."""
    euler = "1.5708 0 0" if bar == "y" else "0 0 0"
    geom(body, name=name, type="capsule", size=f"0.007 {length / 2}", pos=fmt(centre),
         euler=euler, rgba=DARK, mass=0.02, friction="1.5 0.02 0.001", condim=4)
    for sgn in (-1, 1):
        off = (0.0, sgn * (length / 2 - 0.005), 0.0) if bar == "y" else (
            0.0, 0.0, sgn * (length / 2 - 0.005))
        _box(body, (centre[0] + out / 2, centre[1] + off[1], centre[2] + off[2]),
             (out / 2, 0.005, 0.005), DARK, mass=0.01)


def _root(world: ET.Element, inst: FixtureInstance, parked: tuple[float, float, float]
          ) -> ET.Element:
    root = sub(world, "body", name=inst.fid, pos=fmt(parked), gravcomp=1)
    sub(root, "freejoint", name=f"{inst.fid}_pin")
    sub(root, "inertial", pos="0 0 0.05", mass=FIXTURE_MASS, diaginertia="2 2 2")
    return root


def _build_cabinet(root: ET.Element, inst: FixtureInstance) -> None:
    d, w, h, t = CAB_D, CAB_W, CAB_H, CAB_WALL
    z0 = 0.001  # 1 mm above the table: no contacts with it
    _box(root, (0, 0, z0 + h - t / 2), (d / 2, w / 2, t / 2), WOOD)  # top
    _box(root, (0, 0, z0 + t / 2), (d / 2, w / 2, t / 2), WOOD)  # bottom
    _box(root, (d / 2 - t / 2, 0, z0 + h / 2), (t / 2, w / 2, h / 2), WOOD)  # back
    for sgn in (-1, 1):
        _box(root, (0, sgn * (w / 2 - t / 2), z0 + h / 2), (d / 2, t / 2, h / 2), WOOD)
    for k in (1, 2):  # shelves between the bays
        _box(root, (0.01, 0, z0 + t + k * CAB_BAY - 0.003), (d / 2 - 0.01, w / 2 - t, 0.003),
             WOOD)
    for part in CABINET.parts:
        cx, _, zc = part.position
        box_len, inner_w, box_h = part.size
        drawer = sub(root, "body", name=inst.part_id(part.suffix), pos=fmt((cx, 0, z0 + zc)))
        sub(drawer, "joint", name=inst.joint(part), type="slide", axis="-1 0 0",
            range=f"0 {part.travel}", damping=5, frictionloss=0.5)
        wt = 0.008
        _box(drawer, (0, 0, -box_h / 2 + wt / 2), (box_len / 2, inner_w / 2, wt / 2), WOOD_INNER,
             mass=0.3)
        _box(drawer, (-box_len / 2 + 0.006, 0, 0), (0.006, inner_w / 2 + t / 2 - 0.001,
                                                      CAB_BAY / 2 - 0.004), WOOD, mass=0.2)
        _box(drawer, (box_len / 2 - wt / 2, 0, -0.004), (wt / 2, inner_w / 2, box_h / 2 - 0.004),
             WOOD_INNER, mass=0.05)
        for sgn in (-1, 1):
            _box(drawer, (0, sgn * (inner_w / 2 - wt / 2), -0.004),
                 (box_len / 2 - 0.012, wt / 2, box_h / 2 - 0.004), WOOD_INNER, mass=0.05)
        hx = part.handle[0] - cx  # type: ignore[index]
        _handle_bar(drawer, f"{inst.part_id(part.suffix)}_handle", (hx, 0, 0), "y",
                    part.handle_length, -box_len / 2 - hx)


def _build_box_door(root: ET.Element, inst: FixtureInstance) -> None:
    spec = inst.spec
    d, w, h, t = MW_D, MW_W, MW_H, MW_WALL
    z0 = 0.001
    body_rgba = "0.92 0.92 0.90 1" if spec.colour == "white" else WOOD
    inner = "0.35 0.35 0.35 1" if spec.colour == "white" else WOOD_INNER
    _box(root, (0, 0, z0 + h - t / 2), (d / 2, w / 2, t / 2), body_rgba)
    _box(root, (0, 0, z0 + t / 2), (d / 2, w / 2, t / 2), inner)
    _box(root, (d / 2 - t / 2, 0, z0 + h / 2), (t / 2, w / 2, h / 2), body_rgba)
    for sgn in (-1, 1):
        _box(root, (0, sgn * (w / 2 - t / 2), z0 + h / 2), (d / 2, t / 2, h / 2), body_rgba)
    part = spec.parts[0]
    door_rgba = "0.25 0.27 0.30 1" if spec.colour == "white" else WOOD
    px, _, pz = part.position
    dt = MW_DOOR_T
    if part.kind == "hinged_door":
        hx, hy, _ = part.hinge  # type: ignore[misc]
        door = sub(root, "body", name=inst.part_id(part.suffix), pos=fmt((hx, hy, z0)))
        sub(door, "joint", name=inst.joint(part), type="hinge", axis=fmt(part.axis),
            range=f"0 {part.travel}", damping=0.4, frictionloss=0.03)
        # the panel runs from the hinge along -y
        _box(door, (0, -w / 2, pz), (dt / 2, w / 2 - 0.002, part.size[2] / 2), door_rgba,
             mass=0.6)
        ax, ay, az = part.handle  # type: ignore[misc]
        _handle_bar(door, f"{inst.part_id(part.suffix)}_handle", (ax - hx, ay - hy, az), "z",
                    part.handle_length, -dt / 2 - (ax - hx))
    else:
        door = sub(root, "body", name=inst.part_id(part.suffix), pos=fmt((px, 0, z0)))
        sub(door, "joint", name=inst.joint(part), type="slide", axis=fmt(part.axis),
            range=f"0 {part.travel}", damping=3, frictionloss=0.3)
        _box(door, (0, 0, pz), (dt / 2, w / 2 - 0.004, part.size[2] / 2), door_rgba, mass=0.5)
        ax, ay, az = part.handle  # type: ignore[misc]
        _handle_bar(door, f"{inst.part_id(part.suffix)}_handle", (ax - px, ay, az), "z",
                    part.handle_length, -dt / 2 - (ax - px))


def _build_light_panel(root: ET.Element, inst: FixtureInstance) -> None:
    z0 = 0.001
    grey = "0.55 0.56 0.58 1"
    _box(root, (0, 0, z0 + LP_H / 2), (LP_D / 2, LP_W / 2, LP_H / 2), grey)
    button, switch, light = LIGHT_PANEL.parts
    # the push button: a red cap on a spring, pressed down from above
    bx, by, bz = button.position
    b = sub(root, "body", name=inst.part_id("button"), pos=fmt((bx, by, z0 + bz)))
    sub(b, "joint", name=inst.joint(button), type="slide", axis="0 0 -1",
        range=f"0 {BUTTON_TRAVEL}", stiffness=400, springref=0, damping=2)
    geom(b, type="cylinder", size=f"0.015 {button.size[2] / 2}", rgba="0.85 0.1 0.1 1",
         mass=0.02)
    # the rocker switch: tilts about y, stable at either end (the world's detent)
    sx, sy, sz = switch.position
    s = sub(root, "body", name=inst.part_id("switch"), pos=fmt((sx, sy, z0 + sz)))
    sub(s, "joint", name=inst.joint(switch), type="hinge", axis="0 1 0",
        range=f"{-SWITCH_TRAVEL} {SWITCH_TRAVEL}", damping=0.002, armature=0.0005)
    _box(s, (0, 0, 0), (switch.size[0] / 2, switch.size[1] / 2, switch.size[2] / 2),
         "0.15 0.15 0.16 1", mass=0.02)
    # the lamp: a post and a dark bulb; the glowing bulb rises over it when lit
    lx, ly, lz = light.position
    geom(root, type="cylinder", size=f"0.008 {(lz - LP_H) / 2}",
         pos=fmt((lx, ly, z0 + LP_H + (lz - LP_H) / 2)), rgba=grey)
    geom(root, type="sphere", size=f"{LAMP_R}", pos=fmt((lx, ly, z0 + lz)),
         rgba="0.3 0.3 0.28 1")
    glow = sub(root, "body", name=inst.part_id("light") + "_glow",
               pos=fmt((lx, ly, z0 + lz)), gravcomp=1)
    sub(glow, "joint", name=inst.joint(light), type="slide", axis="0 0 1",
        range=f"{-LIT_DROP} 0")
    geom(glow, type="sphere", size=f"{LAMP_R + 0.002}", rgba="1.0 0.82 0.15 1",
         contype=0, conaffinity=0, mass=0.001, material="glow")


def _build_stove(root: ET.Element, inst: FixtureInstance) -> None:
    z0 = 0.001
    _box(root, (0, 0, z0 + ST_H / 2), (ST_D / 2, ST_W / 2, ST_H / 2), "0.16 0.16 0.17 1")
    knob, burner = STOVE.parts
    bx, by, bz = burner.position
    geom(root, type="cylinder", size=f"{burner.size[0] / 2} 0.002",
         pos=fmt((bx, by, z0 + ST_H + 0.002)), rgba="0.28 0.28 0.30 1")
    glow = sub(root, "body", name=inst.part_id("stove_burner") + "_glow",
               pos=fmt((bx, by, z0 + ST_H + 0.0025)), gravcomp=1)
    sub(glow, "joint", name=inst.joint(burner), type="slide", axis="0 0 1",
        range=f"{-LIT_DROP} 0")
    geom(glow, type="cylinder", size=f"{burner.size[0] / 2 - 0.01} 0.002",
         rgba="1.0 0.25 0.05 1", contype=0, conaffinity=0, mass=0.001, material="glow")
    kx, ky, kz = knob.position
    k = sub(root, "body", name=inst.part_id("stove_knob"), pos=fmt((kx, ky, z0 + kz)))
    sub(k, "joint", name=inst.joint(knob), type="hinge", axis="0 0 1",
        range=f"0 {KNOB_TRAVEL}", damping=0.02, frictionloss=0.03)
    geom(k, type="cylinder", size=f"0.02 {knob.size[2] / 2 - 0.004}",
         pos=f"0 0 {-0.004}", rgba=METAL, mass=0.02)
    # the grip: a bar across the knob's top that the fingers close on
    _box(k, (0, 0, knob.size[2] / 2 - 0.006), (0.018, 0.006, 0.008), "0.9 0.9 0.92 1",
         mass=0.005, friction="1.5 0.02 0.001", condim=4)


def _build_drawer_unit(root: ET.Element, inst: FixtureInstance) -> None:
    """The first waves' unit, geometry unchanged (the root stands at the cabinet's footprint
    centre, so every geom keeps its world position)."""
    d = DRAWER
    sx, sy, sz = d.body_size
    w = d.wall
    wood = "0.60 0.40 0.22 1"
    cz = d.body_centre[2]
    _box(root, (0, 0, cz + sz / 2 - w / 2), (sx / 2, sy / 2, w / 2), wood)
    _box(root, (sx / 2 - w / 2, 0, cz), (w / 2, sy / 2, sz / 2), wood)
    for sgn in (-1, 1):
        _box(root, (0, sgn * (sy / 2 - w / 2), cz), (sx / 2, w / 2, sz / 2), wood)
    ix, iy, iz = d.cavity_size
    box_x = d.box_length
    cx = d.body_centre[0]
    drawer = sub(root, "body", name="drawer_box", pos=f"{d.box_centre_x(0.0) - cx} 0 0")
    sub(drawer, "joint", name="drawer_slide", type="slide", axis=fmt(d.pull_axis),
        range=f"0 {d.stroke}", damping=5, frictionloss=0.5)
    _box(drawer, (0, 0, 1.5 * w), (box_x / 2, iy / 2 + w, w / 2), WOOD_INNER, mass=0.2)
    _box(drawer, (-box_x / 2 + w / 2, 0, w + (iz + w) / 2), (w / 2, iy / 2 + w, (iz + w) / 2),
         wood, mass=0.1)
    _box(drawer, (box_x / 2 - w / 2, 0, 2 * w + iz / 2), (w / 2, iy / 2 + w, iz / 2), WOOD_INNER,
         mass=0.05)
    for sgn in (-1, 1):
        _box(drawer, (0, sgn * (iy / 2 + w / 2), 2 * w + iz / 2), (box_x / 2 - w, w / 2, iz / 2),
             WOOD_INNER, mass=0.05)
    hx = -box_x / 2 - d.handle_offset
    geom(drawer, name="drawer_handle", type="capsule",
         size=f"{d.handle_radius} {d.handle_length / 2}", pos=fmt((hx, 0, d.handle_z)),
         euler="1.5708 0 0", rgba=DARK, mass=0.02, friction="1.5 0.02 0.001", condim=4)
    for sgn in (-1, 1):
        _box(drawer, (-box_x / 2 - d.handle_offset / 2, sgn * (d.handle_length / 2 - 0.005),
                      d.handle_z), (d.handle_offset / 2, 0.005, 0.005), DARK, mass=0.01)


_BUILDERS = {"cabinet": _build_cabinet, "microwave": _build_box_door,
             "cupboard": _build_box_door, "light_panel": _build_light_panel,
             "stove": _build_stove, "drawer": _build_drawer_unit}


def build_fixture(world: ET.Element, inst: FixtureInstance,
                  parked: tuple[float, float, float]) -> ET.Element:
    root = _root(world, inst, parked)
    _BUILDERS[inst.kind](root, inst)
    return root


def add_assets(root: ET.Element) -> None:
    """The glowing material (emission: lit whatever the scene's lights do)."""
    asset = root.find("asset")
    if asset is None:
        asset = ET.Element("asset")
        root.insert(0, asset)
    sub(asset, "material", name="glow", emission="1", specular="0", rgba="1 1 1 1")


# ------------------------------------------------------------------------------ geometry
def rotate(yaw: float, v: tuple[float, float, float]) -> tuple[float, float, float]:
    c, s = math.cos(yaw), math.sin(yaw)
    return (c * v[0] - s * v[1], s * v[0] + c * v[1], v[2])


def to_world(pose: tuple[float, float, float], v: tuple[float, float, float]
             ) -> tuple[float, float, float]:
    """A point of the fixture's frame in base_link for a fixture at ``pose`` (x, y, yaw)."""
    x, y, yaw = pose
    r = rotate(yaw, v)
    return (x + r[0], y + r[1], r[2])


def _part_data(inst: FixtureInstance, part: PartSpec, pose: tuple[float, float, float]
               ) -> dict:
    yaw = pose[2]
    out: dict = {"kind": part.kind, "label": inst.part_id(part.suffix).replace("_", " "),
                 "position": _r(to_world(pose, part.position)), "size": _r(part.size),
                 "yaw": round(yaw, 6), "axis": _r(rotate(yaw, part.axis))}
    if part.handle is not None:
        bar = "horizontal" if part.bar == "y" else "vertical"
        out.update(handle=_r(to_world(pose, part.handle)), bar=bar,
                   handle_length=part.handle_length)
    if part.hinge is not None:
        out["hinge"] = _r(to_world(pose, part.hinge))
    if part.travel:
        out["travel"] = round(part.travel, 6)
    if part.cavity_centre is not None and part.cavity_size is not None:
        out.update(cavity_centre=_r(to_world(pose, part.cavity_centre)),
                   cavity_size=_r(part.cavity_size))
    if part.controls:
        out["controls"] = [inst.part_id(c) for c in part.controls]
    return out


def _r(v) -> list[float]:
    return [round(float(c), 6) for c in v]


def map_entry(fid: str, x: float, y: float, yaw: float) -> dict:
    """The fixture map entry (``frankenbot.fixture_map`` YAML) of fixture ``fid`` standing at
    (x, y) with its front turned by ``yaw``: what the cell's map says about it."""
    inst = INSTANCE_BY_ID[fid]
    spec = inst.spec
    pose = (x, y, yaw)
    if inst.kind == "drawer":
        d = DRAWER
        dx, dy = x - d.body_centre[0], y - d.body_centre[1]
        if abs(dx) > 1e-9 or abs(dy) > 1e-9 or abs(yaw) > 1e-9:
            raise ValueError("the one-drawer unit stands where the first waves put it")
        return {"shape": "drawer", "colour": "brown", "label": "drawer",
                "position": list(d.body_centre), "size": list(d.body_size), "yaw": 0.0,
                "handle": _r(d.handle_position(0.0)), "handle_length": d.handle_length,
                "pull_axis": list(d.pull_axis), "stroke": d.stroke,
                "cavity_centre": _r(d.cavity_centre(0.0)), "cavity_size": _r(d.cavity_size)}
    out: dict = {"shape": spec.kind, "colour": spec.colour, "label": spec.label,
                 "position": _r(to_world(pose, (0.0, 0.0, spec.size[2] / 2))),
                 "size": _r(spec.size), "yaw": round(yaw, 6)}
    if spec.top_surface:
        out["top"] = True
    if spec.cavity_centre is not None and spec.cavity_size is not None:
        out.update(cavity_centre=_r(to_world(pose, spec.cavity_centre)),
                   cavity_size=_r(spec.cavity_size))
    out["parts"] = {inst.part_id(p.suffix): _part_data(inst, p, pose) for p in spec.parts}
    return out

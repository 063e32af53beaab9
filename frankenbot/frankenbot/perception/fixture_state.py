"""The state of the map's fixtures as the camera shows it: is each fixture there at all, how
far each drawer and sliding door is open, how far each hinged door has turned, whether each
lamp and burner is lit.

The map (``frankenbot.fixture_map``) says where a fixture stands and how its parts move; the
image says where they are now:

* a drawer or a sliding door by its handle: the dark bar moves along the part's axis, so the
  dark samples in the corridor the handle sweeps, at its height and across its length (the
  standoffs at its ends left out), give the opening (their median, corrected for the bar's
  visible surface lying towards the camera from its axis);
* a hinged door by its panel: the samples in front of the fixture's body, within the panel's
  reach from the hinge and between its bottom and top edges, lie on the panel (nothing else
  may stand in the space a door sweeps); their angle about the hinge, from the closed panel,
  is the door's angle;
* a lamp or a burner by its colour where it is: the lit geom glows (bright and saturated),
  the unlit one is dark gray; pixels whose depth shows something else in front are not used;
* a rocker switch by the tilt of its top, a knob by its grip bar's direction
  (``perception/control_angle.py``);
* presence: the column over a fixture's body must show it (samples standing clear of the
  table); a column that shows the table is a fixture the map names but the cell does not
  have, dropped from the scene with a log line, so a wrong map never has the robot act on a
  phantom fixture.

A part seen in no usable way this frame keeps its last measured state (the arm in front of a
drawer does not close it).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from frankenbot.fixture_map import FixtureMap, FixturePart
from frankenbot.perception.camera import CameraModel
from frankenbot.perception.colour import rgb_to_hsv
from frankenbot.perception.control_angle import knob_angle, local_cloud, switch_angle
from frankenbot.perception.fixture_geometry import (
    HANDLE_RADIUS,
    FixtureShape,
    axis_matrix,
    map_shapes,
    yaw_matrix,
)
from frankenbot.perception.segmentation import Foreground
from frankenbot.state import SceneObject

_log = logging.getLogger(__name__)

# which of some points (N, 3) lie within the arm's reach (the self filter's radius round its
# skeleton at the frame's joints)
ArmTest = Callable[[np.ndarray], np.ndarray]

DARK_VALUE = 0.24  # HSV value at or below which a sample is a dark handle bar
DARK_SATURATION = 0.5
CORRIDOR = 0.02  # m: a handle sample lies this close to the bar's line of travel
END_CLEAR = 0.015  # m at each end of the bar left out (the standoffs to the face)
MIN_HANDLE_SAMPLES = 6
PANEL_SLAB = 0.03  # m: a hinged door's samples lie this close to its panel's plane
MIN_PANEL_SAMPLES = 25
FACE_SIDE_CLEAR = 0.03  # m of a drawer front's sides left out (its box's side walls)
FACE_EDGE_CLEAR = 0.012  # m of its top and bottom left out
FACE_BAND = 0.008  # m: samples of the front panel lie this close to one another
MIN_FACE_SAMPLES = 15
DOOR_EDGE_CLEAR = 0.02  # m of the panel's top and bottom edges left out
# presence: the column over a fixture's body (inset from its edges)
PRESENCE_INSET = 0.02  # m
SOLID_TOPS = ("cabinet", "microwave", "cupboard", "stove", "drawer")  # their top is seen
TOP_BAND = 0.02  # m: a sample this close to the top's height shows the top
PRESENT_HEIGHT = 0.015  # m: a sample standing clear of the table (fixtures without a top)
PRESENT_SHARE = 0.5  # of the column's samples showing the fixture: it is there
ABSENT_SHARE = 0.6  # of them below where it would be (the table): it is not
MIN_COLUMN_SAMPLES = 40
GLOW_SATURATION = 0.45  # a lit lamp or burner: saturated ...
GLOW_VALUE = 0.55  # ... and bright
LIT_SHARE = 0.5  # of the unhidden pixels glowing: lit
UNLIT_SHARE = 0.15  # at most this share: off
MIN_LIT_PIXELS = 6
DEPTH_AGREE = 0.03  # m: a pixel whose depth is this close to the lamp's shows the lamp
ABSENT_FRAMES = 8  # frames in a row a fixture seen before must look gone to be left out
CONTROL_FRAMES = 8  # a switch's or knob's angle: the mean of this many frames' ...
CONTROL_JUMP = 0.25  # rad: ... while each is this close to it (else it was moved)


@dataclass(frozen=True)
class PartReading:
    """One part's measured state: ``opening`` (m or rad) or ``on``, and when it was seen."""

    opening: float | None = None
    on: bool | None = None
    stamp: float = 0.0


class FixtureObserver:
    """Measures the map's fixtures in each frame and keeps their last states."""

    def __init__(self, fmap: FixtureMap | None = None) -> None:
        self.fmap = fmap or FixtureMap()
        self.readings: dict[str, PartReading] = {}
        self.present: dict[str, bool] = {}
        self._absent_runs: dict[str, int] = {}  # consecutive frames a seen fixture looked gone
        self._angles: dict[str, list[float]] = {}  # a control's last frames' angles

    def set_map(self, fmap: FixtureMap) -> None:
        """A new map (a new scene): every state is measured afresh."""
        self.fmap = fmap
        self.reset()

    def reset(self) -> None:
        self.readings = {}
        self.present = {}
        self._absent_runs = {}
        self._angles = {}

    def states(self) -> dict[str, float]:
        """Part id -> the opening last measured (closed when never seen)."""
        return {pid: r.opening for pid, r in self.readings.items() if r.opening is not None}

    def shapes(self) -> tuple[FixtureShape, ...]:
        """The fixtures judged present, each at its measured state."""
        return map_shapes(self.fmap, self.states(), self.present)

    # ------------------------------------------------------------------ per frame
    def observe(self, fg: Foreground, rgb: np.ndarray, depth_mm: np.ndarray,
                camera: CameraModel, stamp: float, arm: ArmTest | None = None) -> None:
        """Measure presence and every part's state in one frame (``fg``: its samples above
        the table with their colours; ``depth_mm``: the full-resolution depth; ``arm``: which
        of some points lie within the arm's reach, when the joints are known)."""
        for f in self.fmap.fixtures:
            if f.kind == "zone":
                continue
            verdict = self._presence(f.fixture_id, fg)
            if verdict is False and self.present.get(f.fixture_id) is True:
                # seen before: one frame that shows lower surfaces (the arm's shadow in the
                # depth, an open drawer's edge) does not remove it; a run of them does
                self._absent_runs[f.fixture_id] = self._absent_runs.get(f.fixture_id, 0) + 1
                if self._absent_runs[f.fixture_id] < ABSENT_FRAMES:
                    verdict = None
            elif verdict is True:
                self._absent_runs[f.fixture_id] = 0
            if verdict is not None and verdict != self.present.get(f.fixture_id, True):
                _log.warning("fixture %s %s", f.fixture_id,
                             "is back in view" if verdict else
                             "is in the map but the camera sees the table where it should be: "
                             "left out of the scene")
            if verdict is not None:
                self.present[f.fixture_id] = verdict
            if not self.present.get(f.fixture_id, True):
                continue
            for part in f.all_parts():
                reading = self._measure(part, fg, rgb, depth_mm, camera, stamp, arm)
                if reading is not None:
                    self.readings[part.part_id] = reading

    def _presence(self, fid: str, fg: Foreground) -> bool | None:
        """True when the column over the fixture's body shows its top (or, for one without a
        solid top, shows something standing on the table), False when it shows lower
        surfaces (the table) where the top should be, None when hidden or out of view."""
        f = self.fmap.fixture(fid)
        if f is None or fg.all_points is None or fg.all_heights is None:
            return None
        pts = fg.all_points
        c, s = math.cos(f.yaw), math.sin(f.yaw)
        dx, dy = pts[:, 0] - f.position[0], pts[:, 1] - f.position[1]
        lx, ly = c * dx + s * dy, -s * dx + c * dy
        inset = PRESENCE_INSET
        col = (np.abs(lx) <= f.size[0] / 2 - inset) & (np.abs(ly) <= f.size[1] / 2 - inset)
        n = int(np.count_nonzero(col))
        if n < MIN_COLUMN_SAMPLES:
            return None  # out of view
        h = fg.all_heights[col]
        top = f.position[2] + f.size[2] / 2 - float(np.median(pts[col, 2] - h))
        if f.kind in SOLID_TOPS:
            agree = np.abs(h - top) <= TOP_BAND
            # the table itself where the body should stand; not merely lower than the top
            # (the camera looks into a drawer pulled out of a cabinet: its floor, not the table)
            below = h <= PRESENT_HEIGHT
        else:  # a bounding box (a lamp on a post over a flat base): anything standing
            agree = (h > PRESENT_HEIGHT) & (h <= top + TOP_BAND)
            below = h <= PRESENT_HEIGHT
        if np.count_nonzero(agree) >= PRESENT_SHARE * n:
            return True
        if np.count_nonzero(below) >= ABSENT_SHARE * n:
            return False
        return None

    def _measure(self, part: FixturePart, fg: Foreground, rgb: np.ndarray,
                 depth_mm: np.ndarray, camera: CameraModel, stamp: float,
                 arm: ArmTest | None = None) -> PartReading | None:
        if part.kind in ("drawer", "sliding_door") and part.handle is not None:
            value, at_arm = self._sliding(part, fg, camera, arm)
            if (value is None or at_arm) and part.kind == "drawer":
                # the handle hidden, or what reads as it is at the gripper: the gripper's dark
                # fingers before a closed drawer read as its handle pulled out 13 cm, and the
                # drawer's real front then stood outside the fixture's mask, a phantom object
                # the arm later placed an apple on; the front panel, away from the arm, says
                face = self._drawer_face(part, fg, arm)
                value = face if face is not None else value
            return None if value is None else PartReading(opening=value, stamp=stamp)
        if part.kind == "hinged_door" and part.hinge is not None:
            value = self._hinged(part, fg, camera)
            return None if value is None else PartReading(opening=value, stamp=stamp)
        if part.kind in ("switch", "knob"):
            return self._control(part, local_cloud(part, depth_mm, camera), camera, stamp)
        if part.kind in ("light", "burner"):
            lit = self._lit(part, rgb, depth_mm, camera)
            return None if lit is None else PartReading(on=lit, stamp=stamp)
        return None

    def _control(self, part: FixturePart, points: np.ndarray, camera: CameraModel,
                 stamp: float) -> PartReading | None:
        """A switch's or knob's angle: the mean of its last frames' measurements while they
        agree (one frame's is a few hundredths of a radian off under the D435's noise); a
        frame that cannot measure it (the gripper over it: it may be being worked) or a
        measurement far from the mean starts the series again."""
        history = self._angles.setdefault(part.part_id, [])
        if part.kind == "switch":
            value = switch_angle(part, points, camera.position)
        else:
            last = self.readings.get(part.part_id)
            value = knob_angle(part, points, camera.position,
                               None if last is None else last.opening)
        if value is None:
            history.clear()
            return None
        if history and abs(value - float(np.mean(history))) > CONTROL_JUMP:
            history.clear()
        history.append(value)
        del history[:-CONTROL_FRAMES]
        return PartReading(opening=float(np.mean(history)), stamp=stamp)

    def _sliding(self, part: FixturePart, fg: Foreground, camera: CameraModel,
                 arm: ArmTest | None = None) -> tuple[float | None, bool]:
        """A drawer's or sliding door's opening from its handle bar's samples, and whether
        most of them lie at the arm."""
        assert part.handle is not None
        h = np.asarray(part.handle, float)
        axis = np.asarray(part.axis, float)
        rot = yaw_matrix(part.yaw)
        bar = np.array([0.0, 0.0, 1.0]) if part.bar == "vertical" else rot[:, 1]
        normal = np.cross(axis, bar)
        normal /= max(float(np.linalg.norm(normal)), 1e-9)
        dark = (fg.hsv[:, 2] <= DARK_VALUE) & (fg.hsv[:, 1] <= DARK_SATURATION)
        rel = fg.points[dark] - h
        along = rel @ axis
        sel = ((np.abs(rel @ bar) <= part.handle_length / 2 - END_CLEAR)
               & (np.abs(rel @ normal) <= CORRIDOR)
               & (along >= -CORRIDOR) & (along <= part.travel + CORRIDOR))
        if np.count_nonzero(sel) < MIN_HANDLE_SAMPLES:
            return None, False
        at_arm = arm is not None and bool(np.count_nonzero(arm(fg.points[dark][sel])) * 2
                                          >= np.count_nonzero(sel))
        # the camera sees the bar's near surface, about pi/4 of its radius towards the camera
        view = camera.position - h
        view -= bar * float(view @ bar)
        view /= max(float(np.linalg.norm(view)), 1e-9)
        bias = math.pi / 4 * HANDLE_RADIUS * float(view @ axis)
        value = float(np.median(along[sel])) - bias
        return float(min(max(value, 0.0), part.travel)), at_arm

    def _drawer_face(self, part: FixturePart, fg: Foreground,
                     arm: ArmTest | None = None) -> float | None:
        """A drawer's opening from its front panel, when its handle is hidden (an open drawer
        above overhangs it): the front-most surface across the bay, behind the handle, its
        samples at the arm (``arm``) left out."""
        assert part.handle is not None
        h = np.asarray(part.handle, float)
        axis = np.asarray(part.axis, float)
        rot = yaw_matrix(part.yaw)
        centre = np.asarray(part.position, float)
        out = float((h - centre) @ axis) - part.size[0] / 2  # handle in front of the face
        rel = fg.points - centre
        lat = rel @ rot[:, 1]
        z = fg.points[:, 2] - centre[2]
        along = (fg.points - h) @ axis + out  # the face's opening if the sample is on it
        sel = ((np.abs(lat) <= part.size[1] / 2 - FACE_SIDE_CLEAR)
               & (np.abs(z) <= part.size[2] / 2 - FACE_EDGE_CLEAR)
               & (along >= -CORRIDOR) & (along <= part.travel + CORRIDOR))
        if arm is not None and sel.any():
            sel[sel] = ~arm(fg.points[sel])
        a = np.sort(along[sel])[::-1]  # front-most first
        if a.size < MIN_FACE_SAMPLES:
            return None
        # the face: the front-most opening held by enough samples within FACE_BAND of it
        counts = np.searchsorted(-a, -(a - FACE_BAND), side="right") - np.arange(a.size)
        k = int(np.argmax(counts >= MIN_FACE_SAMPLES))
        if counts[k] < MIN_FACE_SAMPLES:
            return None
        value = float(np.median(a[k:k + int(counts[k])]))
        return float(min(max(value, 0.0), part.travel))

    def _hinged(self, part: FixturePart, fg: Foreground, camera: CameraModel
                ) -> float | None:
        """A hinged door's angle from the samples on its panel."""
        assert part.hinge is not None
        hinge = np.asarray(part.hinge, float)
        axis = np.asarray(part.axis, float)
        centre = np.asarray(part.position, float)
        half_h = part.size[2] / 2 - DOOR_EDGE_CLEAR
        # the closed panel's direction from the hinge (in the plane normal to the axis)
        v0 = centre - hinge
        v0 -= axis * float(v0 @ axis)
        reach = 2 * float(np.linalg.norm(v0))  # the hinge is at the panel's edge
        u0 = v0 / max(float(np.linalg.norm(v0)), 1e-9)
        w0 = np.cross(axis, u0)  # the way the panel turns
        rel = fg.points - hinge
        height = rel @ axis - float((centre - hinge) @ axis)
        ru, rw = rel @ u0, rel @ w0
        r = np.hypot(ru, rw)
        angle = np.arctan2(rw, ru)
        fixture = self.fmap.fixture(part.fixture_id)
        outside = np.ones(fg.points.shape[0], bool)
        if fixture is not None:  # what is inside the body is the body (or the cavity)
            c, s = math.cos(fixture.yaw), math.sin(fixture.yaw)
            dx = fg.points[:, 0] - fixture.position[0]
            dy = fg.points[:, 1] - fixture.position[1]
            outside = ((np.abs(c * dx + s * dy) > fixture.size[0] / 2 + 0.005)
                       | (np.abs(-s * dx + c * dy) > fixture.size[1] / 2 + 0.005))
        sel = (outside & (np.abs(height) <= half_h) & (r >= 0.03) & (r <= reach + 0.01)
               & (angle >= -0.15) & (angle <= part.travel + 0.15))
        if np.count_nonzero(sel) < MIN_PANEL_SAMPLES:
            return None
        # the panel is a plane through the hinge: the angle most samples share, refined by
        # the median of those near it
        a, rs = angle[sel], r[sel]
        bins = np.arange(-0.15, part.travel + 0.2, 0.05)
        counts, edges = np.histogram(a, bins)
        k = int(np.argmax(counts))
        mode = (edges[k] + edges[k + 1]) / 2
        # the camera sees one face of the panel, half its thickness off the hinge's plane:
        # at radius r that face's angle is off by atan(t / 2r), towards the side it faces
        out0 = np.asarray(part.door_normal_at(0.0), float)
        sign = 1.0 if float(out0 @ w0) >= 0 else -1.0
        out_now = np.asarray(part.door_normal_at(float(mode)), float)
        panel = hinge + np.asarray(axis_matrix(axis, float(mode)) @ v0)
        facing = 1.0 if float(out_now @ (camera.position - panel)) >= 0 else -1.0
        shift = sign * facing * np.arctan2(part.size[0] / 2, np.maximum(rs, 0.03))
        a = a - shift
        near = np.abs(a - mode) <= 0.08
        if not near.any():
            return None
        # far from the hinge an angle error is a large offset: weight by radius
        value = float(np.average(a[near], weights=rs[near]))
        return float(min(max(value, 0.0), part.travel))

    def _lit(self, part: FixturePart, rgb: np.ndarray, depth_mm: np.ndarray,
             camera: CameraModel) -> bool | None:
        """A lamp or burner lit: its pixels that show it (depth) glow."""
        c = np.asarray(part.position, float)
        if part.kind == "light":  # a bulb: its centre and a ring around it
            r = 0.5 * min(part.size[0], part.size[1]) / 2
            ang = np.linspace(0, 2 * np.pi, 8, endpoint=False)
            toward = camera.position - c
            toward /= max(float(np.linalg.norm(toward)), 1e-9)
            pts = np.vstack([c, c + np.c_[r * np.cos(ang), r * np.sin(ang), np.zeros(8)]])
            pts = pts + toward * min(part.size) / 2  # its surface facing the camera
        else:  # a burner: a disc on the stove's top
            r = 0.4 * min(part.size[0], part.size[1])
            g = np.linspace(-r, r, 7)
            gx, gy = np.meshgrid(g, g)
            keep = np.hypot(gx, gy) <= r
            rot = yaw_matrix(part.yaw)
            local = np.c_[gx[keep], gy[keep], np.full(int(keep.sum()), part.size[2] / 2)]
            pts = c + local @ rot.T
        pix = camera.project(pts)
        cam_z = ((pts - camera.matrix[:3, 3]) @ camera.matrix[:3, :3])[:, 2]
        hgt, wid = depth_mm.shape
        ok = (np.all(np.isfinite(pix), axis=1) & (pix[:, 0] >= 0) & (pix[:, 0] < wid)
              & (pix[:, 1] >= 0) & (pix[:, 1] < hgt))
        u, v = pix[ok, 0].astype(int), pix[ok, 1].astype(int)
        d = depth_mm[v, u].astype(np.float64) / 1000.0
        shows = (d > 0) & (np.abs(d - cam_z[ok]) <= DEPTH_AGREE + 0.5 * min(part.size))
        seen = int(np.count_nonzero(shows))
        hsv = rgb_to_hsv(rgb[v[shows], u[shows]])
        glow = int(np.count_nonzero((hsv[:, 1] >= GLOW_SATURATION) & (hsv[:, 2] >= GLOW_VALUE)))
        if seen < MIN_LIT_PIXELS:
            return None
        share = glow / seen
        if share >= LIT_SHARE:
            return True
        if share <= UNLIT_SHARE:
            return False
        return None

    # ------------------------------------------------------------------ scene objects
    def scene_objects(self, stamp: float, memory_s: float = math.inf
                      ) -> tuple[SceneObject, ...]:
        """The present fixtures and their parts (at their measured states), and the handles
        of the parts measured lately."""
        out: list[SceneObject] = []
        shapes = {s.fixture.fixture_id: s for s in self.shapes()}
        for f in self.fmap.fixtures:
            if not self.present.get(f.fixture_id, True):
                continue
            obj = f.scene_object(stamp)
            state = self.fmap.stateful_part(f.fixture_id)
            if state is not None:
                obj = self._with_state(obj, state.part_id)
            out.append(obj)
            shape = shapes.get(f.fixture_id)
            for part in f.parts:
                pobj = self._with_state(part.scene_object(stamp), part.part_id)
                if shape is not None and part.part_id in shape.parts:
                    box = shape.parts[part.part_id]
                    yaw = math.atan2(float(box.rot[1, 0]), float(box.rot[0, 0]))
                    cx, cy, cz = (float(v) for v in box.centre)
                    pobj = replace(pobj, position=(cx, cy, cz), yaw=yaw)
                out.append(pobj)
            for part in f.all_parts():
                r = self.readings.get(part.part_id)
                if part.handle is None or r is None or r.opening is None:
                    continue
                if stamp - r.stamp > memory_s:
                    continue
                out.append(_handle_object(part, r.opening, r.stamp))
        return tuple(out)

    def _with_state(self, obj: SceneObject, part_id: str) -> SceneObject:
        r = self.readings.get(part_id)
        if r is None:
            return obj
        return replace(obj, opening=r.opening, on=r.on)


def _handle_object(part: FixturePart, opening: float, stamp: float) -> SceneObject:
    """``<part>_handle``: the bar where the measured state puts it."""
    x, y, z = part.handle_at(opening)
    length, thick = part.handle_length, 2 * HANDLE_RADIUS
    size = (thick, length, thick) if part.bar != "vertical" else (thick, thick, length)
    yaw = part.yaw + (opening if part.kind == "hinged_door" else 0.0)
    return SceneObject(object_id=f"{part.part_id}_handle", label=f"{part.label} handle",
                       shape="handle", colour="black", position=(x, y, z), size=size,
                       yaw=yaw, confidence=1.0, is_fixture=True, last_seen=stamp)

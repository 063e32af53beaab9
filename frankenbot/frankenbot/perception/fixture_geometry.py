"""What the fixtures of the map occupy at a given state: oriented boxes for bodies, drawers,
doors, handles and controls, and the cavities inside them where objects may lie.

Perception uses it three ways: points inside a fixture's solid (a drawer's walls, a door, a
handle) never become objects, while points inside a cavity (an open drawer, the microwave's
inside) and above a top (the cabinet, the stove) may; the support an object stands on (the
table, a fixture's top, a drawer's floor) gives its height; and the body's faces are where
the camera must see the fixture if it is there at all (``perception/fixture_state.py``).
The map (``frankenbot.fixture_map``) says where things are when closed; the state (a drawer's
opening, a door's angle) is measured, so every box is built for a state.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from frankenbot.fixture_map import Fixture, FixtureMap, FixturePart

HANDLE_RADIUS = 0.007  # m: a handle bar's radius (the sim's; typical of cabinet bars)
HANDLE_STANDOFF = 0.006  # m: half the standoffs' width beside the bar
SOLID_MARGIN = 0.012  # m: points this close to a fixture's solid are the fixture's
CAVITY_MARGIN = 0.010  # m: a cavity's walls and floor are this thick in noise


def yaw_matrix(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def axis_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


@dataclass(frozen=True)
class Box:
    """An oriented box: ``centre`` (base_link), ``half`` extents in its own frame, ``rot``
    (3x3, its axes in base_link as columns)."""

    centre: np.ndarray
    half: np.ndarray
    rot: np.ndarray

    def local(self, points: np.ndarray) -> np.ndarray:
        return (points - self.centre) @ self.rot

    def contains(self, points: np.ndarray, margin: float = 0.0) -> np.ndarray:
        if points.shape[0] == 0:
            return np.zeros(0, bool)
        return np.all(np.abs(self.local(points)) <= self.half + margin, axis=1)

    def corners(self) -> np.ndarray:
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        return self.centre + (signs * self.half) @ self.rot.T

    def top_z(self) -> float:
        return float(self.corners()[:, 2].max())


def _part_motion(part: FixturePart, state: float) -> tuple[np.ndarray, np.ndarray]:
    """(rotation, translation) that carries the part from closed to ``state``: a point p of the
    closed part is at ``rot @ p + trans``."""
    if part.kind == "hinged_door" and part.hinge is not None:
        rot = axis_matrix(np.asarray(part.axis, float), state)
        hinge = np.asarray(part.hinge, float)
        return rot, hinge - rot @ hinge
    if part.sliding:
        return np.eye(3), np.asarray(part.axis, float) * state
    return np.eye(3), np.zeros(3)


def _moved(box: Box, motion: tuple[np.ndarray, np.ndarray]) -> Box:
    rot, trans = motion
    return Box(rot @ box.centre + trans, box.half, rot @ box.rot)


def part_box(part: FixturePart) -> Box:
    """The part's own box when closed (a drawer's sliding box, a door's panel, a button)."""
    return Box(np.asarray(part.position, float), np.asarray(part.size, float) / 2,
               yaw_matrix(part.yaw))


def handle_box(part: FixturePart) -> Box | None:
    """The handle bar and its standoffs back to the part's front face, when closed."""
    if part.handle is None:
        return None
    rot = yaw_matrix(part.yaw)
    h = np.asarray(part.handle, float)
    local = (h - np.asarray(part.position, float)) @ rot
    front = -part.size[0] / 2  # the front faces -x in the part's frame
    out = max(front - local[0], 0.0)
    centre_local = np.array([local[0] + out / 2, local[1], local[2]])
    reach = part.handle_length / 2 + HANDLE_STANDOFF
    thick = HANDLE_RADIUS + HANDLE_STANDOFF
    half = np.array([out / 2 + HANDLE_RADIUS, reach, thick]) if part.bar != "vertical" else (
        np.array([out / 2 + HANDLE_RADIUS, thick, reach]))
    return Box(np.asarray(part.position, float) + rot @ centre_local, half, rot)


def cavity_box(centre: tuple[float, float, float] | None,
               size: tuple[float, float, float] | None, yaw: float) -> Box | None:
    if centre is None or size is None:
        return None
    return Box(np.asarray(centre, float), np.asarray(size, float) / 2, yaw_matrix(yaw))


@dataclass(frozen=True)
class FixtureShape:
    """One fixture at a state: its solids (body, parts, handles) and its cavities."""

    fixture: Fixture
    body: Box
    solids: tuple[Box, ...]
    cavities: tuple[Box, ...]
    # whose each solid and cavity is: "" the body, else a part id (a point in a drawer's
    # cavity is not that drawer's, nor the body's, but still the drawer above's)
    solid_owner: tuple[str, ...]
    cavity_owner: tuple[str, ...]
    # part id -> its box at the state (a drawer's box pulled out, a door's panel turned)
    parts: Mapping[str, Box]

    def solid_mask(self, points: np.ndarray, margin: float = SOLID_MARGIN) -> np.ndarray:
        """Points on the fixture: inside a solid (grown by ``margin``) and not well inside a
        cavity (an object in an open drawer stands there)."""
        inside = np.zeros(points.shape[0], bool)
        near = self._near(points, margin)
        if not near.any():
            return inside
        p = points[near]
        body = self.body.local(p)
        open_above = ~np.all(np.abs(body[:, :2]) <= self.body.half[:2], axis=1)
        closed, opened = [], []
        for c in self.cavities:
            loc = c.local(p)
            # within the cavity's walls, above its floor and under its top; a drawer pulled
            # out of the body is open above (what it holds sticks up past its walls)
            inner = (np.all(np.abs(loc[:, :2]) <= c.half[:2] - CAVITY_MARGIN, axis=1)
                     & (loc[:, 2] >= -c.half[2] + CAVITY_MARGIN))
            closed.append(inner & (loc[:, 2] <= c.half[2] - CAVITY_MARGIN))
            opened.append(closed[-1] | (inner & open_above))
        hit = np.zeros(p.shape[0], bool)
        for b, owner in zip(self.solids, self.solid_owner, strict=True):
            on = b.contains(p, margin)
            for k, cav_owner in enumerate(self.cavity_owner):
                if owner == cav_owner:  # a drawer's own box: open above once pulled out
                    on &= ~opened[k]
                elif owner == "":  # the body: only what is inside a cavity
                    on &= ~closed[k]
            hit |= on
        inside[near] = hit
        return inside

    def _near(self, points: np.ndarray, margin: float) -> np.ndarray:
        """A cheap first cut: points within the fixture's reach (a circle round its body
        that holds every part at any state) and below its highest solid."""
        lo, hi = self._bounds
        xy = points[:, :2]
        return np.all((xy >= lo[:2] - margin) & (xy <= hi[:2] + margin), axis=1) & (
            points[:, 2] <= hi[2] + margin)

    @functools.cached_property
    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        corners = np.vstack([b.corners() for b in self.solids])
        return corners.min(axis=0), corners.max(axis=0)

    def over_top(self, x: float, y: float) -> bool:
        """Is (x, y) over the fixture's body (what stands there stands on its top)?"""
        return _over(self.body, x, y)


def fixture_shape(fixture: Fixture, states: Mapping[str, float]) -> FixtureShape:
    """``fixture`` with each part at ``states[part_id]`` (closed / off when absent)."""
    body = Box(np.asarray(fixture.position, float), np.asarray(fixture.size, float) / 2,
               yaw_matrix(fixture.yaw))
    solids, solid_owner = [body], [""]
    cavities: list[Box] = []
    cavity_owner: list[str] = []
    own = cavity_box(fixture.cavity_centre, fixture.cavity_size, fixture.yaw)
    if own is not None:
        cavities.append(own)
        cavity_owner.append("")
    parts: dict[str, Box] = {}
    for part in fixture.all_parts():
        pid = part.part_id
        state = float(states.get(pid, 0.0))
        motion = _part_motion(part, state)
        box = _moved(part_box(part), motion)
        parts[pid] = box
        solids.append(box)
        solid_owner.append(pid)
        hb = handle_box(part)
        if hb is not None:
            solids.append(_moved(hb, motion))
            solid_owner.append(pid)
        cav = cavity_box(part.cavity_centre, part.cavity_size, part.yaw)
        if cav is not None:
            cavities.append(_moved(cav, motion))
            cavity_owner.append(pid)
    return FixtureShape(fixture, body, tuple(solids), tuple(cavities), tuple(solid_owner),
                        tuple(cavity_owner), parts)


def map_shapes(fmap: FixtureMap, states: Mapping[str, float],
               present: Mapping[str, bool] | None = None) -> tuple[FixtureShape, ...]:
    """Every fixture of the map (but painted zones, and those judged absent) at ``states``."""
    return tuple(fixture_shape(f, states) for f in fmap.fixtures
                 if f.kind != "zone" and (present is None or present.get(f.fixture_id, True)))


def fixture_mask(shapes: tuple[FixtureShape, ...], points: np.ndarray) -> np.ndarray:
    """Which ``points`` lie on a fixture (see ``FixtureShape.solid_mask``)."""
    mask = np.zeros(points.shape[0], bool)
    for s in shapes:
        mask |= s.solid_mask(points)
    return mask


def support_height(shapes: tuple[FixtureShape, ...], x: float, y: float, low: float,
                   table: float = 0.0) -> float:
    """The surface an object at (x, y) whose lowest seen point is at ``low`` stands on: a
    fixture's top (or a part raised on it, the stove's burner plate), an open drawer's (or a
    cavity's) floor under it, else the table."""
    best = table
    for s in shapes:
        for c in s.cavities:
            loc = c.local(np.array([[x, y, c.centre[2]]]))[0]
            floor = float(c.centre[2] - c.half[2])
            if (abs(loc[0]) <= c.half[0] and abs(loc[1]) <= c.half[1]
                    and low >= floor - 0.01 and floor > best):
                best = floor
        if not s.fixture.top:
            continue
        top = s.body.top_z()
        if s.over_top(x, y) and low >= top - 0.02 and top > best:
            best = top
        for box in s.parts.values():  # a plate raised on the top (the stove's burner)
            part_top = box.top_z()
            if (float(box.centre[2] - box.half[2]) >= top - 0.002 and part_top > best
                    and low >= part_top - 0.02 and _over(box, x, y)):
                best = part_top
    return best


def _over(box: Box, x: float, y: float) -> bool:
    loc = box.local(np.array([[x, y, box.centre[2]]]))[0]
    return bool(abs(loc[0]) <= box.half[0] and abs(loc[1]) <= box.half[1])


def ceiling_regions(shapes: tuple[FixtureShape, ...]) -> tuple[tuple[Box, float], ...]:
    """(region, surface height) where things stand higher than on the table: the bodies of
    fixtures with a top (the cabinet, the stove) and the cavities (an open drawer's floor,
    high in the cabinet)."""
    out = [(s.body, s.body.top_z()) for s in shapes if s.fixture.top]
    out += [(c, float(c.centre[2] - c.half[2])) for s in shapes for c in s.cavities]
    return tuple(out)

"""The perception entry point: one RGB-D frame in, one tracked Scene out.

``PerceptionPipeline.process`` runs segmentation, measurement and tracking and merges the
configured fixtures. ``scene_at(now)`` is what consumers poll: the latest scene, marked stale
when no frame has arrived for ``stale_timeout`` (the executor treats that as an anomaly).
Thread-safe: a node or a background source can process frames while others read.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from frankenbot.errors import PerceptionError
from frankenbot.perception.camera import CameraModel
from frankenbot.perception.colour import ACHROMATIC_GROUP
from frankenbot.perception.config import DEFAULT_QUERIES, PerceptionConfig
from frankenbot.perception.detector import BoxDetector
from frankenbot.perception.fixtures import FixtureGeometry
from frankenbot.perception.geometry import Detection, ShapeRules, measure, split_stack
from frankenbot.perception.segmentation import (
    Cluster,
    TablePlane,
    cluster_in_box,
    foreground,
    segment,
)
from frankenbot.perception.self_filter import arm_segments, distance_to_segments, is_robot
from frankenbot.perception.tracker import Track, Tracker
from frankenbot.state import SHAPES, Scene, SceneObject

DRAWER_FLOOR = 0.02  # m from a drawer fixture's bottom to the floor of its sliding box
HOLLOW_SHAPES = ("bin", "bowl")  # open containers: the camera sees down to their floor
PALE = 0.45  # median saturation below which a cluster at the arm counts as the arm


@dataclass(frozen=True)
class FrameResult:
    """What one call of ``process`` produced, with timings for benchmarks and the node."""

    scene: Scene
    detections: tuple[Detection, ...]
    plane: TablePlane
    latency_s: float


class PerceptionPipeline:
    """RGB-D -> Scene, with tracking across frames and stale detection."""

    def __init__(self, camera: CameraModel,
                 fixtures: Sequence[SceneObject | FixtureGeometry] = (),
                 config: PerceptionConfig | None = None,
                 shape_rules: ShapeRules | None = None,
                 detector: BoxDetector | None = None,
                 queries: Sequence[str] = DEFAULT_QUERIES) -> None:
        self.detector = detector
        self.queries = tuple(queries)
        self.config = config or PerceptionConfig()
        self.camera = camera
        self.geometry = tuple(f if isinstance(f, FixtureGeometry) else FixtureGeometry(f)
                              for f in fixtures)
        self.fixtures = tuple(replace(g.obj, is_fixture=True) for g in self.geometry)
        self._handles: dict[str, SceneObject] = {}  # measured drawer handles by fixture id
        self.drawer_openings: dict[str, float] = {}  # fixture id -> metres (last measured)
        self._rim_votes: dict[str, int] = {}  # container id -> frames its rim was seen through
        self._settle: dict[str, float] = {}  # track id -> centre height it settled down to
        # track id -> stamp it was last seen at the arm (held, or under the gripper)
        self._at_arm: dict[str, float] = {}
        # bin id -> (stamp last in the scene, (colour, position, size, yaw))
        self._bins: dict[str, tuple[float, tuple[str, Any, Any, float]]] = {}
        self._table_value_ref = -1.0  # table brightness of the first frame (exposure reference)
        self.shape_rules = shape_rules or ShapeRules()
        self.tracker = Tracker(self.config.match_distance, self.config.memory_s)
        self._rng = np.random.default_rng(0)
        self._scene_lock = threading.Lock()  # guards _scene, _last_frame, tracker state
        self._scene = Scene(stamp=0.0, stale=True)
        self._last_frame: float | None = None
        self.last_result: FrameResult | None = None

    def reset(self) -> None:
        """Forget all tracks (a new episode / a reset scene)."""
        with self._scene_lock:
            self.tracker.reset()
            self._scene = Scene(stamp=0.0, stale=True)
            self._last_frame = None
            self.last_result = None
            self._handles.clear()
            self.drawer_openings.clear()
            self._rim_votes = {}
            self._bins = {}
            self._settle = {}
            self._at_arm = {}
            self._table_value_ref = -1.0

    def process(self, rgb: np.ndarray, depth: np.ndarray, stamp: float,
                joint_positions: Sequence[float] | None = None) -> Scene:
        """Perceive one frame. Raises PerceptionError on unusable input (nothing changes then).

        ``joint_positions`` (UR order, rad), when known, lets the self filter drop the arm.
        """
        return self.process_frame(rgb, depth, stamp, joint_positions).scene

    def process_frame(self, rgb: np.ndarray, depth: np.ndarray, stamp: float,
                      joint_positions: Sequence[float] | None = None) -> FrameResult:
        t0 = time.perf_counter()
        segments = None
        if joint_positions is not None:
            try:
                segments = arm_segments(joint_positions)
            except ValueError as e:
                raise PerceptionError(f"self filter: {e}") from e
        if self.detector is None:
            plane, clusters = segment(rgb, depth, self.camera, self.config, self._rng,
                                      self._table_value_ref)
            if self._table_value_ref < 0 and plane.value > 0:
                self._table_value_ref = plane.value  # the exposure reference (see segment)
            names = [""] * len(clusters)
        else:
            plane, clusters, names = self._detector_clusters(rgb, depth)
        viewpoint = (float(self.camera.position[0]), float(self.camera.position[1]))
        px, py, pz = (float(v) for v in self.camera.position)
        eye = (px, py, pz)
        sample_angle = self.config.stride / self.camera.intrinsics.fx
        # The arm is white and gray; under a wandering white balance its pale surfaces can take
        # a faint hue, so a pale cluster at the arm is the arm too (objects are vivid).
        keep = [(segments is None
                 or (c.group != ACHROMATIC_GROUP and float(np.median(c.hsv[:, 1])) >= PALE)
                 or not is_robot(c.points, segments, self.config.robot_radius))
                and not _at_robot_base(c.points, self.config.base_keepout_radius)
                for c in clusters]
        rules = self.shape_rules
        measured = [d for c, n, k in zip(clusters, names, keep, strict=True) if k
                    for d in split_stack(_named(measure(c, rules, viewpoint, eye, sample_angle), n),
                                         min_edge=rules.stack_min_edge)]
        with self._scene_lock:
            bins = [(d.colour, d.position, d.size, d.yaw) for d in measured if d.shape == "bin"]
            for o in self._scene.objects:  # remembered a while after they vanish: a bin lost
                if o.shape == "bin" and not o.is_fixture:  # under the arm
                    self._bins[o.object_id] = (stamp, (o.colour, o.position, o.size, o.yaw))
            self._bins = {k: v for k, v in self._bins.items()
                          if 0.0 <= stamp - v[0] <= BIN_MEMORY_S}
            bins += [b for _t, b in self._bins.values()]
            detections = tuple(d for d in measured if self._keep(d, stamp)
                               and not _piece_of_bin(d, bins))
            vacated = self._seen_through(self.tracker.tracks, depth, segments, stamp)
            live = self.tracker.update(list(detections), stamp, vacated)
            if segments is not None:
                self._note_at_arm(live, segments, stamp)
            if self._settle:
                self.tracker.settle(self._settle)
            objects = self.tracker.scene_objects(stamp)
            fixtures = tuple(replace(f, last_seen=stamp) for f in self.fixtures)
            handles = tuple(h for h in self._handles.values()
                            if stamp - h.last_seen <= self.config.memory_s)
            scene = Scene.of((*objects, *fixtures, *handles), stamp=stamp, stale=False)
            self._scene = scene
            self._last_frame = stamp
            result = FrameResult(scene, detections, plane, time.perf_counter() - t0)
            self.last_result = result
        return result

    def _detector_clusters(self, rgb: np.ndarray, depth: np.ndarray
                           ) -> tuple[TablePlane, list[Cluster], list[str]]:
        """Boxes from the detector, each lifted to its largest above-table blob."""
        assert self.detector is not None
        plane, fg = foreground(rgb, depth, self.camera, self.config, self._rng)
        boxes = self.detector.detect(rgb, self.queries)
        clusters: list[Cluster] = []
        names: list[str] = []
        taken: list[set[int]] = []
        for box in boxes:  # best score first
            c = cluster_in_box(fg, box.box, self.config)
            if c is None:
                continue
            ids = set((c.pixels[:, 0] * 100_000 + c.pixels[:, 1]).tolist())
            if any(len(ids & t) > 0.5 * min(len(ids), len(t)) for t in taken):
                continue  # a second box on the same object
            taken.append(ids)
            clusters.append(c)
            names.append(box.label)
        return plane, clusters, names

    def _reach(self, tracks: Sequence[Track]) -> np.ndarray:
        """How near the arm's segments each track counts as at the arm (a container by its
        wall)."""
        return np.array([self.config.robot_radius + (
            max(t.detection.size[0], t.detection.size[1]) / 2
            if t.detection.shape in HOLLOW_SHAPES else 0.0) for t in tracks])

    def _note_at_arm(self, tracks: Sequence[Track], segments: np.ndarray, stamp: float) -> None:
        """Remember which tracks seen in this frame were at the arm (a held block)."""
        seen = [t for t in tracks if t.last_seen == stamp]
        if seen:
            pos = np.array([t.detection.position for t in seen])
            near = distance_to_segments(pos, segments) < self._reach(seen)
            for t, n in zip(seen, near, strict=True):
                if n:
                    self._at_arm[t.object_id] = stamp
                else:
                    self._at_arm.pop(t.object_id, None)
        live = {t.object_id for t in tracks}
        self._at_arm = {k: v for k, v in self._at_arm.items()
                        if k in live and stamp - v <= self.config.memory_s}

    def _seen_through(self, tracks: Sequence[Track], depth: np.ndarray,
                      segments: np.ndarray | None = None, stamp: float = 0.0) -> set[str]:
        """Ids of tracks whose remembered place the camera now sees past (moved or gone).

        A remembered object hidden by something in front of it (the gripper) keeps its track;
        one whose top centre has a farther surface behind it (the table) is no longer there.
        Open containers (bins, bowls) are judged by their rim instead: the camera always sees
        past their top centre down to their floor, so their rim is sampled and they are gone
        when most rim samples that are not hidden show a farther surface (a bowl moved out of
        view is otherwise remembered where it stood, and a block put there reads as "in" it).
        """
        # Last seen at the arm, then no frame showed it (the camera stopped while the block
        # was carried, or the fingers hid it): it most likely moved with the gripper, so its
        # old place seen empty says nothing; memory_s decides, as for one hidden by the arm.
        unseen = [t for t in tracks if not (t.object_id in self._at_arm and t.last_seen
                                            < stamp and stamp - t.last_seen
                                            <= self.config.memory_s)]
        if segments is not None and unseen:
            # Last seen at the arm (in or just released from the gripper, or under it while
            # placing): it fell or moved with the gripper, or the arm hides it; memory_s
            # decides (a block just let go into the drawer was forgotten before the arm left
            # and showed it). A container counts as at the arm when its wall is.
            pos = np.array([t.detection.position for t in unseen])
            far = distance_to_segments(pos, segments) >= self._reach(unseen)
            unseen = [t for t, f in zip(unseen, far, strict=True) if f]
        gone: set[str] = set()
        settle: dict[str, float] = {}
        votes: dict[str, int] = {}
        for t in unseen:
            hollow = t.detection.shape in HOLLOW_SHAPES
            samples = _rim_points(t.detection, self.config) if hollow else np.array(
                [(*t.detection.position[:2],
                  t.detection.position[2] + 0.3 * t.detection.size[2])])
            past, present = self._depth_against(samples, depth)
            if not hollow:
                if past:
                    floor_z = self._sink_below(t.detection)
                    if floor_z is not None:
                        settle[t.object_id] = floor_z  # let go into a drawer: down there
                    else:
                        gone.add(t.object_id)
                continue
            # judged only while most of the rim is in view: with the arm hiding the rest, a
            # few samples past the rim are the table beside a bowl still there
            if past + present >= self.config.rim_samples // 2 and \
                    past >= self.config.rim_gone_share * (past + present):
                # one odd frame (a rim mismeasured while the arm passed) is not enough
                votes[t.object_id] = self._rim_votes.get(t.object_id, 0) + 1
                if votes[t.object_id] >= self.config.rim_gone_frames:
                    gone.add(t.object_id)
        self._rim_votes = votes
        self._settle = settle
        return gone

    def _sink_below(self, det: Detection) -> float | None:
        """Where an object seen past may have gone down out of sight: the centre height it
        would have on the floor of an open drawer under it, if it is above that height; None
        when nothing below could hide it (then it is gone)."""
        x, y = det.position[0], det.position[1]
        for g in self.geometry:
            if g.obj.shape != "drawer" or self.drawer_openings.get(g.obj.object_id, 0.0) < 0.03:
                continue
            if not g.footprint_contains(x, y, margin=0.0):
                continue
            floor = g.obj.position[2] - g.obj.size[2] / 2 + DRAWER_FLOOR
            z = floor + det.size[2] / 2
            if det.position[2] > z + 0.01:
                return z
        return None

    def _depth_against(self, points: np.ndarray, depth: np.ndarray) -> tuple[int, int]:
        """How many of ``points`` the camera sees past (a farther surface where they should be)
        and how many it sees (about the expected depth); hidden or off-image ones count in
        neither."""
        pix = self.camera.project(points)
        cam = (points - self.camera.matrix[:3, 3]) @ self.camera.matrix[:3, :3]
        h, w = depth.shape
        scale = 1000.0 if depth.dtype == np.uint16 else 1.0
        tol = self.config.see_through
        past = present = 0
        for (u, v), expected in zip(pix, cam[:, 2], strict=True):
            if not (np.isfinite(u) and np.isfinite(v)) or not (0 <= u < w and 0 <= v < h):
                continue
            r0, c0 = int(v), int(u)
            win = np.asarray(depth[max(r0 - 2, 0):r0 + 3, max(c0 - 2, 0):c0 + 3],
                             dtype=np.float64) / scale
            win = win[np.isfinite(win) & (win > 0)]
            if not win.size:
                continue
            measured = float(np.median(win))
            if measured > expected + tol:
                past += 1
            elif measured >= expected - tol:
                present += 1
        return past, present

    def _keep(self, det: Detection, stamp: float) -> bool:
        """Drop fixture parts (measuring drawer handles on the way) and unknown shapes."""
        x, y = det.position[0], det.position[1]
        for g in self.geometry:
            if det.colour in ("black", "gray") and g.handle is not None:
                opening = g.handle_opening(det.position)
                if opening is not None:
                    self._record_handle(g, det, opening, stamp)
                    return False
            if _is_fixture_itself(det, g.obj):
                return False
            if (g.obj.shape == "drawer" and det.size[2] < 0.02 and g.footprint_contains(x, y)
                    and abs(det.position[2] + det.size[2] / 2 - g.obj.top_z) < 0.015):
                return False  # a patch of the cabinet's top (its colour wanders with exposure)
            if (g.obj.shape == "drawer" and _inside_body(x, y, g.obj)
                    and det.position[2] + det.size[2] / 2 < g.obj.top_z + 0.01):
                return False  # under the cabinet's top, inside its body: a part of it (what
                # its drawer holds is seen only once it slides out past the front)
            if (g.handle is None and g.obj.shape == "drawer" and det.colour in ("black", "gray")
                    and max(det.size[:2]) < 0.15 and g.footprint_contains(x, y, margin=0.06)):
                return False  # a drawer configured without handle geometry: still its handle
            if g.obj.colour and det.colour == g.obj.colour and g.footprint_contains(x, y):
                return False  # a side or front of the fixture (an open drawer's walls)
        return det.shape != "unknown" or bool(det.name) or bool(self.config.keep_unknown)

    def _record_handle(self, g: FixtureGeometry, det: Detection, opening: float,
                       stamp: float) -> None:
        fid = g.obj.object_id
        self.drawer_openings[fid] = opening
        self._handles[fid] = SceneObject(
            object_id=f"{fid}_handle", label=f"{g.obj.label or fid} handle", shape="handle",
            colour=det.colour, position=det.position, size=det.size, yaw=det.yaw,
            confidence=det.confidence, is_fixture=True, last_seen=stamp)

    def scene_at(self, now: float) -> Scene:
        """The latest scene; stale if the last frame is older than the timeout (or none came)."""
        with self._scene_lock:
            scene, last = self._scene, self._last_frame
        if last is None:
            return Scene.of(self.fixtures, stamp=now, stale=True)
        if now - last > self.config.stale_timeout:
            return replace(scene, stale=True)
        return scene


def _at_robot_base(points: np.ndarray, radius: float) -> bool:
    """Most of a cluster within ``radius`` of the base axis (base_link's z) and low: a piece of
    the robot's own base and mount, which nothing else can occupy."""
    if radius <= 0 or points.shape[0] == 0:
        return False
    near = (np.hypot(points[:, 0], points[:, 1]) < radius) & (points[:, 2] < BASE_HEIGHT)
    return bool(np.count_nonzero(near) >= 0.5 * points.shape[0])


BASE_HEIGHT = 0.2  # m: the base and shoulder housing under the shoulder joint
BIN_MEMORY_S = 3.0  # s a vanished bin still claims the pieces of its wall
PIECE_REACH = 0.025  # m beyond a bin's footprint a piece of its wall may lie
PIECE_RIM = 0.025  # m between a piece's top and the bin's rim
PIECE_INSIDE = 0.012  # m inside the footprint's edge a piece's centre may lie


def _piece_of_bin(det: Detection, bins: list[tuple[str, Any, Any, float]]) -> bool:
    """A small detection of a bin's colour at its wall and up at its rim is a piece of that
    wall, cut off where the arm hides the rest (a gray "block" on the bin's edge). Bins only:
    a bowl's rim is about a block's height, so a piece of its wall cannot be told from a block
    of its colour touching it (test_perception_same_colour.py)."""
    if det.shape in HOLLOW_SHAPES:
        return False
    top = det.position[2] + det.size[2] / 2
    for colour, pos, size, yaw in bins:
        if colour != det.colour or abs(top - (pos[2] + size[2] / 2)) > PIECE_RIM:
            continue
        if det.size[2] >= size[2]:
            continue
        dx, dy = det.position[0] - pos[0], det.position[1] - pos[1]
        c, s = math.cos(-yaw), math.sin(-yaw)
        lx, ly = abs(c * dx - s * dy), abs(s * dx + c * dy)
        hx, hy = size[0] / 2, size[1] / 2
        # on the wall: not beyond the reach outside it, not further than the band inside it
        # (what a bin holds stands clear of its walls and is kept)
        within = lx <= hx + PIECE_REACH and ly <= hy + PIECE_REACH
        at_wall = lx >= hx - PIECE_INSIDE or ly >= hy - PIECE_INSIDE
        if within and at_wall:
            return True
    return False


def _inside_body(x: float, y: float, fixture: SceneObject) -> bool:
    """Is (x, y) over the fixture's own footprint (not the space its drawer slides into)?"""
    return (abs(x - fixture.position[0]) <= fixture.size[0] / 2
            and abs(y - fixture.position[1]) <= fixture.size[1] / 2)


def _is_fixture_itself(det: Detection, fixture: SceneObject) -> bool:
    """A detection centred on a fixture and about its size is the fixture (drawer cabinet)."""
    fx, fy = fixture.position[0], fixture.position[1]
    reach = 0.5 * max(fixture.size[0], fixture.size[1]) + 0.03
    if abs(det.position[0] - fx) > reach or abs(det.position[1] - fy) > reach:
        return False
    return det.size[0] >= 0.6 * min(fixture.size[0], fixture.size[1])


def _named(det: Detection, name: str) -> Detection:
    """Apply a detector label: a known shape word sets the shape, anything else is the name."""
    if not name:
        return det
    word = name.strip().lower()
    if word in SHAPES:
        return replace(det, shape=word)
    return replace(det, name=word)


def _rim_points(det: Detection, config: PerceptionConfig) -> np.ndarray:
    """Points along the top of an open container's wall, in base_link: a circle for a bowl, the
    rectangle (turned by the yaw) for a bin."""
    n = config.rim_samples
    top = det.position[2] + det.size[2] / 2
    cx, cy = det.position[0], det.position[1]
    if det.shape == "bowl":
        r = max(det.size[0], det.size[1]) / 2 - config.rim_inset
        a = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
        xy = np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], axis=1)
    else:
        hx, hy = det.size[0] / 2 - config.rim_inset, det.size[1] / 2 - config.rim_inset
        corners = np.array([(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy), (-hx, -hy)])
        s = np.linspace(0.0, 4.0, n, endpoint=False)  # walk the 4 sides, s in [0, 4)
        side, f = np.floor(s).astype(int), (s % 1.0)[:, None]
        local = corners[side] + f * (corners[side + 1] - corners[side])
        c, sn = np.cos(det.yaw), np.sin(det.yaw)
        xy = np.stack([cx + c * local[:, 0] - sn * local[:, 1],
                       cy + sn * local[:, 0] + c * local[:, 1]], axis=1)
    return np.column_stack([xy, np.full(n, top)])

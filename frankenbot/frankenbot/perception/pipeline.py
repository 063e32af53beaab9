"""The perception entry point: one RGB-D frame in, one tracked Scene out.

``PerceptionPipeline.process`` finds the table, measures the fixture map's fixtures (are they
there, how open is each drawer and door, is each lamp lit: ``perception/fixture_state.py``),
takes the fixtures' own points out, clusters what is left, names each cluster by the object
catalogue (``perception/recognition.py``; what it does not know is an ``unknown`` object
with its size and colour) and tracks the objects across frames. The fixtures and their parts
join the scene with their measured state. ``scene_at(now)`` is what consumers poll: the
latest scene, marked stale when no frame has arrived for ``stale_timeout`` (the executor
treats that as an anomaly). Thread-safe: a node or a background source can process frames
while others read, and ``set_fixture_map`` can replace the map between frames (a new scene).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np
from scipy.spatial import Delaunay, QhullError

from frankenbot import resources, shapes
from frankenbot.errors import PerceptionError
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.camera import CameraModel
from frankenbot.perception.catalogue import ObjectCatalogue
from frankenbot.perception.colour import ACHROMATIC_GROUP
from frankenbot.perception.config import DEFAULT_QUERIES, PerceptionConfig
from frankenbot.perception.detector import BoxDetector
from frankenbot.perception.fixture_geometry import (
    FixtureShape,
    ceiling_regions,
    fixture_mask,
    support_height,
)
from frankenbot.perception.fixture_state import FixtureObserver
from frankenbot.perception.geometry import Detection, ShapeRules, measure
from frankenbot.perception.occlusion import Occlusion, occluded_shares
from frankenbot.perception.recognition import (
    END,
    FRAGMENT_MARGIN,
    GRAZED,
    HUE_TWIN_DISTANCE,
    IN_PART,
    PART,
    TOP,
    is_hollow,
    join_pieces,
    overlaps,
    recognise,
    without_fragments,
)
from frankenbot.perception.segmentation import (
    Cluster,
    Foreground,
    TablePlane,
    cluster_foreground,
    cluster_in_box,
    depth_to_mm,
    foreground,
)
from frankenbot.perception.self_filter import arm_segments, distance_to_segments, is_robot
from frankenbot.perception.tracker import PERMANENT_HITS, Track, Tracker
from frankenbot.state import MAX_POINTS, SHAPES, Scene

PALE = 0.45  # median saturation below which a cluster at the arm counts as the arm
STACK_CONTACT = 0.02  # m: a cluster whose lowest point is this close to another's top is on it
STACK_RISE = 0.008  # m: ... when its own top is this much higher (pieces of one lying marker
# side by side are not stacked; a thing on a 12 mm plate rises more)
MIN_UNKNOWN_EXTENT = 0.02  # m: an unknown thing narrower than this is noise, not an object
MIN_UNKNOWN_HEIGHT = 0.015  # m: ... or lower (under strong noise the table lifts that far)
MIN_UNKNOWN_POINTS = 40  # samples an unknown object needs (a known one: the usual minimum)
FIXTURE_PIECE_MARGIN = 0.035  # m round a fixture's solids where unknown pieces are its own
ON_TOP_CLEARANCE = 0.015  # m over a fixture's top from where a point stands on it, not its piece
ON_TOP_FOOT = 0.01  # m from a fixture's top a thing measured to stand on it has its bottom
OPEN_FOR_SINK = 0.03  # m: a drawer open this far has a floor an object may have dropped to
UNSEEN_SUPPORT = 0.03  # m: over the table with its lowest seen point this high, nothing near
# it, a footprint at least UNSEEN_SUPPORT_WIDTH wide both ways (a bowl, a plate), it stands on
# something the camera does not see
UNSEEN_SUPPORT_WIDTH = 0.08
LIFTED = 0.04  # m: an object at the gripper whose lowest seen point is this high over the
# surface under it is held
CONTAINER_WIDTH = 0.09  # m: a footprint at least this wide holding another's is a container
CONTAINER_FLOOR = 0.008  # m: its floor over the table (the sim's bowls, bins and baskets)
PARTIAL_SHARE = 0.1  # of its outline bounded by nearer things: the object is seen in part
SAME_AREA = 0.7  # of a part-named object's footprint area an unknown reading of it covers
WITHIN_SHARE = 0.5  # of a young track's points inside a like object seen now: a piece of it
GRAZED_SHARE = 0.03  # ... of its outline: read whole, as seen in part where nothing matches
PARTIAL_END_SHARE = 0.4  # ... or of one end of a long outline (a spatula's end under a bowl)


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
                 fixtures: FixtureMap | None = None,
                 config: PerceptionConfig | None = None,
                 shape_rules: ShapeRules | None = None,
                 detector: BoxDetector | None = None,
                 queries: Sequence[str] = DEFAULT_QUERIES,
                 catalogue: ObjectCatalogue | None = None) -> None:
        """``fixtures``: the cell's fixture map (None: no fixtures); ``catalogue``: the known
        objects (``default_catalogue()``: the package's ``config/objects.yaml``; None: the
        first waves' size rules name blocks, bowls, plates and bins)."""
        self.detector = detector
        self.queries = tuple(queries)
        self.config = config or PerceptionConfig()
        self.camera = camera
        self.catalogue = catalogue
        self.observer = FixtureObserver(fixtures or FixtureMap())
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
        self._scene_lock = threading.Lock()  # guards _scene, _last_frame, tracker, observer
        self._scene = Scene(stamp=0.0, stale=True)
        self._last_frame: float | None = None
        self.last_result: FrameResult | None = None

    @property
    def fixture_map(self) -> FixtureMap:
        return self.observer.fmap

    def set_fixture_map(self, fmap: FixtureMap) -> None:
        """Replace the fixture map (the sim loaded a scene with other fixtures, or the cell's
        map was edited): every fixture's presence and state is measured afresh."""
        with self._scene_lock:
            self.observer.set_map(fmap)

    def reset(self) -> None:
        """Forget all tracks and measured fixture states (a new episode / a reset scene)."""
        with self._scene_lock:
            self.tracker.reset()
            self.observer.reset()
            self._scene = Scene(stamp=0.0, stale=True)
            self._last_frame = None
            self.last_result = None
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
        with self._scene_lock:
            plane, fg, fixture_shapes = self._fixtures_out(rgb, depth, stamp, segments)
        if self.detector is None:
            clusters = cluster_foreground(fg, self.camera, self.config)
            names = [""] * len(clusters)
        else:
            clusters, names = self._detector_clusters(rgb, fg)
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
        kept = [(c, n) for c, n, k in zip(clusters, names, keep, strict=True) if k]
        rules = self.shape_rules
        catalogue = self.catalogue
        shares = (occluded_shares([c for c, _ in kept], depth_to_mm(depth), self.config.stride)
                  if catalogue is not None else [Occlusion(0.0, 0.0, False)] * len(kept))
        # bordered by nearer things in the image (a long thing: perhaps at an end only)
        bordered = [TOP if o.top_only else PART if o.outline >= PARTIAL_SHARE
                    else (TOP if o.top else END) if o.end >= PARTIAL_END_SHARE
                    else GRAZED if o.outline >= GRAZED_SHARE else "" for o in shares]
        supports = self._supports([c for c, _ in kept], fixture_shapes, segments,
                                  [b in IN_PART for b in bordered], [o.foot for o in shares])

        # seen in part: bordered, or standing on or in another object (its lower part hidden:
        # a block in a bowl)
        # ... or so thin that it barely clears the depth noise (a far plate: its edges sink
        # into the noise band, its footprint measures short)
        hidden = ([PART if sup is None or _at_noise_floor(c) else b
                   for b, sup, (c, _) in zip(bordered, supports, kept, strict=True)]
                  if catalogue is not None else [""] * len(kept))

        def named(c: Cluster, n: str, sup: float | None, partial: str) -> list[Detection]:
            return recognise(_with_points(_named(
                measure(c, rules, viewpoint, eye, sample_angle, sup,
                        complete_blocks=catalogue is None, table_value=fg.table_value,
                        circle_config=self.config if catalogue is not None else None), n),
                c, self._rng), catalogue, rules, viewpoint, partial)

        per_cluster = [named(c, n, sup, part) for (c, n), sup, part
                       in zip(kept, supports, hidden, strict=True)]
        if catalogue is not None:
            per_cluster = join_pieces(kept, supports, hidden, per_cluster, named)
        measured = without_fragments([d for ds in per_cluster for d in ds])
        with self._scene_lock:
            bins = [(d.colour, d.position, d.size, d.yaw) for d in measured if d.shape == "bin"]
            for o in self._scene.objects:  # remembered a while after they vanish: a bin lost
                if o.shape == "bin" and not o.is_fixture:  # under the arm
                    self._bins[o.object_id] = (stamp, (o.colour, o.position, o.size, o.yaw))
            self._bins = {k: v for k, v in self._bins.items()
                          if 0.0 <= stamp - v[0] <= BIN_MEMORY_S}
            bins += [b for _t, b in self._bins.values()]
            known = [t.detection for t in self.tracker.tracks
                     if t.detection.shape != shapes.UNKNOWN]
            detections = tuple(d for d in measured if self._keep(d, known)
                               and not _piece_of_bin(d, bins))
            vacated = self._seen_through(self.tracker.tracks, depth, segments, stamp)
            live = self.tracker.update(list(detections), stamp, vacated)
            pieces = young_pieces(live, stamp)
            if pieces:  # a piece of an object its next frames showed whole
                self.tracker.forget(pieces)
                live = [t for t in live if t.object_id not in pieces]
            if segments is not None:
                self._note_at_arm(live, segments, stamp)
            if self._settle:
                self.tracker.settle(self._settle)
            objects = self.tracker.scene_objects(stamp)
            fixtures = self.observer.scene_objects(stamp, self.config.memory_s)
            scene = Scene.of((*objects, *fixtures), stamp=stamp, stale=False)
            self._scene = scene
            self._last_frame = stamp
            result = FrameResult(scene, detections, plane, time.perf_counter() - t0)
            self.last_result = result
        return result

    def _fixtures_out(self, rgb: np.ndarray, depth: np.ndarray, stamp: float,
                      segments: np.ndarray | None = None
                      ) -> tuple[TablePlane, Foreground, tuple[FixtureShape, ...]]:
        """The table, the samples above it with the fixtures' own points taken out (after
        measuring the fixtures on them), and the fixtures at their measured states.
        ``segments``: the arm's skeleton, when the joints are known (its samples are not a
        fixture's)."""
        before = self.observer.shapes()
        regions = ceiling_regions(before)
        ceiling = None
        if regions:
            def ceiling(points: np.ndarray) -> np.ndarray:
                out = np.zeros(points.shape[0])
                for box, top in regions:
                    loc = box.local(points)
                    over = np.all(np.abs(loc[:, :2]) <= box.half[:2], axis=1)
                    out[over] = np.maximum(out[over], top + self.config.max_height)
                return out
        plane, fg = foreground(rgb, depth, self.camera, self.config, self._rng,
                               self._table_value_ref, ceiling)
        if self._table_value_ref < 0 and plane.value > 0:
            self._table_value_ref = plane.value  # the exposure reference (see foreground)
        if not self.observer.fmap.fixtures:
            return plane, fg, ()
        arm = None
        if segments is not None:
            def arm(points: np.ndarray) -> np.ndarray:
                return distance_to_segments(points, segments) < self.config.robot_radius
        self.observer.observe(fg, rgb, depth_to_mm(depth), self.camera, stamp, arm)
        fixture_shapes = self.observer.shapes()
        if fixture_shapes and fg.points.shape[0]:
            fg = fg.without(fixture_mask(fixture_shapes, fg.points))
        return plane, fg, fixture_shapes

    def _supports(self, clusters: Sequence[Cluster], fixture_shapes: tuple[FixtureShape, ...],
                  segments: np.ndarray | None, bordered: Sequence[bool] | None = None,
                  foot_hidden: Sequence[bool] | None = None) -> list[float | None]:
        """Per cluster, the height of the surface it stands on (the table, a fixture's top, an
        open drawer's floor), or None when it may stand on or in another object or hang in
        the gripper (then its lowest seen point decides, ``geometry.measure``).

        ``bordered``: per cluster, whether nearer things border it in the image. A wide one
        that is not, seen all round from well over the table (a bowl on a box its rim hides
        from above), stands on something unseen at its lowest seen point. ``foot_hidden``:
        per cluster, whether nearer things hide its lowest seen points (a bottle behind
        another: that it is seen only from high up says nothing of its being lifted)."""
        if not clusters:
            return []
        lo = [c.points[:, :2].min(axis=0) for c in clusters]
        hi = [c.points[:, :2].max(axis=0) for c in clusters]
        tops = [float(np.percentile(c.heights, 98)) for c in clusters]
        lows = [float(np.percentile(c.heights, 2)) for c in clusters]
        centres = [c.points[:, :2].mean(axis=0) for c in clusters]
        plane_z = [float(np.median(c.points[:, 2] - c.heights)) for c in clusters]
        out: list[float | None] = []
        for i in range(len(clusters)):
            # another cluster under it: footprints overlapping (the one below may show only
            # its near side), its top where this one's lowest seen point is
            under = [j for j in range(len(clusters))
                     if j != i and np.all(lo[i] <= hi[j] + 0.005)
                     and np.all(lo[j] <= hi[i] + 0.005)
                     and abs(tops[j] - lows[i]) <= STACK_CONTACT
                     and tops[j] < tops[i] - STACK_RISE
                     and _footprints_meet(clusters[i].points, clusters[j].points)]
            # inside a container standing on the table (its footprint holds this one's and
            # is wider, its rim above this one's lowest seen point): on the container's
            # floor, just over the table. Not only a container "under" it: a block in a bowl
            # can reach as high as the rim (0.8 + 4 cm in a 5 cm bowl), so it is no stack
            inside = [j for j in range(len(clusters)) if j != i
                      and np.all(lo[j] <= lo[i] + 0.005)
                      and np.all(hi[i] <= hi[j] + 0.005)
                      and float(np.max(hi[j] - lo[j])) >= CONTAINER_WIDTH
                      and lows[j] < 0.015 and tops[j] >= lows[i] - STACK_CONTACT]
            if inside:
                out.append(CONTAINER_FLOOR)
                continue
            on_other = bool(under)
            sup = support_height(fixture_shapes, float(centres[i][0]), float(centres[i][1]),
                                 plane_z[i] + lows[i], table=plane_z[i]) - plane_z[i]
            # lifted off the surface under it (the table's, the cabinet's top) at the gripper
            top_point = np.array([[centres[i][0], centres[i][1], plane_z[i] + tops[i]]])
            held = (segments is not None and lows[i] - max(sup, 0.0) > LIFTED
                    and not (foot_hidden and foot_hidden[i]) and float(
                distance_to_segments(top_point, segments)[0]) < self.config.robot_radius + 0.05)
            if held:
                out.append(None)
                continue
            if (sup <= 0.0 and lows[i] > UNSEEN_SUPPORT and not (bordered and bordered[i])
                    and float(np.min(hi[i] - lo[i])) >= UNSEEN_SUPPORT_WIDTH
                    and not self._fixture_piece(clusters[i].points, fixture_shapes)):
                # a wide thing seen whole from well over the table, nothing under it but a
                # sliver of what it hides (a bowl on a box): it stands where it is seen to end
                out.append(lows[i])
                continue
            if on_other:
                out.append(None)
                continue
            out.append(max(sup, 0.0))
        return out

    @staticmethod
    def _fixture_piece(points: np.ndarray, fixture_shapes: tuple[FixtureShape, ...],
                       bottom: float | None = None) -> bool:
        """Most of ``points`` within a few centimetres of a fixture's solid: a piece of the
        fixture the depth noise threw past its mask (a cabinet's side edge). ``bottom``: where
        the thing the points are of is measured to stand; one standing on a fixture's top (a
        bowl on the cabinet) rises clear of it, and its points over the top are not the
        fixture's (what the arm holds over the top stands nowhere, and stays a piece)."""
        if not len(points) or not fixture_shapes:
            return False
        near = np.zeros(len(points), bool)
        for s in fixture_shapes:
            mask = s.solid_mask(points, margin=FIXTURE_PIECE_MARGIN)
            top = s.body.top_z()
            if s.fixture.top and bottom is not None and abs(bottom - top) <= ON_TOP_FOOT:
                loc = s.body.local(points)
                mask &= ~((np.abs(loc[:, 0]) <= s.body.half[0])
                          & (np.abs(loc[:, 1]) <= s.body.half[1])
                          & (points[:, 2] > top + ON_TOP_CLEARANCE))
            near |= mask
        return bool(np.count_nonzero(near) >= 0.5 * len(points))

    def _detector_clusters(self, rgb: np.ndarray, fg: Foreground
                           ) -> tuple[list[Cluster], list[str]]:
        """Boxes from the detector, each lifted to its largest above-table blob."""
        assert self.detector is not None
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
        return clusters, names

    def _reach(self, tracks: Sequence[Track]) -> np.ndarray:
        """How near the arm's segments each track counts as at the arm (a container by its
        wall)."""
        return np.array([self.config.robot_radius + (
            max(t.detection.size[0], t.detection.size[1]) / 2
            if is_hollow(t.detection) else 0.0) for t in tracks])

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
            hollow = is_hollow(t.detection)
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
        states = self.observer.states()
        for shape in self.observer.shapes():
            for part in shape.fixture.all_parts():
                if part.kind != "drawer" or states.get(part.part_id, 0.0) < OPEN_FOR_SINK:
                    continue
                centre = part.cavity_at(states[part.part_id])
                if centre is None or part.cavity_size is None:
                    continue
                c, s = math.cos(part.yaw), math.sin(part.yaw)
                dx, dy = det.position[0] - centre[0], det.position[1] - centre[1]
                if (abs(c * dx + s * dy) > part.cavity_size[0] / 2
                        or abs(-s * dx + c * dy) > part.cavity_size[1] / 2):
                    continue
                z = centre[2] - part.cavity_size[2] / 2 + det.size[2] / 2
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

    def _keep(self, det: Detection, known: Sequence[Detection]) -> bool:
        """An unknown object must stand on its own: one this small, or touching an object the
        tracker knows (a piece of it the arm or a neighbour left in view), is not reported."""
        if det.shape != shapes.UNKNOWN or det.name:
            return True
        if self.catalogue is None:  # the size rules' unknowns are pieces, not objects
            return bool(self.config.keep_unknown)
        if (max(det.size[:2]) < MIN_UNKNOWN_EXTENT or det.size[2] < MIN_UNKNOWN_HEIGHT
                or det.n_points < MIN_UNKNOWN_POINTS):
            return False
        if self._beside_fixture(det):
            return False
        return not any(overlaps(det, k, FRAGMENT_MARGIN) and not _read_again(det, k)
                       for k in known)

    def _beside_fixture(self, det: Detection) -> bool:
        """Most of an unknown cluster within a few centimetres of a fixture's solid: a piece
        of the fixture the depth noise threw past its mask (a cabinet's side edge), not an
        object beside it."""
        if det.points is None:
            return False
        return self._fixture_piece(det.points, self.observer.shapes(),
                                   det.position[2] - det.size[2] / 2.0)

    def scene_at(self, now: float) -> Scene:
        """The latest scene; stale if the last frame is older than the timeout (or none came)."""
        with self._scene_lock:
            scene, last = self._scene, self._last_frame
        if last is None:
            with self._scene_lock:
                fixtures = self.observer.scene_objects(now)
            return Scene.of(fixtures, stamp=now, stale=True)
        if now - last > self.config.stale_timeout:
            return replace(scene, stale=True)
        return scene


NOISE_FLOOR_SIGMAS = 4.0  # a cluster whose median height is under this many noise sigmas ...


def _at_noise_floor(c: Cluster) -> bool:
    """... is seen only in part: its thinner edges fall below the per-point noise floor."""
    return c.sigma > 0 and float(np.median(c.heights)) < NOISE_FLOOR_SIGMAS * c.sigma


FOOTPRINT_CONTACT = 0.015  # m (top-down) between the samples of a thing and what it stands on


def _footprints_meet(a: np.ndarray, b: np.ndarray) -> bool:
    """Do two clusters' samples come within ``FOOTPRINT_CONTACT`` of each other top-down? Their
    bounding boxes may overlap while they do not (a bottle lying diagonally past a box's
    corner): only one standing on the other does."""
    from scipy.spatial import cKDTree

    d, _ = cKDTree(b[:, :2]).query(a[:, :2], distance_upper_bound=FOOTPRINT_CONTACT)
    return bool(np.isfinite(d).any())


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
    if det.shape in shapes.HOLLOW:
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


def young_pieces(tracks: Sequence[Track], stamp: float = math.inf) -> set[str]:
    """Ids of young tracks (seen in fewer than three frames) that are pieces of an object: an
    unknown one touching a known object (the piece a noisy first frame cut off it), or one
    not seen at ``stamp`` lying within an object of its own category and colour seen then
    (a plate a first frame cut in two: the later frames showed it whole)."""
    known = [t.detection for t in tracks if t.detection.shape != shapes.UNKNOWN]
    now = [t for t in tracks if t.last_seen >= stamp and t.detection.shape != shapes.UNKNOWN]
    out = set()
    for t in tracks:
        d = t.detection
        if t.hits >= PERMANENT_HITS or d.name:
            continue
        if d.shape == shapes.UNKNOWN:
            if any(overlaps(d, k, FRAGMENT_MARGIN) for k in known):
                out.add(t.object_id)
        elif t.last_seen < stamp and any(
                o is not t and o.detection.shape == d.shape and o.detection.colour == d.colour
                and _within(d, o.detection) for o in now):
            out.add(t.object_id)
    return out


def _within(a: Detection, b: Detection) -> bool:
    """Does most of ``a``'s top-down point sample (``WITHIN_SHARE``) lie inside the hull of
    ``b``'s?"""
    if a.points is None or b.points is None or len(a.points) < 1 or len(b.points) < 3:
        return False
    try:
        hull = Delaunay(b.points[:, :2])
    except QhullError:  # b's points on a line: no area to lie in
        return False
    return float(np.mean(hull.find_simplex(a.points[:, :2]) >= 0)) >= WITHIN_SHARE


def _read_again(det: Detection, known: Detection) -> bool:
    """``det`` (unknown) is ``known``, named only as a part of something, read again whole
    and not recognised: at its place (centres within ``HUE_TWIN_DISTANCE``) and about its
    size, not a piece of it. The tracker then counts the frame's vote (a held-out block, named
    part of a box in one frame, was unknown in the two after, which were dropped as pieces of
    that "box")."""
    return (known.as_part
            and math.dist(det.position[:2], known.position[:2]) <= HUE_TWIN_DISTANCE
            and det.size[0] * det.size[1] >= SAME_AREA * known.size[0] * known.size[1])


def _with_points(det: Detection, cluster: Cluster, rng: np.random.Generator) -> Detection:
    """``det`` with a sample of its cluster's points (at most ``MAX_POINTS``)."""
    pts = cluster.points
    if pts.shape[0] > MAX_POINTS:
        pts = pts[np.sort(rng.choice(pts.shape[0], MAX_POINTS, replace=False))]
    return replace(det, points=np.asarray(pts, dtype=np.float64))


def default_catalogue() -> ObjectCatalogue | None:
    """The package's object catalogue (config/objects.yaml), or None without one (the size
    rules of the first waves then name block, bowl, plate and bin)."""
    path = resources.objects_path()
    return ObjectCatalogue.load(path) if path is not None else None


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
    if det.shape in shapes.ROUND:
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

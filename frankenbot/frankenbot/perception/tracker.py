"""Keep object ids stable across frames.

A program says ``pick(obj=red_block_2)`` and expects that name to mean the same block while it
moves, while the gripper hides it, or while it sits inside a bowl. Detections are matched to
existing tracks by position with colour and the container/solid class as hard gates and the
exact shape as a soft one (a half-hidden block can look odd for a frame), using an optimal
assignment. Unmatched tracks are remembered for
``memory_s`` seconds at their last pose so short occlusions do not rename anything.

Object permanence: an established track (seen in ``PERMANENT_HITS`` frames) that is not
detected any more (a block stacked on it, the gripper or the arm in front, its visible sides
too small to measure) is kept however long, at its last pose and marked occluded; only
evidence that it is gone (the camera sees past its place: ``vacated``) or that it moved (a
detection of its colour and shape elsewhere takes it) ends it. A bottom block in a tower stays
in the scene, so ``on(middle, bottom)`` keeps working. Tracks seen in fewer frames (a phantom
from a noisy frame) are forgotten after ``memory_s``: permanence never keeps what was never
really there. The scene reports a track once it was seen in ``CONFIRM_HITS`` frames (or in the
first frame since a reset), so a one-frame phantom never reaches it at all.

Temporal fusion: a static object's pose is the running mean of its last ``fuse_frames``
detections (depth noise averages out); a detection farther than ``fuse_jump`` from the mean
means it moved, and the mean restarts there.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np
from scipy.optimize import linear_sum_assignment

from frankenbot import shapes
from frankenbot.perception.colour import shade_related
from frankenbot.perception.geometry import Detection
from frankenbot.perception.recognition import hue_twins, unknown_label
from frankenbot.state import SceneObject

# containers and solids never swap (a bowl does not turn into a block)
CONTAINER_SHAPES = tuple(sorted(shapes.OPEN_CONTAINERS | {"plate"}))
_SHAPE_MISMATCH_COST = 0.08  # metres-equivalent penalty when shapes differ
_GATED = 1e6
PERMANENT_HITS = 3  # frames a track must be seen in before a hidden one is kept indefinitely
CONFIRM_HITS = 2  # frames a track must be seen in before the scene reports it
FUSE_FRAMES = 8  # running mean over at most this many detections
FUSE_JUMP = 0.012  # m: a detection this far from the mean is a move, not noise
PART_OF_CONTAINER = 0.85  # a container detection this much smaller than its track is a part
# Round, open containers the arm cuts into arcs (bins are judged by their own rim and walls;
# the arm and a gray bin often merge into one cluster, so a bin keeps the old rules)
PART_SHAPES = ("plate", "bowl")
# m: an unmatched object and a new detection of its shape this close, in a colour it reads as
# in shade (a red block let go into a drawer reads brown there), are one object
SHADE_MATCH_DISTANCE = 0.1
GHOST_SIZE_RATIO = 0.7  # a ghost's every extent within this ratio of the seen track's
OCCLUDED_AFTER_S = 0.35  # s unseen: the object is reported occluded


def _wrap(a: float, period: float) -> float:
    """``a`` wrapped to [-period/2, period/2)."""
    return (a + period / 2) % period - period / 2


def fuse(old: Detection, new: Detection, n: int) -> Detection:
    """``new`` folded into the running mean ``old`` of ``n`` detections (same object, static).

    Yaw is averaged modulo the shape's symmetry (a block's a quarter turn, others a half)."""
    w = 1.0 / (n + 1)
    pos = tuple(o + w * (v - o) for o, v in zip(old.position, new.position, strict=True))
    size = tuple(o + w * (v - o) for o, v in zip(old.size, new.size, strict=True))
    period = math.pi / 2 if new.shape == "block" else math.pi
    yaw = old.yaw + w * _wrap(new.yaw - old.yaw, period)
    return replace(new, position=pos, size=size, yaw=yaw,  # type: ignore[arg-type]
                   confidence=max(new.confidence, old.confidence))


@dataclass(frozen=True)
class Track:
    """One remembered object."""

    object_id: str
    detection: Detection  # the fused pose (running mean while static)
    first_seen: float
    last_seen: float
    hits: int
    fused: int = 1  # detections in the running mean
    # category votes over the frames it was seen in (an odd frame does not rename it)
    votes: tuple[tuple[str, float], ...] = ()
    born_at: tuple[float, float, float] | None = None  # where its first detection was

    def to_scene_object(self, now: float, memory_s: float) -> SceneObject:
        """The track as a scene object. Confidence grows with the frames it was seen in (one
        frame: a third) and fades while unseen, never below 0.1 for a remembered one."""
        d = self.detection
        age = max(0.0, now - self.last_seen)
        fade = 1.0 if age <= 0.0 or memory_s <= 0 else max(0.1, 1.0 - age / memory_s)
        support = min(1.0, self.hits / PERMANENT_HITS)
        label = (unknown_label(d.colour, d.size) if d.shape == shapes.UNKNOWN and not d.name
                 else f"{d.colour} {d.name or d.shape}".strip())
        points = () if d.points is None else tuple(map(tuple, np.round(d.points, 4).tolist()))
        return SceneObject(object_id=self.object_id, label=label, shape=d.shape, colour=d.colour,
                           position=d.position, size=d.size, yaw=d.yaw,
                           confidence=round(d.confidence * fade * support, 3),
                           last_seen=self.last_seen, occluded=age > OCCLUDED_AFTER_S,
                           points=points)

    def seen(self, det: Detection, stamp: float) -> "Track":
        """This track matched to ``det`` at ``stamp``: fused when it stayed, restarted when
        it moved; a container seen only in part (an arc the arm left, well inside its known
        outline) and anything named only as a part of the whole it was seen as keep their
        pose. The category is the one most frames voted for."""
        votes = _vote(self.votes or ((self.detection.shape, _weight(self.detection)),), det)
        det = replace(det, shape=_winner(votes, self.detection.shape))
        track = replace(self, votes=votes)
        return track._seen(det, stamp)

    def _seen(self, det: Detection, stamp: float) -> "Track":
        old = self.detection
        if (old.shape in PART_SHAPES and det.shape in PART_SHAPES
                and (min(det.size[:2]) < PART_OF_CONTAINER * min(old.size[:2])
                     or max(det.size[:2]) < PART_OF_CONTAINER * max(old.size[:2]))
                and _same_colour_host(det, [old]) is not None):
            return replace(self, last_seen=stamp, hits=self.hits + 1)
        if _part_of_whole(det, old):
            return replace(self, last_seen=stamp, hits=self.hits + 1)
        if math.dist(det.position, self.detection.position) <= FUSE_JUMP and (
                det.shape == self.detection.shape):
            n = min(self.fused, FUSE_FRAMES - 1)
            return replace(self, detection=fuse(self.detection, det, n), last_seen=stamp,
                           hits=self.hits + 1, fused=n + 1)
        return replace(self, detection=det, last_seen=stamp, hits=self.hits + 1, fused=1)


UNKNOWN_VOTE = 0.5  # an unknown frame counts half: a half-hidden object looks odd ...
PART_VOTE = 0.5  # ... and so does a frame that named it only as a part of something bigger


def _weight(det: Detection) -> float:
    return UNKNOWN_VOTE if det.shape == shapes.UNKNOWN else PART_VOTE if det.as_part else 1.0


def _vote(votes: tuple[tuple[str, float], ...], det: Detection
          ) -> tuple[tuple[str, float], ...]:
    out = dict(votes)
    out[det.shape] = out.get(det.shape, 0.0) + _weight(det)
    return tuple(out.items())


def _winner(votes: tuple[tuple[str, float], ...], current: str) -> str:
    """The category most frames voted for; in a tie a category beats ``unknown`` when its
    frames saw the object well enough to name it, a whole frame's worth (one part-only frame
    against one unknown frame stays unknown: a held-out block, once part of a box), then the
    current one stays."""
    best = max(v for _, v in votes)
    tied = [k for k, v in votes if v >= best - 1e-9]
    if shapes.UNKNOWN in tied and len(tied) > 1:
        tied = ([k for k in tied if k != shapes.UNKNOWN] if best >= 1.0 - 1e-9
                else [shapes.UNKNOWN])
    return current if current in tied else tied[0]


def _same_colour_host(det: Detection, detections: list[Detection]) -> Detection | None:
    """A detected container of ``det``'s colour whose footprint holds ``det``'s centre."""
    for host in detections:
        if host.shape not in CONTAINER_SHAPES or host.colour != det.colour or not det.colour:
            continue
        if _footprint_holds(host, det):
            return host
    return None


def _footprint_holds(host: Detection, det: Detection) -> bool:
    """Does ``host``'s top-down footprint hold ``det``'s centre?"""
    dx, dy = det.position[0] - host.position[0], det.position[1] - host.position[1]
    c, s = math.cos(host.yaw), math.sin(host.yaw)
    return abs(c * dx + s * dy) <= host.size[0] / 2 and abs(-s * dx + c * dy) <= host.size[1] / 2


def _part_of_whole(det: Detection, old: Detection) -> bool:
    """``det``, named only as a part of its category, is a part of ``old``, the whole seen
    before: the same category and colour, smaller, its centre inside the whole's footprint (a
    basket's far wall dropped out of one frame in the noise band and the rest read as part
    of a basket, 8 cm from its place)."""
    return (det.as_part and not old.as_part and det.shape == old.shape
            and det.colour == old.colour and bool(det.colour)
            and det.size[0] * det.size[1] < old.size[0] * old.size[1]
            and _footprint_holds(old, det))


def _resting_in(det: Detection, host: Detection) -> Detection:
    """``det`` where it can only be now: no higher than resting on ``host``'s bottom (released
    above a container, it fell in)."""
    rest_z = host.position[2] - host.size[2] / 2 + det.size[2] / 2
    x, y, z = det.position
    return replace(det, position=(x, y, min(z, rest_z)))


def _one_to_one(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pairs whose two members are each the only candidate of the other."""
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    return [(a, b) for a, b in pairs if left[a] == 1 and right[b] == 1]


def _merge_twins(tracks: list[Track], stamp: float) -> list[Track]:
    """A twin born over its original is the original. One frame can show an object twice
    (the fingers cut a block they lift in two: its lower piece kept the block's track, the
    upper one started a new one); from then on only the new track is seen, and the task's
    block was "blue or blue?". An established track last seen in the frame a young track of
    its colour and shape was born in, inside its footprint (above or below it), not seen
    since while the young one is seen now, each the only candidate of the other: the
    established track takes the young one's detection and keeps its name (programs use it).
    Two objects of one colour stacked are both seen in the frames after."""
    def twin(t: Track, y: Track) -> bool:
        return (t.hits >= PERMANENT_HITS and t.last_seen < stamp
                and y.hits < PERMANENT_HITS and y.last_seen == stamp
                and y.first_seen == t.last_seen and y.born_at is not None
                and (y.detection.colour, y.detection.shape) == (t.detection.colour,
                                                              t.detection.shape)
                and math.hypot(y.born_at[0] - t.detection.position[0],
                               y.born_at[1] - t.detection.position[1])
                <= 0.5 * max(t.detection.size[:2]))
    merged: dict[int, Track] = {}
    dropped: set[int] = set()
    for i, j in _one_to_one([(i, j) for i, t in enumerate(tracks)
                             for j, y in enumerate(tracks) if twin(t, y)]):
        merged[i] = tracks[i].seen(tracks[j].detection, stamp)
        dropped.add(j)
    return [merged.get(k, t) for k, t in enumerate(tracks) if k not in dropped]


def _drop_ghosts(tracks: list[Track], stamp: float) -> list[Track]:
    """Two things of one category cannot fill one place: a remembered track where an older,
    established track of its category, height and size is seen now is a ghost of that one,
    and goes. A frame can read one object twice (an orange marker half in the arm's shadow
    was also a brown marker at its place); once the ghost is established, permanence kept it,
    unseen, over the marker, and every grasp of the marker "would hit the brown marker". A
    thing stacked on another is at another height; one inside another is of another size."""
    seen = [t for t in tracks if t.last_seen == stamp and t.hits >= PERMANENT_HITS]

    def ghost_of(u: Track, s: Track) -> bool:
        a, b = s.detection, u.detection
        if s is u or s.first_seen > u.first_seen or a.shape != b.shape:
            return False
        fa, fb = sorted(a.size[:2]), sorted(b.size[:2])
        return (abs(a.position[2] - b.position[2]) <= 0.5 * max(a.size[2], b.size[2])
                and math.hypot(a.position[0] - b.position[0], a.position[1] - b.position[1])
                <= 0.5 * min(fa[0], fb[0])
                and all(min(x, y) >= GHOST_SIZE_RATIO * max(x, y)
                        for x, y in zip((*fa, a.size[2]), (*fb, b.size[2]), strict=True)))
    return [u for u in tracks
            if u.last_seen >= stamp or not any(ghost_of(u, s) for s in seen)]


def _class_changed(old: str, new: str) -> bool:
    """A container track matched to a solid's detection or the other way round. Within a class
    the shape may waver (a half-hidden block can measure oddly), and ``unknown`` matches all."""
    if "unknown" in (old, new):
        return False
    return (old in CONTAINER_SHAPES) != (new in CONTAINER_SHAPES)


def _base_of(object_id: str) -> str:
    """``red_mug_2`` -> ``red_mug``."""
    head, _, tail = object_id.rpartition("_")
    return head if head and tail.isdigit() else object_id


def base_id(colour: str, shape: str) -> str:
    """``red_mug``; an unknown object is ``unknown`` whatever its colour (its label says it)."""
    if shape == shapes.UNKNOWN:
        return shape
    return f"{colour}_{shape}" if colour else shape


class Tracker:
    """Associates per-frame detections with persistent, readably named tracks."""

    def __init__(self, match_distance: float = 0.25, memory_s: float = 8.0) -> None:
        self.match_distance = match_distance
        self.memory_s = memory_s
        self._tracks: list[Track] = []
        self._first_frame = -math.inf  # stamp of the first frame since the last reset

    @property
    def tracks(self) -> tuple[Track, ...]:
        return tuple(self._tracks)

    def reset(self) -> None:
        self._tracks = []
        self._first_frame = -math.inf

    def forget(self, ids: set[str]) -> None:
        """Drop the tracks ``ids`` (pieces of another object, not objects)."""
        self._tracks = [t for t in self._tracks if t.object_id not in ids]

    def settle(self, heights: Mapping[str, float]) -> None:
        """Move remembered objects down to the given centre heights (a block let go into an
        open drawer drops out of sight: it is remembered where it lies, not above it)."""
        self._tracks = [replace(t, detection=replace(t.detection, position=(
            t.detection.position[0], t.detection.position[1], heights[t.object_id])))
            if t.object_id in heights else t for t in self._tracks]

    def _cost(self, track: Track, det: Detection) -> float:
        t = track.detection
        if t.colour != det.colour:
            return _GATED
        if _class_changed(t.shape, det.shape):
            return _GATED  # a bowl does not turn into a block (a new one appeared near it)
        dist = math.dist(t.position, det.position)
        if dist > self.match_distance:
            return _GATED
        return dist + (0.0 if t.shape == det.shape else _SHAPE_MISMATCH_COST)

    def _new_id(self, det: Detection, taken: set[str]) -> str:
        base = base_id(det.colour, (det.name or det.shape).replace(" ", "_"))
        if base not in taken:
            return base
        n = 2
        while f"{base}_{n}" in taken:
            n += 1
        return f"{base}_{n}"

    def update(self, detections: list[Detection], stamp: float,
               vacated: frozenset[str] | set[str] = frozenset()) -> list[Track]:
        """Match ``detections`` (one frame at ``stamp``) and return the live tracks.

        ``vacated``: ids whose remembered place the camera now sees empty. Such a track takes
        the nearest unmatched detection of its colour and shape (it moved, however far), or
        is forgotten (it is gone). Established tracks outlive ``memory_s`` (permanence).
        """
        if self._first_frame == -math.inf:
            self._first_frame = stamp
        self._tracks = [t for t in self._tracks
                        if stamp - t.last_seen <= self.memory_s or t.hits >= PERMANENT_HITS]
        tracks = self._tracks
        matched_t: set[int] = set()
        matched_d: set[int] = set()
        updated: dict[int, Track] = {}
        if tracks and detections:
            cost = np.array([[self._cost(t, d) for d in detections] for t in tracks])
            rows, cols = linear_sum_assignment(cost)
            for r, c in zip(rows, cols, strict=True):
                if cost[r, c] >= _GATED:
                    continue
                t = tracks[r]
                det = detections[c]
                shape = det.shape
                if shape != t.detection.shape and t.hits > 2 and det.shape == "unknown":
                    shape = t.detection.shape  # keep a well-established class through a bad frame
                updated[r] = t.seen(replace(det, shape=shape), stamp)
                matched_t.add(r)
                matched_d.add(c)
        # Far moves (an object carried faster than the frame rate): when exactly one unmatched
        # track and one unmatched detection share colour and shape, they are the same object.
        for key in {(d.colour, d.shape) for i, d in enumerate(detections) if i not in matched_d}:
            dets = [i for i, d in enumerate(detections)
                    if i not in matched_d and (d.colour, d.shape) == key]
            trks = [i for i, t in enumerate(tracks)
                    if i not in matched_t and (t.detection.colour, t.detection.shape) == key]
            if len(dets) == 1 and len(trks) == 1:
                r, c = trks[0], dets[0]
                updated[r] = tracks[r].seen(detections[c], stamp)
                matched_t.add(r)
                matched_d.add(c)
        # An object moved into shade (a drawer, under a shelf) reads darker: a red block a
        # brown one. An established track and a new detection of its category (not an unknown
        # blob) nearby in its shaded colour (or back out of it), each the only candidate of the
        # other, are one object; the track keeps the colour it was named by. So is any track
        # and a detection of its category where it is in the neighbouring hue (a bright
        # orange marker reads yellow in one frame, orange in the next).
        def recoloured(t: Track, d: Detection) -> bool:
            gap = math.dist(d.position, t.detection.position)
            return hue_twins(t.detection, d) or (
                d.shape == t.detection.shape and t.hits >= PERMANENT_HITS
                and gap <= SHADE_MATCH_DISTANCE and shade_related(t.detection.colour, d.colour))
        pairs = [(r, c) for r, t in enumerate(tracks) if r not in matched_t
                 for c, d in enumerate(detections) if c not in matched_d and recoloured(t, d)]
        for r, c in _one_to_one(pairs):
            t = tracks[r]
            updated[r] = t.seen(replace(detections[c], colour=t.detection.colour,
                                        shape=t.detection.shape), stamp)
            matched_t.add(r)
            matched_d.add(c)
        # An object inside a container of its own colour (a blue block in the blue bowl) is
        # split from it by segmentation only when enough of it is seen; mostly hidden (the
        # gripper over it) it is not detected, but the container's detection says it may still
        # be there, so the track is kept (resting in the container) instead of being dropped as
        # vacated. Not seen itself, its last_seen stays: it fades out after memory_s like any
        # hidden object.
        for r, t in enumerate(tracks):
            if r in matched_t or t.detection.shape in CONTAINER_SHAPES:
                continue
            host = _same_colour_host(t.detection, detections)
            if host is not None:
                updated[r] = replace(t, detection=_resting_in(t.detection, host))
                matched_t.add(r)
        moved = [i for i, t in enumerate(tracks) if i not in matched_t and t.object_id in vacated]
        for r in sorted(moved, key=lambda i: -tracks[i].hits):
            t = tracks[r]
            cands = [i for i, d in enumerate(detections) if i not in matched_d
                     and (d.colour, d.shape) == (t.detection.colour, t.detection.shape)]
            if cands:
                c = min(cands, key=lambda i: math.dist(detections[i].position,
                                                       t.detection.position))
                updated[r] = t.seen(detections[c], stamp)
                matched_t.add(r)
                matched_d.add(c)
        result = _drop_ghosts(_merge_twins([updated.get(i, t) for i, t in enumerate(tracks)
                                            if i in matched_t or t.object_id not in vacated],
                                           stamp), stamp)
        taken = {t.object_id for t in result}
        # A young track whose category the next frames outvoted takes the name of what it
        # is (its first frame saw a half-hidden box as an unknown object); an established
        # one keeps its name, which programs may use.
        for k, t in enumerate(result):
            d = t.detection
            if t.hits < PERMANENT_HITS and _base_of(t.object_id) != base_id(
                    d.colour, (d.name or d.shape).replace(" ", "_")):
                taken.discard(t.object_id)
                result[k] = replace(t, object_id=self._new_id(d, taken))
                taken.add(result[k].object_id)
        # A container's piece (a plate or bowl cut in two by the arm above it) whose centre
        # lies inside a known container of its colour is that container, not a new one: a
        # second "white plate" made the task's plate ambiguous.
        known = [t.detection for t in result]
        fresh = [d for i, d in enumerate(detections) if i not in matched_d
                 and not (d.shape in PART_SHAPES and _same_colour_host(d, known))]
        fresh.sort(key=lambda d: (d.position[0], d.position[1]))  # deterministic naming
        for det in fresh:
            oid = self._new_id(det, taken)
            taken.add(oid)
            result.append(Track(oid, det, first_seen=stamp, last_seen=stamp, hits=1,
                                votes=((det.shape, _weight(det)),),
                                born_at=det.position))
        self._tracks = result
        return list(result)

    def scene_objects(self, now: float) -> list[SceneObject]:
        """The confirmed tracks as scene objects: seen in ``CONFIRM_HITS`` frames (a phantom of
        one noisy frame, a fragment of an object cut in two once, is never reported), or seen
        in the first frame since a reset: what the first scene showed is not taken away again
        by one frame that missed it (a planner may already have read that scene). An unknown
        object always waits for its second frame: it may be a piece of a noisy frame."""
        objs = [t.to_scene_object(now, self.memory_s) for t in self._tracks
                if t.hits >= CONFIRM_HITS or (t.first_seen <= self._first_frame
                                              and t.detection.shape != shapes.UNKNOWN)]
        return sorted(objs, key=lambda o: o.object_id)

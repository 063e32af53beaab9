"""Scoring perceived scenes against simulator ground truth: objects per category, unknown
objects, fixtures and their states. ``eval/perception_eval.py`` renders the scenes; this module
only counts (the brain never sees any of it).

Objects: perceived objects are paired with true ones (optimal assignment on distance, gated
at ``match_radius`` or a quarter of a large object's length); per category of the truth:
recall (of the objects in view: at least ``IN_VIEW_SHARE`` of their top outline visible),
category accuracy (of those found, named by their category), precision (of the perceived
objects named by a category, those that are an object of that category).

Unknown objects: an object whose category the catalogue does not hold must be reported as
``unknown``, never as another category. Scored two ways: a second pipeline per scene runs
with one category of the scene held out of the catalogue (its objects are then unknown
objects), and every found object's own signature is matched again with its category left
out. A "mislabel" is an object of a held-out category named as any known category.

Fixtures: every part whose state the scene sets is compared with the perceived part (a
drawer or sliding door's opening within ``DRAWER_TOL``, a hinged door's angle within
``DOOR_TOL``, a lamp or burner on/off); a fixture of the scene missing from the perceived
scene, and a fixture the map names that the cell does not have but the scene reports
(``phantoms``), are counted too.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from frankenbot.state import Scene, SceneObject

DEFAULT_MATCH_RADIUS = 0.05  # metres
LARGE_SHARE = 0.25  # large objects: matched within this share of their longest side
VISIBLE_SHARE = 0.25  # an object with less of its top outline in view counts as occluded
IN_VIEW_SHARE = 0.5  # per-category scores count objects at least this visible
FULL_VIEW_SHARE = 0.9  # ... and again over the objects the camera sees (nearly) whole
DRAWER_TOL = 0.015  # m: a drawer's or sliding door's opening
DOOR_TOL = 0.1  # rad: a hinged door's angle
UNKNOWN = "unknown"


@dataclass(frozen=True)
class TruthObject:
    """What the simulator says is there."""

    name: str
    shape: str
    colour: str
    position: tuple[float, float, float]
    visible: float = 1.0  # share of the object's top outline the camera sees (occlusion)
    size: tuple[float, float, float] = (0.04, 0.04, 0.04)


def radius_for(t: TruthObject, base: float) -> float:
    return max(base, LARGE_SHARE * max(t.size[0], t.size[1]))


def match(dets: Sequence[SceneObject], truth: Sequence[TruthObject],
          radius: float) -> list[tuple[int, int]]:
    """Optimal one-to-one pairs (detection index, truth index) closer than each truth's
    radius (``radius``, or a quarter of a large object's longest side)."""
    if not dets or not truth:
        return []
    cost = np.array([[math.dist(d.position, t.position) for t in truth] for d in dets])
    gate = np.array([radius_for(t, radius) for t in truth])[None, :]
    # Tie-break co-located pairs (a block inside a bowl) by shape, never beyond the radius.
    tie = np.array([[0.0 if d.shape == t.shape else 0.02 for t in truth] for d in dets])
    rows, cols = linear_sum_assignment(np.where(cost < gate, cost + tie, 1e3))
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if cost[r, c] < gate[0, c]]


@dataclass
class CategoryCounts:
    in_view: int = 0
    found: int = 0
    correct: int = 0
    reported_unknown: int = 0  # found but named unknown (a miss of the category, not a lie)
    predicted: int = 0  # perceived objects named by this category
    true_predicted: int = 0

    def summary(self) -> dict[str, Any]:
        return {"objects": self.in_view, "found": self.found,
                "recall": self.found / self.in_view if self.in_view else None,
                "accuracy": self.correct / self.found if self.found else None,
                "precision": (self.true_predicted / self.predicted if self.predicted else None),
                "named_by_category": self.predicted, "reported_unknown": self.reported_unknown}


@dataclass
class EvalTotals:
    """Accumulated counts and errors over many scenes."""

    truths: int = 0
    visible_truths: int = 0  # objects with >= VISIBLE_SHARE of their top outline in view
    visible_matched: int = 0
    detections: int = 0
    matched: int = 0
    colour_ok: int = 0
    shape_ok: int = 0
    errors_m: list[float] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    wrong_colour: list[str] = field(default_factory=list)
    wrong_category: list[str] = field(default_factory=list)
    categories: dict[str, CategoryCounts] = field(
        default_factory=lambda: defaultdict(CategoryCounts))
    full_view: dict[str, CategoryCounts] = field(
        default_factory=lambda: defaultdict(CategoryCounts))
    # unknown objects: (held-out objects in view, reported unknown, mislabelled, missed)
    held_out: Counter = field(default_factory=Counter)
    mislabels: list[str] = field(default_factory=list)
    rematch: Counter = field(default_factory=Counter)
    rematch_mislabels: list[str] = field(default_factory=list)
    # fixtures: per part kind (scored, correct), absolute errors; presence
    fixture_parts: dict[str, list[int]] = field(default_factory=lambda: defaultdict(
        lambda: [0, 0]))
    fixture_errors: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    fixture_failures: list[str] = field(default_factory=list)
    fixtures_placed: int = 0
    fixtures_reported: int = 0
    phantoms_tried: int = 0
    phantoms_reported: list[str] = field(default_factory=list)
    unknown_phantoms: int = 0  # unknown objects reported where nothing is

    def add(self, scene: Scene, truth: Sequence[TruthObject], latency_s: float | None,
            tag: str = "", match_radius: float = DEFAULT_MATCH_RADIUS) -> None:
        dets = [o for o in scene.objects if not o.is_fixture]
        self.truths += len(truth)
        self.detections += len(dets)
        if latency_s is not None:
            self.latencies_s.append(latency_s)
        pairs = match(dets, truth, match_radius)
        self.matched += len(pairs)
        self.visible_truths += sum(t.visible >= VISIBLE_SHARE for t in truth)
        self.visible_matched += sum(truth[j].visible >= VISIBLE_SHARE for _, j in pairs)
        used_d = {i for i, _ in pairs}
        used_t = {j for _, j in pairs}
        for t in truth:
            if t.visible >= IN_VIEW_SHARE:
                self.categories[t.shape].in_view += 1
            if t.visible >= FULL_VIEW_SHARE:
                self.full_view[t.shape].in_view += 1
        for d in dets:
            if d.shape != UNKNOWN:
                self.categories[d.shape].predicted += 1
        for i, j in pairs:
            d, t = dets[i], truth[j]
            self.errors_m.append(math.dist(d.position, t.position))
            if d.colour == t.colour:
                self.colour_ok += 1
            else:
                self.wrong_colour.append(f"{tag}: {t.name} seen as {d.colour}")
            if d.shape == t.shape:
                self.shape_ok += 1
                self.categories[t.shape].true_predicted += 1
            else:
                self.wrong_category.append(f"{tag}: {t.name} seen as {d.shape}")
            for share, table in ((IN_VIEW_SHARE, self.categories),
                                 (FULL_VIEW_SHARE, self.full_view)):
                if t.visible >= share:
                    c = table[t.shape]
                    c.found += 1
                    c.correct += int(d.shape == t.shape)
                    c.reported_unknown += int(d.shape == UNKNOWN)
        self.misses += [f"{tag}: {t.name} ({100 * t.visible:.0f}% visible)"
                        for j, t in enumerate(truth) if j not in used_t]
        self.false_positives += [f"{tag}: {d.object_id} at {tuple(round(v, 3) for v in d.position)}"
                                 for i, d in enumerate(dets) if i not in used_d]
        self.unknown_phantoms += sum(d.shape == UNKNOWN for i, d in enumerate(dets)
                                     if i not in used_d)

    def add_held_out(self, scene: Scene, truth: Sequence[TruthObject], category: str,
                     tag: str, match_radius: float = DEFAULT_MATCH_RADIUS) -> None:
        """A scene perceived with ``category`` left out of the catalogue: its objects are
        unknown objects and must be reported so (or missed), never as a known category."""
        dets = [o for o in scene.objects if not o.is_fixture]
        pairs = dict((j, i) for i, j in match(dets, truth, match_radius))
        for j, t in enumerate(truth):
            if t.shape != category or t.visible < IN_VIEW_SHARE:
                continue
            self.held_out["objects"] += 1
            if j not in pairs:
                self.held_out["missed"] += 1
                continue
            d = dets[pairs[j]]
            if d.shape == UNKNOWN:
                self.held_out["unknown"] += 1
            else:
                self.held_out["mislabelled"] += 1
                self.mislabels.append(f"{tag}: {t.name} (held out) named {d.shape}")

    def add_rematch(self, name: str, category: str, rematched: str, tag: str) -> None:
        """A found object's own signature matched with its category left out."""
        self.rematch["objects"] += 1
        if rematched == UNKNOWN:
            self.rematch["unknown"] += 1
        else:
            self.rematch["mislabelled"] += 1
            self.rematch_mislabels.append(f"{tag}: {name} ({category} left out) -> {rematched}")

    def add_fixtures(self, scene: Scene, states: Mapping[str, float],
                     kinds: Mapping[str, str], placed: Sequence[str], tag: str) -> None:
        """Fixture presence and every stateful part's measured state against the truth."""
        objs = {o.object_id: o for o in scene.objects if o.is_fixture}
        self.fixtures_placed += len(placed)
        self.fixtures_reported += sum(f in objs for f in placed)
        for f in placed:
            if f not in objs:
                self.fixture_failures.append(f"{tag}: fixture {f} missing")
        for pid, value in states.items():
            kind = kinds.get(pid, "")
            if kind not in ("drawer", "sliding_door", "hinged_door", "light", "burner"):
                continue
            counts = self.fixture_parts[kind]
            counts[0] += 1
            o = objs.get(pid)
            if kind in ("light", "burner"):
                ok = o is not None and o.on is not None and o.on == (value >= 0.5)
                seen = None if o is None else o.on
            else:
                tol = DOOR_TOL if kind == "hinged_door" else DRAWER_TOL
                seen = None if o is None else o.opening
                ok = seen is not None and abs(seen - value) <= tol
                if seen is not None:
                    self.fixture_errors[kind].append(abs(seen - value))
            counts[1] += int(ok)
            if not ok:
                self.fixture_failures.append(f"{tag}: {pid} is {value:.3f}, seen {seen}")

    def add_phantoms(self, scene: Scene, phantoms: Sequence[str], tag: str) -> None:
        ids = {o.object_id for o in scene.objects if o.is_fixture}
        self.phantoms_tried += len(phantoms)
        self.phantoms_reported += [f"{tag}: {p}" for p in phantoms if p in ids]

    def summary(self) -> dict[str, Any]:
        err = np.asarray(self.errors_m) * 1000.0
        lat = np.asarray(self.latencies_s) * 1000.0
        cpu = np.asarray(self.cpu_s) * 1000.0
        parts = {k: {"scored": v[0], "correct": v[1],
                     "accuracy": v[1] / v[0] if v[0] else None,
                     "error_median": (float(np.median(self.fixture_errors[k]))
                                      if self.fixture_errors.get(k) else None)}
                 for k, v in sorted(self.fixture_parts.items())}
        scored = sum(v[0] for v in self.fixture_parts.values())
        correct = sum(v[1] for v in self.fixture_parts.values())
        cats = {k: v.summary() for k, v in sorted(self.categories.items())}
        per = [c for c in cats.values() if c["objects"]]

        def worst(key: str, table: list[dict[str, Any]] = per) -> float | None:
            vals = [c[key] for c in table if c[key] is not None]
            return min(vals) if vals else None

        full = [v.summary() for v in self.full_view.values() if v.in_view]

        return {
            "frames": len(self.latencies_s),
            "objects": self.truths,
            "detections": self.detections,
            "recall": self.matched / self.truths if self.truths else 0.0,
            "recall_visible": (self.visible_matched / self.visible_truths
                               if self.visible_truths else 0.0),
            "occluded_objects": self.truths - self.visible_truths,
            "precision": self.matched / self.detections if self.detections else 0.0,
            "colour_accuracy": self.colour_ok / self.matched if self.matched else 0.0,
            "shape_accuracy": self.shape_ok / self.matched if self.matched else 0.0,
            "position_error_median_mm": float(np.median(err)) if err.size else float("nan"),
            "position_error_p95_mm": float(np.percentile(err, 95)) if err.size else float("nan"),
            "latency_median_ms": float(np.median(lat)) if lat.size else float("nan"),
            "latency_p95_ms": float(np.percentile(lat, 95)) if lat.size else float("nan"),
            "cpu_median_ms": float(np.median(cpu)) if cpu.size else float("nan"),
            "categories": cats,
            "category_recall_min": worst("recall"),
            "category_precision_min": worst("precision"),
            "category_accuracy_min": worst("accuracy"),
            "full_view_recall_min": worst("recall", full),
            "full_view_accuracy_min": worst("accuracy", full),
            "full_view_objects": sum(c["objects"] for c in full),
            "held_out": dict(self.held_out),
            "rematch": dict(self.rematch),
            "unknown_mislabelled": (self.held_out.get("mislabelled", 0)
                                    + self.rematch.get("mislabelled", 0)),
            "unknown_phantoms": self.unknown_phantoms,
            "fixture_parts": parts,
            "fixture_state_accuracy": correct / scored if scored else None,
            "fixtures_placed": self.fixtures_placed,
            "fixtures_reported": self.fixtures_reported,
            "phantom_fixtures_tried": self.phantoms_tried,
            "phantom_fixtures_reported": len(self.phantoms_reported),
            "misses": self.misses[:20],
            "false_positives": self.false_positives[:20],
            "wrong_colour": self.wrong_colour[:20],
            "wrong_category": self.wrong_category[:20],
            "mislabels": (self.mislabels + self.rematch_mislabels)[:20],
            "fixture_failures": self.fixture_failures[:20],
            "phantoms": self.phantoms_reported[:20],
        }

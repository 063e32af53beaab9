"""Score perception against simulator ground truth (the only place ground truth meets perception).

For each rendered scene: match perceived objects to true objects (optimal assignment on distance,
gated at ``match_radius``), then count recall, precision, colour and shape accuracy and position
errors. Used by ``frankenbot perception eval`` and the benchmark; the brain never sees truth.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from frankenbot import resources
from frankenbot.errors import ConfigError, SimError
from frankenbot.eval.seeds import EVALUATION_FIRST_SEED
from frankenbot.perception.camera import CameraModel, Intrinsics
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.fixtures import load_fixture_geometry
from frankenbot.perception.pipeline import PerceptionPipeline
from frankenbot.planner.request import PlanImage
from frankenbot.state import Scene, SceneObject
from frankenbot.transforms import QuatWXYZ

DEFAULT_MATCH_RADIUS = 0.05  # metres
SCENES_PER_INSTALL = 10  # scenes per sensor seed (camera-pose error) in evaluate_sim
VISIBLE_SHARE = 0.25  # an object with less of its top outline in view counts as occluded


@dataclass(frozen=True)
class TruthObject:
    """What the simulator says is there."""

    name: str
    shape: str
    colour: str
    position: tuple[float, float, float]
    visible: float = 1.0  # share of the object's top outline the camera sees (occlusion)


def visible_fraction(position: tuple[float, float, float], size: tuple[float, float, float],
                     yaw: float, camera: CameraModel, depth_m: np.ndarray) -> float:
    """Share of sample points on an object's top outline whose rendered depth is the object's.

    Scoring only: tells an occluded object (behind a bin) from a perception miss.
    """
    c, s = math.cos(yaw), math.sin(yaw)
    hx, hy = size[0] / 2 * 0.9, size[1] / 2 * 0.9  # on a block's top and on a bowl's rim
    local = [(hx * math.cos(a), hy * math.sin(a))
             for a in np.linspace(0.0, 2 * math.pi, 12, endpoint=False)]
    top = position[2] + size[2] / 2 - 0.002
    pts = np.array([(position[0] + c * x - s * y, position[1] + s * x + c * y, top)
                    for x, y in local])
    pix = camera.project(pts)
    cam_z = ((pts - camera.matrix[:3, 3]) @ camera.matrix[:3, :3])[:, 2]
    h, w = depth_m.shape
    seen = 0
    for (u, v), z in zip(pix, cam_z, strict=True):
        if np.isfinite(u) and np.isfinite(v) and 0 <= u < w and 0 <= v < h:
            d = float(depth_m[int(v), int(u)])
            seen += int(d > 0 and abs(d - z) < 0.012)
    return seen / len(local)


@dataclass
class EvalTotals:
    """Accumulated counts and errors over many frames."""

    truths: int = 0
    visible_truths: int = 0  # objects with >= VISIBLE_SHARE of their top outline in view
    visible_matched: int = 0
    detections: int = 0
    matched: int = 0
    colour_ok: int = 0
    shape_ok: int = 0
    errors_m: list[float] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    wrong_colour: list[str] = field(default_factory=list)

    def add(self, scene: Scene, truth: Sequence[TruthObject], latency_s: float | None,
            tag: str = "",
            match_radius: float = DEFAULT_MATCH_RADIUS) -> None:
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
        for i, j in pairs:
            d, t = dets[i], truth[j]
            self.errors_m.append(math.dist(d.position, t.position))
            if d.colour == t.colour:
                self.colour_ok += 1
            else:
                self.wrong_colour.append(f"{tag}: {t.name} seen as {d.colour}")
            if d.shape == t.shape:
                self.shape_ok += 1
        self.misses += [f"{tag}: {t.name} ({100 * t.visible:.0f}% visible)"
                        for j, t in enumerate(truth) if j not in used_t]
        self.false_positives += [f"{tag}: {d.object_id} at {tuple(round(v, 3) for v in d.position)}"
                                 for i, d in enumerate(dets) if i not in used_d]

    def summary(self) -> dict[str, Any]:
        err = np.asarray(self.errors_m) * 1000.0
        lat = np.asarray(self.latencies_s) * 1000.0
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
            "misses": self.misses[:20],
            "false_positives": self.false_positives[:20],
            "wrong_colour": self.wrong_colour[:20],
        }


def match(dets: Sequence[SceneObject], truth: Sequence[TruthObject],
          radius: float) -> list[tuple[int, int]]:
    """Optimal one-to-one pairs (detection index, truth index) closer than ``radius``."""
    if not dets or not truth:
        return []
    cost = np.array([[math.dist(d.position, t.position) for t in truth] for d in dets])
    # Tie-break co-located pairs (a block inside a bowl) by shape, never beyond the radius.
    tie = np.array([[0.0 if d.shape == t.shape else 0.02 for t in truth] for d in dets])
    rows, cols = linear_sum_assignment(np.where(cost < radius, cost + tie, 1e3))
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if cost[r, c] < radius]


def camera_of_world(world: Any) -> CameraModel:
    """CameraModel from a SimWorld's camera_info() and camera_pose()."""
    info = world.camera_info()
    intr = Intrinsics(fx=info.fx, fy=info.fy, cx=info.cx, cy=info.cy, width=info.width,
                      height=info.height)
    return CameraModel.from_matrix(intr, world.camera_pose())


def truth_of_world(world: Any, min_z: float = -0.2, depth: np.ndarray | None = None
                   ) -> list[TruthObject]:
    """Ground truth of the objects on the table (parked objects are below it).

    With the frame's ``depth`` (uint16 mm), each object also gets its visible share.
    """
    # The depth was rendered by the true camera (not the nominal pose the brain is given).
    camera = (CameraModel.from_matrix(camera_of_world(world).intrinsics,
                                      world.true_camera_pose()) if depth is not None else None)
    out = []
    for s in world.object_states().values():
        if s.position[2] <= min_z:
            continue
        vis = 1.0
        if camera is not None and depth is not None:
            yaw = QuatWXYZ(*s.quaternion).yaw()
            vis = visible_fraction(tuple(s.position), tuple(s.size), yaw, camera,
                                   depth.astype(np.float64) / 1000.0)
        out.append(TruthObject(s.name, s.shape, s.colour, tuple(s.position), vis))
    return out




def scenes(first_seed: int = EVALUATION_FIRST_SEED) -> Iterable[tuple[str, int]]:
    """(task family or "" for the full free scene, seed): every family in turn, consecutive
    seeds from ``first_seed`` (evaluation seeds by default)."""
    from frankenbot.sim.tasks import TASK_FAMILIES

    families = ("", *TASK_FAMILIES)
    k = 0
    while True:
        yield families[k % len(families)], first_seed + k
        k += 1


def sensed_and_clean(world: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(rgb, depth) as the sensor delivers them, the clean depth of the same instant (for the
    scorer's visibility test only) and the sim time."""
    stamp, qpos = world.render_state()
    rgb_clean, depth_clean = world.render_qpos(qpos)
    rgb, depth = world.sense(rgb_clean, depth_clean, stamp)
    return rgb, depth, depth_clean, stamp


def evaluate_sim(n_scenes: int = 50, config: PerceptionConfig | None = None,
                 fixtures_path: str | Path | None = None, width: int = 640, height: int = 480,
                 progress: bool = False, noise: str = "none",
                 first_seed: int = EVALUATION_FIRST_SEED, frames: int = 3,
                 calibrate: bool = True) -> dict[str, Any]:
    """Render ``n_scenes`` sim scenes, perceive each with a fresh tracker over ``frames``
    frames (0.1 s apart, as the camera streams), score the last scene against truth.

    ``noise`` picks the sensor profile (sim/sensor.py). Every ``SCENES_PER_INSTALL`` scenes
    get a new sensor seed, so a new camera-pose error (an installation); with ``calibrate``
    the brain's camera pose then comes from ``calibrate_camera`` on the first of those scenes,
    as on the robot (the quick start calibrates before work); without it the brain keeps the
    nominal pose.
    """
    from frankenbot.perception.calibration import calibrate_camera
    from frankenbot.sim.sensor import SensorModel, sensor_params
    from frankenbot.sim.world import SimWorld

    if frames < 1:
        raise ConfigError(f"frames must be >= 1, got {frames}")
    params = sensor_params(noise)
    fixtures = load_fixture_geometry(fixtures_path or resources.fixtures_path())
    totals = EvalTotals()
    calib_errors: list[tuple[float, float]] = []
    t_start = time.perf_counter()
    bar = None
    if progress:  # a bar on a terminal, one line per scene elsewhere
        from frankenbot.eval.progress import Progress

        bar = Progress(n_scenes, "perception eval", log=lambda line: print(line, flush=True))
    with SimWorld(seed=0, width=width, height=height) as world:
        nominal = camera_of_world(world)
        done = 0
        for family, seed in scenes(first_seed):
            if done >= n_scenes:
                break
            install = first_seed + done // SCENES_PER_INSTALL
            new_install = world.sensor.sensor_seed != install or done == 0
            if new_install:
                world.set_sensor(SensorModel(params, sensor_seed=install))
                camera, pconfig = nominal, config
            try:
                world.reset(family or None, seed)
            except SimError:  # the sampler could not lay out this seed: take the next one
                continue
            done += 1
            if new_install and calibrate and params.active:
                shots = []
                for _ in range(6):
                    rgb, depth, _, _ = sensed_and_clean(world)
                    shots.append((rgb, depth))
                    world.advance(0.1)
                calib = calibrate_camera(shots, nominal, fixtures, config)
                camera = calib.camera
                if calib.table_rgb is not None:
                    pconfig = replace(config or PerceptionConfig(), table_rgb=calib.table_rgb)
                calib_errors.append(pose_error(camera.matrix, world.true_camera_pose()))
            pipeline = PerceptionPipeline(camera, fixtures, pconfig)
            for k in range(frames):
                if k:
                    world.advance(0.1)
                rgb, depth, depth_clean, stamp = sensed_and_clean(world)
                result = pipeline.process_frame(rgb, depth, stamp=stamp,
                                                joint_positions=world.joint_positions())
                totals.latencies_s.append(result.latency_s)
            totals.add(result.scene, truth_of_world(world, depth=depth_clean), None,
                       tag=f"{family or 'free'}/{seed}")
            if bar is not None:
                bar.step(f"{family or 'free'}/{seed}: {len(result.scene.objects)} objects, "
                         f"{result.latency_s * 1000:.0f} ms")
    if bar is not None:
        bar.close()
    out = totals.summary()
    out["frames"] = done
    out["frames_per_scene"] = frames
    out["noise"] = noise
    out["first_seed"] = first_seed
    out["calibrated"] = bool(calibrate and params.active)
    if calib_errors:
        mm = np.array([e[0] for e in calib_errors]) * 1000
        deg = np.array([e[1] for e in calib_errors])
        out["calibration_error_median_mm"] = float(np.median(mm))
        out["calibration_error_max_mm"] = float(np.max(mm))
        out["calibration_error_median_deg"] = float(np.median(deg))
        out["calibration_error_max_deg"] = float(np.max(deg))
    out["wall_s"] = time.perf_counter() - t_start
    return out


def pose_error(estimated: np.ndarray, true: np.ndarray) -> tuple[float, float]:
    """(translation error m, rotation error degrees) between two 4x4 poses."""
    from frankenbot.perception.marker_board import pose_difference

    return pose_difference(np.asarray(estimated, float), np.asarray(true, float))
def perceived_sim_scene(task: str, seed: int) -> tuple[str, Scene, PlanImage | None, str]:
    """(task instruction, perceived scene, annotated image, object table) of a sim scene.

    What the planner sees of sim task ``task`` (or a plain seeded table): one MuJoCo render
    through the perception pipeline and the set-of-mark annotation; no ground truth.
    """
    from frankenbot.perception.annotate import annotate
    from frankenbot.perception.fixtures import load_fixtures
    from frankenbot.perception.pipeline import PerceptionPipeline
    from frankenbot.planner.prompt import encode_png
    from frankenbot.sim.world import SimWorld

    with SimWorld(seed=seed) as world:
        instance = world.reset(task or None, seed)
        camera = camera_of_world(world)
        rgb, depth = world.render_rgbd()
        pipeline = PerceptionPipeline(camera, load_fixtures(resources.fixtures_path()))
        scene = pipeline.process(rgb, depth, world.time, world.joint_positions())
    image, table = annotate(rgb, scene, camera)
    return (instance.instruction if task else ""), scene, encode_png(image), table

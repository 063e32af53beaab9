"""Perception benchmark: accuracy vs sim ground truth and per-frame latency by stage.

``run_benchmark(quick)`` prints a readable report and returns the numbers: accuracy on clean
renders and under the realistic and harsh sensor models on the first waves' scenes (issue 16's
targets), and per category, unknown objects and fixture states on the new world's scenes
under the realistic model (issue 30's). Latency is measured on
real 640x480 sim renders, per stage (point cloud, table + clusters, measurement, tracking) and for
the whole pipeline at pixel strides 1 and 2. The machine is shared, so numbers vary with load.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from frankenbot.eval.perception_eval import (
    camera_of_world,
    evaluate_sim,
    scenes,
    set_scene,
)
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.geometry import measure
from frankenbot.perception.pipeline import PerceptionPipeline, default_catalogue
from frankenbot.perception.segmentation import backproject, depth_to_mm, segment


def _stats(values_s: list[float]) -> dict[str, float]:
    ms = np.asarray(values_s) * 1000.0
    return {"median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
            "max_ms": float(np.max(ms))}


def _latency(frames: list[tuple[Any, Any, Any, Any]], camera: Any, stride: int,
             repeats: int) -> dict[str, dict[str, float]]:
    config = PerceptionConfig(stride=stride)
    pipeline = PerceptionPipeline(camera, None, config, catalogue=default_catalogue())
    times: dict[str, list[float]] = {"cloud": [], "segment": [], "measure": [], "total": []}
    rng = np.random.default_rng(0)
    for _ in range(repeats):
        for k, (rgb, depth, joints, fmap) in enumerate(frames):
            pipeline.set_fixture_map(fmap)
            pipeline.reset()
            t0 = time.perf_counter()
            backproject(depth_to_mm(depth), camera, stride)
            t1 = time.perf_counter()
            _, clusters = segment(rgb, depth, camera, config, rng)
            t2 = time.perf_counter()
            for c in clusters:
                measure(c)
            t3 = time.perf_counter()
            pipeline.process(rgb, depth, float(k), joints)
            t4 = time.perf_counter()
            times["cloud"].append(t1 - t0)
            times["segment"].append(t2 - t1)  # includes its own cloud
            times["measure"].append(t3 - t2)
            times["total"].append(t4 - t3)
    return {k: _stats(v) for k, v in times.items()}


NOISY_PROFILES = ("realistic", "harsh")


def run_benchmark(quick: bool = False) -> dict[str, object]:
    """Accuracy on sim scenes (10 quick / 50 full) and latency at strides 1 and 2."""
    from frankenbot.sim.world import SimWorld

    n_scenes = 10 if quick else 50
    n_frames = 4 if quick else 12
    repeats = 1 if quick else 3
    print(f"perception benchmark ({'quick' if quick else 'full'}): {n_scenes} eval scenes, "
          f"{n_frames} frames x {repeats} for latency")
    accuracy = evaluate_sim(n_scenes, progress=True, scene_set="first_wave")
    # the D435-like sensor models (docs/CAMERA.md), each camera calibrated first as on the robot
    noisy = {noise: evaluate_sim(n_scenes, noise=noise, scene_set="first_wave")
             for noise in NOISY_PROFILES}
    # the new world: everyday objects per category, unknown objects, fixture states
    world_scenes = 20 if quick else 100
    new_world = evaluate_sim(world_scenes, noise="realistic", scene_set="world", progress=True)
    frames = []
    with SimWorld(seed=0) as world:
        camera = camera_of_world(world)
        for family, seed in scenes(scene_set="all"):
            if len(frames) >= n_frames:
                break
            try:
                set_scene(world, family, seed)
            except Exception:  # the sampler could not lay out this seed
                continue
            rgb, depth = world.render_rgbd()
            frames.append((rgb, depth, world.joint_positions(),
                           FixtureMap.from_data(world.fixture_map_data())))
    latency = {f"stride_{s}": _latency(frames, camera, s, repeats) for s in (1, 2)}
    print(f"  accuracy: recall {100 * accuracy['recall']:.1f}%  precision "
          f"{100 * accuracy['precision']:.1f}%  colour {100 * accuracy['colour_accuracy']:.1f}%"
          f"  shape {100 * accuracy['shape_accuracy']:.1f}%")
    print(f"  position error: median {accuracy['position_error_median_mm']:.1f} mm, p95 "
          f"{accuracy['position_error_p95_mm']:.1f} mm (targets 5 / 15 mm)")
    for noise, acc in noisy.items():
        print(f"  noise {noise}: recall {100 * acc['recall']:.1f}% (of objects >= half visible "
              f"{100 * acc['recall_visible']:.1f}%)  precision {100 * acc['precision']:.1f}%  "
              f"colour {100 * acc['colour_accuracy']:.1f}%  position error median "
              f"{acc['position_error_median_mm']:.1f} mm, p95 {acc['position_error_p95_mm']:.1f}"
              f" mm; pipeline latency median {acc['latency_median_ms']:.0f} ms")
    print(f"  new world (realistic, {world_scenes} scenes): per category recall >= "
          f"{_pct(new_world['category_recall_min'])}, precision >= "
          f"{_pct(new_world['category_precision_min'])}, accuracy >= "
          f"{_pct(new_world['category_accuracy_min'])}; unknown objects mislabelled "
          f"{new_world['unknown_mislabelled']}; fixture states "
          f"{_pct(new_world['fixture_state_accuracy'])}; phantom fixtures reported "
          f"{new_world['phantom_fixtures_reported']} of {new_world['phantom_fixtures_tried']}")
    for name, stages in latency.items():
        parts = "  ".join(f"{k} {v['median_ms']:.1f}/{v['p95_ms']:.1f}" for k, v in stages.items())
        print(f"  latency {name} (median/p95 ms): {parts}   (target total <= 150 ms)")
    return {"accuracy": accuracy, "noisy": noisy, "new_world": new_world, "latency": latency,
            "quick": quick}


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


if __name__ == "__main__":  # pragma: no cover
    run_benchmark()

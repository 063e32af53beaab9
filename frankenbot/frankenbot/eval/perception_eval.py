"""Score perception against simulator ground truth (the only place ground truth meets perception).

For each rendered scene a fresh pipeline perceives a few frames; the last scene is scored
(``eval/perception_scores.py``): objects per category, unknown objects, fixture presence and
states, position errors and latency. Used by ``frankenbot perception eval`` and the
benchmark; the brain never sees truth.

Scene sets (``--scene-set``):

* ``world`` (default): the new world. Even scenes are a crowded free scene of everyday
  objects (``EVERYDAY``: 9-12 of the sim's everyday objects and a few of the first waves',
  any yaw, 1.5 cm apart, the one-drawer unit at the back; objects may hide one another and
  are scored as occluded then); odd scenes are the twelve new task families in turn (the
  cabinet's drawers, the doors, the lamp and the stove in their sampled states).
* ``first_wave``: the full free scene of the first waves and their twelve families in
  turn (the scenes the README's first perception rows were measured on).
* ``all``: the two alternating.

Every ``SCENES_PER_INSTALL`` scenes get a new sensor seed (a new camera-pose error), and the
camera is calibrated on a free scene of that installation first, as on the robot.
"""

from __future__ import annotations

import logging
import math
import time
import zlib
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Iterable, Iterator

import numpy as np

from frankenbot.errors import ConfigError, SimError
from frankenbot.eval.perception_scores import (
    DEFAULT_MATCH_RADIUS,
    IN_VIEW_SHARE,
    EvalTotals,
    TruthObject,
    match,
)
from frankenbot.eval.seeds import EVALUATION_FIRST_SEED
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.camera import CameraModel, Intrinsics
from frankenbot.perception.catalogue import ObjectCatalogue
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.pipeline import PerceptionPipeline, default_catalogue
from frankenbot.planner.request import PlanImage
from frankenbot.state import Scene

SCENES_PER_INSTALL = 10  # scenes per sensor seed (camera-pose error) in evaluate_sim
SCENE_SETS = ("world", "first_wave", "all")
EVERYDAY = "everyday"  # the crowded free scene of everyday objects (a pseudo family)
EVERYDAY_COUNT = (9, 12)  # everyday objects per scene (inclusive)
EVERYDAY_EXTRA = 2  # first-wave objects among them
EVERYDAY_GAP = 0.015  # m between footprints: crowded


VISIBILITY_RAYS = 48  # rays cast from the camera at each object


def visible_share(world: Any, name: str, eye: np.ndarray, rays: int = VISIBILITY_RAYS
                  ) -> float:
    """Share of the rays from the camera that hit object ``name`` (cast at random points of
    its bounding box, each tested against the object alone) whose first hit in the scene is
    the object itself. Scoring only: tells an occluded object (behind a bin, under a bowl's
    rim, behind the arm) from a perception miss, whatever the object's shape."""
    import mujoco

    m, d = world.model, world.data
    bid = m.body(name).id
    geoms = np.flatnonzero(m.body_rootid[m.geom_bodyid] == bid)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    half = np.asarray(world.object_states()[name].size, float) / 2
    rot = d.xmat[bid].reshape(3, 3)
    targets = d.xpos[bid] + (rng.uniform(-1, 1, (rays, 3)) * half) @ rot.T
    hit = seen = 0
    gid = np.zeros(1, np.int32)
    for t in targets:
        vec = t - eye
        vec /= np.linalg.norm(vec)
        own = [mujoco.mju_rayGeom(d.geom_xpos[g], d.geom_xmat[g], m.geom_size[g], eye, vec,
                                  int(m.geom_type[g])) for g in geoms]
        own = [x for x in own if x >= 0]
        if not own:
            continue  # the ray passes through the box but misses the object
        hit += 1
        mujoco.mj_ray(m, d, eye, vec, None, 1, -1, gid)
        seen += int(gid[0] >= 0 and m.body_rootid[m.geom_bodyid[gid[0]]] == bid)
    return seen / hit if hit else 0.0


def camera_of_world(world: Any) -> CameraModel:
    """CameraModel from a SimWorld's camera_info() and camera_pose()."""
    info = world.camera_info()
    intr = Intrinsics(fx=info.fx, fy=info.fy, cx=info.cx, cy=info.cy, width=info.width,
                      height=info.height)
    return CameraModel.from_matrix(intr, world.camera_pose())


def truth_of_world(world: Any, min_z: float = -0.2, depth: np.ndarray | None = None,
                   visibility: bool = False) -> list[TruthObject]:
    """Ground truth of the objects on the table (parked objects are below it).

    With ``visibility`` (or a frame's ``depth``, which asks for it), each object also gets
    its visible share from the camera that rendered the frame (``visible_share``).
    """
    eye = world.true_camera_pose()[:3, 3] if (visibility or depth is not None) else None
    out = []
    for s in world.object_states().values():
        if s.position[2] <= min_z:
            continue
        vis = 1.0 if eye is None else visible_share(world, s.name, eye)
        out.append(TruthObject(s.name, s.shape, s.colour, tuple(s.position), vis,
                               tuple(s.size)))
    return out


def scenes(first_seed: int = EVALUATION_FIRST_SEED, scene_set: str = "world"
           ) -> Iterable[tuple[str, int]]:
    """(task family, "" for the first waves' full free scene or ``EVERYDAY``, seed) of
    ``scene_set`` in turn, consecutive seeds from ``first_seed`` (evaluation seeds by
    default)."""
    from frankenbot.sim.tasks import FIRST_WAVE_FAMILIES, TASK_FAMILIES

    if scene_set not in SCENE_SETS:
        raise ConfigError(f"scene set must be one of {', '.join(SCENE_SETS)}, got "
                          f"{scene_set!r}")
    new = tuple(f for f in TASK_FAMILIES if f not in FIRST_WAVE_FAMILIES)
    old = ("", *FIRST_WAVE_FAMILIES)
    k = 0
    while True:
        if scene_set == "first_wave":
            family = old[k % len(old)]
        elif scene_set == "world":
            family = EVERYDAY if k % 2 == 0 else new[(k // 2) % len(new)]
        else:
            family = (EVERYDAY if k % 4 == 0 else new[(k // 4) % len(new)]) if k % 2 == 0 \
                else old[(k // 2) % len(old)]
        yield family, first_seed + k
        k += 1


def layout_everyday(world: Any, seed: int) -> list[str]:
    """The crowded free scene of everyday objects for ``seed`` (see the module docstring):
    the first waves' free scene with its objects taken off and everyday ones laid out."""
    from frankenbot.sim import objects as layout
    from frankenbot.sim.tasks import FREE_REGION

    world.reset(None, seed)
    for name in list(world.object_states()):
        world.remove_object(name)
    rng = np.random.default_rng([abs(int(seed)), 4241])
    pool = [o.name for o in layout.EVERYDAY]
    first = [o.name for o in layout.OBJECTS if o not in layout.EVERYDAY]
    n = int(rng.integers(EVERYDAY_COUNT[0], EVERYDAY_COUNT[1] + 1))
    names = [pool[int(i)] for i in rng.permutation(len(pool))[:n - EVERYDAY_EXTRA]]
    names += [first[int(i)] for i in rng.permutation(len(first))[:EVERYDAY_EXTRA]]
    (x0, x1), (y0, y1) = FREE_REGION
    placed: list[tuple[float, float, float]] = []
    out = []
    for name in names:
        spec = layout.OBJECT_BY_NAME[name]
        r = spec.radius
        for _ in range(300):
            x, y = float(rng.uniform(x0 + r, x1 - r)), float(rng.uniform(y0 + r, y1 - r))
            if all(math.hypot(x - px, y - py) > r + pr + EVERYDAY_GAP for px, py, pr in placed):
                break
        else:
            continue  # no room left: the scene has one object fewer
        placed.append((x, y, r))
        yaw = float(rng.uniform(-math.pi, math.pi))
        world.add_object(name, (x, y, spec.size[2] / 2 + 0.001), yaw)
        out.append(name)
    world.advance(0.5)  # settle
    return out


def set_scene(world: Any, family: str, seed: int) -> None:
    """Load scene ``family`` (a task family, "" or ``EVERYDAY``) of ``seed``."""
    if family == EVERYDAY:
        layout_everyday(world, seed)
    else:
        world.reset(family or None, seed)


def phantom_map(world: Any) -> tuple[dict[str, Any], list[str]]:
    """The scene's fixture map plus every fixture kind it does not have, at its usual slot
    (a wrong map): those whose footprint overlaps a fixture that is there are left out (a
    microwave where the cupboard stands looks exactly like it)."""
    from frankenbot.sim import fixtures as fx
    from frankenbot.sim.families import SLOTS

    data = world.fixture_map_data()
    fmap = FixtureMap.from_data(data)
    present = [f for f in fmap.fixtures if f.kind != "zone"]
    entries = dict(data["fixtures"])
    added = []
    slots = {**SLOTS, "drawer": (fx.DRAWER.body_centre[0], fx.DRAWER.body_centre[1], 0.0)}
    for fid, (x, y, yaw) in slots.items():
        if fid in entries:
            continue
        entry = fx.map_entry(fid, x, y, yaw)
        ghost = FixtureMap.from_data({"fixtures": {fid: entry}}).fixtures[0]
        reach = 0.5 * math.hypot(ghost.size[0], ghost.size[1])
        if any(math.dist(ghost.position[:2], f.position[:2])
               < reach + 0.5 * math.hypot(f.size[0], f.size[1]) for f in present):
            continue
        entries[fid] = entry
        added.append(fid)
    return {"fixtures": entries}, added


def sensed_and_clean(world: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(rgb, depth) as the sensor delivers them, the clean depth of the same instant (for the
    scorer's visibility test only) and the sim time."""
    stamp, qpos = world.render_state()
    rgb_clean, depth_clean = world.render_qpos(qpos)
    rgb, depth = world.sense(rgb_clean, depth_clean, stamp)
    return rgb, depth, depth_clean, stamp


def _held_out_category(truth: list[TruthObject], seed: int) -> str | None:
    cats = sorted({t.shape for t in truth if t.visible >= IN_VIEW_SHARE})
    return cats[seed % len(cats)] if cats else None


def _calibrate(world: Any, nominal: CameraModel, install: int, config: PerceptionConfig | None
               ) -> tuple[CameraModel, PerceptionConfig | None, tuple[float, float]]:
    """The camera of an installation, calibrated on its free scene as on the robot."""
    from frankenbot.perception.calibration import calibrate_camera

    for k in range(6):  # a free scene that cannot be laid out: the calibration takes another
        try:
            world.reset(None, install + k * 1_000_000)
            break
        except SimError:
            if k == 5:
                raise
    shots = []
    for _ in range(6):
        rgb, depth, _, _ = sensed_and_clean(world)
        shots.append((rgb, depth))
        world.advance(0.1)
    calib = calibrate_camera(shots, nominal, FixtureMap.from_data(world.fixture_map_data()),
                             config)
    pconfig = config
    if calib.table_rgb is not None:
        pconfig = replace(config or PerceptionConfig(), table_rgb=calib.table_rgb)
    return calib.camera, pconfig, pose_error(calib.camera.matrix, world.true_camera_pose())


def evaluate_sim(n_scenes: int = 50, config: PerceptionConfig | None = None,
                 width: int = 640, height: int = 480, progress: bool = False,
                 noise: str = "none", first_seed: int = EVALUATION_FIRST_SEED,
                 frames: int = 3, calibrate: bool = True, scene_set: str = "world",
                 catalogue: ObjectCatalogue | None = None,
                 held_out: bool = True) -> dict[str, Any]:
    """Render ``n_scenes`` sim scenes of ``scene_set``, perceive each with a fresh pipeline
    over ``frames`` frames (0.1 s apart, as the camera streams), score the last scene.

    ``noise`` picks the sensor profile (sim/sensor.py). With ``calibrate`` (and noise) the
    brain's camera pose comes from ``calibrate_camera`` per installation; without it the
    brain keeps the nominal pose. ``held_out``: also perceive each scene with one of its
    categories left out of the catalogue and a map naming fixtures the scene does not have
    (unknown objects, phantom fixtures).
    """
    from frankenbot.sim.sensor import SensorModel, sensor_params
    from frankenbot.sim.world import SimWorld

    if frames < 1:
        raise ConfigError(f"frames must be >= 1, got {frames}")
    params = sensor_params(noise)
    catalogue = catalogue if catalogue is not None else default_catalogue()
    totals = EvalTotals()
    calib_errors: list[tuple[float, float]] = []
    t_start = time.perf_counter()
    bar = None
    if progress:  # a bar on a terminal, one line per scene elsewhere
        from frankenbot.eval.progress import Progress

        bar = Progress(n_scenes, "perception eval", log=lambda line: print(line, flush=True))
    with SimWorld(seed=0, width=width, height=height) as world:
        nominal = camera_of_world(world)
        camera, pconfig = nominal, config
        done = 0
        install = -1
        for family, seed in scenes(first_seed, scene_set):
            if done >= n_scenes:
                break
            if first_seed + done // SCENES_PER_INSTALL != install:
                install = first_seed + done // SCENES_PER_INSTALL
                world.set_sensor(SensorModel(params, sensor_seed=install))
                camera, pconfig = nominal, config
                if calibrate and params.active:
                    camera, pconfig, err = _calibrate(world, nominal, install, config)
                    calib_errors.append(err)
            try:
                set_scene(world, family, seed)
            except SimError:  # the sampler could not lay out this seed: take the next one
                continue
            done += 1
            tag = f"{family or 'free'}/{seed}"
            fmap = FixtureMap.from_data(world.fixture_map_data())
            pipeline = PerceptionPipeline(camera, fmap, pconfig, catalogue=catalogue)
            second = None
            held = None
            phantoms: list[str] = []
            for k in range(frames):
                if k:
                    world.advance(0.1)
                rgb, depth, depth_clean, stamp = sensed_and_clean(world)
                if k == 0 and held_out and catalogue is not None:
                    truth0 = truth_of_world(world, depth=depth_clean)
                    held = _held_out_category(truth0, seed)
                    ghost_data, phantoms = phantom_map(world)
                    second = PerceptionPipeline(camera, FixtureMap.from_data(ghost_data),
                                                pconfig, catalogue=catalogue.without(
                                                    [held] if held else []))
                c0 = time.process_time()
                result = pipeline.process_frame(rgb, depth, stamp=stamp,
                                                joint_positions=world.joint_positions())
                totals.cpu_s.append(time.process_time() - c0)
                totals.latencies_s.append(result.latency_s)
                if second is not None:  # the phantom fixtures it drops are expected: quiet
                    with _quiet("frankenbot.perception.fixture_state"):
                        last2 = second.process_frame(rgb, depth, stamp=stamp,
                                                     joint_positions=world.joint_positions())
            truth = truth_of_world(world, depth=depth_clean)
            totals.add(result.scene, truth, None, tag=tag)
            kinds = {pid: p.kind for pid, p in fmap.parts.items()}
            placed = [f.fixture_id for f in fmap.fixtures if f.kind != "zone"]
            totals.add_fixtures(result.scene, world.fixture_states(), kinds, placed, tag)
            if second is not None:
                if held is not None:
                    totals.add_held_out(last2.scene, truth, held, tag)
                totals.add_phantoms(last2.scene, phantoms, tag)
                _rematch(totals, pipeline, result.scene, truth, catalogue, tag)
            if bar is not None:
                bar.step(f"{tag}: {len(result.scene.objects)} objects, "
                         f"{result.latency_s * 1000:.0f} ms")
    if bar is not None:
        bar.close()
    out = totals.summary()
    out["perceived_frames"] = out["frames"]
    out.update(frames=done, scenes=done, frames_per_scene=frames, noise=noise,
               first_seed=first_seed, scene_set=scene_set,
               calibrated=bool(calibrate and params.active),
               catalogue=str(catalogue.path) if catalogue is not None and catalogue.path
               else ("none (size rules)" if catalogue is None else "given"))
    if calib_errors:
        mm = np.array([e[0] for e in calib_errors]) * 1000
        deg = np.array([e[1] for e in calib_errors])
        out["calibration_error_median_mm"] = float(np.median(mm))
        out["calibration_error_max_mm"] = float(np.max(mm))
        out["calibration_error_median_deg"] = float(np.median(deg))
        out["calibration_error_max_deg"] = float(np.max(deg))
    out["wall_s"] = time.perf_counter() - t_start
    return out


@contextmanager
def _quiet(logger: str) -> Iterator[None]:
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _rematch(totals: EvalTotals, pipeline: PerceptionPipeline, scene: Scene,
             truth: list[TruthObject], catalogue: ObjectCatalogue, tag: str) -> None:
    """Every found object's own signature, matched with its category left out."""
    dets = [o for o in scene.objects if not o.is_fixture]
    sigs = {t.object_id: t.detection for t in pipeline.tracker.tracks}
    for i, j in match(dets, truth, DEFAULT_MATCH_RADIUS):
        d, t = dets[i], truth[j]
        det = sigs.get(d.object_id)
        if det is None or det.signature is None or t.visible < IN_VIEW_SHARE:
            continue
        m = catalogue.without([t.shape]).match(det.signature, det.colour)
        totals.add_rematch(t.name, t.shape, m.category, tag)


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
    from frankenbot.planner.prompt import encode_png
    from frankenbot.sim.world import SimWorld

    with SimWorld(seed=seed) as world:
        instance = world.reset(task or None, seed)
        camera = camera_of_world(world)
        rgb, depth = world.render_rgbd()
        pipeline = PerceptionPipeline(camera, FixtureMap.from_data(world.fixture_map_data()),
                                      catalogue=default_catalogue())
        scene = pipeline.process(rgb, depth, world.time, world.joint_positions())
    image, table = annotate(rgb, scene, camera)
    return (instance.instruction if task else ""), scene, encode_png(image), table

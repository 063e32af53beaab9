"""Camera extrinsics from what the cell already contains: the table plane and a known fixture.

Why: the brain's positions are only as good as ``T_base_optical``; a hand-measured camera pose is
off by millimetres and fractions of a degree, which at 1.2 m is a centimetre on the table. The
table top constrains height, roll and pitch; a fixed box fixture (the drawer cabinet of
``config/scene_fixtures.yaml``; any box-shaped fixture of the map: the one-drawer unit, the
cabinet, the microwave or cupboard) with two vertical faces in view constrains x, y and yaw. So the
observed point cloud is aligned to a model of exactly those surfaces by point-to-plane ICP with a
robust loss (objects, the arm and the open drawer are outliers), starting from the current pose.
Several frames are pooled (voxel averaging) so the depth noise averages out.

The result is a base-frame correction ``C``: the calibrated pose is ``C @ T_initial``. An ArUco
board would add an independent check; OpenCV is not a dependency here, so it is not used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import open3d as o3d

from frankenbot.errors import PerceptionError
from frankenbot.fixture_map import Fixture, FixtureMap
from frankenbot.perception.camera import CameraModel
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.fixture_geometry import fixture_shape
from frankenbot.perception.segmentation import backproject, check_frame, depth_to_mm
from frankenbot.transforms import quat_from_matrix

BOX_KINDS = ("drawer", "cabinet", "microwave", "cupboard")  # fixtures with box bodies
MIN_FACE_POINTS = 150  # model-matched points on vertical faces of each horizontal direction
POSE_DIGITS = 9  # decimals the pose is kept to during the fit (m; rotation entries)
ICP_STEPS = 40  # ICP steps per distance window at most ...
ICP_STILL = 1e-6  # ... stopping once no entry of the pose moves this much


@dataclass(frozen=True)
class CalibrationResult:
    """The calibrated camera and how the fit went."""

    camera: CameraModel
    correction: np.ndarray  # 4x4 in base_link: calibrated = correction @ initial
    rmse_m: float  # point-to-model RMS over the inlier correspondences
    inliers: int
    face_points: tuple[int, int]  # vertical-face correspondences along the two weakest axes
    table_rgb: tuple[float, float, float] | None = None  # the table's median colour (0-255)

    @property
    def translation_change_m(self) -> float:
        """How far the camera's origin moved (not the correction's own translation, which
        also carries its rotation about the base origin)."""
        t = self.camera.matrix
        before = np.linalg.inv(self.correction) @ t
        return float(np.linalg.norm(t[:3, 3] - before[:3, 3]))

    @property
    def rotation_change_deg(self) -> float:
        c = float(np.clip((np.trace(self.correction[:3, :3]) - 1) / 2, -1.0, 1.0))
        return math.degrees(math.acos(c))


def _grid(lo: np.ndarray, hi: np.ndarray, spacing: float) -> np.ndarray:
    """Points on a rectangle [lo, hi] (2-D) every ``spacing`` metres."""
    xs = np.arange(lo[0], hi[0] + 1e-9, spacing)
    ys = np.arange(lo[1], hi[1] + 1e-9, spacing)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    return np.stack([gx.ravel(), gy.ravel()], axis=1)


def _footprint(fixture: Fixture, xy: np.ndarray, margin: float) -> np.ndarray:
    """Which table points ``xy`` lie under the fixture or where its parts sweep (closed and
    fully open): the camera does not see the table there."""
    travel = {p.part_id: p.travel for p in fixture.all_parts()}
    pts = np.column_stack([xy, np.zeros(len(xy))])
    out = np.zeros(len(xy), bool)
    for states in ({}, travel):
        for box in fixture_shape(fixture, states).solids:
            loc = box.local(pts)
            out |= np.all(np.abs(loc[:, :2]) <= box.half[:2] + margin, axis=1)
    return out


def box_fixtures(fixtures: FixtureMap) -> tuple[Fixture, ...]:
    return tuple(f for f in fixtures.fixtures if f.kind in BOX_KINDS)


def model_surfaces(fixtures: FixtureMap, config: PerceptionConfig,
                   spacing: float = 0.005) -> tuple[np.ndarray, np.ndarray]:
    """(points, normals) sampled on the table top and the box fixtures' top and side faces."""
    pts: list[np.ndarray] = []
    nrm: list[np.ndarray] = []
    lo = np.asarray(config.workspace_min[:2], float)
    hi = np.asarray(config.workspace_max[:2], float)
    table = _grid(lo, hi, 2 * spacing)
    boxes = box_fixtures(fixtures)
    keep = np.ones(len(table), dtype=bool)
    for f in boxes:  # the table under a fixture (and where its drawer slides out) is not seen
        keep &= ~_footprint(f, table, 0.02)
    table = table[keep]
    pts.append(np.column_stack([table, np.full(len(table), config.table_height)]))
    nrm.append(np.tile([0.0, 0.0, 1.0], (len(table), 1)))
    for f in boxes:
        (cx, cy, cz), (sx, sy, sz), yaw = f.position, f.size, f.yaw
        c, s = math.cos(yaw), math.sin(yaw)
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        faces = []
        top = _grid(np.array([-sx / 2, -sy / 2]), np.array([sx / 2, sy / 2]), spacing)
        faces.append((np.column_stack([top, np.full(len(top), sz / 2)]), (0.0, 0.0, 1.0)))
        for axis, half, other_half in ((0, sx / 2, sy / 2), (1, sy / 2, sx / 2)):
            side = _grid(np.array([-other_half, -sz / 2]), np.array([other_half, sz / 2]),
                         spacing)
            for sign in (-1.0, 1.0):
                p = np.zeros((len(side), 3))
                p[:, axis] = sign * half
                p[:, 1 - axis] = side[:, 0]
                p[:, 2] = side[:, 1]
                faces.append((p, (sign, 0.0, 0.0) if axis == 0 else (0.0, sign, 0.0)))
        for p, n in faces:
            pts.append(p @ rot.T + np.array([cx, cy, cz]))
            nrm.append(np.tile(rot @ np.asarray(n), (len(p), 1)))
    return np.concatenate(pts), np.concatenate(nrm)


def observed_cloud(frames: Sequence[tuple[np.ndarray, np.ndarray]], camera: CameraModel,
                   config: PerceptionConfig, voxel: float = 0.006) -> np.ndarray:
    """Optical-frame points of all frames pooled and voxel-averaged (noise averages out)."""
    clouds = []
    ident = CameraModel.from_matrix(camera.intrinsics, np.eye(4))
    for rgb, depth in frames:
        check_frame(rgb, depth, camera)
        p = backproject(depth_to_mm(depth), ident, config.stride)
        p = p[np.all(np.isfinite(p), axis=1) & (p[:, 2] > 0)]
        clouds.append(p)
    if not clouds or sum(len(c) for c in clouds) == 0:
        raise PerceptionError("calibration: no valid depth in the frames")
    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(np.concatenate(clouds)))
    return np.asarray(pc.voxel_down_sample(voxel).points)


def calibrate_camera(frames: Sequence[tuple[np.ndarray, np.ndarray]], initial: CameraModel,
                     fixtures: FixtureMap,
                     config: PerceptionConfig | None = None) -> CalibrationResult:
    """Estimate T_base_optical from ``frames`` (rgb, depth) of a static cell, starting at
    ``initial`` (the nominal or last calibrated pose, within ~2 cm and ~2 degrees).

    Raises PerceptionError when the view does not constrain the pose (no box fixture with two
    vertical faces in view, or too few table points): a partial fit would silently be wrong.
    """
    config = config or PerceptionConfig()
    if not frames:
        raise PerceptionError("calibration needs at least one frame")
    if not box_fixtures(fixtures):
        raise PerceptionError("calibration needs a box fixture (e.g. the drawer cabinet) in "
                              "the fixture map: the table alone leaves x, y and yaw free")
    cam_pts = observed_cloud(frames, initial, config)
    model_p, model_n = model_surfaces(fixtures, config)
    target = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(model_p))
    target.normals = o3d.utility.Vector3dVector(model_n)
    source = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(cam_pts))
    reg = o3d.pipelines.registration
    T = initial.matrix.copy()  # maps optical -> base; refined in place
    result = None
    dist = 0.05
    for _ in range(5):
        est = reg.TransformationEstimationPointToPlane(reg.TukeyLoss(k=dist))
        # one ICP step at a time, the pose kept to a fixed grid after each: Open3D sums over
        # threads in no fixed order, and the last digits that leaves would grow into
        # different stopping points (poses 1e-7 apart: a repeated perception eval differed)
        for _step in range(ICP_STEPS):
            result = reg.registration_icp(source, target, dist, T, est,
                                          reg.ICPConvergenceCriteria(max_iteration=1))
            moved = np.round(np.asarray(result.transformation), POSE_DIGITS)
            done = np.abs(moved - T).max() < ICP_STILL
            T = moved
            if done:
                break
        assert result is not None
        # shrink the window towards the depth noise (a window narrower than ~3 sigma cuts
        # the noise asymmetrically at face edges and biases the fit)
        dist = max(0.008, min(dist / 2, 3.0 * float(result.inlier_rmse)))
    assert result is not None
    corr = np.asarray(result.correspondence_set)
    if len(corr) < 1000:
        raise PerceptionError(f"calibration: only {len(corr)} points match the table and "
                              "fixtures (camera pose far off, or the view is blocked)")
    n = model_n[corr[:, 1]]
    vertical = np.abs(n[:, 2]) < 0.5
    info = n[vertical, :2].T @ n[vertical, :2] if vertical.any() else np.zeros((2, 2))
    eig = np.sort(np.linalg.eigvalsh(info))
    if eig[0] < MIN_FACE_POINTS * 0.5:
        raise PerceptionError(
            f"calibration: the fixture's vertical faces are not seen well enough "
            f"({int(vertical.sum())} face points, weakest direction {eig[0]:.0f}); "
            "x, y and yaw would be guessed")
    # re-orthonormalise (ICP accumulates tiny numerical drift)
    u, _, vt = np.linalg.svd(T[:3, :3])
    T[:3, :3] = u @ vt
    camera = CameraModel.from_matrix(initial.intrinsics, T)
    correction = T @ np.linalg.inv(initial.matrix)
    return CalibrationResult(camera, correction, float(result.inlier_rmse), len(corr),
                             (int(eig[0]), int(eig[1])), _table_rgb(frames, camera, config))


def _table_rgb(frames: Sequence[tuple[np.ndarray, np.ndarray]], camera: CameraModel,
               config: PerceptionConfig) -> tuple[float, float, float] | None:
    """The table's median colour over the frames, seen through the calibrated camera: the
    reference perception normalises later frames to (``PerceptionConfig.table_rgb``)."""
    from frankenbot.perception.segmentation import table_colour

    seen = []
    s = config.stride
    for rgb, depth in frames:
        d = np.ascontiguousarray(depth_to_mm(depth)[::s, ::s])
        k = camera.intrinsics
        small = CameraModel(type(k)(k.fx / s, k.fy / s, k.cx / s, k.cy / s, d.shape[1],
                                    d.shape[0]), camera.T_base_optical)
        pts = backproject(d, small, 1)
        lo, hi = np.asarray(config.workspace_min), np.asarray(config.workspace_max)
        with np.errstate(invalid="ignore"):
            idx = np.flatnonzero(np.all((pts >= lo) & (pts <= hi), axis=1))
        c = table_colour(rgb, idx, pts[idx, 2] - config.table_height, d.shape[1], s)
        if c is not None:
            seen.append(c)
    if not seen:
        return None
    m = np.median(np.array(seen), axis=0)
    return (float(m[0]), float(m[1]), float(m[2]))


def camera_yaml(camera: CameraModel, frame: str = "camera_color_optical_frame",
                parent: str = "base_link",
                table_rgb: tuple[float, float, float] | None = None) -> dict[str, object]:
    """The mapping written to config/camera.yaml: translation [x, y, z] m and quaternion
    [x, y, z, w] of the colour optical frame in ``parent``, plus the intrinsics (and the
    table's colour when measured). One pose key only, so nothing overrides it."""
    t = camera.matrix
    k = camera.intrinsics
    extra: dict[str, object] = {}
    if table_rgb is not None:
        extra["table_rgb"] = [round(float(v), 1) for v in table_rgb]
    return {**extra,
        "frame": frame, "parent": parent,
        "translation": [round(float(v), 6) for v in t[:3, 3]],
        "quaternion": [round(float(v), 9) for v in quat_from_matrix(t).xyzw()],
        "width": k.width, "height": k.height,
        "fx": round(k.fx, 6), "fy": round(k.fy, 6), "cx": round(k.cx, 6), "cy": round(k.cy, 6),
    }

"""RGB-D frame -> base-frame point cloud -> table plane -> object point clusters.

Why this shape: DBSCAN over the full cloud costs ~80 ms on these CPUs, so clusters are instead
connected components on a top-down occupancy grid of the points above the table, one grid per
colour group. That is a few milliseconds, keeps touching objects of different colours apart (a
block in a bowl, a block on a plate) and keeps one object's shaded sides together. Objects of one
colour that touch share a component: a height gap splits things stacked with air between them,
and a round container (a bowl) is split from what stands in it or against it (containers.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import open3d as o3d
from scipy import ndimage

from frankenbot.errors import PerceptionError
from frankenbot.perception.camera import CameraModel
from frankenbot.perception.colour import ACHROMATIC_GROUP, rgb_to_hsv, segmentation_groups
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.containers import split_round_container

MIN_TABLE_VALUE = 0.02  # a table darker than this gives no usable exposure reading
MAX_GAIN = 4.0  # exposure compensation stays within [1/4, 4]


@dataclass(frozen=True)
class TablePlane:
    """Plane n.p + d = 0, n pointing up; ``fitted`` is False when the config fallback was used."""

    normal: tuple[float, float, float]
    d: float
    fitted: bool
    value: float = -1.0  # median HSV brightness of the table's own pixels (-1: not measured)

    @property
    def height(self) -> float:
        """Table height at the base origin (z where the plane crosses x = y = 0)."""
        return -self.d / self.normal[2]

    def heights(self, points: np.ndarray) -> np.ndarray:
        return points @ np.asarray(self.normal) + self.d


@dataclass(frozen=True)
class Cluster:
    """One candidate object's points: base xyz, height above table, HSV, pixel rows/cols."""

    points: np.ndarray  # (N, 3)
    heights: np.ndarray  # (N,)
    hsv: np.ndarray  # (N, 3)
    pixels: np.ndarray  # (N, 2) row, col in the full-resolution image
    group: int  # colour group index (colour.SEG_NAMES)


def check_frame(rgb: np.ndarray, depth: np.ndarray, camera: CameraModel) -> None:
    """Raise PerceptionError for frames the pipeline cannot use (say what was received)."""
    k = camera.intrinsics
    if not isinstance(rgb, np.ndarray) or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise PerceptionError(f"rgb must be an HxWx3 array, got {getattr(rgb, 'shape', type(rgb))}")
    if not isinstance(depth, np.ndarray) or depth.ndim != 2:
        raise PerceptionError(f"depth must be an HxW array, got {getattr(depth, 'shape', None)}")
    if rgb.shape[:2] != depth.shape:
        raise PerceptionError(f"rgb {rgb.shape[:2]} and depth {depth.shape} sizes differ")
    if depth.shape != (k.height, k.width):
        raise PerceptionError(f"image is {depth.shape[1]}x{depth.shape[0]} but camera intrinsics "
                              f"are for {k.width}x{k.height}")
    if rgb.dtype != np.uint8:
        raise PerceptionError(f"rgb must be uint8 (rgb8), got {rgb.dtype}")
    if depth.dtype not in (np.uint16, np.float32, np.float64):
        raise PerceptionError(
            f"depth must be uint16 millimetres or float metres, got {depth.dtype}")


def depth_to_mm(depth: np.ndarray) -> np.ndarray:
    """uint16 mm stays; float metres (Gazebo's 32FC1) -> uint16 mm with NaN/inf/<=0 -> 0."""
    if depth.dtype == np.uint16:
        return depth
    d = np.asarray(depth, dtype=np.float64) * 1000.0
    bad = ~np.isfinite(d) | (d <= 0) | (d > 65535)
    d[bad] = 0
    return np.ascontiguousarray(d.astype(np.uint16))


def backproject(depth_mm: np.ndarray, camera: CameraModel, stride: int) -> np.ndarray:
    """Every ``stride``-th pixel -> base-frame point (rows*cols, 3), NaN where depth is invalid."""
    k = camera.intrinsics
    intr = o3d.camera.PinholeCameraIntrinsic(k.width, k.height, k.fx, k.fy, k.cx, k.cy)
    extrinsic = np.linalg.inv(camera.matrix)  # open3d wants base -> camera
    cloud = o3d.geometry.PointCloud.create_from_depth_image(
        o3d.geometry.Image(np.ascontiguousarray(depth_mm)), intr, extrinsic,
        depth_scale=1000.0, depth_trunc=65.0, stride=stride, project_valid_depth_only=False)
    return np.asarray(cloud.points)


def fit_table(points: np.ndarray, config: PerceptionConfig, rng: np.random.Generator) -> TablePlane:
    """RANSAC a horizontal plane near the configured table height; fall back to the config."""
    fallback = TablePlane((0.0, 0.0, 1.0), -config.table_height, fitted=False)
    near = np.abs(points[:, 2] - config.table_height) < config.table_search
    cand = points[near]
    if cand.shape[0] < 100:
        return fallback
    if cand.shape[0] > config.ransac_samples:
        cand = cand[rng.choice(cand.shape[0], config.ransac_samples, replace=False)]
    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(cand))
    o3d.utility.random.seed(int(rng.integers(0, 2**31 - 1)))
    model, inliers = pc.segment_plane(config.ransac_distance, 3, config.ransac_iterations)
    a, b, c, d = (float(v) for v in model)
    if c < 0:
        a, b, c, d = -a, -b, -c, -d
    if c < 0.98 or len(inliers) < 0.3 * cand.shape[0]:
        return fallback
    plane = TablePlane((a, b, c), d, fitted=True)
    if abs(plane.height - config.table_height) > config.table_search:
        return fallback
    return plane


@dataclass(frozen=True)
class Foreground:
    """Sampled pixels standing above the table: base xyz, height, HSV, (row, col), colour group."""

    points: np.ndarray
    heights: np.ndarray
    hsv: np.ndarray
    pixels: np.ndarray
    groups: np.ndarray


def foreground(rgb: np.ndarray, depth: np.ndarray, camera: CameraModel, config: PerceptionConfig,
               rng: np.random.Generator | None = None, table_value_ref: float = -1.0
               ) -> tuple[TablePlane, Foreground]:
    """Validate the frame, fit the table and keep the samples between min and max height.

    Exposure compensation: with ``table_value_ref`` (the table's brightness under the lighting
    colours were named in) the kept samples' brightness is scaled by reference / the table's
    brightness in this frame, so a sudden change of light does not rename black, gray and
    white. The returned plane carries this frame's table brightness."""
    check_frame(rgb, depth, camera)
    depth_mm = depth_to_mm(depth)
    if not np.any(depth_mm):
        raise PerceptionError("depth image has no valid pixel (all zero/NaN)")
    s = config.stride
    pts = backproject(depth_mm, camera, s)
    rows_n, cols_n = (depth_mm.shape[0] + s - 1) // s, (depth_mm.shape[1] + s - 1) // s
    if pts.shape[0] != rows_n * cols_n:
        raise PerceptionError(f"unexpected point count {pts.shape[0]} for stride {s}")
    lo, hi = np.asarray(config.workspace_min), np.asarray(config.workspace_max)
    with np.errstate(invalid="ignore"):
        inside = np.all((pts >= lo) & (pts <= hi), axis=1)
    idx = np.flatnonzero(inside)
    if idx.size == 0:
        raise PerceptionError("no valid depth inside the workspace (camera pose or depth wrong?)")
    p_in = pts[idx]
    plane = fit_table(p_in, config, rng or np.random.default_rng(0))
    h = plane.heights(p_in)
    on_table = idx[np.abs(h) < config.min_height]
    if on_table.size:
        table_px = rgb[(on_table // cols_n) * s, (on_table % cols_n) * s]
        plane = replace(plane, value=float(np.median(rgb_to_hsv(table_px)[:, 2])))
    fg = (h > config.min_height) & (h < config.max_height)
    idx, p_fg, h_fg = idx[fg], p_in[fg], h[fg]
    rows = (idx // cols_n) * s
    cols = (idx % cols_n) * s
    hsv = rgb_to_hsv(rgb[rows, cols]) if idx.size else np.zeros((0, 3), np.float32)
    if idx.size and table_value_ref > 0 and plane.value > MIN_TABLE_VALUE:
        gain = min(MAX_GAIN, max(1.0 / MAX_GAIN, table_value_ref / plane.value))
        hsv[:, 2] = np.clip(hsv[:, 2] * gain, 0.0, 1.0)
    groups = segmentation_groups(hsv) if idx.size else np.zeros(0, np.int16)
    return plane, Foreground(p_fg, h_fg, hsv, np.stack([rows, cols], axis=1), groups)


def segment(rgb: np.ndarray, depth: np.ndarray, camera: CameraModel, config: PerceptionConfig,
            rng: np.random.Generator | None = None, table_value_ref: float = -1.0
            ) -> tuple[TablePlane, list[Cluster]]:
    """Find the table and the point clusters standing on it (or held above it)."""
    plane, fg = foreground(rgb, depth, camera, config, rng, table_value_ref)
    if fg.points.shape[0] == 0:
        return plane, []
    return plane, _cluster(fg.points, fg.heights, fg.hsv, fg.pixels, fg.groups, config)


def cluster_in_box(fg: Foreground, box: tuple[float, float, float, float],
                   config: PerceptionConfig) -> Cluster | None:
    """The largest connected blob of foreground samples inside an image box (x0, y0, x1, y1).

    Used by detector backends: a 2-D box also covers table and neighbours, so only samples
    above the table count, and of those only the biggest image-connected blob.
    """
    x0, y0, x1, y1 = box
    rows, cols = fg.pixels[:, 0], fg.pixels[:, 1]
    sel = np.flatnonzero((cols >= x0) & (cols <= x1) & (rows >= y0) & (rows <= y1))
    if sel.size < config.min_points:
        return None
    s = config.stride
    r = (rows[sel] - rows[sel].min()) // s
    c = (cols[sel] - cols[sel].min()) // s
    grid = np.zeros((int(r.max()) + 1, int(c.max()) + 1), dtype=bool)
    grid[r, c] = True
    labels, n = ndimage.label(grid, np.ones((3, 3), dtype=bool))
    if n == 0:
        return None
    lab = labels[r, c]
    biggest = int(np.argmax(np.bincount(lab)[1:])) + 1
    members = sel[lab == biggest]
    if members.size < config.min_points:
        return None
    group = int(np.bincount(fg.groups[members].astype(np.int64)).argmax())
    return Cluster(fg.points[members], fg.heights[members], fg.hsv[members], fg.pixels[members],
                   group)


def _cluster(points: np.ndarray, heights: np.ndarray, hsv: np.ndarray, pixels: np.ndarray,
             groups: np.ndarray, config: PerceptionConfig) -> list[Cluster]:
    cell = config.grid_cell
    ij = np.floor(points[:, :2] / cell).astype(np.int64)
    ij0 = ij.min(axis=0)
    ij -= ij0
    shape = tuple(int(v) + 1 for v in ij.max(axis=0))
    structure = np.ones((3, 3), dtype=bool)
    closing = config.grid_closing
    clusters: list[Cluster] = []
    for g in np.unique(groups):
        sel = np.flatnonzero(groups == g)
        if sel.size < config.min_points:
            continue
        occ = np.zeros(shape, dtype=bool)
        occ[ij[sel, 0], ij[sel, 1]] = True
        grown = ndimage.binary_dilation(occ, structure, iterations=closing) if closing else occ
        # A container's floor is surrounded by its walls: fill holes so it joins the walls.
        grown = ndimage.binary_fill_holes(grown)
        labels, n = ndimage.label(grown, structure)
        if n == 0:
            continue
        lab = labels[ij[sel, 0], ij[sel, 1]]
        order = np.argsort(lab, kind="stable")
        lab_sorted = lab[order]
        bounds = np.searchsorted(lab_sorted, np.arange(1, n + 2))
        for k in range(n):
            members = sel[order[bounds[k]:bounds[k + 1]]]
            for part in _split_parts(members, points, heights, config):
                if np.max(np.ptp(points[part, :2], axis=0)) < config.min_extent:
                    continue
                clusters.append(Cluster(points[part], heights[part], hsv[part], pixels[part],
                                        int(g)))
    return clusters


def _split_parts(members: np.ndarray, points: np.ndarray, heights: np.ndarray,
                 config: PerceptionConfig) -> list[np.ndarray]:
    """One colour component as its objects: split by height gaps, then bowls from contents."""
    parts = []
    for part in _split_by_height(members, heights, config.height_gap):
        if part.size >= config.min_points:
            parts += split_round_container(part, points, heights, config)
    return [p for p in parts if p.size >= config.min_points]


def _split_by_height(members: np.ndarray, heights: np.ndarray, gap: float) -> list[np.ndarray]:
    """Split a top-down component where its heights have an empty band (an arm above a plate).

    Seen from above, things stacked with air between them share a footprint; an object's own
    sides are continuous in height, so a gap wider than ``gap`` separates two things.
    """
    h = heights[members]
    order = np.argsort(h)
    hs = h[order]
    cuts = np.flatnonzero(np.diff(hs) > gap) + 1
    if cuts.size == 0:
        return [members]
    return [members[order[a:b]] for a, b in zip(np.r_[0, cuts], np.r_[cuts, hs.size],
                                                  strict=True)]


__all__ = ["ACHROMATIC_GROUP", "Cluster", "Foreground", "TablePlane", "backproject",
           "check_frame", "cluster_in_box", "depth_to_mm", "fit_table", "foreground", "segment"]

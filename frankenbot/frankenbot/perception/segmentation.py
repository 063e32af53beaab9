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
from typing import Any, Callable

import numpy as np
import open3d as o3d
from scipy import ndimage

from frankenbot.errors import PerceptionError
from frankenbot.perception.camera import CameraModel, Intrinsics
from frankenbot.perception.colour import (
    ACHROMATIC_GROUP,
    CLIP_LEVEL,
    HUE_CENTRES,
    SEG_NAMES,
    rgb_to_hsv,
    segmentation_groups,
    unclip_red_hue,
)
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.containers import split_round_container
from frankenbot.perception.faces import join_rim_pieces, joined, merge_lit_faces

VIVID = 0.6  # median saturation of a vivid cluster (the table is a dull beige)
VIVID_SIGMAS = 2.0  # noise sigmas a vivid cluster's median height must clear
WHITE_SATURATION = 0.06  # median saturation of a white cluster (the beige table has more)
BRIGHTER = 1.2  # of the table's brightness: a cluster of its colour group this bright is not it
TABLE_COLOURED_MIN = 0.015  # m: median height a cluster of the table's colour must reach
# ... unless a wide share of it stands this high (a tray of the table's gray: its floor hugs the
# table, its rim stands 3 cm; lifted table noise is a few sigma everywhere)
TABLE_COLOURED_RIM = 0.025  # m reached by RIM_SHARE of its samples
RIM_SHARE = 0.15
FLYING_STEP_MM = 12  # a pixel this far from both its nearest and farthest neighbour is flying
MIN_TABLE_VALUE = 0.02  # a table darker than this gives no usable exposure reading
SMALL_CLUSTER_EVIDENCE = 2.0  # noise sigmas factor for clusters under min_points samples
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
    sigma: float = 0.0  # depth noise (m, RMS) at the cluster's range, estimated on the table
    # Which points name the colour (None: all): after a lit face was merged back into its
    # object, the darker faces, whose hue clipping did not move (``faces.merge_lit_faces``).
    colour_mask: np.ndarray | None = None
    clipped: np.ndarray | None = None  # (N,) bool: a colour channel at the sensor's clip level
    flat: np.ndarray | None = None  # (N,) bool: grown from the table's noise band (_grow_flat)

    def colour_pixels(self) -> tuple[np.ndarray, np.ndarray | None]:
        """HSV of the points that name the object's colour, and which of them clipped."""
        if self.colour_mask is None:
            return self.hsv, self.clipped
        m = self.colour_mask
        return self.hsv[m], None if self.clipped is None else self.clipped[m]


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
    pixels: Any = np.ascontiguousarray(depth_mm)  # a buffer (open3d's hints say only that)
    cloud = o3d.geometry.PointCloud.create_from_depth_image(
        o3d.geometry.Image(pixels), intr, extrinsic,
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
    (a, b, c), d, inliers = ransac_plane(cand, config.ransac_distance,
                                         config.ransac_iterations, rng)
    if c < 0.98 or inliers < 0.3 * cand.shape[0]:
        return fallback
    plane = TablePlane((a, b, c), d, fitted=True)
    if abs(plane.height - config.table_height) > config.table_search:
        return fallback
    return plane


def ransac_plane(points: np.ndarray, distance: float, iterations: int,
                 rng: np.random.Generator) -> tuple[tuple[float, float, float], float, int]:
    """The plane through most of ``points``: RANSAC over ``iterations`` random triples (the
    triple with the most points within ``distance`` wins, the first of equals), refitted by
    least squares to its inliers. Returns (unit normal with z >= 0, offset d with
    n.p + d = 0, inlier count). Written here rather than Open3D's ``segment_plane``, whose
    threads settle a tie between equally good triples in whatever order they finish: the
    same frame gave tables a millimetre apart from run to run on a loaded machine."""
    n = points.shape[0]
    idx = rng.integers(0, n, size=(iterations, 3))
    p0, p1, p2 = points[idx[:, 0]], points[idx[:, 1]], points[idx[:, 2]]
    normals = np.cross(p1 - p0, p2 - p0)
    length = np.linalg.norm(normals, axis=1)
    ok = length > 1e-12
    if not ok.any():
        return (0.0, 0.0, 1.0), 0.0, 0
    normals = normals[ok] / length[ok, None]
    offsets = -np.einsum("ij,ij->i", normals, p0[ok])
    counts = np.count_nonzero(np.abs(points @ normals.T + offsets) < distance, axis=0)
    best = int(np.argmax(counts))
    inside = points[np.abs(points @ normals[best] + offsets[best]) < distance]
    normal = normals[best]
    if inside.shape[0] >= 3:
        centre = inside.mean(axis=0)
        normal = np.linalg.svd(inside - centre, full_matrices=False)[2][-1]
        offset = -float(normal @ centre)
    else:
        offset = float(offsets[best])
    if normal[2] < 0:
        normal, offset = -normal, -offset
    inliers = int(np.count_nonzero(np.abs(points @ normal + offset) < distance))
    return (float(normal[0]), float(normal[1]), float(normal[2])), offset, inliers


@dataclass(frozen=True)
class Foreground:
    """Sampled pixels standing above the table: base xyz, height, HSV, (row, col), colour group,
    and the depth noise model ``sigma = noise_a * range²`` measured on the table."""

    points: np.ndarray
    heights: np.ndarray
    hsv: np.ndarray
    pixels: np.ndarray
    groups: np.ndarray
    ranges: np.ndarray | None = None  # (N,) optical-axis depth, m
    noise_a: float = 0.0  # m⁻¹: RMS height noise of the table at range r is noise_a * r²
    table_group: int = -1  # colour group of the table itself (-1: unknown)
    clipped: np.ndarray | None = None  # (N,) bool: a colour channel at the sensor's clip level
    flat: np.ndarray | None = None  # (N,) bool: in the table's noise band, kept for its colour
    # every sampled point inside the workspace and its height (table included): what a
    # fixture's presence is judged on (perception/fixture_state.py)
    all_points: np.ndarray | None = None
    all_heights: np.ndarray | None = None
    table_value: float = -1.0  # the table's HSV value in the colour space of ``hsv``

    def without(self, drop: np.ndarray) -> "Foreground":
        """The samples not flagged in ``drop`` (points on a fixture)."""
        keep = ~drop

        def cut(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[keep]

        return replace(self, points=self.points[keep], heights=self.heights[keep],
                       hsv=self.hsv[keep], pixels=self.pixels[keep], groups=self.groups[keep],
                       ranges=cut(self.ranges), clipped=cut(self.clipped), flat=cut(self.flat))


def noise_coefficient(heights: np.ndarray, ranges: np.ndarray) -> float:
    """``a`` of the stereo noise law sigma = a * z², from table points' heights (robust: the
    MAD of the points within a few sigma of the plane; 0 for a clean render)."""
    near = np.abs(heights) < 0.02
    if np.count_nonzero(near) < 200:
        return 0.0
    ratio = np.abs(heights[near]) / np.maximum(ranges[near], 0.1) ** 2
    a = 1.4826 * float(np.median(ratio))
    for _ in range(2):  # trim what is not table (object bottoms, edges) and re-estimate
        keep = ratio < 3.0 * a + 1e-9
        if np.count_nonzero(keep) < 200:
            break
        a = 1.4826 * float(np.median(ratio[keep])) / 0.8  # MAD of a 3-sigma-trimmed normal
    return a


def strided_depth(depth_mm: np.ndarray, stride: int, flying_filter: bool) -> np.ndarray:
    """Every ``stride``-th pixel of the depth image; with ``flying_filter``, pixels whose depth
    lies between a nearer and a farther neighbour across a step (flying pixels: a stereo
    camera's mix of foreground and background at an edge) become holes."""
    d = np.ascontiguousarray(depth_mm[::stride, ::stride])
    if not flying_filter:
        return d
    valid = d > 0
    big = np.where(valid, d, np.uint16(65535))
    lo = ndimage.minimum_filter(big, size=3, mode="nearest").astype(np.int32)
    hi = ndimage.maximum_filter(d, size=3, mode="nearest").astype(np.int32)
    di = d.astype(np.int32)
    step = FLYING_STEP_MM
    flying = valid & (hi - lo > 2 * step) & (di - lo > step) & (hi - di > step)
    if flying.any():
        d = d.copy()
        d[flying] = 0
    return d


def foreground(rgb: np.ndarray, depth: np.ndarray, camera: CameraModel, config: PerceptionConfig,
               rng: np.random.Generator | None = None, table_value_ref: float = -1.0,
               ceiling: Callable[[np.ndarray], np.ndarray] | None = None
               ) -> tuple[TablePlane, Foreground]:
    """Validate the frame, fit the table and keep the samples between min and max height.

    Exposure compensation: with ``table_value_ref`` (the table's brightness under the lighting
    colours were named in) the kept samples' brightness is scaled by reference / the table's
    brightness in this frame, so a sudden change of light does not rename black, gray and
    white. The returned plane carries this frame's table brightness. ``ceiling``: for points
    above ``max_height``, the height up to which they may still be objects (over a cabinet's
    top things stand higher than on the table)."""
    check_frame(rgb, depth, camera)
    depth_mm = depth_to_mm(depth)
    if not np.any(depth_mm):
        raise PerceptionError("depth image has no valid pixel (all zero/NaN)")
    s = config.stride
    small = strided_depth(depth_mm, s, bool(config.flying_filter))
    rows_n, cols_n = small.shape
    k = camera.intrinsics
    scaled = CameraModel(Intrinsics(k.fx / s, k.fy / s, k.cx / s, k.cy / s, cols_n, rows_n),
                         camera.T_base_optical)
    pts = backproject(small, scaled, 1)
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
    ranges = small.reshape(-1)[idx].astype(np.float64) / 1000.0
    noise_a = noise_coefficient(h, ranges) if config.noise_adaptive else 0.0
    # A point is above the table when it clears the noise there, not just min_height: at
    # 1.2 m a D435's table is a few millimetres thick in noise.
    floor = np.maximum(config.min_height, config.noise_point_sigmas * noise_a * ranges ** 2)
    fg = (h > floor) & (h < config.max_height)
    if ceiling is not None:
        high = np.flatnonzero(h >= config.max_height)
        if high.size:
            fg[high] = h[high] < ceiling(p_in[high])
    seen = table_colour(rgb, idx, h, cols_n, s)  # once a frame: three uses below
    gains = _white_balance(seen, config)
    flat = np.zeros(idx.size, bool)
    if noise_a > 0 and float(np.median(floor)) > FLAT_NOISE_BAND:
        # Under strong noise (a band thicker than two thirds of a plate) a thin object sinks
        # into the table's noise band but its colour still tells it from the table: such
        # samples come along, flagged, to grow the fragments depth did find (_grow_flat)
        band = np.flatnonzero(np.abs(h) <= floor)
        flat[band[_off_table_colour(rgb, idx[band], cols_n, s, seen, gains, config)]] = True
        fg |= flat
    on_table = idx[np.abs(h) < config.min_height]
    if on_table.size:
        table_px = rgb[(on_table // cols_n) * s, (on_table % cols_n) * s]
        plane = replace(plane, value=float(np.median(rgb_to_hsv(table_px)[:, 2])))
    table_group = _table_group(seen, gains)
    idx, p_fg, h_fg, r_fg, flat = idx[fg], p_in[fg], h[fg], ranges[fg], flat[fg]
    rows = (idx // cols_n) * s
    cols = (idx % cols_n) * s
    raw = rgb[rows, cols]
    px = raw
    if gains is not None:
        px = np.clip(raw.astype(np.float32) * (gains / 255.0), 0.0, 1.0)
    hsv = rgb_to_hsv(px) if idx.size else np.zeros((0, 3), np.float32)
    clipped = np.any(raw >= CLIP_LEVEL, axis=1) if idx.size else np.zeros(0, bool)
    if idx.size:
        unclip_red_hue(hsv, raw)
    # Without a calibrated table colour (no white-balance gains), compensate exposure from the
    # table's brightness against the first frame's (a dimmed light otherwise darkens every hue).
    table_value = plane.value
    if gains is not None:  # white-balanced: the table looks as at calibration
        table_value = float(max(config.table_rgb)) / 255.0
    if gains is None and idx.size and table_value_ref > 0 and plane.value > MIN_TABLE_VALUE:
        gain = min(MAX_GAIN, max(1.0 / MAX_GAIN, table_value_ref / plane.value))
        hsv[:, 2] = np.clip(hsv[:, 2] * gain, 0.0, 1.0)
        table_value = plane.value * gain
    groups = segmentation_groups(hsv) if idx.size else np.zeros(0, np.int16)
    return plane, Foreground(p_fg, h_fg, hsv, np.stack([rows, cols], axis=1), groups, r_fg,
                             noise_a, table_group, clipped, flat, p_in, h, table_value)


FLAT_NOISE_BAND = 0.008  # m: a noise band thicker than this (at the median range) hides plates
FLAT_CHROMA = 0.06  # chromaticity distance from the table's that marks a sample as not table
FLAT_MIN_LIGHT = 0.7  # of the table's brightness: in shadow chromaticity is mostly noise
FLAT_SEED_TOP = 0.035  # m: a depth cluster lower than this may be part of a thin object
FLAT_SEED_EXTENT = 0.22  # m: ... and no longer than this
FLAT_REACH = 0.2  # m: noise-band samples this close to a seed may join it
FLAT_OBJECT_MIN = 0.006  # m: mean height a grown cluster must show (half a 12 mm plate)


def _off_table_colour(rgb: np.ndarray, idx: np.ndarray, cols_n: int, stride: int,
                      seen: np.ndarray | None, gains: np.ndarray | None,
                      config: PerceptionConfig) -> np.ndarray:
    """Which samples ``idx`` differ in chromaticity from the table and are about as bright as
    it (False for all when the table's colour is unknown this frame). ``seen``: the table's
    colour in this frame (``table_colour``), the reference when there are no gains."""
    out = np.zeros(idx.size, bool)
    ref = np.asarray(config.table_rgb, np.float32) if gains is not None else seen
    if ref is None or not np.all(ref > 0) or idx.size == 0:
        return out
    px = rgb[(idx // cols_n) * stride, (idx % cols_n) * stride].astype(np.float32)
    if gains is not None:
        px *= gains
    total = px.sum(axis=1) + 1e-3
    ref_total = float(ref.sum())
    d = np.hypot(px[:, 0] / total - ref[0] / ref_total, px[:, 1] / total - ref[1] / ref_total)
    return (d > FLAT_CHROMA) & (total > FLAT_MIN_LIGHT * ref_total)


def _grow_flat(clusters: list[Cluster], fg: Foreground, flat_idx: np.ndarray,
               config: PerceptionConfig) -> list[Cluster]:
    """Grow low, small depth clusters (fragments of a thin object that cleared the noise) with
    the noise-band samples of their colour group connected to them: under strong noise a
    12 mm plate shows in depth only as scattered pieces, its colour shows all of it. Only
    seeds grow, never past ``FLAT_REACH``, so a large or tall object (the arm) takes none."""
    cell = config.grid_cell
    free = np.ones(flat_idx.size, bool)
    out = []
    for c in clusters:
        xy = c.points[:, :2]
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        if (float(np.percentile(c.heights, 95)) >= FLAT_SEED_TOP
                or float(np.max(hi - lo)) > FLAT_SEED_EXTENT):
            out.append(c)
            continue
        centre = xy.mean(axis=0)
        cand = np.flatnonzero(free & (fg.groups[flat_idx] == c.group))
        if cand.size:
            d = np.linalg.norm(fg.points[flat_idx[cand], :2] - centre, axis=1)
            cand = cand[d < FLAT_REACH]
        if cand.size < config.min_points_floor:
            out.append(c)
            continue
        cells = np.floor(np.vstack([xy, fg.points[flat_idx[cand], :2]]) / cell).astype(np.int64)
        cells -= cells.min(axis=0)
        lab, _ = _grid_components(cells, tuple(int(v) + 1 for v in cells.max(axis=0)),
                                  config.grid_closing)
        seed_labels = np.unique(lab[:xy.shape[0]])
        take = cand[np.isin(lab[xy.shape[0]:], seed_labels)]
        if take.size == 0:
            out.append(c)
            continue
        sel = flat_idx[take]
        if (float(np.sum(c.heights)) + float(np.sum(fg.heights[sel]))) / (
                c.points.shape[0] + sel.size) < FLAT_OBJECT_MIN:
            out.append(c)  # what it would take in is table (its mean shows no thickness)
            continue
        free[take] = False
        grown = Cluster(fg.points[sel], fg.heights[sel], fg.hsv[sel], fg.pixels[sel], c.group,
                        clipped=None if fg.clipped is None else fg.clipped[sel],
                        flat=np.ones(sel.size, bool))
        base = replace(c, flat=np.zeros(c.points.shape[0], bool))
        out.append(joined(base, grown))
    return out


def table_colour(rgb: np.ndarray, idx: np.ndarray, heights: np.ndarray, cols_n: int,
                 stride: int) -> np.ndarray | None:
    """Median RGB (0-255) of the table: sampled pixels within 3 mm of the fitted plane."""
    on = np.flatnonzero(np.abs(heights) < 0.003)
    if on.size < 200:
        return None
    on = on[:: max(1, on.size // 4000)]
    pix = idx[on]
    return np.median(rgb[(pix // cols_n) * stride, (pix % cols_n) * stride].astype(np.float32),
                     axis=0)


def _table_group(seen: np.ndarray | None, gains: np.ndarray | None) -> int:
    """Segmentation group of the table's median colour ``seen`` (after white balance), or -1."""
    if seen is None:
        return -1
    px = seen / 255.0 if gains is None else np.clip(seen * gains / 255.0, 0.0, 1.0)
    return int(segmentation_groups(rgb_to_hsv(px.astype(np.float32)[None, :]))[0])


def _white_balance(seen: np.ndarray | None, config: PerceptionConfig) -> np.ndarray | None:
    """Per-channel gains that bring the table (``seen`` this frame) back to
    ``config.table_rgb`` (its colour at calibration), so exposure and white-balance drift do
    not move object hues; None when off or the table is not seen well enough."""
    ref = np.asarray(config.table_rgb, dtype=np.float32)
    if not np.all(ref > 0):
        return None
    if seen is None or not np.all(seen > 5):
        return None
    return np.clip(ref / seen, 0.5, 2.0).astype(np.float32)


def segment(rgb: np.ndarray, depth: np.ndarray, camera: CameraModel, config: PerceptionConfig,
            rng: np.random.Generator | None = None, table_value_ref: float = -1.0
            ) -> tuple[TablePlane, list[Cluster]]:
    """Find the table and the point clusters standing on it (or held above it)."""
    plane, fg = foreground(rgb, depth, camera, config, rng, table_value_ref)
    return plane, cluster_foreground(fg, camera, config)


def cluster_foreground(fg: Foreground, camera: CameraModel, config: PerceptionConfig
                       ) -> list[Cluster]:
    """The point clusters of ``fg`` (samples above the table, fixtures taken out)."""
    if fg.points.shape[0] == 0:
        return []
    solid = np.flatnonzero(~fg.flat) if fg.flat is not None else np.arange(fg.points.shape[0])
    clusters = join_rim_pieces(merge_lit_faces(
        _cluster(fg.points[solid], fg.heights[solid], fg.hsv[solid], fg.pixels[solid],
                 fg.groups[solid], config, None if fg.clipped is None else fg.clipped[solid]),
        config))
    if fg.flat is not None and fg.flat.any():
        clusters = _grow_flat(clusters, fg, np.flatnonzero(fg.flat), config)
    clusters = _enough_points(clusters, camera, config)
    if fg.noise_a <= 0 or fg.ranges is None:
        return clusters
    return _stand_out(clusters, fg.noise_a, camera, config, fg.table_group, fg.table_value)


def _enough_points(clusters: list[Cluster], camera: CameraModel, config: PerceptionConfig
                   ) -> list[Cluster]:
    """Clusters with enough samples for their range from the camera (see ``min_points``)."""
    eye = camera.matrix[:3, 3]
    out = []
    for c in clusters:
        rng_m = float(np.linalg.norm(np.median(c.points, axis=0) - eye))
        need = config.min_points * (config.min_points_range / max(rng_m, 1e-3)) ** 2
        if c.points.shape[0] >= max(config.min_points_floor, need):
            out.append(c)
    return out


def _stand_out(clusters: list[Cluster], noise_a: float, camera: CameraModel,
               config: PerceptionConfig, table_group: int = -1, table_value: float = -1.0
               ) -> list[Cluster]:
    """Clusters that stand clearly out of the table's noise, each with its noise level.

    Precision first: a patch of table lifted by correlated depth noise (or a skirt of flying
    pixels) is a few sigma high at most, a real object is higher over most of its points, so a
    cluster whose median height does not clear ``noise_cluster_sigmas`` sigma is dropped, and
    one of the table's own colour group must also clear ``TABLE_COLOURED_MIN`` (a flat patch
    of table colour is table; a flat object of exactly the table's colour is not seen), unless
    it is ``BRIGHTER`` than the table (where the table reads achromatic, a white plate falls in
    its group) or a fair share of it stands at a container's rim height (a gray tray). A
    colour the table does not have (``_not_table_colour``) is no lifted table and counts at
    ``VIVID_SIGMAS``.
    """
    out = []
    t = camera.matrix
    table_hue = (float(rgb_to_hsv(np.asarray(config.table_rgb, np.float32)[None, :] / 255.0)[0, 0])
                 if all(v > 0 for v in config.table_rgb) else None)
    for c in clusters:
        rng_m = float((np.median(c.points, axis=0) - t[:3, 3]) @ t[:3, 2])
        sigma = noise_a * rng_m ** 2
        sigmas = config.noise_cluster_sigmas
        if c.group != table_group and _not_table_colour(c, table_value, table_hue):
            # a colour the table does not have is no patch of lifted table noise: a marker
            # or a spatula lying flat at the back of the table counts at 2 sigma
            sigmas = min(sigmas, VIVID_SIGMAS)
        elif c.points.shape[0] < config.min_points:  # a small (far or half-hidden) cluster
            sigmas *= SMALL_CLUSTER_EVIDENCE  # must stand out further to count
        floor = max(config.min_height, sigmas * sigma)
        solid = c.heights if c.flat is None else c.heights[~c.flat]
        brighter = table_value > 0 and float(np.median(c.hsv[:, 2])) >= BRIGHTER * table_value
        rimmed = (c.points.shape[0] >= config.min_points and solid.size > 0
                  and float(np.mean(solid >= TABLE_COLOURED_RIM)) >= RIM_SHARE)
        if c.group == table_group and not (brighter or rimmed):
            floor = max(floor, TABLE_COLOURED_MIN)
        if solid.size == 0 or float(np.median(solid)) < floor:
            # grown from the noise band (a plate): its mean height over many samples must
            # show it stands on the table; a coloured patch of the table averages to nothing
            if c.flat is None or not c.flat.any() or float(np.mean(c.heights)) < FLAT_OBJECT_MIN:
                continue
        out.append(replace(c, sigma=sigma))
    return out


FAR_HUE = 60.0  # degrees from the table's hue: a hue the table never takes (pink on beige)
FAR_HUE_SATURATION = 0.25  # ... at a saturation that shows it (pale pink, not gray)


def _not_table_colour(c: Cluster, table_value: float, table_hue: float | None) -> bool:
    """Is the cluster of a colour the table does not have: vivid; or of a hue bin far from
    the table's (calibrated) hue and not gray (a pale pink plate on the beige table); or
    white (without the table's saturation and no darker than its ``table_value``: no
    shadow)?"""
    sat = float(np.median(c.hsv[:, 1]))
    if c.group == ACHROMATIC_GROUP:
        return (table_value > 0 and sat <= WHITE_SATURATION
                and float(np.median(c.hsv[:, 2])) >= table_value)
    if sat >= VIVID:
        return True
    name = SEG_NAMES[c.group] if 0 <= c.group < len(SEG_NAMES) else ""
    if table_hue is None or name not in HUE_CENTRES or sat < FAR_HUE_SATURATION:
        return False
    gap = abs(HUE_CENTRES[name] - table_hue) % 360.0
    return min(gap, 360.0 - gap) >= FAR_HUE


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
                   group, clipped=None if fg.clipped is None else fg.clipped[members])


def _cluster(points: np.ndarray, heights: np.ndarray, hsv: np.ndarray, pixels: np.ndarray,
             groups: np.ndarray, config: PerceptionConfig, clipped: np.ndarray | None = None
             ) -> list[Cluster]:
    min_count = min(config.min_points, config.min_points_floor)  # by range: _enough_points
    cell = config.grid_cell
    ij = np.floor(points[:, :2] / cell).astype(np.int64)
    ij0 = ij.min(axis=0)
    ij -= ij0
    shape = tuple(int(v) + 1 for v in ij.max(axis=0))
    closing = config.grid_closing
    clusters: list[Cluster] = []
    for g in np.unique(groups):
        sel = np.flatnonzero(groups == g)
        if sel.size < min_count:
            continue
        for members in _components(sel, ij, shape, closing):
            if members.size < min_count:
                continue  # too few points for any part of it to count (_split_parts); a
                # piece under min_points may still be a face of an object (faces.merge_lit_faces)
            for part in _split_parts(members, points, heights, config, min_count,
                                     (ij, shape), hsv if g == ACHROMATIC_GROUP else None):
                if np.max(np.ptp(points[part, :2], axis=0)) < config.min_extent:
                    continue
                clusters.append(Cluster(points[part], heights[part], hsv[part], pixels[part],
                                        int(g), clipped=None if clipped is None
                                        else clipped[part]))
    return clusters


def _grid_components(cells: np.ndarray, shape: tuple[int, ...], closing: int
                     ) -> tuple[np.ndarray, int]:
    """Connected-component label (1..n) of each occupied cell (rows of ``cells``: i, j in a
    grid of ``shape``), after closing gaps of ``closing`` cells and filling holes (a container's
    floor is surrounded by its walls, so it joins them).

    Work is done on the cells' bounding box grown by ``closing + 1`` (clipped to the grid), not
    on the whole grid: with that ring of empty cells (or the grid's own edge) around it the
    dilation, the hole filling and the labels (numbered in raster order, which a crop keeps)
    are exactly those of the whole grid, for a fraction of the cost (one colour's objects
    cover a small part of the table).
    """
    structure = np.ones((3, 3), dtype=bool)
    margin = closing + 1
    lo = np.maximum(cells.min(axis=0) - margin, 0)
    hi = np.minimum(cells.max(axis=0) + margin + 1, np.asarray(shape[:2]))
    local = cells - lo
    occ = np.zeros(tuple(int(v) for v in hi - lo), dtype=bool)
    occ[local[:, 0], local[:, 1]] = True
    grown = _dilate(occ, closing)
    grown = _fill_holes(grown)
    labels, n = ndimage.label(grown, structure)
    return labels[local[:, 0], local[:, 1]], int(n)


def _dilate(occ: np.ndarray, iterations: int) -> np.ndarray:
    """``binary_dilation`` by the full 3x3 square, ``iterations`` times, as one separable
    maximum filter of size 2 * iterations + 1 (the same cells, a fraction of the time)."""
    if iterations <= 0:
        return occ
    return ndimage.maximum_filter(occ.view(np.uint8), size=2 * iterations + 1,
                                  mode="constant", cval=0).view(bool)


def _fill_holes(grid: np.ndarray) -> np.ndarray:
    """``binary_fill_holes``: the background components (4-connected) that do not reach the
    border are filled; one labelling instead of iterated dilations."""
    lab, n = ndimage.label(~grid)
    if n == 0:
        return grid
    border = np.unique(np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]]))
    outside = np.zeros(n + 1, bool)
    outside[border] = True
    return grid | ~outside[lab]


def _components(sel: np.ndarray, ij: np.ndarray, shape: tuple[int, ...], closing: int
                ) -> list[np.ndarray]:
    """The points ``sel`` (indices into ``ij``'s rows) as their top-down connected
    components (see _grid_components), each an index array."""
    lab, n = _grid_components(ij[sel], shape, closing)
    if n == 0:
        return []
    order = np.argsort(lab, kind="stable")
    bounds = np.searchsorted(lab[order], np.arange(1, n + 2))
    return [sel[order[bounds[k]:bounds[k + 1]]] for k in range(n)]


def _split_parts(members: np.ndarray, points: np.ndarray, heights: np.ndarray,
                 config: PerceptionConfig, min_count: int,
                 grid: tuple[np.ndarray, tuple[int, ...]],
                 achromatic_hsv: np.ndarray | None = None) -> list[np.ndarray]:
    """One colour component as its objects: split by height gaps, a black thing from the
    white one it stands on, then bowls from contents.

    ``grid``: every point's cell and the grid's shape. A component cut by height is cut
    again into what each band connects on its own: the arm above a plate shares its
    footprint with the plate and with the gripper's dark fingertips beside it, and the
    fingertips, as low as the plate, must not join it across the arm's shadow in the grid.
    ``achromatic_hsv``: every point's HSV where the component is of the achromatic group."""
    bands = _split_by_height(members, heights, config.height_gap)
    if achromatic_hsv is not None:
        bands = [c for band in bands
                 for c in _black_on_white(band, heights, achromatic_hsv, min_count)]
    if len(bands) > 1:
        bands = [c for band in bands if band.size >= min_count
                 for c in _components(band, grid[0], grid[1], config.grid_closing)]
    parts = []
    for part in bands:
        if part.size >= min_count:
            parts += split_round_container(part, points, heights, config)
    return [p for p in parts if p.size >= min_count]


DARK_VALUE = 0.25  # HSV value: an achromatic point this dark is black
LIGHT_VALUE = 0.45  # and this bright, white or gray
VALUE_GAP_SHARE = 0.03  # of the component at most between the two: black and white, no grays
SHADE_MARGIN = 0.005  # m over the white thing's top its shaded sides may reach


def _black_on_white(members: np.ndarray, heights: np.ndarray, hsv: np.ndarray,
                    min_count: int) -> list[np.ndarray]:
    """Split an achromatic component that is a black thing standing on a white one (a black
    bowl on a white ramekin: one footprint, one colour group). Both must be there in number,
    next to nothing between them (an object's own shading runs through the grays), and the
    black above the white; the white one's sides in the black one's shade read dark, so the
    dark points no higher than the white one's top are the white one's. A black thing in a
    white bowl is lower than the rim and is left to the container split."""
    v = hsv[members, 2]
    dark, light = v < DARK_VALUE, v > LIGHT_VALUE
    if (np.count_nonzero(dark) < min_count or np.count_nonzero(light) < min_count
            or np.count_nonzero(~dark & ~light) > VALUE_GAP_SHARE * members.size):
        return [members]
    h = heights[members]
    white_top = float(np.percentile(h[light], 98))
    if float(np.median(h[dark])) <= white_top:
        return [members]
    black = dark & (h > white_top + SHADE_MARGIN)
    if np.count_nonzero(black) < min_count:
        return [members]
    return [members[black], members[~black]]


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
           "check_frame", "cluster_foreground", "cluster_in_box", "depth_to_mm", "fit_table",
           "foreground", "segment"]

"""Split a round container (a bowl) from same-coloured things inside it or touching it.

Clustering is per colour group on a top-down grid, so a green block in (or against) the green
bowl lands in the bowl's component. The bowl's outline is a circle whatever it holds, so it is
found by fitting a circle to the component's outline (RANSAC: a block outside is a bump the fit
ignores). Around that circle, with a floor clearly below the rim:

* points inside the wall that stand clearly above the floor are something in the bowl;
* points beyond the outline are something touching it from outside.

Each of those that is object-sized becomes its own cluster; the rest stays the bowl's. A
plate (flat within its outline, no floor below a rim) is split from what touches it from
outside the same way.
No ground truth: only the component's own points and the config's tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from frankenbot.perception.config import PerceptionConfig

_SECTORS = 72  # outline samples: the farthest point in each 5 degree sector
_OUTLINE_POINTS = 2500  # larger components are thinned for the outline (time, not accuracy)
_RANSAC_TRIES = 96
_FLOOR_RANK = 2  # the floor is the third-lowest point inside the wall (one stray is noise)
_RANSAC_SEED = 0  # fixed: the same frame always gives the same split
PLATE_MAX_HEIGHT = 0.025  # m: a round component this flat within its outline is a plate


@dataclass(frozen=True)
class Circle:
    """A round container's outline seen from above: centre (x, y) and radius, metres."""

    centre: np.ndarray
    radius: float


def split_round_container(members: np.ndarray, points: np.ndarray, heights: np.ndarray,
                          config: PerceptionConfig) -> list[np.ndarray]:
    """``members`` (indices into points) as [container, *objects in or against it].

    Returns ``[members]`` unchanged when the component is not a round container or holds and
    touches nothing of its colour.
    """
    xy = points[members, :2]
    if float(np.max(np.ptp(xy, axis=0))) < config.container_min_diameter:
        return [members]
    circle = fit_outline_circle(xy, config)
    if circle is None:
        return [members]
    d = np.linalg.norm(xy - circle.centre, axis=1)
    h = heights[members]
    inner = d < circle.radius - config.container_wall
    rim = (d >= circle.radius - config.container_wall) & (d <= circle.radius)
    if np.count_nonzero(inner) < config.min_points or np.count_nonzero(rim) < config.min_points:
        return [members]
    # The near wall hides most of the floor from an oblique camera and what it holds hides
    # more, so the floor is the lowest few inner points, not a percentile of them.
    floor = float(np.partition(h[inner], _FLOOR_RANK)[_FLOOR_RANK])
    outside = d > circle.radius + config.outline_tolerance
    if float(np.percentile(h[rim], 90)) - floor < config.container_min_depth:
        # no floor below a rim: a plate or a solid, not a container; a plate (flat all
        # over) keeps what touches it from outside apart (a white mug beside a white plate
        # made one white thing neither is), and nothing is in it
        if float(np.percentile(h[~outside], 90)) > PLATE_MAX_HEIGHT:
            return [members]
        inside = np.zeros(members.size, bool)
    else:
        inside = inner & (h > floor + config.container_raise)
    parts = [*_objects(members, inside, points, config),
             *_objects(members, outside, points, config, circle, reach=config.min_extent)]
    # Raised points inside the wall are never the container's own. Those too few for an object
    # (a block mostly hidden by the gripper lowering it) are left out, not merged back: merged,
    # they made the bowl read as a tall solid and it dropped out of the scene.
    keep = ~inside
    for p in parts:
        keep &= ~p
    return [members[keep], *(members[p] for p in parts)]


def fit_outline_circle(xy: np.ndarray, config: PerceptionConfig) -> Circle | None:
    """The circle most of the footprint's outline lies on, or None when it is not round."""
    step = -(-xy.shape[0] // _OUTLINE_POINTS)  # ceil: an evenly thinned cloud keeps its outline
    outline = _outline(xy[::step])
    if outline.shape[0] < _SECTORS // 2:
        return None
    rng = np.random.default_rng(_RANSAC_SEED)
    # Trios with a repeated point are degenerate (infinite radius) and drop out below.
    trios = rng.integers(0, outline.shape[0], size=(_RANSAC_TRIES, 3))
    centres, radii = _circles_through(outline[trios])
    lo, hi = config.container_min_diameter / 2, config.container_max_diameter / 2
    ok = np.isfinite(radii) & (radii >= lo) & (radii <= hi)
    if not np.any(ok):
        return None
    centres, radii = centres[ok], radii[ok]
    resid = np.abs(np.linalg.norm(outline[None, :, :] - centres[:, None, :], axis=2)
                   - radii[:, None])
    on = resid < config.outline_tolerance
    best = int(np.argmax(on.sum(axis=1)))
    inliers = outline[on[best]]
    if inliers.shape[0] < config.outline_min_share * outline.shape[0]:
        return None  # a rectangle (bin) or an irregular blob
    centre, radius = _least_squares_circle(inliers)
    if not lo <= radius <= hi:
        return None
    if _largest_gap(inliers - centre) > np.radians(config.outline_max_gap):
        return None  # an arc, not a ring: a bowl half hidden by the arm fits wrong circles
    return Circle(centre, radius)


def _largest_gap(rel: np.ndarray) -> float:
    """The widest angle (radians) around the origin with none of the points ``rel`` in it."""
    a = np.sort(np.arctan2(rel[:, 1], rel[:, 0]))
    return float(np.max(np.diff(np.r_[a, a[0] + 2 * np.pi])))


def _outline(xy: np.ndarray) -> np.ndarray:
    """The farthest point from the centroid in each angular sector (a star-shaped outline)."""
    rel = xy - xy.mean(axis=0)
    sector = ((np.arctan2(rel[:, 1], rel[:, 0]) + np.pi) / (2 * np.pi) * _SECTORS).astype(int)
    sector = np.minimum(sector, _SECTORS - 1)
    present = np.unique(sector)
    # ndimage's per-label arg-max is one C pass (sorting thousands of points is not).
    far = ndimage.maximum_position(np.einsum("ij,ij->i", rel, rel), sector, present)
    return xy[np.asarray(far, dtype=np.int64).reshape(-1)]


def _circles_through(trios: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Circumcentres and radii of (K, 3, 2) point triples (radius inf when collinear)."""
    a, b, c = trios[:, 0], trios[:, 1], trios[:, 2]
    ax, ay, bx, by, cx, cy = a[:, 0], a[:, 1], b[:, 0], b[:, 1], c[:, 0], c[:, 1]
    den = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    with np.errstate(divide="ignore", invalid="ignore"):
        sa, sb, sc = ax**2 + ay**2, bx**2 + by**2, cx**2 + cy**2
        ux = (sa * (by - cy) + sb * (cy - ay) + sc * (ay - by)) / den
        uy = (sa * (cx - bx) + sb * (ax - cx) + sc * (bx - ax)) / den
    centres = np.stack([ux, uy], axis=1)
    radii = np.linalg.norm(a - centres, axis=1)
    radii[~np.isfinite(radii)] = np.inf
    return centres, radii


def _least_squares_circle(xy: np.ndarray) -> tuple[np.ndarray, float]:
    """Algebraic (Kasa) circle fit: x^2 + y^2 = 2ax + 2by + c."""
    a = np.c_[2 * xy, np.ones(xy.shape[0])]
    sol, *_ = np.linalg.lstsq(a, np.einsum("ij,ij->i", xy, xy), rcond=None)
    centre = sol[:2]
    return centre, float(np.sqrt(max(sol[2] + centre @ centre, 0.0)))


def _objects(members: np.ndarray, mask: np.ndarray, points: np.ndarray,
             config: PerceptionConfig, circle: Circle | None = None,
             reach: float = 0.0) -> list[np.ndarray]:
    """Object-sized connected blobs of ``members[mask]`` on the top-down grid, as masks.

    With ``circle``, a blob must also reach ``reach`` beyond it: a sliver of the container's
    own wall just past the fitted outline is not an object.
    """
    sel = np.flatnonzero(mask)
    if sel.size < config.min_points:
        return []
    xy = points[members[sel], :2]
    ij = np.floor(xy / config.grid_cell).astype(np.int64)
    ij -= ij.min(axis=0)
    grid = np.zeros(tuple(int(v) + 1 for v in ij.max(axis=0)), dtype=bool)
    grid[ij[:, 0], ij[:, 1]] = True
    structure = np.ones((3, 3), dtype=bool)
    if config.grid_closing:  # far from the camera samples are sparser than the grid
        grid = ndimage.binary_dilation(grid, structure, iterations=config.grid_closing)
    labels, n = ndimage.label(grid, structure)
    lab = labels[ij[:, 0], ij[:, 1]]
    out = []
    for k in range(1, n + 1):
        blob = sel[lab == k]
        if blob.size < config.min_points:
            continue
        bxy = points[members[blob], :2]
        if float(np.max(np.ptp(bxy, axis=0))) < config.min_extent:
            continue
        if circle is not None:
            beyond = np.linalg.norm(bxy - circle.centre, axis=1).max() - circle.radius
            if beyond < reach:
                continue
        part = np.zeros(members.size, dtype=bool)
        part[blob] = True
        out.append(part)
    return out


__all__ = ["Circle", "fit_outline_circle", "split_round_container"]

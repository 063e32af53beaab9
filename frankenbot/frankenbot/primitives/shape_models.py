"""What an object's top surface looks like from above, as points: the input of grasp synthesis.

Perception hands the grasp synthesis a sample of the object's segmented points
(``SceneObject.points``). Where there are none (a ground-truth scene, a fixture, a neighbour) the
same kind of points is drawn from the object's category, pose and size: a box is its flat top, a
can a disc, a ball a dome, a bowl or a basket a rim around a low floor, a mug a cup with its
handle on the object's +x side (the catalogue's convention, ``sim/objects.py``), a bottle a body
with a narrower neck on top, a lying bottle, marker or lemon a half cylinder along its x axis.

Points are read as columns ("2.5-D"): an object occupies everything between its bottom and each
point's height. A camera above the table sees exactly that for most things; what it cannot see,
the waist of a ball or of a lying bottle, the category says (``widest_height``).
"""

from __future__ import annotations

import math

import numpy as np

from frankenbot import shapes
from frankenbot.state import SceneObject

SPACING = 0.006  # m between model points (finger slabs are wider, so none slips between)
MIN_POINTS = 12  # fewer perceived points than this: use the category model
FLOOR = 0.008  # m: floor thickness of bowls, bins, baskets, trays, mugs
WALL = 0.012  # m: the rim band of a bowl, bin, basket or tray as seen from above
MUG_WALL = 0.006
MUG_HANDLE_HALF = 0.007  # m: half the handle's width across the mug's x axis
MUG_HANDLE_TOP = 0.26  # share of the mug's height the handle's top stands above its centre
BOTTLE_BODY = 0.7  # share of an upright bottle's height that is body (the rest is neck)
BOTTLE_NECK = 0.42  # neck radius as a share of the body's
# things that roll or lie on their side: their widest section is at their centre's height
ROUND_SIDED = frozenset(shapes.ROLLING | {"marker"})


def lying(obj: SceneObject) -> bool:
    """A bottle on its side (its length along x, as low as it is wide)."""
    return obj.shape == "bottle" and obj.size[2] < 0.8 * max(obj.size[0], obj.size[1])


def widest_height(obj: SceneObject) -> float | None:
    """The height of the object's widest horizontal section where the camera cannot see it (a
    ball's equator, a lying bottle's axis); None when every section below the top is as wide."""
    if obj.shape in ROUND_SIDED or lying(obj):
        return obj.position[2]
    return None


def _grid(sx: float, sy: float, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    nx = max(2, int(math.ceil(sx / spacing)) + 1)
    ny = max(2, int(math.ceil(sy / spacing)) + 1)
    lx, ly = np.meshgrid(np.linspace(-sx / 2, sx / 2, nx), np.linspace(-sy / 2, sy / 2, ny))
    return lx.ravel(), ly.ravel()


def _heights(obj: SceneObject, lx: np.ndarray, ly: np.ndarray) -> np.ndarray:
    """Top height (absolute z) over each local (lx, ly); NaN where the object has nothing."""
    sx, sy, sz = obj.size
    cz = obj.position[2]
    top, bottom = cz + sz / 2, cz - sz / 2
    h = np.full(lx.shape, top)
    shape = obj.shape
    if lying(obj) or shape == "marker":
        r = sy / 2
        h = np.where(np.abs(ly) <= r, cz + (sz / 2) * np.sqrt(np.clip(1 - (ly / r) ** 2, 0, 1)),
                     np.nan)
    elif shape == "lemon":
        e = 1 - (lx / (sx / 2)) ** 2 - (ly / (sy / 2)) ** 2
        h = np.where(e >= 0, cz + (sz / 2) * np.sqrt(np.clip(e, 0, 1)), np.nan)
    elif shape in ("apple", "ball"):
        r = min(sx, sy) / 2
        rho2 = lx ** 2 + ly ** 2
        h = np.where(rho2 <= r * r, cz + np.sqrt(np.clip(r * r - rho2, 0, None)), np.nan)
    elif shape in ("can", "plate"):
        r = min(sx, sy) / 2
        h = np.where(lx ** 2 + ly ** 2 <= r * r, top, np.nan)
    elif shape == "bottle":
        r = min(sx, sy) / 2
        rho = np.hypot(lx, ly)
        h = np.where(rho <= BOTTLE_NECK * r, top,
                     np.where(rho <= r, bottom + BOTTLE_BODY * sz, np.nan))
    elif shape == "bowl":
        r = min(sx, sy) / 2
        rho = np.hypot(lx, ly)
        h = np.where(rho <= r - WALL, bottom + FLOOR, np.where(rho <= r, top, np.nan))
    elif shape in ("bin", "basket", "tray"):
        inner = (np.abs(lx) <= sx / 2 - WALL) & (np.abs(ly) <= sy / 2 - WALL)
        h = np.where(inner, bottom + FLOOR, top)
    elif shape == "mug":
        r = sy / 2
        cx = -(sx - sy) / 2  # the cup's axis; the handle stands out on +x
        rho = np.hypot(lx - cx, ly)
        cup = np.where(rho <= r - MUG_WALL, bottom + FLOOR, np.where(rho <= r, top, np.nan))
        handle = (lx > cx + r - 0.002) & (np.abs(ly) <= MUG_HANDLE_HALF)
        h = np.where(handle, cz + MUG_HANDLE_TOP * sz, cup)
    return h


ROUND_OUTLINE = frozenset({"bowl", "plate", "can", "bottle", "apple", "ball", "mug"})
OUTLINE_STEP = 0.003  # m between points along an outline


def _outline(obj: SceneObject) -> tuple[np.ndarray, np.ndarray]:
    """Points just inside the footprint's outline (where the pads touch), denser than the grid:
    a circle for round things (a mug's cup), else the rectangle."""
    sx, sy = max(obj.size[0], 1e-3), max(obj.size[1], 1e-3)
    if obj.shape in ROUND_OUTLINE and not lying(obj):
        r = min(sx, sy) / 2 - 1e-4
        cx = -(sx - sy) / 2 if obj.shape == "mug" else 0.0
        n = max(16, int(2 * math.pi * r / OUTLINE_STEP))
        a = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
        return cx + r * np.cos(a), r * np.sin(a)
    hx, hy = sx / 2 - 1e-4, sy / 2 - 1e-4
    tx = np.linspace(-hx, hx, max(2, int(sx / OUTLINE_STEP) + 1))
    ty = np.linspace(-hy, hy, max(2, int(sy / OUTLINE_STEP) + 1))
    return (np.concatenate([tx, tx, np.full_like(ty, -hx), np.full_like(ty, hx)]),
            np.concatenate([np.full_like(tx, -hy), np.full_like(tx, hy), ty, ty]))


def model_points(obj: SceneObject, spacing: float = SPACING) -> np.ndarray:
    """(N, 3) base-frame points of the object's top surface drawn from its category, pose and
    size (see the module docstring): a grid over the footprint and its outline."""
    sx, sy, _ = obj.size
    lx, ly = _grid(max(sx, 1e-3), max(sy, 1e-3), spacing)
    ox, oy = _outline(obj)
    lx, ly = np.concatenate([lx, ox]), np.concatenate([ly, oy])
    h = _heights(obj, lx, ly)
    keep = np.isfinite(h)
    lx, ly, h = lx[keep], ly[keep], h[keep]
    c, s = math.cos(obj.yaw), math.sin(obj.yaw)
    x = obj.position[0] + c * lx - s * ly
    y = obj.position[1] + s * lx + c * ly
    return np.column_stack([x, y, h])


def surface_points(obj: SceneObject) -> np.ndarray:
    """The object's perceived points when there are enough, else its category model."""
    if len(obj.points) >= MIN_POINTS:
        pts = np.asarray(obj.points, dtype=float).reshape(-1, 3)
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        if len(pts) >= MIN_POINTS:
            return pts
    return model_points(obj)

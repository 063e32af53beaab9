"""Colour names from pixels: HSV conversion and nearest named colour.

Why HSV: lighting and shading change brightness far more than hue, so chromatic objects keep their
hue on lit tops and shaded sides alike. Achromatic objects (white, gray, black) have no stable hue
and their brightness changes with shading, so segmentation treats them as one group and only the
object's overall brightness picks between white, gray and black.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frankenbot.state import COLOURS

# Hue centres in degrees of the chromatic names; brown/pink/orange are resolved by value and
# saturation below.
HUE_CENTRES: dict[str, float] = {
    "red": 0.0,
    "orange": 30.0,  # lit orange tops clip red and drift towards 45
    "yellow": 62.0,
    "green": 120.0,
    "cyan": 185.0,
    "blue": 225.0,
    "purple": 280.0,
    "pink": 325.0,
}
ACHROMATIC = ("white", "gray", "black")
# Segmentation groups: chromatic hue names, a muted warm group (wood, cardboard: brown) and one
# achromatic group, so a vivid orange block inside a wooden drawer stays a separate cluster.
SEG_NAMES: tuple[str, ...] = tuple(HUE_CENTRES) + ("brown", "achromatic")
BROWN_GROUP = len(SEG_NAMES) - 2
ACHROMATIC_GROUP = len(SEG_NAMES) - 1
BROWN_HUE = (10.0, 50.0)
PINK_HUE = (295.0, 345.0)  # degrees: the hues a pale object may be pink at


@dataclass(frozen=True)
class ColourThresholds:
    """Where colour stops and gray starts, and the brightness bands of the achromatic names."""

    min_saturation: float = 0.28  # below: achromatic
    min_value_chromatic: float = 0.12  # darker than this: black whatever the hue
    white_value: float = 0.75  # achromatic brighter than this: white
    black_value: float = 0.22  # achromatic darker than this: black
    brown_value: float = 0.45  # orange/red-ish hue darker than this: brown
    brown_saturation: float = 0.6  # warm hue less saturated than this: its own segmentation
    # group (wood); named brown below brown_name_saturation (a lit brown box reads 0.71,
    # an orange one 0.94 or more)
    brown_name_saturation: float = 0.83
    # achromatic: white when the top face is at least this bright relative to the table's
    # (white tops measured 1.02-1.13, gray ones 0.71-0.91 under the D435-like model; an
    # object's shaded sides say little, a white mug's are darker than a gray tray's top)
    white_top_ratio: float = 0.96
    # A thin lit rim (a mug's) is a small share of the top band, whose inner and outer walls
    # under it read darker, so its 75th percentile fell to 0.86 on a white mug. The band's
    # brightest tenth above the table's brightness is a white rim when the object's pixels
    # are not mostly dark (a gray bin's lit rim reached 1.00 at the 90th percentile, but
    # half its pixels are under 0.5 of the table; a white mug's median was 0.66 or more).
    white_rim_ratio: float = 1.0
    white_rim_body_ratio: float = 0.6
    # pink: a pale magenta (the pink plate measured saturation 0.22-0.46 at hue 300-320; the
    # purple block and bottle 0.74-0.80 at 282-293)
    pink_max_saturation: float = 0.5
    pink_min_saturation: float = 0.18


# What a colour reads as out of the light (inside a drawer, under a shelf): a warm hue darkens
# to brown, white to gray. Not black: the gripper's fingers are black, and every object the arm
# works is next to them.
_SHADED: dict[str, frozenset[str]] = {
    "red": frozenset({"brown"}), "orange": frozenset({"brown"}), "yellow": frozenset({"brown"}),
    "white": frozenset({"gray"}),
}


def shade_related(a: str, b: str) -> bool:
    """One of the two colour names is what the other reads as in shade (red, orange or yellow
    and brown; white and gray); not the same name."""
    if a == b or not a or not b:
        return False
    return b in _SHADED.get(a, frozenset()) or a in _SHADED.get(b, frozenset())


def hue_adjacent(a: str, b: str) -> bool:
    """Two chromatic colour names next to each other on the hue circle (a clipped orange
    reads yellow, a lit purple pink)."""
    names = list(HUE_CENTRES)
    if a == b or a not in names or b not in names:
        return False
    return abs(names.index(a) - names.index(b)) in (1, len(names) - 1)


def rgb_to_hsv(rgb: np.ndarray) -> np.ndarray:
    """uint8 or float RGB (..., 3) -> HSV (..., 3) with h in degrees [0, 360), s and v in [0, 1]."""
    arr = np.asarray(rgb)
    f = arr.astype(np.float32) / 255.0 if arr.dtype == np.uint8 else arr.astype(np.float32)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    mx = np.maximum(np.maximum(r, g), b)
    mn = np.minimum(np.minimum(r, g), b)
    delta = mx - mn
    safe = np.where(delta > 1e-6, delta, 1.0)
    h = np.where(mx == r, ((g - b) / safe) % 6.0,
                 np.where(mx == g, (b - r) / safe + 2.0, (r - g) / safe + 4.0))
    h = np.where(delta > 1e-6, h * 60.0, 0.0)
    s = np.where(mx > 1e-6, delta / np.where(mx > 1e-6, mx, 1.0), 0.0)
    return np.stack([h % 360.0, s, mx], axis=-1)


CLIP_LEVEL = 250  # 8-bit value at which a channel counts as saturated


UNCLIP_MAX_HUE = 52.0  # degrees: a red-clipped pixel at or above this hue is left as it reads


def unclip_red_hue(hsv: np.ndarray, raw_rgb: np.ndarray) -> None:
    """Fix in place the hue of pixels whose red channel clipped (a lit orange top, a bright
    exposure): with red capped, the measured hue is too far towards yellow, so the true hue is
    at most the measured one. Such a pixel between the red and orange centres, or reading up to
    ``UNCLIP_MAX_HUE``, gets the highest of those centres not above its hue (+4 degrees): a
    clipped orange reads orange, not yellow. A yellow reads 52-60 degrees unclipped and clipping
    only raises that, so a clipped pixel from 52 degrees up is left alone (mapping it to orange
    had turned whole yellow blocks orange under a bright exposure), and so is one whose green
    clipped too. Faces of one object that still split into two hues are joined again by
    segmentation, the darker one naming the colour."""
    rgb = np.asarray(raw_rgb)
    sel = ((rgb[:, 0] >= CLIP_LEVEL) & (rgb[:, 1] < CLIP_LEVEL)
           & (hsv[:, 0] < UNCLIP_MAX_HUE))
    if not sel.any():
        return
    warm = sorted(HUE_CENTRES[n] for n in ("red", "orange"))
    h = hsv[sel, 0]
    fixed = np.full(h.shape, warm[0], dtype=np.float32)
    for c in warm[1:]:
        fixed = np.where(h + 4.0 >= c, c, fixed)
    hsv[sel, 0] = np.minimum(h, fixed)


def _hue_index(h: np.ndarray) -> np.ndarray:
    centres = np.array(list(HUE_CENTRES.values()), dtype=np.float32)
    diff = np.abs(h[..., None] - centres)
    diff = np.minimum(diff, 360.0 - diff)
    return np.argmin(diff, axis=-1)


def segmentation_groups(hsv: np.ndarray, th: ColourThresholds = ColourThresholds()) -> np.ndarray:
    """Per-pixel group index into SEG_NAMES (hue bin, or the achromatic group)."""
    groups = _hue_index(hsv[..., 0]).astype(np.int16)
    h = hsv[..., 0]
    groups[(h >= BROWN_HUE[0]) & (h <= BROWN_HUE[1]) & (hsv[..., 1] < th.brown_saturation)] = (
        BROWN_GROUP)
    achrom = (hsv[..., 1] < th.min_saturation) | (hsv[..., 2] < th.min_value_chromatic)
    groups[achrom] = ACHROMATIC_GROUP
    return groups


UNCLIPPED_SHARE = 0.25  # of an object's pixels: enough unclipped ones to name it alone


def name_colour(hsv_pixels: np.ndarray, clipped: np.ndarray | None = None,
                th: ColourThresholds = ColourThresholds(),
                top_ratio: float | None = None) -> str:
    """Name the dominant colour of an object's pixels (N, 3 HSV).

    ``clipped`` (N bools) marks pixels with a channel at the clip level: their hue moved (away
    from the clipped channel's primary), so when at least ``UNCLIPPED_SHARE`` of the pixels
    did not clip, only those name the colour. ``top_ratio``: the brightness of the object's
    top face over the table's (when measured): it tells white from gray."""
    px = np.asarray(hsv_pixels, dtype=np.float32).reshape(-1, 3)
    if px.shape[0] == 0:
        return ""
    if clipped is not None and px.shape[0] == len(clipped):
        keep = ~np.asarray(clipped, dtype=bool)
        if np.count_nonzero(keep) >= max(1.0, UNCLIPPED_SHARE * px.shape[0]):
            px = px[keep]
    achrom = (px[:, 1] < th.min_saturation) | (px[:, 2] < th.min_value_chromatic)
    if np.count_nonzero(achrom) * 2 > px.shape[0] and _pale_pink(px, th):
        return "pink"  # a pastel pink lit from above reads nearly white (the pink plate)
    if np.count_nonzero(achrom) * 2 > px.shape[0]:
        # Median brightness: a gray bin's lit rims reach white levels but most of it is darker,
        # while a white object stays bright on nearly every face the camera sees.
        value = float(np.median(px[achrom, 2]))
        if value <= th.black_value:
            return "black"
        if top_ratio is not None:
            return "white" if top_ratio >= th.white_top_ratio else "gray"
        if value >= th.white_value:
            return "white"
        return "gray"
    chrom = px[~achrom]
    # Circular mean of hue, weighted by saturation (highlights carry less hue information).
    ang = np.deg2rad(chrom[:, 0])
    w = chrom[:, 1]
    hue = float(np.rad2deg(np.arctan2(np.sum(w * np.sin(ang)), np.sum(w * np.cos(ang)))) % 360.0)
    name = list(HUE_CENTRES)[int(_hue_index(np.array([hue], dtype=np.float32))[0])]
    value = float(np.median(chrom[:, 2]))
    sat = float(np.median(chrom[:, 1]))
    if BROWN_HUE[0] <= hue <= BROWN_HUE[1] and (value < th.brown_value
                                               or sat < th.brown_name_saturation):
        return "brown"
    if name == "purple" and hue >= PINK_HUE[0] and sat < th.pink_max_saturation:
        return "pink"  # a pale magenta (a lit pink plate), not the deep violet of purple
    return name


def top_brightness(top_values: np.ndarray, all_values: np.ndarray, table_value: float,
                   th: ColourThresholds = ColourThresholds()) -> float:
    """The brightness of an object's top face over the table's, from the values (HSV V) of
    its top band and of all its pixels: the band's 75th percentile, or the brightest tenth's
    where that is a thin white rim (``ColourThresholds.white_rim_ratio``)."""
    top = float(np.percentile(top_values, 75)) / table_value
    rim = float(np.percentile(top_values, 90)) / table_value
    if (top < th.white_top_ratio and rim >= th.white_rim_ratio
            and float(np.median(all_values)) / table_value >= th.white_rim_body_ratio):
        return rim
    return top


def _pale_pink(px: np.ndarray, th: ColourThresholds) -> bool:
    """Mostly pale pixels of one magenta hue: a pink object, not a white or gray one."""
    sat = px[:, 1]
    if float(np.median(sat)) < th.pink_min_saturation:
        return False
    ang = np.deg2rad(px[:, 0])
    hue = float(np.rad2deg(np.arctan2(np.sum(sat * np.sin(ang)),
                                      np.sum(sat * np.cos(ang)))) % 360.0)
    return PINK_HUE[0] <= hue <= PINK_HUE[1]


assert all(n in COLOURS for n in (*HUE_CENTRES, *ACHROMATIC, "brown"))

"""The catalogue of known objects: per category, the shape signatures measured when each
object was enrolled, and what a newly perceived object is matched against.

Why prototypes rather than hand-set ranges: an object seen by one oblique depth camera
measures shorter than it is (its far side is hidden), a sphere's width depends on how much of
its equator shows, a mug's length on whether its handle faces the camera. So each category
is described by what the camera actually measured of real instances, each instance enrolled
from several views (``frankenbot objects enroll``): the mean and spread of every signature
feature (``perception/signature.py``). A category may have several prototypes (bowls of three
sizes, an upright and a lying bottle). The shipped ``config/objects.yaml`` was enrolled the
same way from the sim's objects.

Matching: every feature of a perceived object must lie within the prototype's tolerance
(``TOLERANCE_SIGMAS`` spreads, never tighter than a floor per feature, lengths also relative
to their size); of the prototypes that accept it, the nearest (root mean square of the
normalised deviations) names it. An object no prototype accepts is ``unknown``: it is
reported with its size and colour, never forced onto the nearest known category. A category
may also restrict colours (a blue sphere is not an apple).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from frankenbot.errors import ConfigError
from frankenbot.perception.signature import Signature
from frankenbot.shapes import UNKNOWN

TOLERANCE_SIGMAS = 4.0
# depth noise beyond what the catalogue was enrolled under widens the length, width and
# height tolerances by this many times the extra noise (a harsh camera's heights wander)
NOISE_TOLERANCE = 4.0
_LENGTHS = [Signature.names().index(n) for n in ("length", "width", "height")]
_EXTENTS = [Signature.names().index(n) for n in ("length", "width")]
_HEIGHT = Signature.names().index("height")
OUTLIER_SCALES = 4.0  # an enrolment view this many robust spreads off is left out
# the tightest tolerance per feature: (absolute, share of the mean); lengths in metres
FLOORS: dict[str, tuple[float, float]] = {
    "length": (0.005, 0.03), "width": (0.005, 0.03), "height": (0.004, 0.03),
    "fill": (0.06, 0.0), "top_share": (0.12, 0.0), "mid_drop": (0.25, 0.0),
    "end_ratio": (0.25, 0.0),
}
PART_MIN_SHARE = 0.25  # of a prototype's footprint area a part must show to be named by it
PART_HEIGHT_DEV = 0.75  # ... and the share of the height tolerance its height may be off
# seen in part, it is named whole only showing this share of the prototype's footprint (a
# 4.5 x 1.8 cm sliver of a purple bottle lying half hidden fitted a 5 x 4 cm ball's loose
# width tolerance whole)
WHOLE_MIN_SHARE = 0.6
NAME_RE = r"^[a-z][a-z0-9_]{0,39}$"  # category and prototype names: ids in programs
# features a partly hidden object measures at most as large as it is (its outline cut by a
# nearer thing fills less of its bounding box: a bowl with a chord cut off; the gripper over a
# carton hides part of its top, which then covers less of its footprint)
_LOWER_BOUNDS = [Signature.names().index(n)
                 for n in ("length", "width", "fill", "top_share", "end_ratio")]
# ... and one hidden only at an end: its sides are seen, so only its length may be short
_END_BOUNDS = [Signature.names().index(n) for n in ("length", "end_ratio")]
# ... or only at its top (a standing bottle's neck under the arm): its height may be short,
# and its far end, which the arm over it cuts, narrow; what its top measures (its share of the
# footprint, the middle's drop below it) is a cut through its body, which says nothing; it
# shows this share of the height at least
_TOP_BOUNDS = [Signature.names().index(n) for n in ("height", "end_ratio")]
_TOP_UNSEEN = [Signature.names().index(n) for n in ("top_share", "mid_drop")]
TOP_MIN_HEIGHT = 0.5
LENGTH_END, TOP_END = "length", "top"  # ``match(end=)``: which end only is hidden


@dataclass(frozen=True)
class Prototype:
    """One enrolled object: its category, its own name, its colour and what was measured."""

    category: str
    name: str
    colour: str
    mean: Signature
    spread: Signature
    views: int
    source: str = ""

    def tolerances(self) -> np.ndarray:
        mean = np.asarray(self.mean.values())
        spread = np.asarray(self.spread.values())
        floors = np.array([FLOORS[n][0] + FLOORS[n][1] * abs(m)
                           for n, m in zip(Signature.names(), mean, strict=True)])
        return np.maximum(TOLERANCE_SIGMAS * spread, floors)

    def deviations(self, sig: Signature) -> np.ndarray:
        """Each feature's deviation from the mean, in tolerances (<= 1 accepts)."""
        return np.abs(np.asarray(sig.values()) - np.asarray(self.mean.values())) / (
            self.tolerances())


@dataclass(frozen=True)
class Match:
    """What the catalogue makes of one signature."""

    category: str  # shapes.UNKNOWN when no prototype accepted it
    prototype: str = ""
    distance: float = math.inf  # RMS deviation (tolerances) from the accepting prototype
    nearest: str = ""  # the nearest prototype overall (also when unknown): for logs
    as_part: bool = False  # accepted only as a part of it (``match(partial=True)``)


@dataclass(frozen=True)
class ObjectCatalogue:
    """Prototypes by category, and per-category colour restrictions."""

    prototypes: tuple[Prototype, ...] = ()
    colours: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    path: Path | None = field(default=None, compare=False)
    noise: float = 0.0  # m: the median depth noise (RMS) of the enrolled views

    def __post_init__(self) -> None:
        names = [p.name for p in self.prototypes]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ConfigError(f"object catalogue: prototype names used twice: {dup}")
        # the deviations of every prototype at once: tolerance matrix and means
        object.__setattr__(self, "_means", np.array([p.mean.values() for p in self.prototypes])
                           if self.prototypes else np.zeros((0, len(Signature.names()))))
        object.__setattr__(self, "_tols", np.array([p.tolerances() for p in self.prototypes])
                           if self.prototypes else np.zeros((0, len(Signature.names()))))

    def categories(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.category for p in self.prototypes))

    def match(self, sig: Signature | None, colour: str = "", partial: bool = False,
              sigma: float = 0.0, spacing: float = 0.0, end: str = "",
              min_share: float = PART_MIN_SHARE) -> Match:
        """The category of an object with signature ``sig`` and colour ``colour``.
        ``partial``: the camera sees the object only in part (something nearer borders it,
        or it stands in a container): its length, width, fill, top share and narrower end
        may be short of the prototype's, not longer (its height is never relaxed: a partly
        seen anything smaller than a can would be a can). A prototype that accepts it as
        measured wins over one that accepts it only as a part: clipped to zero, a bigger prototype's
        length and width deviations would make it the nearest (a block by a bowl named a
        box of the block's height). ``sigma``: the object's depth noise; beyond the
        enrolled views' (``noise``) it widens the length tolerances. ``spacing``: the distance
        between neighbouring depth samples on the object; an extent ends at the last sample
        on it, up to half a spacing short at each end, never long, so a length or width up
        to one spacing short of the prototype's counts as equal (a far, thin marker sampled
        8 mm apart measured 12.2 of 14 cm). ``end``: only an end of it is hidden:
        ``LENGTH_END`` a long thing's cap: its length and narrower end are lower bounds, its
        width is not (a marker hidden at one end must not fit a wider spatula); ``TOP_END`` a
        standing thing's top: its height and narrower end are lower bounds (its height at
        least ``TOP_MIN_HEIGHT`` of the prototype's), its top share and middle's drop are not
        judged. A part says little of its shape: it is named only after an enrolled thing of
        its own colour whose footprint it shows at least ``min_share`` of, and such a thing
        wins over a whole match of another colour's prototype (a brown box half hidden
        measures like a cube: the brown box, not a block; a held-out red block half hidden is
        no part of a blue box)."""
        if sig is None or not self.prototypes:
            return Match(UNKNOWN)
        whole = Match(UNKNOWN)
        if partial:
            whole = self.match(sig, colour, False, sigma, spacing)
            if whole.category != UNKNOWN and self._share_of(whole.prototype, sig) < (
                    WHOLE_MIN_SHARE):
                whole = Match(UNKNOWN)
            if whole.category != UNKNOWN and (not colour or self._colour_of(whole.prototype)
                                              in ("", colour)):
                return whole
        diff = np.asarray(sig.values())[None, :] - self._means  # type: ignore[attr-defined]
        if spacing > 0:
            short = diff[:, _EXTENTS]
            diff[:, _EXTENTS] = np.where(short < 0, np.minimum(short + spacing, 0.0), short)
        if partial:
            bounds = {LENGTH_END: _END_BOUNDS, TOP_END: _TOP_BOUNDS}.get(end, _LOWER_BOUNDS)
            diff[:, bounds] = np.maximum(diff[:, bounds], 0.0)
            if end == TOP_END:
                diff[:, _TOP_UNSEEN] = 0.0
        tols = self._tols  # type: ignore[attr-defined]
        extra = NOISE_TOLERANCE * max(0.0, sigma - self.noise) if self.noise > 0 else 0.0
        if extra > 0:
            tols = tols.copy()
            tols[:, _LENGTHS] += extra
        dev = np.abs(diff) / tols
        worst = dev.max(axis=1)
        rms = np.sqrt(np.mean(dev ** 2, axis=1))
        allowed = np.array([self._colour_ok(p.category, colour) for p in self.prototypes])
        nearest = self.prototypes[int(np.argmin(np.where(allowed, rms, np.inf)))].name if (
            allowed.any()) else ""
        if partial:  # a part names only an enrolled thing of its own colour, and shows a
            # fair share of its footprint (a 5 cm sliver of a plate's edge names no plate)
            if colour:
                allowed &= np.array([p.colour in ("", colour) for p in self.prototypes])
            area = self._means[:, _EXTENTS].prod(axis=1)  # type: ignore[attr-defined]
            allowed &= sig.length * sig.width >= min_share * area
            if end == TOP_END:  # a held-out block under the gripper is no bottle's foot
                heights = self._means[:, _HEIGHT]  # type: ignore[attr-defined]
                allowed &= sig.height >= TOP_MIN_HEIGHT * heights
            else:  # its footprint says little: what it measures whole, its
                # height, must fit closely (a held-out 4 cm block half hidden, 3.9-4.1 cm
                # high, had fitted a 3.5 cm box of its colour at 0.85-0.99 of the tolerance)
                allowed &= dev[:, _HEIGHT] <= PART_HEIGHT_DEV
        ok = (worst <= 1.0) & allowed
        if not ok.any():
            return whole if whole.category != UNKNOWN else Match(UNKNOWN, nearest=nearest)
        k = int(np.argmin(np.where(ok, rms, np.inf)))
        p = self.prototypes[k]
        if p.category == whole.category:
            return whole
        return Match(p.category, p.name, float(rms[k]), nearest, as_part=partial)

    def _share_of(self, prototype: str, sig: Signature) -> float:
        """The share of ``prototype``'s footprint area that ``sig``'s footprint covers."""
        p = next(p for p in self.prototypes if p.name == prototype)
        return sig.length * sig.width / max(p.mean.length * p.mean.width, 1e-9)

    def _colour_of(self, prototype: str) -> str:
        return next((p.colour for p in self.prototypes if p.name == prototype), "")

    def _colour_ok(self, category: str, colour: str) -> bool:
        allowed = self.colours.get(category)
        return not allowed or not colour or colour in allowed

    def without(self, categories: Iterable[str]) -> "ObjectCatalogue":
        """The catalogue with ``categories`` left out (scoring what an unknown looks like)."""
        drop = set(categories)
        return replace(self, prototypes=tuple(p for p in self.prototypes
                                              if p.category not in drop))

    def with_prototype(self, proto: Prototype) -> "ObjectCatalogue":
        """The catalogue with ``proto`` added (replacing one of the same name)."""
        rest = tuple(p for p in self.prototypes if p.name != proto.name)
        return replace(self, prototypes=(*rest, proto))

    def with_object(self, protos: Sequence[Prototype]) -> "ObjectCatalogue":
        """The catalogue with an object's prototypes (``enrol_views``) replacing those it had
        (its own name and its second view's)."""
        names = {p.name for p in protos} | {p.name + MODE_SUFFIX for p in protos}
        rest = tuple(p for p in self.prototypes if p.name not in names)
        return replace(self, prototypes=(*rest, *protos))

    # ------------------------------------------------------------------ files
    def to_data(self) -> dict[str, Any]:
        return {
            "version": 1,
            "noise": round(self.noise, 5),
            "categories": {c: {"colours": list(v)} for c, v in sorted(self.colours.items())},
            "prototypes": [{"category": p.category, "name": p.name, "colour": p.colour,
                            "views": p.views, "source": p.source, "mean": p.mean.as_dict(),
                            "spread": p.spread.as_dict()} for p in self.prototypes],
        }

    @classmethod
    def from_data(cls, data: Any, path: Path | None = None) -> "ObjectCatalogue":
        if data is None:
            return cls(path=path)
        if not isinstance(data, Mapping):
            raise ConfigError(f"object catalogue must be a mapping, got {type(data).__name__}")
        colours: dict[str, tuple[str, ...]] = {}
        for cat, entry in (data.get("categories") or {}).items():
            if not isinstance(entry, Mapping):
                raise ConfigError(f"object catalogue: category {cat!r} must be a mapping")
            colours[str(cat)] = tuple(str(c) for c in entry.get("colours") or ())
        protos = []
        for i, entry in enumerate(data.get("prototypes") or ()):
            if not isinstance(entry, Mapping):
                raise ConfigError(f"object catalogue: prototype {i} must be a mapping")
            try:
                protos.append(Prototype(
                    category=check_name(str(entry["category"])),
                    name=check_name(str(entry["name"])), colour=str(entry.get("colour", "")),
                    mean=Signature.from_mapping(entry["mean"]),
                    spread=Signature.from_mapping(entry["spread"]),
                    views=int(entry.get("views", 1)), source=str(entry.get("source", ""))))
            except (KeyError, TypeError, ValueError) as e:
                raise ConfigError(f"object catalogue: prototype {i} ({entry.get('name')!r}): "
                                  f"{e!r}; expected category, name, mean and spread of "
                                  f"{', '.join(Signature.names())}") from e
        try:
            noise = float(data.get("noise", 0.0))
        except (TypeError, ValueError) as e:
            raise ConfigError("object catalogue: noise must be a number of metres") from e
        return cls(tuple(protos), colours, path, noise)

    @classmethod
    def load(cls, path: str | Path) -> "ObjectCatalogue":
        import yaml

        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"object catalogue not found: {p}")
        try:
            return cls.from_data(yaml.safe_load(p.read_text()), p)
        except yaml.YAMLError as e:
            raise ConfigError(f"cannot read object catalogue {p}: {e}") from e

    def save(self, path: str | Path, header: str = "") -> None:
        import yaml

        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        text = header or ("# The object catalogue (`frankenbot objects enroll` writes it): per "
                          "enrolled object its\n# category, colour and the mean and spread of "
                          "its shape signature over its views.\n")
        p.write_text(text + yaml.safe_dump(self.to_data(), sort_keys=False))


def check_name(name: str) -> str:
    import re

    if not re.match(NAME_RE, name) or name == UNKNOWN:
        raise ConfigError(f"object name {name!r}: use lower-case letters, digits and _ "
                          f"(a letter first, at most 40; not {UNKNOWN!r})")
    return name


def enrol_views(category: str, name: str, colour: str, views: Sequence[Signature],
                source: str = "") -> tuple[Prototype, ...]:
    """The prototypes of an object from the signatures of its views: one, or two when the
    views fall into two clearly separate modes (a lying bottle whose neck the body hides from
    some sides measures 4 cm shorter from those sides): ``name`` and ``name`` + ``_view2``."""
    check_name(name)
    if len(views) < 3:
        raise ConfigError(f"enrolling {name}: {len(views)} usable views, at least 3 needed "
                          "(is the object alone on the table and in view?)")
    arr = np.array([v.values() for v in views])
    split = _modes(arr)
    if split is None:
        return (enrol(category, name, colour, views, source),)
    first, second = split
    if np.count_nonzero(first) < np.count_nonzero(second):
        first, second = second, first
    return (enrol(category, name, colour,
                  [v for v, k in zip(views, first, strict=True) if k], source),
            enrol(category, f"{name}{MODE_SUFFIX}", colour,
                  [v for v, k in zip(views, second, strict=True) if k], source))


MODE_SUFFIX = "_view2"
MODE_GAP = 2.5  # floors between the two groups of a feature's values: two modes
MODE_MIN_SHARE = 0.2  # ... each holding at least this share of the views (and 4 of them)


def _modes(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The widest gap (in floors) in any one feature's sorted values, splitting the views in
    two groups big enough: the two masks, or None (one mode)."""
    n = arr.shape[0]
    need = max(4, int(np.ceil(MODE_MIN_SHARE * n)))
    best: tuple[float, int, float] | None = None
    for k, feature in enumerate(Signature.names()):
        a, b = FLOORS[feature]
        vals = np.sort(arr[:, k])
        floor = a + b * abs(float(np.median(vals)))
        gaps = np.diff(vals)[need - 1:n - need] / floor if n >= 2 * need else np.zeros(0)
        if gaps.size:
            i = int(np.argmax(gaps))
            if gaps[i] >= MODE_GAP and (best is None or gaps[i] > best[0]):
                cut = float((vals[need - 1 + i] + vals[need + i]) / 2)
                best = (float(gaps[i]), k, cut)
    if best is None:
        return None
    low = arr[:, best[1]] <= best[2]
    return low, ~low


def enrol(category: str, name: str, colour: str, views: Sequence[Signature],
          source: str = "") -> Prototype:
    """A prototype from the signatures of an object's views (at least 3)."""
    check_name(category)
    check_name(name)
    if len(views) < 3:
        raise ConfigError(f"enrolling {name}: {len(views)} usable views, at least 3 needed "
                          "(is the object alone on the table and in view?)")
    arr = np.array([v.values() for v in views])
    med = np.median(arr, axis=0)
    # views that measured the object far off in any feature (cut by the image edge, hidden
    # behind the arm) are left out: robust scales (MAD, never under half a floor), then the
    # spread of the rest
    floor = np.array([FLOORS[n][0] + FLOORS[n][1] * abs(m)
                      for n, m in zip(Signature.names(), med, strict=True)])
    scale = np.maximum(1.4826 * np.median(np.abs(arr - med), axis=0), 0.5 * floor)
    keep = np.all(np.abs(arr - med) <= OUTLIER_SCALES * scale, axis=1)
    if np.count_nonzero(keep) < 3:
        keep[:] = True
    inliers = arr[keep]
    mean = Signature(*(float(x) for x in np.median(inliers, axis=0)))
    spread = Signature(*(float(x) for x in inliers.std(axis=0, ddof=1)))
    return Prototype(category, name, colour, mean, spread, int(np.count_nonzero(keep)), source)

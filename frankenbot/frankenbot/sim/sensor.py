"""A RealSense D435-like sensor model applied to the sim's clean renders.

Why: MuJoCo renders perfect depth and colour; a real D435 at 0.5-1.2 m does not. The sim applies
this model where frames leave it (``SimWorld.sense``: the in-process stack and the sim node's
topics alike), so the brain sees the same kind of data it would see on the robot and cannot tell
which it runs on. What it models (parameter values and their D435 sources: docs/CAMERA.md):

- depth: axial noise with RMS ∝ z² (stereo: sigma = z² * subpixel / (f * baseline)), part of it
  spatially correlated (a smooth field, like the D435's low-frequency "wobble" on a flat wall);
  holes at depth discontinuities and in IR shadows (background next to the left side of a near
  object that the right imager cannot see); flying pixels (depths between foreground and
  background) at discontinuities; speckle dropouts; the minimum range; 1 mm quantisation.
- colour: read and shot noise, exposure and white-balance gains that drift slowly over time
  (Ornstein-Uhlenbeck processes, started at a random point each episode).
- per episode, optionally: light intensity and key-light direction.
- a camera-pose error: the sim draws the true camera a few millimetres and a fraction of a degree
  away from the nominal pose it tells the brain (config/camera.yaml, ``SimWorld.camera_pose``),
  like an imperfect hand-eye calibration. It is a property of the installation (``sensor_seed``),
  not of an episode: a real camera does not move between tasks, and calibration can recover it.

Everything is seeded: the pose error by the sensor seed, the noise streams, drifts and lights by
(sensor seed, episode seed), so one seed gives the same frames every run.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import yaml

from frankenbot import settings
from frankenbot.errors import ConfigError
from frankenbot.settings import setting

NOISE_PROFILES = ("none", "realistic", "harsh")


@dataclass(frozen=True)
class SensorParams:
    """Sensor-model settings (metres, seconds, 8-bit colour units). Zero turns a part off."""

    # depth
    depth_sigma_1m: float = setting(0.0, "RMS axial depth noise at 1 m; scales with z²",
                                    unit="m", low=0.0)
    depth_correlated_share: float = setting(0.5, "share of the noise variance in the smooth "
                                            "field", low=0.0, high=1.0)
    depth_correlation_px: int = setting(12, "size of the smooth field's cells", unit="px",
                                        low=1)
    discontinuity_m: float = setting(0.025, "neighbour depth step that counts as an edge",
                                     unit="m", low=0.0)
    edge_hole_rate: float = setting(0.0, "share of edge pixels that return no depth", low=0.0,
                                    high=1.0)
    flying_pixel_rate: float = setting(0.0, "share of edge pixels with a depth between the two "
                                       "sides", low=0.0, high=1.0)
    ir_shadow: bool = setting(False, "holes where the right imager cannot see (left of near "
                              "objects)")
    baseline_m: float = setting(0.050, "stereo baseline (D435)", unit="m", low=0.0)
    speckle_rate: float = setting(0.0, "random isolated dropouts", low=0.0, high=1.0)
    min_range_m: float = setting(0.28, "minimum depth (D435 at 1280x720; closer: no return)",
                                 unit="m", low=0.0)
    depth_unit_m: float = setting(0.001, "depth quantisation (the RealSense default unit)",
                                  unit="m", low=1e-6)
    # colour
    colour_sigma: float = setting(0.0, "read noise, 8-bit units", low=0.0)
    shot_noise: float = setting(0.0, "extra sigma at full brightness (sigma² grows with "
                                "intensity)", low=0.0)
    exposure_sigma: float = setting(0.0, "stationary std of the log exposure gain", low=0.0)
    white_balance_sigma: float = setting(0.0, "stationary std of the log red and blue gains",
                                         low=0.0)
    drift_time_s: float = setting(20.0, "time constant of the exposure / white-balance drift",
                                  unit="s", low=1e-3)
    auto_exposure: bool = setting(True, "exposure follows the light level (the D435 default)")
    # lights, drawn per episode
    light_intensity_sigma: float = setting(0.0, "std of the log light intensity", low=0.0)
    light_direction_deg: float = setting(0.0, "key-light direction tilt, at most this",
                                         unit="deg", low=0.0)
    # camera pose error, drawn per sensor seed
    pose_error_m: float = setting(0.0, "camera translation error magnitude", unit="m", low=0.0)
    pose_error_deg: float = setting(0.0, "camera rotation error magnitude", unit="deg", low=0.0)

    def __post_init__(self) -> None:
        settings.validate(self, "sensor parameter")
        if self.edge_hole_rate + self.flying_pixel_rate > 1.0:
            raise ConfigError("edge_hole_rate + flying_pixel_rate must be <= 1")

    @property
    def active(self) -> bool:
        return any(getattr(self, f.name) not in (0, 0.0, False) for f in dataclasses.fields(self)
                   if f.name in _EFFECT_FIELDS)


_EFFECT_FIELDS = ("depth_sigma_1m", "edge_hole_rate", "flying_pixel_rate", "ir_shadow",
                  "speckle_rate", "colour_sigma", "shot_noise", "exposure_sigma",
                  "white_balance_sigma", "light_intensity_sigma", "light_direction_deg",
                  "pose_error_m", "pose_error_deg")

PROFILES: dict[str, SensorParams] = {
    "none": SensorParams(),
    # A D435 at 848x480 in a lit lab, 0.9-1.4 m away (numbers and sources: docs/CAMERA.md).
    "realistic": SensorParams(
        depth_sigma_1m=0.0025, depth_correlated_share=0.5, depth_correlation_px=12,
        edge_hole_rate=0.3, flying_pixel_rate=0.25, ir_shadow=True, speckle_rate=0.003,
        colour_sigma=2.0, shot_noise=2.5, exposure_sigma=0.08, white_balance_sigma=0.04,
        drift_time_s=20.0, light_intensity_sigma=0.12, light_direction_deg=15.0,
        pose_error_m=0.005, pose_error_deg=0.5),
    # A badly set-up camera: default preset, dim or uneven light, auto white balance wandering.
    "harsh": SensorParams(
        depth_sigma_1m=0.005, depth_correlated_share=0.6, depth_correlation_px=16,
        edge_hole_rate=0.45, flying_pixel_rate=0.4, ir_shadow=True, speckle_rate=0.02,
        colour_sigma=5.0, shot_noise=6.0, exposure_sigma=0.18, white_balance_sigma=0.10,
        drift_time_s=8.0, light_intensity_sigma=0.25, light_direction_deg=30.0,
        pose_error_m=0.010, pose_error_deg=1.0),
}


def sensor_params(profile: str, overrides: Mapping[str, Any] | None = None) -> SensorParams:
    """The named profile with ``overrides`` (setting -> value; text values as YAML scalars, e.g.
    from ``parse_overrides``) applied; ConfigError names a bad key or value."""
    if profile not in PROFILES:
        raise ConfigError(f"unknown sensor_noise {profile!r}; valid: {', '.join(NOISE_PROFILES)}")
    values = {k: yaml.safe_load(v) if isinstance(v, str) else v
              for k, v in (overrides or {}).items()}
    return settings.update(PROFILES[profile], values, where="sensor")


def parse_overrides(text: str) -> dict[str, str]:
    """``"a=1, b=0.2"`` -> {"a": "1", "b": "0.2"} (the sim node's ``sensor_overrides``)."""
    out: dict[str, str] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise ConfigError(f"sensor override {part!r} is not key=value")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


BANK_FACTOR = 3  # noise bank size / the largest request (frame pixels x channels)


def _linear_index(n_in: int, n_out: int, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """ndimage.zoom's order-1 interpolation from n_in to n_out samples (grid_mode False:
    output i sits at input i * (n_in - 1) / (n_out - 1)), first ``keep`` outputs: the lower
    input index and the weight of the next one."""
    x = np.arange(keep) * ((n_in - 1) / (n_out - 1))
    i0 = np.minimum(np.floor(x).astype(np.int64), n_in - 2)
    return i0, (x - i0).astype(np.float32)


def _upsample(coarse: np.ndarray, rows: tuple[np.ndarray, np.ndarray],
              cols: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Separable linear interpolation of ``coarse`` at (_linear_index) rows and cols. Gathers
    and products, no matrix product: a BLAS call here woke its thread pool, whose spinning
    threads then took CPU from everything else on a 2-core machine."""
    (r0, fr), (c0, fc) = rows, cols
    a = coarse[r0] * (1.0 - fr)[:, None]
    a += coarse[r0 + 1] * fr[:, None]
    out = a[:, c0] * (1.0 - fc)
    out += a[:, c0 + 1] * fc
    return out


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    a = axis / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(3)
    return v / np.linalg.norm(v)


@dataclass(frozen=True)
class SensorSpec:
    """A sensor model as a render process rebuilds it: parameters, sensor seed, and the episode
    (``episode`` counts the world's reset_episode calls; ``episode_seed`` is the scene seed)."""

    episode: int
    params: SensorParams
    sensor_seed: int
    episode_seed: int
    fx: float  # focal length, pixels

    def to_json(self) -> str:
        import json

        return json.dumps({"episode": self.episode, "params": dataclasses.asdict(self.params),
                           "sensor_seed": self.sensor_seed, "episode_seed": self.episode_seed,
                           "fx": self.fx})

    @staticmethod
    def from_json(text: str) -> "SensorSpec":
        import json

        d = json.loads(text)
        return SensorSpec(int(d["episode"]), SensorParams(**d["params"]), int(d["sensor_seed"]),
                          int(d["episode_seed"]), float(d["fx"]))

    def model(self) -> "SensorModel":
        """A model in the state the world's is in right after this episode's reset."""
        m = SensorModel(self.params, self.sensor_seed)
        m.reset_episode(self.episode_seed)
        return m


class SensorModel:
    """Turns clean renders into D435-like frames; see the module docstring.

    Not thread-safe by itself (drift state); ``SimWorld.sense`` serialises calls.
    """

    def __init__(self, params: SensorParams | None = None, sensor_seed: int = 0) -> None:
        self.params = params or SensorParams()
        self.sensor_seed = int(sensor_seed)
        rng = np.random.default_rng([self.sensor_seed, 0x5E45])
        p = self.params
        # true camera = nominal camera composed with this (in the optical frame)
        self.pose_error = np.eye(4)
        if p.pose_error_m > 0 or p.pose_error_deg > 0:
            self.pose_error[:3, :3] = _rotation(_unit(rng), math.radians(p.pose_error_deg))
            self.pose_error[:3, 3] = _unit(rng) * p.pose_error_m
        self._field_norm: dict[tuple[int, int], float] = {}
        # per image shape: the smooth field's bilinear upsampling (row and column indices)
        self._field_weights: dict[tuple[int, int], tuple[Any, Any]] = {}
        self._bank = np.zeros(0, np.float32)  # unit normal draws, grown on first use
        self.reset_episode(0)

    @property
    def active(self) -> bool:
        return self.params.active

    def reset_episode(self, episode_seed: int) -> None:
        """New noise streams, drift start and lights for an episode (same seed, same frames)."""
        p = self.params
        self._rng = np.random.default_rng([self.sensor_seed, int(episode_seed) & 0xFFFFFFFF, 7])
        rng = self._rng
        self._exposure = float(rng.normal(0.0, p.exposure_sigma)) if p.exposure_sigma else 0.0
        self._wb = (rng.normal(0.0, p.white_balance_sigma, 2) if p.white_balance_sigma
                    else np.zeros(2))
        self._last_stamp: float | None = None
        intensity = math.exp(rng.normal(0.0, p.light_intensity_sigma)) if (
            p.light_intensity_sigma) else 1.0
        self.light_intensity = float(np.clip(intensity, 0.5, 1.6))
        tilt = math.radians(p.light_direction_deg) * float(rng.uniform(0.0, 1.0))
        axis = np.array([*rng.standard_normal(2), 0.0])
        self.key_light_rotation = (_rotation(axis, tilt) if tilt > 0 and np.linalg.norm(axis)
                                   else np.eye(3))

    def true_camera_pose(self, nominal: np.ndarray) -> np.ndarray:
        """T_base_optical of the camera that really renders, given the nominal one."""
        return np.asarray(nominal, dtype=float) @ self.pose_error

    # ------------------------------------------------------------------ frames
    def apply(self, rgb: np.ndarray, depth_mm: np.ndarray, stamp: float,
              fx: float) -> tuple[np.ndarray, np.ndarray]:
        """(rgb uint8, depth uint16 mm) of the clean render -> what the sensor delivers.

        ``fx``: focal length in pixels (disparity for the IR shadow and the noise formula).
        Returns new arrays; the inputs are not changed.
        """
        p = self.params
        if not p.active:
            return rgb, depth_mm
        self._drift(stamp)
        return self._colour(rgb), self._depth(depth_mm, fx)

    def _drift(self, stamp: float) -> None:
        p = self.params
        if self._last_stamp is not None and stamp > self._last_stamp:
            dt = stamp - self._last_stamp
            a = math.exp(-dt / p.drift_time_s)
            b = math.sqrt(max(0.0, 1.0 - a * a))
            self._exposure = a * self._exposure + b * p.exposure_sigma * float(
                self._rng.standard_normal())
            self._wb = a * self._wb + b * p.white_balance_sigma * self._rng.standard_normal(2)
        self._last_stamp = stamp

    @property
    def colour_gains(self) -> np.ndarray:
        """Current (r, g, b) gains: exposure times white balance (green is the reference)."""
        e = math.exp(self._exposure)
        if self.params.auto_exposure:
            e /= self.light_intensity  # auto exposure undoes the light level, not the drift
        return np.array([e * math.exp(self._wb[0]), e, e * math.exp(self._wb[1])], np.float32)

    def _normal(self, shape: tuple[int, ...]) -> np.ndarray:
        """Unit normal noise of ``shape`` (float32, a fresh array): a window at a random offset
        of a bank of draws made once per installation (``BANK_FACTOR`` times the largest
        request), so a frame's noise costs a copy instead of ~5 ms of generator time per
        colour frame; pixels stay independent within a frame and frames differ."""
        n = int(np.prod(shape))
        if self._bank.size < n * BANK_FACTOR:
            bank_rng = np.random.default_rng([self.sensor_seed, 0xBA4C])
            self._bank = bank_rng.standard_normal(n * BANK_FACTOR, dtype=np.float32)
        start = int(self._rng.integers(0, self._bank.size - n + 1))
        out = self._bank[start:start + n].reshape(shape).copy()
        if self._rng.random() < 0.5:  # and a sign flip: twice the windows
            np.negative(out, out=out)
        return out

    def _colour(self, rgb: np.ndarray) -> np.ndarray:
        p = self.params
        img = rgb.astype(np.float32)
        img *= self.colour_gains
        if p.colour_sigma > 0 or p.shot_noise > 0:
            noise = self._normal(img.shape)
            if p.shot_noise > 0:  # sigma = sqrt(read² + shot² * intensity / 255), in place
                sigma = img * np.float32(p.shot_noise ** 2 / 255.0)
                sigma += np.float32(p.colour_sigma ** 2)
                np.sqrt(sigma, out=sigma)
                noise *= sigma
            else:
                noise *= p.colour_sigma
            img += noise
        np.clip(img, 0.0, 255.0, out=img)
        img += 0.5
        return img.astype(np.uint8)

    def _smooth_field(self, shape: tuple[int, int]) -> np.ndarray:
        """Unit-variance, spatially smooth noise (bilinear upsampling of a coarse grid)."""
        from scipy import ndimage

        cell = self.params.depth_correlation_px
        gh, gw = shape[0] // cell + 2, shape[1] // cell + 2
        coarse = self._rng.standard_normal((gh, gw), dtype=np.float32)
        key = shape
        if key not in self._field_weights:
            self._field_weights[key] = (_linear_index(gh, gh * cell, shape[0]),
                                        _linear_index(gw, gw * cell, shape[1]))
        rows, cols = self._field_weights[key]
        # = ndimage.zoom(coarse, cell, order=1, prefilter=False)[:h, :w] (to float rounding):
        # ~1.5 ms instead of ~5 at 640x480
        fine = _upsample(coarse, rows, cols)
        if key not in self._field_norm:  # bilinear interpolation shrinks the variance
            probe = np.random.default_rng(1).standard_normal((gh, gw)).astype(np.float32)
            z = ndimage.zoom(probe, cell, order=1, prefilter=False)[:shape[0], :shape[1]]
            self._field_norm[key] = float(1.0 / max(np.std(z), 1e-6))
        fine *= self._field_norm[key]
        return fine

    def _depth(self, depth_mm: np.ndarray, fx: float) -> np.ndarray:
        p = self.params
        rng = self._rng
        z = depth_mm.astype(np.float32) * 0.001
        valid = z > 0
        holes = ~valid
        if p.ir_shadow:
            holes |= self._ir_shadow(z, valid, fx)
        if p.edge_hole_rate > 0 or p.flying_pixel_rate > 0:
            z, edge_holes = self._edges(z, valid)
            holes |= edge_holes
        if p.depth_sigma_1m > 0:
            c = p.depth_correlated_share
            n = self._normal(z.shape)
            n *= math.sqrt(1.0 - c)
            if c > 0:
                n += math.sqrt(c) * self._smooth_field(z.shape)
            z += (p.depth_sigma_1m * z * z) * n
        if p.speckle_rate > 0:
            # the dropouts' count, then their places (a draw per pixel cost ~2 ms)
            flat = holes.reshape(-1)
            flat[rng.integers(0, flat.size, rng.binomial(flat.size, p.speckle_rate))] = True
        holes |= z < p.min_range_m
        unit = p.depth_unit_m
        out = np.clip(np.round(z / unit) * (unit * 1000.0), 0, 65535).astype(np.uint16)
        out[holes] = 0
        return out

    def _ir_shadow(self, z: np.ndarray, valid: np.ndarray, fx: float) -> np.ndarray:
        """Pixels the right imager cannot see: a nearer surface within the disparity step to
        their right hides them from it (the D435's invalid band left of near objects)."""
        from scipy import ndimage

        disp = np.zeros_like(z)
        np.divide(fx * self.params.baseline_m, z, out=disp, where=valid)
        span = int(min(32, math.ceil(float(disp.max()) - float(disp[valid].min())))) if (
            valid.any()) else 0
        if span < 1:
            return np.zeros(z.shape, dtype=bool)
        # shadowed: disp[c + k] - disp[c] >= k for some k in 1..span, i.e.
        # max over j in c+1..c+span of (disp[j] - j) >= disp[c] - c: one running maximum
        # along each row instead of span shifted comparisons of the whole image
        cols = np.arange(z.shape[1], dtype=np.float64)
        e = disp.astype(np.float64) - cols
        ahead = np.full_like(e, -np.inf)
        ahead[:, :-1] = e[:, 1:]  # ahead[c] = e[c + 1]
        reach = ndimage.maximum_filter1d(ahead, span, axis=1, mode="constant", cval=-np.inf,
                                         origin=-(span // 2))  # max of ahead[c .. c+span-1]
        return (reach >= disp - cols) & valid

    def _edges(self, z: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Holes and flying pixels along depth discontinuities (both sides of the step)."""
        p = self.params
        other = z.copy()
        best = np.zeros_like(z)
        # interior pixels only (the image border is never an edge): each neighbour is a
        # slice, where np.roll would copy the image four times
        inner = (slice(1, -1), slice(1, -1))
        zc, vc = z[inner], valid[inner]
        bc, oc = best[inner], other[inner]
        for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            nb = z[1 - dr:z.shape[0] - 1 - dr, 1 - dc:z.shape[1] - 1 - dc]
            diff = np.abs(nb - zc)
            diff[~vc | (nb <= 0)] = 0.0
            take = diff > bc
            bc[take] = diff[take]
            oc[take] = nb[take]
        edge = best > p.discontinuity_m
        idx = np.flatnonzero(edge)
        u = self._rng.random(idx.size)
        hole_idx = idx[u < p.edge_hole_rate]
        fly = idx[(u >= p.edge_hole_rate) & (u < p.edge_hole_rate + p.flying_pixel_rate)]
        zf = z.reshape(-1).copy()
        t = self._rng.uniform(0.15, 0.85, fly.size).astype(np.float32)
        zf[fly] = zf[fly] + t * (other.reshape(-1)[fly] - zf[fly])
        holes = np.zeros(z.size, dtype=bool)
        holes[hole_idx] = True
        return zf.reshape(z.shape), holes.reshape(z.shape)

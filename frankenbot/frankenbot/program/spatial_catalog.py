"""Catalog entries for pixel targets and spatial relations (see frankenbot/spatial.py).

Pixel primitives take (u, v) in the set-of-mark image's pixels, so their range is the camera
image's size; it comes from ``config/camera.yaml`` (the calibrated intrinsics the image was
rendered or captured with) unless the caller passes one.
"""

from __future__ import annotations

from functools import lru_cache

import yaml

from frankenbot import resources
from frankenbot.errors import ConfigError
from frankenbot.program.catalog import Param, ParamType, Signature, SignatureKind

DEFAULT_IMAGE_SIZE = (640, 480)  # a RealSense D435's colour stream; used when no camera.yaml


@lru_cache(maxsize=4)
def shipped_image_size() -> tuple[int, int]:
    """(width, height) of the configured camera (``config/camera.yaml``)."""
    path = resources.config_dir() / "camera.yaml"
    if not path.is_file():
        return DEFAULT_IMAGE_SIZE
    data = yaml.safe_load(path.read_text()) or {}
    cam = data.get("camera", data) if isinstance(data, dict) else {}
    intr = cam.get("intrinsics", cam) if isinstance(cam, dict) else {}
    try:
        w, h = int(intr["width"]), int(intr["height"])
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{path}: camera width/height missing or not integers ({e})") from e
    if w <= 0 or h <= 0:
        raise ConfigError(f"{path}: camera image size {w}x{h} must be positive")
    return w, h


def _pixel(name: str, limit: int, width: int, height: int) -> Param:
    return Param(name, ParamType.NUMBER, f"pixel {'column' if name == 'u' else 'row'} in the "
                 f"set-of-mark image ({width}x{height})", minimum=0.0, maximum=float(limit - 1),
                 hint=f"(u, v) are pixels of the {width}x{height} set-of-mark image: u in "
                      f"[0, {width - 1}] (left to right), v in [0, {height - 1}] (top to "
                      f"bottom); read them off the ruler on the image's edges")


def _obj(name: str, doc: str = "", shapes: tuple[str, ...] = ()) -> Param:
    return Param(name, ParamType.OBJECT, doc, shapes=shapes)


_P = SignatureKind.PRIMITIVE
_Q = SignatureKind.PREDICATE
_GAP = Param("gap", ParamType.NUMBER, "metres between the two footprints", default=0.03,
             minimum=0.01, maximum=0.15)
_SIDES = {"left_of": "left of (+y)", "right_of": "right of (-y)", "behind": "behind (+x)",
          "in_front_of": "in front of (-x)"}


def spatial_signatures(image_size: tuple[int, int] | None = None) -> tuple[Signature, ...]:
    """Pixel primitives, relative placement primitives and spatial predicates."""
    w, h = image_size or shipped_image_size()
    if w <= 0 or h <= 0:
        raise ConfigError(f"image size {w}x{h} must be positive")
    u, v = _pixel("u", w, w, h), _pixel("v", h, w, h)
    sigs: list[Signature] = [
        Signature("place_at_pixel", _P, (
            _obj("obj"), u, v,
            Param("stack", ParamType.NUMBER, "1: the pixel may be on top of an object to stack "
                  "on; 0: free table only", default=0.0, minimum=0.0, maximum=1.0)),
            "put it on the table where image pixel (u, v) points"),
        Signature("move_above_pixel", _P, (
            u, v, Param("height", ParamType.NUMBER, "metres above the surface at the pixel",
                        default=0.10, minimum=0.02, maximum=0.40)),
            "move the gripper above what pixel (u, v) shows"),
        Signature("push_to_pixel", _P, (_obj("obj", shapes=("block", "unknown")), u, v),
                  "push an object to where pixel (u, v) points"),
    ]
    sigs.append(Signature("lift", _P, (Param(
        "height", ParamType.NUMBER, "metres of the gripper (TCP) above the table", default=0.25,
        minimum=0.05, maximum=0.45),), "raise the gripper straight up, e.g. to carry high"))
    for rel, text in _SIDES.items():
        sigs.append(Signature(f"place_{rel}", _P, (_obj("obj"), _obj("ref"), _GAP),
                              f"put it on free table {text} ref"))
    for rel, text in _SIDES.items():
        sigs.append(Signature(f"push_{rel}", _P, (_obj("obj"), _obj("ref")),
                              f"push an object along the table to free table {text} ref"))
    sigs += [
        Signature("place_between", _P, (_obj("obj"), _obj("a"), _obj("b")),
                  "put it on free table between a and b"),
        Signature("place_near", _P, (_obj("obj"), _obj("ref")),
                  "put it on free table next to ref"),
    ]
    for rel, text in _SIDES.items():
        sigs.append(Signature(rel, _Q, (_obj("a"), _obj("b")), f"a is {text} b"))
    sigs += [
        Signature("between", _Q, (_obj("a"), _obj("b"), _obj("c")),
                  "a lies between b and c"),
        Signature("free_spot_near", _Q, (_obj("ref"),),
                  "a block fits on free table next to ref"),
    ]
    return tuple(sigs)

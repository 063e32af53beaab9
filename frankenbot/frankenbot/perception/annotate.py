"""Set-of-mark annotation: numbered marks on the camera image plus a compact object table.

A VLM grounds references far better when each object carries a visible number that also appears in
a text table with its id, position and size; the planner puts both into its one prompt.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from frankenbot.perception.camera import CameraModel
from frankenbot.state import Scene, SceneObject

_MARK_RADIUS = 9


def object_table(scene: Scene) -> str:
    """One line per object: mark number, id, label, centre position and size in centimetres in
    the robot's base frame, the object's kind (its category: block, mug, drawer, ...), which
    decides what primitives accept it, and a fixture part's measured state."""
    lines = ["#  id                 label            x_cm   y_cm   z_cm   size_cm (x*y*z)  kind"
             "  state"]
    for n, obj in enumerate(scene.objects, start=1):
        x, y, z = (round(v * 100.0, 1) for v in obj.position)
        sx, sy, sz = (round(v * 100.0, 1) for v in obj.size)
        label = obj.label + (" (fixture)" if obj.is_fixture else "")
        lines.append((f"{n:<2} {obj.object_id:<18} {label:<16} {x:6.1f} {y:6.1f} {z:6.1f}   "
                      f"{f'{sx:g}*{sy:g}*{sz:g}':<16} {obj.shape}  {state_text(obj)}").rstrip())
    if scene.stale:
        lines.append("(scene is stale: camera frames stopped)")
    return "\n".join(lines)


def state_text(obj: SceneObject) -> str:
    """A fixture part's measured state: "on", "off", "closed", "opening 0.12" (metres for a
    drawer or sliding door, radians for a hinged door), or "" (none measured)."""
    if obj.on is not None:
        return "on" if obj.on else "off"
    if obj.opening is None:
        return ""
    return "closed" if obj.opening < CLOSED_BELOW else f"opening {obj.opening:.2f}"


CLOSED_BELOW = 0.01  # m or rad: a part this little open reads "closed"


RULER_STEP = 80  # px between the pixel ruler's labelled grid lines


def draw_pixel_ruler(img: Image.Image, step: int = RULER_STEP) -> None:
    """Faint grid lines every ``step`` pixels with their pixel numbers along the top and left
    edges, so a model can read off the (u, v) it wants for a pixel target."""
    if step <= 0:
        return
    draw = ImageDraw.Draw(img, "RGBA")
    font = ImageFont.load_default()
    for u in range(step, img.width, step):
        draw.line((u, 0, u, img.height - 1), fill=(255, 255, 255, 60))
        text = str(u)
        tw = draw.textlength(text, font=font)
        draw.rectangle((u - tw / 2 - 1, 0, u + tw / 2 + 1, 11), fill=(0, 0, 0, 160))
        draw.text((u - tw / 2, 0), text, fill=(255, 255, 0), font=font)
    for v in range(step, img.height, step):
        draw.line((0, v, img.width - 1, v), fill=(255, 255, 255, 60))
        text = str(v)
        tw = draw.textlength(text, font=font)
        draw.rectangle((0, v - 6, tw + 2, v + 6), fill=(0, 0, 0, 160))
        draw.text((1, v - 6), text, fill=(255, 255, 0), font=font)


def annotate(rgb: np.ndarray, scene: Scene, camera: CameraModel,
             ruler: int = RULER_STEP) -> tuple[np.ndarray, str]:
    """Return (a copy of ``rgb`` with a pixel ruler, numbered marks and labels, the object
    table text). ``ruler`` = 0 leaves the ruler out."""
    img = Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8))
    draw_pixel_ruler(img, ruler)
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    if scene.objects:
        pix = camera.project(np.array([o.position for o in scene.objects]))
        for n, (obj, (u, v)) in enumerate(zip(scene.objects, pix, strict=True), start=1):
            if not (np.isfinite(u) and np.isfinite(v)):
                continue
            if not (0 <= u < img.width and 0 <= v < img.height):
                continue
            r = _MARK_RADIUS
            draw.ellipse((u - r, v - r, u + r, v + r), fill=(255, 255, 255), outline=(0, 0, 0))
            text = str(n)
            tw = draw.textlength(text, font=font)
            draw.text((u - tw / 2, v - 6), text, fill=(0, 0, 0), font=font)
            label = obj.object_id
            lw = draw.textlength(label, font=font)
            x0 = min(max(u - lw / 2, 0), img.width - lw - 2)
            y0 = min(v + r + 2, img.height - 12)
            draw.rectangle((x0 - 1, y0 - 1, x0 + lw + 1, y0 + 11), fill=(0, 0, 0))
            draw.text((x0, y0), label, fill=(255, 255, 255), font=font)
    return np.asarray(img), object_table(scene)

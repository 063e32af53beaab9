"""Small hand-made scenes for the understanding pipeline's tests (one per situation)."""

from __future__ import annotations

from frankenbot.eval.taskset import standard_scene
from frankenbot.state import Scene, SceneObject


def block(oid: str, x: float, y: float, z: float = 0.02) -> SceneObject:
    return SceneObject(oid, oid.replace("_", " "), "block", oid.split("_")[0], (x, y, z),
                       (0.04, 0.04, 0.04))


def with_objects(*objs: SceneObject, base: Scene | None = None) -> Scene:
    """``base`` (the standard scene) with ``objs`` replacing the objects of the same id."""
    base = base if base is not None else standard_scene()
    ids = {o.object_id for o in objs}
    return Scene.of([*(o for o in base.objects if o.object_id not in ids), *objs])


def red_in_green_bowl() -> Scene:
    """The standard scene with the red block resting in the green bowl (0.40, -0.20)."""
    return with_objects(block("red_block", 0.40, -0.20, 0.03))


def blue_on_plate() -> Scene:
    """The standard scene with the blue block lying on the white plate (0.30, 0.00)."""
    return with_objects(block("blue_block", 0.30, 0.00, 0.032))

"""Pixel and relative placements in the sim: they land where meant (ground truth within 2 cm),
and refused targets (off the table, on another object) move nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot import spatial
from frankenbot.ports import CancelToken

pytest.importorskip("mujoco")

pytestmark = [pytest.mark.slow, pytest.mark.wall_clock]


def _run(stack, name: str, **args):  # type: ignore[no-untyped-def]
    return stack.primitives.execute(name, args, CancelToken())


def _truth(stack, name: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.array(stack.world.object_states()[name].position)


def _free_point(stack, obj: str, near: tuple[float, float]) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """A table point near ``near`` clear of every object (from ground truth: the test's aim)."""
    states = stack.world.object_states()
    for r in np.arange(0.0, 0.2, 0.02):
        for a in np.linspace(0, 2 * math.pi, 12, endpoint=False):
            x, y = near[0] + r * math.cos(a), near[1] + r * math.sin(a)
            if all(math.hypot(x - s.position[0], y - s.position[1]) > 0.09
                   for n, s in states.items() if n != obj and s.position[2] > -1):
                return float(x), float(y)
    raise AssertionError("no free point")


def test_pixel_and_relative_placements_land_where_meant_and_bad_pixels_move_nothing() -> None:
    from frankenbot.eval.stack import SimStack

    with SimStack(scene="perceived", realtime_factor=3.0) as stack:
        inst = stack.reset("stack", 3)
        obj, other = str(inst.params["object"]), str(inst.params["target"])
        with stack.running():
            assert _run(stack, "pick", obj=obj).ok
            # 1) a pixel on free table: lands within 2 cm of the point the pixel shows
            x, y = _free_point(stack, obj, (0.45, -0.05))
            u, v = stack.pixels.pixel_of((x, y, 0.0))
            res = _run(stack, "place_at_pixel", obj=obj, u=round(u), v=round(v))
            assert res.ok, res.detail
            tx, ty, _ = res.data["target"]
            assert math.hypot(tx - x, ty - y) < 0.01  # back-projection of the rounded pixel
            stack.robot.sleep(1.0)
            final = _truth(stack, obj)
            assert math.hypot(final[0] - x, final[1] - y) < 0.02, (final, x, y)
            # 2) off the table (the floor past its far edge) and 3) on another object: refused,
            # nothing moves
            assert _run(stack, "pick", obj=obj).ok
            q0 = np.array(stack.world.joint_positions())
            before = {n: s.position for n, s in stack.world.object_states().items()}
            k = stack.pixels.camera.intrinsics
            off_u, off_v = stack.pixels.pixel_of((1.20, 0.60, -0.75))
            assert 0 <= off_u < k.width and 0 <= off_v < k.height
            off = _run(stack, "place_at_pixel", obj=obj, u=round(off_u), v=round(off_v))
            assert not off.ok and "off the table" in off.detail, off.detail
            top = _truth(stack, other)
            ou, ov = stack.pixels.pixel_of((top[0], top[1], top[2] + 0.02))
            on = _run(stack, "place_at_pixel", obj=obj, u=round(ou), v=round(ov))
            assert not on.ok and other in on.detail, on.detail
            assert np.allclose(stack.world.joint_positions(), q0, atol=1e-3)
            for n, s in stack.world.object_states().items():
                assert np.allclose(s.position, before[n], atol=0.005), n
            # 4) a relative placement: lands on the spot meant and the relation holds
            res = _run(stack, "place_left_of", obj=obj, ref=other)
            assert res.ok, res.detail
            sx, sy, _ = res.data["target"]
            stack.robot.sleep(1.0)
            final, ref = _truth(stack, obj), _truth(stack, other)
            assert math.hypot(final[0] - sx, final[1] - sy) < 0.02
            assert spatial.relation_holds("left_of", tuple(final[:2]), tuple(ref[:2]))

"""TEST-ONLY helpers for the motion and primitives tests: a scene built from simulator ground truth.

The brain never reads simulator ground truth; in production the scene comes from perception.
These tests isolate the motion stack from perception errors by feeding it the true object poses
(plus the fixtures, as perception would add them from config) and judge outcomes by the oracle.
"""

from __future__ import annotations

import math
from typing import Callable

from frankenbot.motion.sim_adapter import SimRobot
from frankenbot.primitives.factory import build_primitives
from frankenbot.state import Scene, SceneObject


def _yaw(quat: tuple[float, float, float, float]) -> float:
    w, x, y, z = quat
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def ground_truth_scene(world) -> Callable[[], Scene]:  # type: ignore[no-untyped-def]
    """A scene source reading the sim's true object states (TEST ONLY)."""
    from frankenbot.sim import layout

    d, zone = layout.DRAWER, layout.ZONE

    def source() -> Scene:
        objs = [SceneObject(st.name, st.name.replace("_", " "), st.shape, st.colour,
                            st.position, st.size, _yaw(st.quaternion), last_seen=world.time)
                for st in world.object_states().values()]
        objs.append(SceneObject("drawer", "drawer", "drawer", "", d.body_centre, d.body_size,
                                is_fixture=True))
        objs.append(SceneObject("zone", "cyan zone", "zone", "cyan",
                                (zone.centre[0], zone.centre[1], 0.0005),
                                (zone.size[0], zone.size[1], 0.001), is_fixture=True))
        return Scene.of(objs, stamp=world.time)

    return source


def make_primitives(world, scene_source=None, physics_thread: bool = False):  # type: ignore[no-untyped-def]
    """SimRobot + JtcBackend + Primitives from the shipped config, over ``world``."""
    robot = SimRobot(world, scene_source=scene_source or ground_truth_scene(world),
                     physics_thread=physics_thread)
    prims = build_primitives(robot)
    return robot, prims.backend, prims

"""TEST-ONLY helpers for the motion and primitives tests: a scene built from simulator ground truth.

The brain never reads simulator ground truth; in production the scene comes from perception.
These tests isolate the motion stack from perception errors by feeding it the true object poses
(plus the fixtures, as perception would add them from config) and judge outcomes by the oracle.
"""

from __future__ import annotations

from typing import Callable

from frankenbot.eval.ground_truth import world_fixture_map
from frankenbot.eval.stack import pose_feed_scene
from frankenbot.fixture_map import FixtureMap
from frankenbot.primitives.factory import build_primitives
from frankenbot.sim.robot_adapter import SimRobot
from frankenbot.state import Scene


def ground_truth_scene(world) -> Callable[[], Scene]:  # type: ignore[no-untyped-def]
    """A scene source reading the sim's true object states (TEST ONLY): the sim stack's
    ground-truth mode, which the executor's harness uses too."""
    return pose_feed_scene(world)


def fixture_map_of(world):  # type: ignore[no-untyped-def]
    """A provider of the world's current fixture map (renewed when a reset changes it)."""
    cache: dict = {}

    def provider() -> FixtureMap:
        key = world.fixture_placements()
        if key not in cache:
            cache.clear()
            cache[key] = world_fixture_map(world)
        return cache[key]

    return provider


def make_primitives(world, scene_source=None, physics_thread: bool = False):  # type: ignore[no-untyped-def]
    """SimRobot + JtcBackend + Primitives from the shipped config, over ``world`` and its
    fixture map."""
    robot = SimRobot(world, scene_source=scene_source or ground_truth_scene(world),
                     physics_thread=physics_thread)
    prims = build_primitives(robot, fixture_map=fixture_map_of(world))
    return robot, prims.backend, prims

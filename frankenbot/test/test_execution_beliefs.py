"""The executor's snapshot carries the primitives' beliefs as facts, before scene geometry."""

from __future__ import annotations

from frankenbot.execution.snapshot_source import SnapshotSource
from frankenbot.program.predicates import drawer_open
from frankenbot.state import RobotSnapshot, Scene, SceneObject


def _scene_with_a_drawer_that_looks_open() -> Scene:
    drawer = SceneObject("drawer", "drawer", "drawer", "gray", (0.5, 0.3, 0.1), (0.2, 0.3, 0.2))
    # the handle perceived 10 cm in front of the drawer's front face: geometry says "open"
    handle = SceneObject("drawer_handle", "handle", "handle", "gray", (0.30, 0.3, 0.1),
                         (0.02, 0.08, 0.02))
    return Scene.of([drawer, handle], stamp=1.0)


def test_a_primitive_belief_overrides_the_perceived_geometry() -> None:
    scene = _scene_with_a_drawer_that_looks_open()
    plain = SnapshotSource(RobotSnapshot, lambda: scene)()
    assert drawer_open(plain, {o.object_id: o for o in scene.objects}, "drawer")
    believed = SnapshotSource(RobotSnapshot, lambda: scene,
                              beliefs=lambda: {"drawer_open:drawer": False})()
    assert not drawer_open(believed, {o.object_id: o for o in scene.objects}, "drawer")


def test_an_executor_fact_wins_over_a_belief() -> None:
    src = SnapshotSource(RobotSnapshot, Scene, beliefs=lambda: {"drawer_open:drawer": False})
    src.set_fact("drawer_open:drawer", True)
    assert src().facts["drawer_open:drawer"] is True

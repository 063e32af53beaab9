"""Scenes built from simulator ground truth: measurement scaffolding, never the brain's input in
a measured run with perception.

Two users: the sim stack's ``ground_truth`` scene mode (``pose_feed_scene``: the executor's
harness and the primitive tests isolate manipulation from perception) and the planner's task set
(``scene_of_sample``: what perception would report for a sampled task, without running the sim).
Both name things as perception does: movable objects by their sim name with their category,
colour, pose, size and yaw; fixtures and their parts from the scene's fixture map, each part
with its state (a drawer's or a door's opening, a knob's or a switch's angle, a lamp or a burner
lit) as perception measures it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from frankenbot.fixture_map import LIT_KINDS, FixtureMap, with_state
from frankenbot.state import Scene, SceneObject
from frankenbot.transforms import QuatWXYZ


def _label(name: str) -> str:
    return name.replace("_", " ")


def object_scene_objects(states: Iterable[Any], stamp: float = 0.0) -> list[SceneObject]:
    """Movable objects (``sim.tasks.ObjectState``) as perceived scene objects."""
    return [SceneObject(st.name, _label(st.name), st.shape, st.colour, st.position, st.size,
                        QuatWXYZ(*st.quaternion).yaw(), last_seen=stamp) for st in states]


def fixture_scene_objects(fmap: FixtureMap, part_states: Mapping[str, float]
                          ) -> list[SceneObject]:
    """The fixtures and their parts of ``fmap`` with the parts' states (sim joint values)."""
    out = []
    for o in fmap.scene_objects():
        part = fmap.part(o.object_id)
        value = part_states.get(o.object_id)
        if part is None or value is None:
            out.append(o)
        elif part.kind in LIT_KINDS:
            out.append(with_state(o, on=value >= 0.5))
        else:
            out.append(with_state(o, opening=float(value)))
    return out


def world_fixture_map(world: Any) -> FixtureMap:
    """The scene's fixture map as the brain is told it (``SimWorld.fixture_map_data``)."""
    return FixtureMap.from_data(world.fixture_map_data())


def pose_feed_scene(world: Any) -> Callable[[], Scene]:
    """Scene from simulator poses and fixture states, frozen while the camera is."""
    last: list[Scene] = [Scene(stale=True)]
    maps: dict[Any, FixtureMap] = {}

    def source() -> Scene:
        if world.camera_frozen():
            return last[0]
        key = world.fixture_placements()
        fmap = maps.get(key)
        if fmap is None:
            maps.clear()
            fmap = maps[key] = world_fixture_map(world)
        objs = object_scene_objects(world.object_states().values(), world.time)
        objs += fixture_scene_objects(fmap, world.fixture_states())
        last[0] = Scene.of(objs, stamp=world.time)
        return last[0]

    return source


def scene_of_sample(sampled: Any) -> Scene:
    """What perception would report at the start of a sampled task (``sim.tasks.SampledScene``):
    every object at rest where it was placed, fixtures at their initial states."""
    from frankenbot.sim import layout
    from frankenbot.sim.config_files import fixtures_config
    from frankenbot.sim.fixtures import KNOB_ON

    objs = []
    for p in sampled.placements:
        spec = layout.OBJECT_BY_NAME[p.name]
        z = p.z if p.z is not None else layout.TABLE_TOP_Z + spec.size[2] / 2
        objs.append(SceneObject(p.name, _label(p.name), spec.shape, spec.colour, (p.x, p.y, z),
                                spec.size, yaw=p.yaw))
    fmap = FixtureMap.from_data(fixtures_config(sampled.fixtures))
    states = {"drawer": sampled.drawer_opening, **sampled.fixture_states}
    parts = {pid: 0.0 for pid in fmap.parts}
    for pid, part in fmap.parts.items():
        if part.kind == "switch":
            parts[pid] = -part.travel  # the rocker rests at its off end
    parts.update({k: float(v) for k, v in states.items() if k in parts})
    for pid, part in fmap.parts.items():  # a lamp or burner is lit by its switch or knob
        if part.kind in LIT_KINDS and pid not in states:
            parts[pid] = float(any(
                parts[c.part_id] > 0.0 if c.kind == "switch" else parts[c.part_id] >= KNOB_ON
                for c in fmap.controller_of(pid) if c.kind in ("switch", "knob")))
    return Scene.of([*objs, *fixture_scene_objects(fmap, parts)])

"""Perception forgets a vanished scene: the sim node announces each new scene on
~/scene_reset and the perception node (separate processes, real DDS) drops its tracks, so no id
of the old scene is handed to a new object; ~/reset (std_srvs/Trigger) does the same by hand."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

pytest.importorskip("rclpy")

# Scenes in the order the end-to-end test met them: a blue bowl of the first scene stood where
# the blue block of the second appears, and the block inherited the bowl's id.
FIRST, SECOND = ("put_in_bowl", 15), ("stack", 59)


def _objects(client, after: float, required: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """Ids of the objects and of the fixtures in a fresh scene with ``required`` after
    ``after`` (the drawer's handle, a part of the drawer, is left out)."""
    from frankenbot_interfaces.msg import SceneObjects

    client.wait_for_scene(after=after, required=required, timeout=90.0)
    got: list[SceneObjects] = []
    sub = client.node.create_subscription(SceneObjects, "/frankenbot/scene", got.append, 10)
    try:
        import time

        deadline = time.monotonic() + 30.0
        while not [m for m in got if not m.stale] and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        client.node.destroy_subscription(sub)
    fresh = [m for m in got if not m.stale]
    assert fresh, "perception stopped publishing"
    objs = [o for o in fresh[-1].objects if o.id != "drawer_handle"]
    return {o.id for o in objs if not o.is_fixture}, {o.id for o in objs if o.is_fixture}


def test_a_new_sim_scene_is_perceived_under_its_own_names(spawn_process, python_exe,
                                                          package_root):
    from std_srvs.srv import Trigger

    from frankenbot.bringup.ros_client import BrainClient

    task, seed = FIRST
    spawn_process([python_exe, "-m", "frankenbot.nodes.sim_node", "--ros-args",
                   "-p", f"task:={task}", "-p", f"seed:={seed}", "-p", "camera_rate:=5.0"])
    spawn_process([python_exe, "-m", "frankenbot.nodes.perception_node", "--ros-args",
                   "--params-file", str(package_root / "config" / "sim.yaml"),
                   "-p", "rate:=5.0"])
    with BrainClient("perception_reset_test") as client:
        missing = client.wait_for_services(["/frankenbot_sim/reset",
                                            "/frankenbot_perception/reset"], 90.0)
        assert not missing, missing
        first = client.sim_reset(*FIRST)
        names = tuple(first.object_names)
        objects, fixtures = _objects(client, client.sim_time(), names)
        assert objects | fixtures == set(names)

        second = client.sim_reset(*SECOND)
        names = tuple(second.object_names)
        objects, fixtures = _objects(client, client.sim_time(), names)
        assert objects | fixtures == set(names), f"sim has {sorted(names)}, perceived " \
                                                f"{sorted(objects)} + fixtures {sorted(fixtures)}"

        answer = client._call(Trigger, "/frankenbot_perception/reset", Trigger.Request(), 30.0)
        assert answer.success and answer.message.startswith("forgot ")
        assert int(answer.message.split()[1]) == len(objects)
        # after the manual reset the same objects come back under the same names
        again, _ = _objects(client, client.sim_time(), names)
        assert again == objects

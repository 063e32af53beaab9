"""Anomaly injection: validation, phase detection from sim state, effects, log; instability."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.common import AnomalyClass
from frankenbot.errors import SimError
from frankenbot.sim import layout, tasks
from frankenbot.sim.anomalies import KINDS
from frankenbot.sim.controller import TrajectoryState
from frankenbot.sim.scripted import ScriptedArm
from frankenbot.sim.world import SimWorld


@pytest.fixture(scope="module")
def world():
    w = SimWorld(task="put_in_bowl", seed=1, width=64, height=48)
    yield w
    w.close()


def _fired(world, kind):
    return [r for r in world.anomaly_log() if r.kind == kind and r.event == "fired"]


def test_required_kinds_have_their_class():
    expected = {
        AnomalyClass.PREDICTABLE: {"drop_in_transport", "nudge_before_grasp",
                                   "displace_before_pick", "abort_trajectory"},
        AnomalyClass.SEMI_PREDICTABLE: {"occupy_target", "topple_stack", "drawer_stuck"},
        AnomalyClass.UNPREDICTABLE: {"remove_object", "move_container_away", "camera_freeze"},
    }
    for cls, kinds in expected.items():
        assert {k for k, s in KINDS.items() if s.anomaly_class == cls} >= kinds


def test_unknown_kind_phase_or_parameter_is_rejected(world):
    world.reset("put_in_bowl", seed=1)
    with pytest.raises(SimError, match="valid: .*drop_in_transport"):
        world.inject("meteor")
    with pytest.raises(SimError, match="valid: .*grasp_closing"):
        world.inject("drop_in_transport", "teatime")
    with pytest.raises(SimError, match="duration"):
        world.inject("drawer_stuck", "now", {"duration": "forever"})
    with pytest.raises(SimError, match="unknown object"):
        world.inject("remove_object", "now", {"object": "pink_elephant"})


def test_drop_in_transport_fires_when_the_held_block_moves(world):
    task = world.reset("put_in_bowl", seed=1)
    obj = task.params["object"]
    assert world.inject("drop_in_transport") == AnomalyClass.PREDICTABLE
    arm = ScriptedArm(world)
    arm.pick(obj)  # lifted, not yet transported fast
    bowl = world.object_states()[task.params["target"]].position
    arm.move_linear(bowl[0], bowl[1], 0.2, 0.0, speed=0.35)
    world.advance(0.8)
    st = world.object_states()[obj]
    assert _fired(world, "drop_in_transport")
    assert not st.held and st.position[2] < 0.06
    assert world.gripper_width() < 0.01  # fingers closed again on nothing


def test_nudge_before_grasp_moves_the_block_as_fingers_close(world):
    task = world.reset("pick_up", seed=2)
    obj = task.params["object"]
    before = np.array(world.object_states()[obj].position)
    world.inject("nudge_before_grasp", params={"distance": 0.04})
    with pytest.raises(SimError, match="grasp"):
        ScriptedArm(world).pick(obj)
    assert _fired(world, "nudge_before_grasp")[0].target == obj
    assert np.linalg.norm(np.array(world.object_states()[obj].position)[:2] - before[:2]) > 0.02


def test_displace_before_pick_moves_block_when_tcp_hovers_above(world):
    task = world.reset("pick_up", seed=3)
    obj = task.params["object"]
    x, y, z = world.object_states()[obj].position
    world.inject("displace_before_pick")
    arm = ScriptedArm(world)
    arm.move_linear(x, y, z + 0.2, 0.0, speed=0.35)
    assert not _fired(world, "displace_before_pick")  # still too high
    arm.move_linear(x, y, z + 0.06, 0.0)
    world.advance(0.1)
    moved = np.array(world.object_states()[obj].position)
    assert _fired(world, "displace_before_pick")
    assert math.hypot(moved[0] - x, moved[1] - y) >= 0.1


def test_abort_trajectory_now_aborts_the_running_motion(world):
    world.reset("pick_up", seed=1)
    q = world.joint_positions()
    world.command_trajectory(world.JOINT_NAMES, [
        __import__("frankenbot.sim.controller", fromlist=["TrajectoryPoint"]).TrajectoryPoint(
            2.0, (q + 0.5).tolist())])
    world.advance(0.3)
    world.inject("abort_trajectory", "now")
    status = world.trajectory_status()
    assert status.state == TrajectoryState.ABORTED and "injected" in status.reason
    q_abort = world.joint_positions()
    world.advance(0.5)
    assert np.max(np.abs(world.joint_positions() - q_abort)) < 0.02


def test_occupy_target_puts_a_spare_block_in_the_bowl(world):
    task = world.reset("put_in_bowl", seed=5)
    assert world.inject("occupy_target", "now") == AnomalyClass.SEMI_PREDICTABLE
    world.advance(0.5)
    states = world.object_states()
    bowl = states[task.params["target"]]
    extra = [s for n, s in states.items() if s.shape == "block" and n != task.params["object"]
             and tasks.inside(s, bowl)[0]]
    assert extra, "no block appeared in the target bowl"


def test_topple_stack_knocks_the_top_block_off(world):
    task = world.reset("stack", seed=1)
    top, base = task.params["object"], task.params["target"]
    bx, by, bz = world.object_states()[base].position
    world._set_pose(top, (bx, by, bz + layout.BLOCK_SIZE + 0.001), 0.0)
    world.advance(0.3)
    assert world.evaluate(0.2).success
    world.inject("topple_stack", "now")
    world.advance(0.5)
    assert not world.evaluate(0.2).success
    with pytest.raises(SimError, match="no stacked block"):
        world.inject("topple_stack", "now")


def test_drawer_stuck_blocks_opening_for_its_duration(world):
    world.reset("open_drawer", seed=1)
    world.inject("drawer_stuck", "now", {"duration": 8.0})
    try:
        ScriptedArm(world).open_drawer()  # the fingers slip off the handle or the arm stalls
    except SimError:
        pass
    assert world.drawer_opening() < 0.02
    world.advance(8.0)
    world.hold()
    ScriptedArm(world).open_drawer()
    assert world.drawer_opening() > 0.09


def test_remove_object_and_move_container_away(world):
    task = world.reset("put_in_bowl", seed=2)
    obj, bowl = task.params["object"], task.params["target"]
    world.inject("remove_object", "now")
    assert obj not in world.object_states()
    assert world.inject("move_container_away", "now") == AnomalyClass.UNPREDICTABLE
    world.advance(0.3)
    x, y, _ = world.object_states()[bowl].position
    assert math.hypot(x, y) > 0.9  # beyond the UR5e's 850 mm reach
    verdict = world.evaluate(0.1)
    assert not verdict.success and "no longer in the scene" in verdict.text


def test_camera_freeze_until_duration_or_reset(world):
    world.reset("pick_up", seed=1)
    world.inject("camera_freeze", "now", {"duration": 1.0})
    assert world.camera_frozen()
    world.advance(1.1)
    assert not world.camera_frozen()
    world.inject("camera_freeze", "now")
    world.advance(5.0)
    assert world.camera_frozen()
    world.reset("pick_up", seed=1)
    assert not world.camera_frozen()


def test_every_injection_is_logged_with_class_and_phase(world):
    world.reset("put_in_bowl", seed=1)
    n = len(world.anomaly_log())
    world.inject("drop_in_transport")
    world.inject("remove_object", "now")
    log = world.anomaly_log()[n:]
    assert [(r.kind, r.event) for r in log] == [
        ("drop_in_transport", "armed"), ("remove_object", "armed"), ("remove_object", "fired")]
    assert log[0].phase == "transport" and log[0].anomaly_class == AnomalyClass.PREDICTABLE


def test_unstable_physics_resets_the_episode_and_is_reported(world):
    task = world.reset("pick_up", seed=4)
    n = len(world.instabilities)
    v = world._obj_vadr[task.params["object"]]
    world.data.qvel[v] = float("nan")
    world.advance(0.1)
    assert len(world.instabilities) == n + 1
    assert world.instabilities[-1].task_id == "pick_up-4"
    assert np.all(np.isfinite(world.joint_positions()))
    assert all(np.all(np.isfinite(s.position)) for s in world.object_states().values())

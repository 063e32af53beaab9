"""SimStack: the one in-process builder behind the executor's harness, memory's judge and the
task-suite brain."""

from __future__ import annotations

import pytest

from frankenbot.errors import SimError

pytest.importorskip("mujoco")


def test_unknown_scene_mode_is_refused_before_anything_is_built() -> None:
    from frankenbot.eval.stack import SimStack

    with pytest.raises(SimError, match="perceived, ground_truth"):
        SimStack(scene="oracle")


def test_ground_truth_stack_gives_fresh_primitives_and_the_new_world_per_reset() -> None:
    from frankenbot.eval.stack import SimStack

    with SimStack(scene="ground_truth") as stack:
        first = stack.reset("put_in_bowl", 2)
        prims = stack.primitives
        names = set(stack.scene().ids())
        assert first.params["object"] in names and "drawer" in names  # fixtures ride along
        stack.robot.set_estop(True)
        second = stack.reset("stack", 4)
        assert stack.primitives is not prims  # no belief leaks into the next episode
        assert not stack.robot.estop_engaged()  # each episode starts released
        assert second.params["object"] in set(stack.scene().ids())
        snap = stack.snapshot()
        assert snap.scene.get(second.params["object"]) is not None
        assert snap.time == pytest.approx(stack.robot.now())
        assert len(snap.robot.joint_positions) == 6


@pytest.mark.wall_clock  # the first perceived frame must arrive within a wall-clock wait
def test_perceived_stack_sees_only_while_running_and_holds_the_arm_on_a_raise() -> None:
    from frankenbot.eval.stack import SimStack
    from frankenbot.sim.controller import TrajectoryPoint

    with SimStack(scene="perceived", realtime_factor=3.0) as stack:
        instance = stack.reset("pick_up", 1)
        assert stack.scene().stale  # no perception thread yet: nothing seen
        assert stack.world.trajectory_status().reason != "hold requested"
        with pytest.raises(RuntimeError, match="body failed"):
            with stack.running():
                scene = stack.scene()
                assert not scene.stale  # running() waited for the first perceived frame
                assert instance.params["object"] in scene.ids()
                q = stack.world.joint_positions()
                stack.world.command_trajectory(stack.world.JOINT_NAMES, [TrajectoryPoint(
                    20.0, [q[0] + 0.5, *q[1:]])])  # a slow move still under way at the raise
                assert stack.world.trajectory_active()
                raise RuntimeError("body failed")
        assert stack.scene().stale  # the episode's perception ended with it
        assert not stack.world.trajectory_active()  # stopped on the way out, not left running
        assert stack.world.trajectory_status().reason == "hold requested"

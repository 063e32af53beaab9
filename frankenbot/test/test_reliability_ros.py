"""Faults over real DDS, every node in its own process: random messages on every subscribed
topic while a task runs, and each node SIGKILLed mid-task (the rest ends the task within a
bound and names the vanished dependency; after a restart the next task succeeds by the oracle).

One stack for the module: tests that start nodes of their own live in
test_reliability_restart.py (two memory nodes in one ROS domain would share the service)."""

from __future__ import annotations

import pytest

from frankenbot.bringup.faults import END_BOUND_S, NODES, NodeFaults, fuzz_trial

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.heavy]


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    with NodeFaults(tmp_path_factory.mktemp("faults")) as f:
        yield f


def test_random_messages_on_every_subscribed_topic_crash_nothing(faults):
    r = fuzz_trial(faults, duration_s=15.0, max_messages=600, seed=5)
    print(r.line())
    assert r.survived, r.line()


@pytest.mark.parametrize("node", NODES)
def test_sigkill_mid_task_ends_the_task_names_the_node_and_recovers(faults, node):
    r = faults.kill_trial(node, family="put_in_bowl", seed=1, next_family="pick_up",
                          next_seed=2)
    print(r.line())
    assert r.survived, r.line()
    assert r.seconds <= END_BOUND_S

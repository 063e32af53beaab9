"""The frankenbot_memory node's services over ROS, with the node in a separate process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import spin_until

pytestmark = pytest.mark.ros

PROGRAM = ('task "t" {{\n  main {{\n    open_drawer(drawer=drawer)\n    pick(obj={o})\n'
           '    place_in(obj={o}, container=drawer)\n    close_drawer(drawer=drawer)\n'
           '    exit success\n  }}\n}}\n')


def call(node, client, request, timeout: float = 15.0):  # type: ignore[no-untyped-def]
    future = client.call_async(request)
    assert spin_until(node, future.done, timeout), f"no answer from {client.srv_name}"
    return future.result()


def test_memory_node_serves_record_context_and_list(
        tmp_path: Path, ros_context, spawn_process) -> None:  # type: ignore[no-untyped-def]
    import rclpy

    from frankenbot_interfaces.msg import AnomalyEvent
    from frankenbot_interfaces.srv import GetContext, ListSkills, RecordEpisode

    db = tmp_path / "memory.sqlite3"
    spawn_process([sys.executable, "-m", "frankenbot.nodes.memory_node", "--ros-args",
                   "-p", f"db_path:={db}", "-p", "use_embeddings:=false",
                   "-p", "min_support:=2", "-p", "min_success_rate:=0.9"])
    node = rclpy.create_node("memory_test_client", context=ros_context)
    try:
        record = node.create_client(RecordEpisode, "/frankenbot/memory/record_episode")
        context = node.create_client(GetContext, "/frankenbot/memory/get_context")
        listing = node.create_client(ListSkills, "/frankenbot/memory/list_skills")
        for c in (record, context, listing):
            assert c.wait_for_service(timeout_sec=30.0), f"{c.srv_name} never appeared"

        seeds = call(node, listing, ListSkills.Request()).skills
        assert "put_in_drawer" in {s.name for s in seeds}
        assert all(s.origin == "seed" for s in seeds)

        anomaly = AnomalyEvent(kind="grasp_lost", tier=1, node_path="main/1/pick",
                               action="retry main/1", outcome="recovered")
        promoted: list[str] = []
        for obj in ("red_block", "blue_block"):
            req = RecordEpisode.Request(task_id=obj, instruction=f"put the {obj} in the drawer",
                                        program=PROGRAM.format(o=obj), success=True,
                                        outcome="success", anomalies=[anomaly], vlm_calls=1)
            res = call(node, record, req)
            assert res.ok, res.message
            promoted += list(res.promoted_skills)
        # The drawer sequence equals the seed put_in_drawer: deduplicated, nothing new.
        assert promoted == []

        stack = ('task "s" {{\n  main {{\n    detect(obj={o})\n    pick(obj={o})\n'
                 '    place_on(obj={o}, target=plate)\n  }}\n}}\n')
        for obj in ("red_block", "blue_block"):
            res = call(node, record, RecordEpisode.Request(
                instruction=f"put the {obj} on the plate", program=stack.format(o=obj),
                success=True, outcome="success"))
            assert res.ok, res.message
            promoted += list(res.promoted_skills)
        assert promoted == ["detect_then_pick_then_place_on"]
        learned = call(node, listing, ListSkills.Request(filter="detect_then")).skills
        assert [(s.origin, list(s.param_names)) for s in learned] == [
            ("promoted", ["obj", "target"])]

        bad = call(node, record, RecordEpisode.Request(instruction="", program="x"))
        assert not bad.ok and "instruction" in bad.message

        ctx = call(node, context, GetContext.Request(
            instruction="put the green block in the drawer", token_budget=2000, max_exemplars=1))
        assert ctx.retrieval == "lexical"
        assert ctx.exemplar_instructions == ["put the blue_block in the drawer"] or \
            ctx.exemplar_instructions == ["put the red_block in the drawer"]
        assert ctx.exemplar_programs[0].startswith('task "t"')
        assert ctx.anomaly_experience == [
            "grasp_lost during pick -> retry main/1 (tier 1) -> recovered 2/2"]
        assert 0 < ctx.tokens <= 2000
        assert ctx.skills[0].name in ("put_in_drawer", "take_from_drawer")

        drawer_only = call(node, listing, ListSkills.Request(filter="DRAWER")).skills
        stats = {s.name: (s.uses, s.successes) for s in drawer_only}
        assert set(stats) == {"put_in_drawer", "take_from_drawer"}
    finally:
        node.destroy_node()


def test_memory_node_loads_the_embedding_model_in_the_background(
        tmp_path: Path, ros_context, spawn_process) -> None:  # type: ignore[no-untyped-def]
    import time

    import rclpy

    from frankenbot_interfaces.srv import GetContext, RecordEpisode

    spawn_process([sys.executable, "-m", "frankenbot.nodes.memory_node", "--ros-args",
                   "-p", f"db_path:={tmp_path / 'm.db'}", "-p", "load_seeds:=false"])
    node = rclpy.create_node("memory_embed_client", context=ros_context)
    try:
        record = node.create_client(RecordEpisode, "/frankenbot/memory/record_episode")
        context = node.create_client(GetContext, "/frankenbot/memory/get_context")
        assert record.wait_for_service(timeout_sec=30.0)
        for text in ("put the red block in the green bowl", "open the drawer"):
            res = call(node, record, RecordEpisode.Request(
                instruction=text, program=PROGRAM.format(o="red_block"), success=True))
            assert res.ok, res.message
        deadline = time.monotonic() + 60.0
        ctx = None
        while time.monotonic() < deadline:  # lexical until the model is ready, never blocked
            ctx = call(node, context, GetContext.Request(
                instruction="place the crimson cube into the emerald dish", max_exemplars=1))
            if ctx.retrieval == "embedding":
                break
            time.sleep(0.5)
        assert ctx is not None and ctx.retrieval == "embedding"
        assert ctx.exemplar_instructions == ["put the red block in the green bowl"]
    finally:
        node.destroy_node()

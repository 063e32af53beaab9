"""Namespaces: several brains on one ROS graph, and two memory nodes sharing one PostgreSQL."""

from __future__ import annotations

import sys

import pytest
from conftest import spin_until

from frankenbot.bringup.processes import NodeGroup, normalise_namespace
from frankenbot.errors import ConfigError


@pytest.mark.parametrize("given, expected", [
    ("", ""), ("/", ""), ("arm1", "/arm1"), ("/arm1/", "/arm1"), ("lab/arm_2", "/lab/arm_2")])
def test_namespaces_are_normalised(given: str, expected: str) -> None:
    assert normalise_namespace(given) == expected


@pytest.mark.parametrize("bad", ["2arm", "arm-1", "arm 1", "a//b"])
def test_bad_namespaces_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="not a ROS namespace"):
        normalise_namespace(bad)


def test_node_commands_carry_the_namespace_and_the_sims_own_clock(tmp_path) -> None:
    plain = NodeGroup(setup="sim", log_dir=tmp_path / "a").command("planner")
    assert not any(a.startswith("__ns:=") for a in plain)
    assert "/clock:=clock" not in plain
    group = NodeGroup(setup="sim", log_dir=tmp_path / "b", namespace="arm1")
    planner = group.command("planner")
    assert "__ns:=/arm1" in planner and "/clock:=clock" in planner
    sim = group.command("sim")
    assert "__ns:=/arm1" in sim and "/clock:=clock" not in sim  # it publishes <ns>/clock


def test_no_frankenbot_name_in_the_nodes_is_absolute(package_root) -> None:
    """Absolute names would escape a namespace: every topic/service/action name is relative."""
    import ast
    import re

    pattern = re.compile(r"^/(frankenbot|camera|joint_states|scaled_joint|speed_scaling|clock"
                         r"|gripper_position|robotiq_gripper)")
    offenders = []
    # The brain's nodes and the client that drives them. (doctor, the recording tap and the
    # live view observe a robot in the root namespace and keep the driver's absolute names.)
    bringup = package_root / "frankenbot" / "bringup"
    sources = [*(package_root / "frankenbot" / "nodes").glob("*.py"),
               bringup / "ros_client.py", bringup / "demo.py", bringup / "plan_cli.py",
               bringup / "processes.py", bringup / "cli.py"]
    makers = {"create_publisher", "create_subscription", "create_service", "create_client",
              "ActionClient", "ActionServer"}

    def named(n: ast.AST) -> list[ast.AST]:
        """Names handed to ROS: arguments of the create_* calls and *_TOPIC-style constants."""
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            return list(n.args) if name in makers else []
        if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id.endswith(("_TOPIC", "_ACTION", "ACTION_NAME",
                                                           "SIM_NODE", "_SERVICES"))
                for t in n.targets):
            return [n.value]
        return []

    for path in sources:
        for n in ast.walk(ast.parse(path.read_text())):
            for arg in named(n):
                for c in ast.walk(arg):
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) \
                            and pattern.match(c.value):
                        offenders.append(f"{path.name}:{c.lineno}: {c.value!r}")
    assert offenders == []


PROGRAM = ('task "t" {{\n  main {{\n    open_drawer(drawer=drawer)\n    pick(obj={o})\n'
           '    place_in(obj={o}, container=drawer)\n    close_drawer(drawer=drawer)\n'
           '    exit success\n  }}\n}}\n')


@pytest.mark.ros
def test_two_namespaced_memory_nodes_share_one_postgres(
        postgres_server, ros_context, spawn_process) -> None:  # type: ignore[no-untyped-def]
    import rclpy

    from frankenbot.memory.config import MemoryConfig
    from frankenbot.memory.store import MemoryStore
    from frankenbot_interfaces.srv import GetContext, RecordEpisode

    url = postgres_server.create_database("fleet_nodes")
    for ns in ("arm1", "arm2"):
        spawn_process([sys.executable, "-m", "frankenbot.nodes.memory_node", "--ros-args",
                       "-r", f"__ns:=/{ns}", "-p", f"db_url:={url}",
                       "-p", "use_embeddings:=false", "-p", "load_seeds:=false",
                       "-p", "min_support:=1", "-p", "fixtures:=drawer"])
    node = rclpy.create_node("fleet_test_client", context=ros_context)
    try:
        record = node.create_client(RecordEpisode, "/arm1/frankenbot/memory/record_episode")
        context = node.create_client(GetContext, "/arm2/frankenbot/memory/get_context")
        for c in (record, context):
            assert c.wait_for_service(timeout_sec=60.0), f"{c.srv_name} never appeared"
        names = {n for n, _ in node.get_service_names_and_types()}
        assert "/frankenbot/memory/get_context" not in names  # nothing left at the root

        future = record.call_async(RecordEpisode.Request(
            task_id="t1", instruction="put the red block in the drawer",
            program=PROGRAM.format(o="red_block"), success=True, outcome="success"))
        assert spin_until(node, future.done, 30.0)
        res = future.result()
        assert res.ok and res.promoted_skills, res.message

        future = context.call_async(GetContext.Request(
            instruction="put the blue block in the drawer", token_budget=2000))
        assert spin_until(node, future.done, 30.0)
        offered = {s.name: s for s in future.result().skills}
        assert set(res.promoted_skills) <= set(offered)
    finally:
        node.destroy_node()
    with MemoryStore.open(url, MemoryConfig(use_embeddings=False, load_seeds=False)) as store:
        skill = store.get_skill(res.promoted_skills[0])
        (episode,) = store.episodes()
    assert skill is not None and skill.robot_id == "arm1" and skill.fixtures == ("drawer",)
    assert episode.record.robot_id == "arm1"  # robot_id defaults to the node's namespace


def test_only_the_nodes_that_read_the_clock_follow_the_sims_clock(tmp_path) -> None:
    """/clock at 125 Hz costs each follower ~0.12 core (issue 16): with the MuJoCo sim only the
    planner and the executor use sim time; with Gazebo every brain node does."""
    sim = NodeGroup(setup="sim", log_dir=tmp_path / "a")
    for exe, follows in (("planner", True), ("executor", True), ("perception", False),
                         ("memory", False), ("sim", False)):
        assert ("use_sim_time:=true" in sim.command(exe)) is follows, exe
    gazebo = NodeGroup(setup="gazebo", log_dir=tmp_path / "b")
    assert all("use_sim_time:=true" in gazebo.command(e)
               for e in ("planner", "executor", "perception", "memory"))

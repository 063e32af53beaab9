"""Two brains, one PostgreSQL memory, each on its own MuJoCo table, judged by its own oracle.

The in-process form of the fleet (test_fleet_e2e.py is the ROS form with namespaced processes):
each brain is a whole ``InProcessBrain`` (its own sim, rendered camera, perception, executor with
monitors and tiers, offline planner) with a memory store on the same PostgreSQL database under
its own robot_id. Both run a task at the same time (two threads); then a skill promoted from
arm1's episode is in the program arm2 plans and runs next, and arm2's oracle accepts the run.
"""

from __future__ import annotations

import threading
import uuid

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.flaky(reruns=1, reruns_delay=2),
              pytest.mark.timeout(1500)]

TASKS = {"arm1": ("put_in_bowl", 1), "arm2": ("stack", 1)}
FOLLOW_UP = ("put_in_bowl", 2)  # arm2 does the kind of task only arm1 has done


def test_two_brains_at_once_share_skills_through_postgres(postgres_server) -> None:
    from frankenbot.eval.inprocess import BrainOptions, InProcessBrain
    from frankenbot.memory.config import MemoryConfig
    from frankenbot.memory.store import MemoryStore

    url = postgres_server.create_database(f"fleet_inproc_{uuid.uuid4().hex[:8]}")

    def options(robot: str) -> BrainOptions:
        # Half the default sim pace: two sims share the cores, each must keep its real time.
        return BrainOptions(realtime_factor=1.0, memory_path=url, memory_config=MemoryConfig(
            robot_id=robot, fixtures="drawer,zone", min_support=1, use_embeddings=False))

    brains = {ns: InProcessBrain(options(ns)) for ns in TASKS}
    try:
        outcomes: dict[str, object] = {}

        def run(ns: str) -> None:
            try:
                outcomes[ns] = brains[ns].run_episode(*TASKS[ns])
            except BaseException as e:  # reported below
                outcomes[ns] = e

        threads = [threading.Thread(target=run, args=(ns,)) for ns in TASKS]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for ns in TASKS:
            got = outcomes[ns]
            if isinstance(got, BaseException):
                raise got
            assert got.success, (ns, got.detail)  # type: ignore[attr-defined]

        with MemoryStore.open(url, MemoryConfig(use_embeddings=False, load_seeds=False)) as m:
            learnt = {s.name: s for s in m.list_skills() if s.origin == "promoted"}
            robots = {e.record.robot_id for e in m.episodes()}
        assert robots == {"arm1", "arm2"}
        from_arm1 = {n for n, s in learnt.items() if s.robot_id == "arm1"}
        assert from_arm1, f"arm1's episode promoted nothing: {learnt}"

        follow = brains["arm2"].run_episode(*FOLLOW_UP)
        assert follow.success, follow.detail
        with MemoryStore.open(url, MemoryConfig(use_embeddings=False, load_seeds=False)) as m:
            (last,) = m.episodes(limit=1)
        assert last.record.robot_id == "arm2"
        called = {c for c in from_arm1 if f"{c}(" in last.record.program.split("skill ")[0]}
        assert called, (from_arm1, last.record.program)
        print(f"fleet: arm1 promoted {sorted(from_arm1)}; arm2's next program calls"
              f" {sorted(called)}; both oracles accepted")
    finally:
        for brain in brains.values():
            brain.close()

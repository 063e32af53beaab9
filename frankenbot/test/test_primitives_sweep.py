"""Done-when check: each primitive succeeds on >= 95% of 20 random seeds in the in-process sim,
judged by the sim's oracle (task families that exercise pick, place_in, place_on, push_to,
open_drawer and close_drawer). Slow (about 3 minutes on 2 cores): marked ``slow``.
FRANKENBOT_SWEEP_SEEDS lowers the seed count for a quicker (weaker) run.
"""

from __future__ import annotations

import os

import pytest
from primitives_support import make_primitives

from frankenbot.ports import CancelToken
from frankenbot.sim.world import SimWorld

SEEDS = range(int(os.environ.get("FRANKENBOT_SWEEP_SEEDS", "20")))
FAMILIES = {
    "pick_up": lambda p: [("pick", {"obj": p["object"]})],
    "put_in_bowl": lambda p: [("pick", {"obj": p["object"]}),
                              ("place_in", {"obj": p["object"], "container": p["target"]})],
    "put_on_plate": lambda p: [("pick", {"obj": p["object"]}),
                               ("place_in", {"obj": p["object"], "container": p["target"]})],
    "stack": lambda p: [("pick", {"obj": p["object"]}),
                        ("place_on", {"obj": p["object"], "target": p["target"]})],
    "push_to_zone": lambda p: [("push_to", {"obj": p["object"], "target": "zone"})],
    "open_drawer": lambda p: [("open_drawer", {"drawer": "drawer"})],
    "put_in_drawer": lambda p: [("open_drawer", {"drawer": "drawer"}),
                                ("pick", {"obj": p["object"]}),
                                ("place_in", {"obj": p["object"], "container": "drawer"}),
                                ("close_drawer", {"drawer": "drawer"})],
}


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_primitives_succeed_on_95_percent_of_20_seeds(family: str) -> None:
    world = SimWorld(seed=0, width=64, height=48)
    failures = []
    try:
        for seed in SEEDS:
            world.reset(family, seed)
            _, _, prims = make_primitives(world)
            result = None
            for name, args in FAMILIES[family](world.task.params):
                result = prims.execute(name, args, CancelToken())
                if not result.ok:
                    break
            verdict = world.evaluate()
            if not (result is not None and result.ok and verdict.success):
                failures.append((seed, result, verdict.text))
    finally:
        world.close()
    rate = 1 - len(failures) / len(SEEDS)
    print(f"{family}: {rate:.0%} of {len(SEEDS)} seeds")
    assert rate >= 0.95, failures


@pytest.mark.slow
def test_other_primitives_succeed_on_95_percent_of_20_seeds() -> None:
    """home, detect, move_above, place_at, open/close_gripper and wait, judged by ground truth
    (TCP site, object pose, finger gap, sim clock) since no task oracle covers them."""
    import math

    import numpy as np

    world = SimWorld(seed=0, width=64, height=48)
    ok = {n: 0 for n in ("home", "detect", "move_above", "place_at", "open_gripper",
                         "close_gripper", "wait")}
    try:
        for seed in SEEDS:
            world.reset("pick_up", seed)
            robot, _, prims = make_primitives(world)
            token = CancelToken()
            obj = world.task.params["object"]
            rng = np.random.default_rng(seed)
            ok["detect"] += prims.execute("detect", {"obj": obj}, token).ok
            h = float(rng.uniform(0.05, 0.3))
            if prims.execute("move_above", {"obj": obj, "height": h}, token).ok:
                st = world.object_states()[obj]
                want = (st.position[0], st.position[1], st.position[2] + st.size[2] / 2 + h)
                ok["move_above"] += bool(np.allclose(world.tcp_position(), want, atol=0.01))
            if prims.execute("close_gripper", {}, token).ok:
                ok["close_gripper"] += world.gripper_width() < 0.002
            if prims.execute("open_gripper", {}, token).ok:
                ok["open_gripper"] += world.gripper_width() > 0.083
            t0 = robot.now()
            if prims.execute("wait", {"seconds": 0.3}, token).ok:
                ok["wait"] += abs(robot.now() - t0 - 0.3) < 0.011
            x, y = float(rng.uniform(0.35, 0.55)), float(rng.uniform(0.27, 0.33))  # free table
            if (prims.execute("pick", {"obj": obj}, token).ok
                    and prims.execute("place_at", {"obj": obj, "x": x, "y": y}, token).ok):
                world.advance(0.3)
                st = world.object_states()[obj]
                ok["place_at"] += (math.hypot(st.position[0] - x, st.position[1] - y) < 0.015
                                   and not st.held)
            if prims.execute("home", {}, token).ok:
                ok["home"] += bool(np.allclose(world.joint_positions(), prims.home_joints,
                                               atol=0.01))
    finally:
        world.close()
    print({k: f"{v}/{len(SEEDS)}" for k, v in ok.items()})
    assert all(v >= 0.95 * len(SEEDS) for v in ok.values()), ok

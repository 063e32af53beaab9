"""Scripted pick-and-place of every object type over many seeds, judged by the oracle.

This checks the simulator, not the brain: if a scripted arm with ground-truth poses cannot put a
block in a bowl for most seeds, the world (contacts, gripper, controller, oracle, sampling) is
broken and no brain result on it means anything.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from frankenbot.errors import SimError
from frankenbot.sim import layout
from frankenbot.sim.scripted import ScriptedArm
from frankenbot.sim.world import SimWorld

PASS_RATE = 0.95


def _pick(arm: ScriptedArm) -> None:
    arm.pick(str(arm.world.task.params["object"]))
    arm.world.advance(0.3)


def _put(arm: ScriptedArm) -> None:
    p = arm.world.task.params
    arm.pick(str(p["object"]))
    arm.place_in(str(p["object"]), str(p["target"]))


def _clear(arm: ScriptedArm) -> None:
    p = arm.world.task.params
    for name in p["objects"]:
        arm.pick(str(name))
        arm.place_in(str(name), str(p["target"]))


def _drawer(arm: ScriptedArm) -> None:
    obj = str(arm.world.task.params["object"])
    arm.open_drawer()
    arm.pick(obj)
    d = layout.DRAWER
    cx, cy, cz = d.cavity_centre(arm.world.drawer_opening())
    # only the front of the cavity is out of the cabinet: drop the block just behind the front
    x = cx - d.cavity_size[0] / 2 + layout.BLOCK_SIZE / 2 + 0.02
    z = cz - d.cavity_size[2] / 2 + layout.BLOCK_SIZE / 2 + 0.012
    arm.place_at(x, cy, z, yaw=math.pi / 2)
    arm.close_drawer()


def _push(arm: ScriptedArm) -> None:
    arm.push_to(str(arm.world.task.params["object"]), *layout.ZONE.centre)


# object type -> (task family, script)
CASES: dict[str, tuple[str, Callable[[ScriptedArm], None]]] = {
    "block": ("pick_up", _pick),
    "bowl": ("put_in_bowl", _put),
    "plate": ("put_on_plate", _put),
    "stack": ("stack", _put),
    "bin": ("clear_table", _clear),
    "drawer": ("put_in_drawer", _drawer),
    "zone": ("push_to_zone", _push),
}


@dataclass
class CaseResult:
    object_type: str
    family: str
    attempts: int = 0
    successes: int = 0
    failures: list[str] = field(default_factory=list)
    sim_seconds: float = 0.0
    wall_seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0


def run_selftest(seeds: int = 20, types: list[str] | None = None, *, first_seed: int = 0,
                 progress: Callable[[str], None] | None = None) -> dict[str, CaseResult]:
    """Run every case over ``seeds`` seeds; returns per-type results."""
    chosen = types or list(CASES)
    unknown = [t for t in chosen if t not in CASES]
    if unknown:
        raise SimError(f"unknown object types {unknown}; valid: {', '.join(CASES)}")
    if seeds < 1:
        raise SimError(f"--seeds must be >= 1, got {seeds}")
    results: dict[str, CaseResult] = {}
    with SimWorld(width=64, height=48) as world:
        for object_type in chosen:
            family, script = CASES[object_type]
            res = CaseResult(object_type, family)
            for seed in range(first_seed, first_seed + seeds):
                world.reset(family, seed)
                t_sim, t_wall = world.time, time.perf_counter()
                res.attempts += 1
                try:
                    script(ScriptedArm(world))
                    verdict = world.evaluate()
                    ok, why = verdict.success, verdict.text.replace("\n", " | ")
                except SimError as e:
                    ok, why = False, str(e)
                res.sim_seconds += world.time - t_sim
                res.wall_seconds += time.perf_counter() - t_wall
                if ok:
                    res.successes += 1
                else:
                    res.failures.append(f"seed {seed}: {why}")
                if progress:
                    progress(f"{object_type:7s} seed {seed:3d}: {'ok' if ok else 'FAIL ' + why}")
            results[object_type] = res
    return results


def summary(results: dict[str, CaseResult]) -> dict[str, object]:
    return {
        "pass": all(r.rate >= PASS_RATE for r in results.values()),
        "threshold": PASS_RATE,
        "types": {t: {"family": r.family, "attempts": r.attempts, "successes": r.successes,
                      "rate": round(r.rate, 4), "sim_s": round(r.sim_seconds, 2),
                      "wall_s": round(r.wall_seconds, 2), "failures": r.failures}
                  for t, r in results.items()},
    }


@dataclass(frozen=True)
class SlipResult:
    """How far a held block moved relative to the fingers during a fast transport."""

    speed: float  # m/s, average along the path
    peak_tcp_speed: float  # m/s, measured
    max_slip: float  # m, largest displacement of the block in the TCP frame
    final_slip: float  # m


def measure_slip(seed: int = 0, speed: float = 0.5, distance: float = 0.35) -> SlipResult:
    """Pick a block, then carry it ``distance`` m sideways at ``speed`` m/s; track it in the
    TCP frame (the fingers) every 10 ms."""
    import numpy as np

    with SimWorld(task="pick_up", seed=seed, width=64, height=48) as world:
        obj = str(world.task.params["object"])
        arm = ScriptedArm(world)
        arm.pick(obj)
        world.advance(0.3)
        site = world._tcp_site

        def rel() -> np.ndarray:
            R = world.data.site_xmat[site].reshape(3, 3)
            return R.T @ (world.data.xpos[world._bodies[obj]] - world.data.site_xpos[site])

        start = rel()
        x, y, z = world.tcp_position()
        yaw = arm._current_yaw(world.joint_positions())
        target_y = y - distance if y > 0 else y + distance
        arm.move_linear(x, target_y, z, yaw, speed=speed, wait=False)
        max_slip, peak, prev = 0.0, 0.0, world.tcp_position()
        while world.trajectory_active():
            world.advance(0.01)
            max_slip = max(max_slip, float(np.linalg.norm(rel() - start)))
            now = world.tcp_position()
            peak = max(peak, float(np.linalg.norm(now - prev)) / 0.01)
            prev = now
        world.advance(0.3)
        final = float(np.linalg.norm(rel() - start))
        if not world.object_states()[obj].held:
            final = max_slip = float("inf")
        return SlipResult(speed, peak, max(max_slip, final), final)

"""Reference programs for the task families of the new world, and a lockstep runner that plays
them through the real interpreter and primitives on the sim, judged by the oracle.

These are what the offline planner is expected to write for each family (one short program in
the program language per task instance, verified by a bounded retry), checked here against the
sim with the ground-truth scene (``eval/ground_truth.py``): they isolate the primitives and
predicates from perception and from the planner. Measurement scaffolding: the brain never runs
them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from frankenbot.errors import SimError


def _negated(goal: str) -> str:
    return goal[4:] if goal.startswith("not ") else f"not {goal}"


def _verified(steps: list[str], goal: str, pre: list[str] | None = None) -> list[str]:
    return [*(pre or []), "start:", *steps, f"if {_negated(goal)} {{ goto start max 2 }}"]


def _switch(target: str, goal: str) -> tuple[list[str], str]:
    """Turn a light (by its switch) or a stove (by its knob) on or off."""
    lit = f"on_state({target})"
    if target in ("light", "light_panel"):
        act = ["toggle(obj=switch)"]
    else:
        act = ["turn(obj=stove_knob, degrees=60)" if goal == "on"
               else "turn(obj=stove_knob, degrees=-90)"]
    if goal == "on":
        return [f"if not {lit} {{", *(f"  {a}" for a in act), "}"], lit
    return [f"if {lit} {{", *(f"  {a}" for a in act), "}"], f"not {lit}"


DRAWERS_TOP_DOWN = ("top_drawer", "middle_drawer", "bottom_drawer")


def _into_drawer(drawer: str) -> list[str]:
    """Before putting something into a cabinet's drawer: the drawers above it closed (an ajar
    one stands out over the open part), then the drawer opened."""
    lines: list[str] = []
    if drawer in DRAWERS_TOP_DOWN:
        for above in DRAWERS_TOP_DOWN[:DRAWERS_TOP_DOWN.index(drawer)]:
            lines += [f"if not closed({above}) {{", f"  close_drawer(drawer={above})", "}"]
    return lines + [f"if not open({drawer}) {{", f"  open_drawer(drawer={drawer})", "}"]


def _put(obj: str, target: str, on: bool = False) -> tuple[list[str], str]:
    if on:
        return [f"pick(obj={obj})", f"place_on(obj={obj}, target={target})"], f"on({obj}, {target})"
    return [f"pick(obj={obj})", f"place_in(obj={obj}, container={target})"], f"in({obj}, {target})"


def reference_program(family: str, params: Mapping[str, Any], instruction: str = "") -> str:
    """The reference program of ``family`` for a task with ``params`` (``TaskInstance.params``)."""
    p = params
    body: list[str]
    if family in ("close_drawer", "close_cabinet_drawer"):
        d = p["target"]
        body = _verified([f"close_drawer(drawer={d})"], f"closed({d})")
    elif family == "open_cabinet_drawer":
        d = p["target"]
        body = _verified([f"open_drawer(drawer={d})"], f"open({d})")
    elif family == "put_in_cabinet_drawer":
        o, d = p["object"], p["target"]
        steps, goal = _put(o, d)
        body = _verified(steps, goal, _into_drawer(str(d)))
    elif family in ("open_door", "close_door"):
        door = p["target"]
        verb = "open" if family == "open_door" else "close"
        body = _verified([f"{verb}_door(door={door})"],
                         f"open({door})" if verb == "open" else f"closed({door})")
    elif family in ("switch_light", "switch_stove"):
        steps, goal = _switch(str(p["target"]), str(p["goal"]))
        body = _verified(steps, goal)
    elif family in ("everyday_in", "everyday_on"):
        steps, goal = _put(p["object"], p["target"], on=family == "everyday_on")
        body = _verified(steps, goal)
    elif family == "two_goal":
        o, t = p["object"], p["target"]
        if str(t).endswith("drawer") and "target2" not in p:  # open the drawer, put it in
            steps, goal = _put(o, t)
            body = _verified(steps, goal, _into_drawer(str(t)))
        else:
            steps, goal = _put(o, t)
            body = _verified(steps, goal)
            second = str(p["target2"])
            if p["goal2"] == "closed":
                body += ["again:", f"close_drawer(drawer={second})",
                         f"if not closed({second}) {{ goto again max 2 }}"]
            else:
                act, lit_goal = _switch(second, str(p["goal2"]))
                body += ["again:", *act, f"if {_negated(lit_goal)} {{ goto again max 2 }}"]
    else:
        raise SimError(f"no reference program for family {family!r}")
    lines = "\n".join(f"    {line}" for line in [*body, "exit success"])
    title = (instruction or family).replace('"', "'")
    return f'task "{title}" {{\n  main {{\n{lines}\n  }}\n}}\n'


@dataclass(frozen=True)
class ReferenceRun:
    family: str
    seed: int
    program: str
    status: str  # the interpreter's exit status
    reason: str
    oracle_ok: bool
    oracle_text: str


def run_reference(world: Any, family: str, seed: int, *,
                  program: str | None = None,
                  make_primitives: Callable[[Any], Any] | None = None) -> ReferenceRun:
    """Reset ``world`` to (family, seed) and play the family's reference program (or
    ``program``) in lockstep through the real interpreter and primitives over the SimRobot,
    with the ground-truth scene; the oracle judges."""
    from frankenbot.eval.ground_truth import pose_feed_scene, world_fixture_map
    from frankenbot.primitives.factory import build_primitives
    from frankenbot.program import default_catalog, parse_program
    from frankenbot.program.interpreter import Interpreter
    from frankenbot.sim.robot_adapter import SimRobot
    from frankenbot.state import WorldSnapshot

    task = world.reset(family, seed)
    fmap = world_fixture_map(world)
    scene = pose_feed_scene(world)
    robot = SimRobot(world, scene_source=scene, physics_thread=False)
    prims = (make_primitives(robot) if make_primitives is not None
             else build_primitives(robot, fixture_map=lambda: fmap))
    text = program or reference_program(family, task.params, task.instruction)

    def snapshot() -> WorldSnapshot:
        robot.sleep(0.01)  # lockstep: time moves, so a condition sees a newer frame at once
        return WorldSnapshot(prims.snapshot(), robot.scene(), prims.facts(), robot.now(), fmap)

    interp = Interpreter(parse_program(text).program, default_catalog(), prims,
                         snapshot=snapshot, clock=robot.now)
    result = interp.run()
    robot.stop()
    verdict = world.evaluate()
    return ReferenceRun(family, seed, text, result.status.value, result.reason,
                        bool(verdict.success), verdict.text)

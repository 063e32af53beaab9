"""Monitor scopes that name arguments: ``during place_in(obj=red_block)``.

Parsing and printing round-trip, the validator checks scope arguments like call arguments, and
the interpreter puts such a monitor in scope only while a call with those argument values runs,
so a drop monitor for one block does not fire while another block is placed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from frankenbot.common import AnomalyKind, FailureCode
from frankenbot.ports import CancelToken, PrimitiveResult
from frankenbot.program import default_catalog, parse_program, print_program
from frankenbot.program.escalation import MonitorEvent
from frankenbot.program.interpreter import Interpreter
from frankenbot.program.predicates import MonitorProbe
from frankenbot.program.tree import Arg, Ident, Monitor, Pred, Scope
from frankenbot.program.validator import validate
from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot

TWO_BLOCKS = """task "both blocks in the bowl" {
  main {
    pick(obj=blue_block)
    place_in(obj=blue_block, container=green_bowl)
    pick(obj=red_block)
    place_in(obj=red_block, container=green_bowl)
  }
  monitor red_dropped when not holding(red_block) and not in(red_block, green_bowl)
      during place_in(obj=red_block) {
    pick(obj=red_block)
    then resume
  }
}"""
IDS = ("red_block", "blue_block", "green_bowl")


def test_scope_with_arguments_parses_to_scope_nodes():
    m = parse_program(TWO_BLOCKS).program.monitors[0]
    assert m.during == (Scope("place_in", (Arg("obj", Ident("red_block")),)),)
    assert m.scope_names == ("place_in",)


@pytest.mark.parametrize("during", [
    "place_in(obj=red_block)",
    "place_in(obj=red_block, container=green_bowl), pick",
    "pick, place_in(container=green_bowl)",
    "wait(seconds=0.5)",
    "place_in",
])
def test_scopes_round_trip_through_the_printer(during):
    text = (f'task "t" {{ main {{ pick(obj=red_block) wait(seconds=0.5) '
            f'place_in(obj=red_block, container=green_bowl) }} '
            f'monitor m when not holding(red_block) during {during} {{ then resume }} }}')
    p = parse_program(text).program
    printed = print_program(p)
    assert f"during {during}" in printed
    assert parse_program(printed).program == p


def test_empty_parentheses_mean_no_arguments():
    a = parse_program('task "t" { main { home() } monitor m when gripper_open during home() '
                      '{ then resume } }').program
    assert a.monitors[0].during == (Scope("home"),)
    assert "during home {" in print_program(a)


def test_hand_built_monitors_may_name_scopes_as_strings():
    m = Monitor("m", Pred("gripper_open"), ("pick", "place_in"))
    assert m.during == (Scope("pick"), Scope("place_in"))


def codes(text: str, ids=IDS) -> list[str]:
    return [d.code for d in validate(parse_program(text).program, default_catalog(), ids)]


def test_a_valid_argument_scope_has_no_diagnostics():
    assert codes(TWO_BLOCKS) == []


@pytest.mark.parametrize("scope, code", [
    ("place_in(thing=red_block)", "unknown-arg"),
    ("place_in(obj=purple_block)", "unknown-object"),
    ('place_in(obj="red_block")', "arg-type"),
    ("place_in(obj=red_block, obj=red_block)", "duplicate-arg"),
    ("wait(seconds=99)", "arg-range"),
    ("place_inn(obj=red_block)", "unknown-scope"),
])
def test_bad_scope_arguments_are_errors(scope, code):
    text = TWO_BLOCKS.replace("during place_in(obj=red_block)", f"during {scope}")
    if scope.startswith("wait"):
        text = text.replace("pick(obj=blue_block)", "wait(seconds=1) pick(obj=blue_block)")
    assert code in codes(text)


# ------------------------------------------------------------------------------- interpreter

class World:
    def __init__(self) -> None:
        self.held: str | None = None
        self.objects = {
            "red_block": SceneObject("red_block", "red block", "block", "red",
                                     (0.5, 0.0, 0.02), (0.04, 0.04, 0.04)),
            "blue_block": SceneObject("blue_block", "blue block", "block", "blue",
                                      (0.5, -0.1, 0.02), (0.04, 0.04, 0.04)),
            "green_bowl": SceneObject("green_bowl", "green bowl", "bowl", "green",
                                      (0.5, 0.2, 0.03), (0.16, 0.16, 0.06)),
        }

    def snapshot(self) -> WorldSnapshot:
        width = 0.04 if self.held else 0.085
        return WorldSnapshot(RobotSnapshot(gripper_width=width, held_object=self.held),
                             Scene.of(self.objects.values()))


class Executor:
    """Fake primitives; before each primitive it does what the monitor loop would: every
    monitor the interpreter has in scope whose condition holds is delivered. ``drop_red``
    makes the first place_in of red_block lose the block on the way."""

    def __init__(self, world: World, drop_red: bool) -> None:
        self.world = world
        self.drop_red = drop_red
        self.interp: Interpreter | None = None
        self.calls: list[tuple[str, dict]] = []
        self.in_scope: list[tuple[str, tuple[str, ...]]] = []

    def execute(self, name, args, cancel: CancelToken) -> PrimitiveResult:
        self.calls.append((name, dict(args)))
        if name == "place_in" and args["obj"] == "red_block" and self.drop_red:
            self.drop_red = False
            self.world.held = None  # slipped out of the fingers
        assert self.interp is not None
        active = self.interp.monitors_active()
        self.in_scope.append((f"{name}:{args.get('obj', '')}", tuple(m.name for m in active)))
        snap = self.world.snapshot()
        for m in active:
            if MonitorProbe.of(m).holds(snap):
                self.interp.deliver(MonitorEvent(m.name, AnomalyKind.PROGRAM_MONITOR, "fired"))
        if cancel.cancelled:
            return PrimitiveResult.failure(FailureCode.PREEMPTED, cancel.reason)
        if name == "pick":
            self.world.held = str(args["obj"])
        elif name == "place_in":
            obj = self.world.objects[str(args["obj"])]
            bowl = self.world.objects[str(args["container"])]
            self.world.objects[obj.object_id] = replace(
                obj, position=(bowl.position[0], bowl.position[1], 0.025))
            self.world.held = None
        return PrimitiveResult.success()


def run(text: str, drop_red: bool) -> Executor:
    world = World()
    ex = Executor(world, drop_red)
    interp = Interpreter(parse_program(text).program, default_catalog(), ex,
                         snapshot=world.snapshot)
    ex.interp = interp
    result = interp.run()
    assert result.status.value == "success", result.reason
    return ex


def test_argument_scope_keeps_the_monitor_quiet_while_another_block_is_placed():
    ex = run(TWO_BLOCKS, drop_red=False)
    # placing blue_block: red is neither held nor in the bowl, yet the monitor is out of scope
    assert dict(ex.in_scope)["place_in:blue_block"] == ()
    assert dict(ex.in_scope)["place_in:red_block"] == ("red_dropped",)
    assert [n for n, _a in ex.calls] == ["pick", "place_in", "pick", "place_in"]


def test_name_only_scope_would_fire_for_the_other_block():
    ex = run(TWO_BLOCKS.replace("during place_in(obj=red_block)", "during place_in"),
             drop_red=False)
    # the old behaviour the argument scope fixes: a spurious re-pick of red while placing blue
    assert [n for n, _a in ex.calls][:3] == ["pick", "place_in", "pick"]
    assert ex.calls[2] == ("pick", {"obj": "red_block"})
    assert dict(ex.in_scope)["place_in:blue_block"] == ("red_dropped",)


def test_argument_scoped_monitor_fires_for_its_own_block():
    ex = run(TWO_BLOCKS, drop_red=True)
    names = [(n, a.get("obj")) for n, a in ex.calls]
    # red slips during its place_in: the handler re-picks it and the place_in runs again
    assert names == [("pick", "blue_block"), ("place_in", "blue_block"), ("pick", "red_block"),
                     ("place_in", "red_block"), ("pick", "red_block"), ("place_in", "red_block")]


def test_skill_parameters_are_matched_by_their_bound_values():
    text = """task "t" {
      main { put(obj=blue_block) put(obj=red_block) }
      monitor red_dropped when not holding(red_block) and not in(red_block, green_bowl)
          during put(obj=red_block) {
        pick(obj=red_block)
        then resume
      }
      skill put(obj: object) {
        pick(obj=obj)
        place_in(obj=obj, container=green_bowl)
      }
    }"""
    ex = run(text, drop_red=False)
    blue = [active for what, active in ex.in_scope if what.endswith(":blue_block")]
    red = [active for what, active in ex.in_scope if what.endswith(":red_block")]
    # in scope for what put(obj=red_block) runs (its pick too; not the handler's own pick),
    # never for blue's put
    assert blue == [(), ()]
    assert red == [("red_dropped",), (), ("red_dropped",), ("red_dropped",)]

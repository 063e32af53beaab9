"""The one walker, transformer and path scheme of the program tree (program/tree.py)."""

from __future__ import annotations

from frankenbot.program import parse_program
from frankenbot.program.printer import print_program
from frankenbot.program.tree import (
    Call,
    Ident,
    SkillInliner,
    Substitution,
    Transformer,
    find_node,
    iter_blocks,
    iter_calls,
    iter_nodes,
    within,
)

TEXT = '''task "t" {
  main {
    start:
    pick(obj=red_block)
    if holding(red_block) { place_in(obj=red_block, container=green_bowl) }
    else { repeat 2 { wait(seconds=1) } }
    while not gripper_open max 2 { open_gripper() }
    carry(obj=blue_block, dest=green_bowl)
    exit success
  }
  skill carry(obj: object, dest: object) {
    pick(obj=obj)
    place_in(obj=obj, container=dest)
  }
}'''


def test_calls_are_found_in_every_block_kind_loops_included() -> None:
    program = parse_program(TEXT).program
    names = [c.name for c in iter_calls(program.main.body)]
    assert names == ["pick", "place_in", "wait", "open_gripper", "carry"]


def test_paths_of_statements_and_blocks_follow_the_one_scheme() -> None:
    program = parse_program(TEXT).program
    paths = dict(iter_nodes(program))
    assert isinstance(paths["main/2/then/0"], Call)
    assert paths["main/2/else/0/body/0"].name == "wait"
    assert paths["main/3/body/0"].name == "open_gripper"
    assert paths["skill:carry/1"].name == "place_in"
    assert find_node(program, "main/1").name == "pick"
    blocks = [p for p, _b in iter_blocks(program.main.body)]
    assert blocks == ["main", "main/2/then", "main/2/else", "main/2/else/0/body",
                      "main/3/body"]
    assert within("main/4/carry/0", "main/4") and not within("main/40", "main/4")


def test_an_identity_transformer_rebuilds_an_equal_program() -> None:
    program = parse_program(TEXT).program
    assert Transformer().program(program) == program


def test_substitution_and_inlining_bind_skill_parameters() -> None:
    program = parse_program(TEXT).program
    renamed = Substitution({"red_block": Ident("yellow_block")}).program(program)
    assert "holding(yellow_block)" in print_program(renamed)
    inlined = SkillInliner({s.name: s for s in program.skills}).program(program)
    calls = [(c.name, tuple((a.name, str(a.value)) for a in c.args))
             for c in iter_calls(inlined.main.body)]
    assert calls[-2:] == [("pick", (("obj", "blue_block"),)),
                          ("place_in", (("obj", "blue_block"), ("container", "green_bowl")))]

"""Free-form demo instructions map to a sim scene with those objects in those roles."""

import pytest

from frankenbot.bringup.scenario import match_families, scenario_for
from frankenbot.errors import FrankenbotError
from frankenbot.sim.tasks import sample_task


@pytest.mark.parametrize("instruction, family, params", [
    ("put the red block in the green bowl", "put_in_bowl",
     {"object": "red_block", "target": "green_bowl"}),
    ("Stack the blue block on the red block.", "stack",
     {"object": "blue_block", "target": "red_block"}),
    ("build a tower: red block at the bottom, then green block, then blue block on top", "tower",
     {"order": ("red_block", "green_block", "blue_block")}),
])
def test_scene_has_the_named_objects_in_their_roles(instruction, family, params):
    sc = scenario_for(instruction, first_seed=0)
    assert sc.family == family
    sampled = dict(sample_task(sc.family, sc.seed).task.params)
    for key, value in params.items():
        assert sampled[key] == value


def test_roles_are_not_swapped():
    a = scenario_for("stack the blue block on the red block")
    b = scenario_for("stack the red block on the blue block")
    assert dict(sample_task("stack", a.seed).task.params)["object"] == "blue_block"
    assert dict(sample_task("stack", b.seed).task.params)["object"] == "red_block"


def test_instruction_without_a_sim_task_is_refused_not_guessed():
    assert match_families("fly the drone to the kitchen") == []
    with pytest.raises(FrankenbotError, match="no task matching"):
        scenario_for("fly the drone to the kitchen")


@pytest.mark.parametrize("instruction, family, params", [
    ("I'd like the crimson cube to be in the emerald bowl", "put_in_bowl",
     {"object": "red_block", "target": "green_bowl"}),
    ("would you kindly pull the drawer open by its handle", "open_drawer", {}),
    ("pick up the navy brick and set it down onto the plate", "put_on_plate",
     {"object": "blue_block", "target": "white_plate"}),
    ("stash the yellow block in the drawer, then shut it", "put_in_drawer",
     {"object": "yellow_block"}),
])
def test_free_phrasings_find_their_task_through_the_understanding_stage(instruction, family,
                                                                        params):
    sc = scenario_for(instruction, first_seed=0)
    assert sc.family == family
    sampled = dict(sample_task(sc.family, sc.seed).task.params)
    for key, value in params.items():
        assert sampled[key] == value

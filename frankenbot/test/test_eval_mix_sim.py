"""The brain against each catalogue kind in the real sim (perceived scene, offline planner): the
kind fires at its phase and the handling ends as expected (recovered, or a clean stop that says
why). Slow: each case is one full episode."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow

# kind -> (family, development seed, phase); each must fire and be handled
CASES = {
    "grasp_slip": ("pick_up", 2, "lift"),
    "camera_blip": ("put_in_bowl", 3, "transport"),
    "rotate_object": ("put_in_bowl", 3, "before_pick"),
    "lighting_change": ("put_in_bowl", 3, "now"),
    "move_container": ("put_in_bowl", 3, "transport"),
    "block_on_target": ("stack", 3, "before_place"),
    "occupy_target": ("put_on_plate", 3, "before_place"),
    "obstacle_on_path": ("push_to_zone", 3, "now"),
    "swap_object": ("put_in_bowl", 3, "before_pick"),
    "shut_in_drawer": ("put_in_bowl", 3, "before_pick"),
    "remove_object": ("put_in_bowl", 3, "before_pick"),
    "move_container_away": ("put_in_bowl", 3, "transport"),
    "camera_dead": ("put_in_bowl", 3, "transport"),
    "topple_stack": ("tower", 3, "after_place"),
    "drawer_stuck": ("put_in_drawer", 3, "now"),
}


@pytest.fixture(scope="module")
def runner():
    from frankenbot.eval.mix import MixRunner

    r = MixRunner()
    yield r
    r.close()


@pytest.mark.heavy  # 15 full episodes
@pytest.mark.parametrize("kind", sorted(CASES))
def test_kind_fires_at_its_phase_and_the_brain_handles_it(runner, kind):
    from frankenbot.eval.mix import ABLATIONS, EpisodeSpec, Injection
    from frankenbot.sim.anomalies import KINDS

    family, seed, phase = CASES[kind]
    o = runner.run(EpisodeSpec(0, seed, family, (Injection(kind, phase),)),
                   ABLATIONS["no_memory"])
    (fired,) = [f for f in o.fired if f.kind == kind]
    assert fired.phase == phase
    if KINDS[kind].impossible:
        assert o.impossible and o.handled, (o.status, o.reason)
        assert o.status != "success" or o.success
    else:
        assert o.success, (o.status, o.reason, o.handling)


@pytest.fixture(scope="module")
def two_specs():
    from frankenbot.eval.mix import EpisodeSpec, Injection

    return [EpisodeSpec(0, 1, "pick_up"),
            EpisodeSpec(1, 2, "put_in_bowl", (Injection("remove_object", "now"),))]


def _check_two(specs, outcomes) -> None:
    assert [(o.index, o.family, o.seed, o.drawn) for o in outcomes] == [
        (s.index, s.family, s.seed, tuple(i.kind for i in s.injections)) for s in specs]
    assert outcomes[0].success
    assert outcomes[1].impossible and outcomes[1].handled, outcomes[1].reason


def test_two_workers_run_the_same_episode_list_once_each(two_specs):
    from frankenbot.eval.mix import run_mix

    _check_two(two_specs, run_mix(two_specs, ["full"], workers=2, log=lambda s: None))


def test_a_local_ray_instance_runs_the_same_episode_list_once_each(two_specs):
    """``bench --ray local``: the same episodes as Ray tasks on a Ray instance started here
    (2 CPUs), merged into the same ordered list as the process pool's."""
    pytest.importorskip("ray")
    from frankenbot.eval.mix import run_mix

    lines: list[str] = []
    outcomes = run_mix(two_specs, ["full"], workers=2, log=lines.append, ray_address="local")
    _check_two(two_specs, outcomes)
    assert any("ray: 2 episodes on 2 CPUs" in line for line in lines), lines
    assert sum(" #  0 " in line or " #  1 " in line for line in lines) == 2, lines


def test_an_unreachable_ray_address_is_a_clear_error(two_specs):
    pytest.importorskip("ray")
    from frankenbot.errors import ConfigError
    from frankenbot.eval.mix import run_mix

    with pytest.raises(ConfigError, match="could not connect to Ray"):
        run_mix(two_specs[:1], ["full"], ray_address="ray://127.0.0.1:1")

"""One typed schema per component: defaults, YAML checks, ROS descriptors and live changes all
come from the settings dataclasses (frankenbot/settings.py, nodes/parameters.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from frankenbot import settings
from frankenbot.errors import ConfigError
from frankenbot.settings import section, setting

CONFIG = Path(__file__).resolve().parents[1] / "config"


@dataclass(frozen=True)
class Inner:
    timeout: float = setting(60.0, "one request", unit="s", low=0.1, live=True)
    mode: str = setting("auto", "how", choices=("auto", "text"))

    def __post_init__(self) -> None:
        settings.validate(self, "inner")


@dataclass(frozen=True)
class Outer:
    rate: float = setting(10.0, "frames a second", unit="Hz", low=0.1, high=100.0)
    stride: int = setting(2, "pixel stride", low=1)
    box: tuple[float, float, float] = setting((0.0, 0.0, 1.0), "a corner", unit="m")
    enabled: bool = setting(True, "on or off", live=True)
    inner: Inner = section(Inner)
    flat: Inner = section(lambda: Inner(timeout=5.0), "")

    def __post_init__(self) -> None:
        settings.validate(self, "outer")


def test_the_schema_names_nested_sections_and_knows_types_units_and_ranges() -> None:
    by_name = {s.name: s for s in settings.schema(Outer)}
    assert list(by_name) == ["rate", "stride", "box", "enabled", "inner.timeout", "inner.mode",
                             "timeout", "mode"]
    assert by_name["rate"].kind == "float" and by_name["rate"].spec.unit == "Hz"
    assert by_name["box"].kind == "floats" and by_name["box"].length == 3
    assert by_name["inner.timeout"].live and not by_name["rate"].live
    built = settings.build(Outer, {"inner.timeout": 2, "box": [1, 2, 3], "mode": "text"})
    assert built.inner.timeout == 2.0 and built.box == (1.0, 2.0, 3.0)
    assert built.flat.mode == "text" and built.flat.timeout == 60.0  # the section's default
    assert settings.build(Outer, settings.values_of(built)) == built


@pytest.mark.parametrize("values, match", [
    ({"rat": 1.0}, r"unknown setting rat \(did you mean rate\?\)"),
    ({"rate": 0.0}, r"rate=0.0: expected a number in \[0.1, 100\] \(Hz\) \(out of range\)"),
    ({"rate": "fast"}, "rate='fast': expected a number"),
    ({"stride": 1.5}, "stride=1.5: expected an integer >= 1"),
    ({"enabled": 1}, "enabled=1: expected true or false"),
    ({"box": [1.0, 2.0]}, r"box=\[1.0, 2.0\]: expected a list of 3 numbers \(m\) \(got 2\)"),
    ({"inner.mode": "json"}, "inner.mode='json': expected one of 'auto' | 'text'"),
    ({"rate": float("nan")}, "NaN"),
])
def test_a_bad_value_is_named_with_what_was_expected(values: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        settings.build(Outer, values, where="test")


def test_an_instance_built_in_code_obeys_the_same_ranges() -> None:
    with pytest.raises(ConfigError, match="stride"):
        Outer(stride=0)
    assert settings.update(Outer(), {"inner.timeout": 3.0}).inner.timeout == 3.0


@pytest.mark.parametrize("setup", ["sim", "real_ur5e", "gazebo"])
def test_every_shipped_parameter_file_fits_the_schemas(setup: str) -> None:
    from frankenbot.bringup.config_check import check_params_file

    assert check_params_file(CONFIG / f"{setup}.yaml") == []


def test_a_misspelt_or_out_of_range_key_in_a_parameter_file_is_reported(tmp_path) -> None:
    from frankenbot.bringup.config_check import check_params_file, require_valid

    text = (CONFIG / "sim.yaml").read_text()
    bad = tmp_path / "sim.yaml"
    bad.write_text(text.replace("    stale_timeout: 2.0", "    stale_timout: 2.0")
                   .replace("    tier2_method: rules", "    replans: -1\n    tier2_method: rules"))
    problems = check_params_file(bad)
    assert any("frankenbot_perception" in p and "did you mean stale_timeout" in p
               for p in problems), problems
    assert any("frankenbot_executor replans=-1" in p for p in problems), problems
    # the overrides `frankenbot up` passes are checked with the file
    assert check_params_file(CONFIG / "sim.yaml", {"planner": {"review": "sometimes"}})
    with pytest.raises(ConfigError, match="review='sometimes'"):
        require_valid(CONFIG / "sim.yaml", {"planner": {"review": "sometimes"}})


def test_the_arm_and_review_files_are_checked_by_their_schemas(tmp_path) -> None:
    from frankenbot.motion.config import load_arm_config
    from frankenbot.planner.review import load_review_config

    arm = load_arm_config(CONFIG / "safety.yaml")
    assert arm.kinematics.tcp_offset == pytest.approx(0.145) and len(arm.home) == 6
    bad = tmp_path / "safety.yaml"
    bad.write_text((CONFIG / "safety.yaml").read_text().replace("velocity_scale: 0.5",
                                                                "velocity_scale: 2.5"))
    with pytest.raises(ConfigError, match="motion velocity_scale=2.5: expected a number in"):
        load_arm_config(bad)
    review = tmp_path / "review.yaml"
    review.write_text("review:\n  mode: always\n")
    with pytest.raises(ConfigError, match="planner node's `review` parameter"):
        load_review_config(review)
    assert load_review_config(CONFIG / "review.yaml").max_drop == pytest.approx(0.05)


def test_the_parameter_reference_is_generated_from_the_schemas() -> None:
    from frankenbot.bringup.config_check import reference_markdown

    doc = CONFIG.parents[1] / "docs" / "PARAMETERS.md"
    assert doc.read_text() == reference_markdown(), (
        "docs/PARAMETERS.md is stale: python -m frankenbot.bringup.config_check > "
        "docs/PARAMETERS.md")


def test_one_default_per_setting() -> None:
    """confidence_threshold, the tier budgets and the staleness live in one schema each; the
    escalation policy, the tier-2 evaluation and the node take them from there."""
    import inspect

    from frankenbot.anomaly import escalation
    from frankenbot.eval import tier2_eval
    from frankenbot.execution.executor import ExecutorParams

    assert "confidence_threshold" not in inspect.signature(escalation.EscalationPolicy).parameters
    default = ExecutorParams().tier2.confidence_threshold
    assert inspect.signature(tier2_eval.evaluate).parameters["threshold"].default == default
    names = settings.names(ExecutorParams)
    assert {"confidence_threshold", "handler_retries", "scene_stale_after_s"} <= set(names)


@pytest.mark.ros
def test_node_parameters_have_types_ranges_and_live_changes(ros_context) -> None:
    import rclpy
    from rcl_interfaces.msg import ParameterType
    from rclpy.parameter import Parameter

    from frankenbot.nodes.parameters import NodeSettings

    node = rclpy.create_node("settings_test", context=ros_context,
                             parameter_overrides=[Parameter("stride", value=4)])
    try:
        changed = []
        ns = NodeSettings(node, Outer, on_change=changed.append)
        assert ns.value.stride == 4  # the override, checked and built
        desc = node.describe_parameter("rate")
        assert desc.type == ParameterType.PARAMETER_DOUBLE
        assert desc.floating_point_range[0].from_value == pytest.approx(0.1)
        assert desc.floating_point_range[0].to_value == pytest.approx(100.0)
        assert "[Hz]" in desc.description and "read at start-up" in desc.description
        assert "one of: auto, text" in node.describe_parameter("inner.mode").additional_constraints
        # a live setting: accepted and applied
        ok = node.set_parameters([Parameter("inner.timeout", value=7.5)])[0]
        assert ok.successful and ns.value.inner.timeout == 7.5 and changed[-1] is ns.value
        # a start-up setting: refused with the reason
        refused = node.set_parameters([Parameter("stride", value=3)])[0]
        assert not refused.successful and "restart the node" in refused.reason
        assert ns.value.stride == 4
        # out of range (ROS checks the descriptor's range) and a broken rule (the schema)
        assert not node.set_parameters([Parameter("inner.timeout", value=0.0)])[0].successful
        assert ns.value.inner.timeout == 7.5

        def refuse(_new: Outer) -> None:
            raise ConfigError("no such file")

        ns2_node = rclpy.create_node("settings_test2", context=ros_context)
        try:
            NodeSettings(ns2_node, Outer, on_change=refuse)
            r = ns2_node.set_parameters([Parameter("enabled", value=False)])[0]
            assert not r.successful and r.reason == "no such file"
        finally:
            ns2_node.destroy_node()
    finally:
        node.destroy_node()


@pytest.mark.ros
def test_a_wrong_type_in_a_parameter_file_stops_the_node_with_the_setting_named(
        ros_context) -> None:
    import rclpy
    from rclpy.parameter import Parameter

    from frankenbot.nodes.parameters import NodeSettings

    node = rclpy.create_node("settings_bad", context=ros_context,
                             parameter_overrides=[Parameter("rate", value=15)])
    try:
        with pytest.raises(ConfigError, match="settings_bad parameter rate: expected a number"):
            NodeSettings(node, Outer)
    finally:
        node.destroy_node()

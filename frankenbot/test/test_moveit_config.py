"""The MoveIt backend's configuration, against a TEST-ONLY fake MoveItConfigsBuilder.

moveit_configs_utils does not install here. The fake keeps the two behaviours that broke the
first real run: ``robot_description_semantic()`` without arguments points at ``config/ur.srdf``
(which ur_moveit_config Jazzy does not ship), and ``to_dict()`` holds each planning pipeline's
config under the pipeline's name, so a shallow update with moveit_cpp.yaml's keys would replace
a pipeline wholesale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from frankenbot.nodes import moveit_backend as mb

UR_MOVEIT_CONFIG_FILES = {Path("srdf") / "ur.srdf.xacro"}  # what the Jazzy package has


class FakeBuilder:
    """Records the calls; to_dict() looks like MoveItConfigs.to_dict() for ur_moveit_config."""

    instances: list["FakeBuilder"] = []

    def __init__(self, robot_name: str, package_name: str) -> None:
        self.robot_name, self.package_name = robot_name, package_name
        self.srdf: tuple[Path, dict] | None = None
        self.pipelines: list[str] | None = None
        FakeBuilder.instances.append(self)

    def robot_description_semantic(self, file_path: Any = None, mappings: Any = None):
        self.srdf = (Path(file_path or Path("config") / "ur.srdf"), dict(mappings or {}))
        return self

    def planning_pipelines(self, default_planning_pipeline: str | None = None,
                           pipelines: list[str] | None = None):
        assert default_planning_pipeline in (pipelines or ["ompl"])
        self.pipelines = list(pipelines or ["ompl"])
        return self

    def to_moveit_configs(self) -> "FakeBuilder":
        if self.srdf is None:
            self.robot_description_semantic()
        if self.srdf[0] not in UR_MOVEIT_CONFIG_FILES:
            raise FileNotFoundError(f"ur_moveit_config has no {self.srdf[0]}")
        return self

    def to_dict(self) -> dict:
        out: dict[str, Any] = {
            "robot_description_semantic": f"<robot name='{self.srdf[1].get('name')}'/>",
            "planning_pipelines": self.pipelines or ["ompl"],
        }
        for name in self.pipelines or ["ompl"]:
            out[name] = {"planning_plugins": [f"{name}_interface/Planner"],
                         "request_adapters": ["default_planning_request_adapters/Resolve"],
                         "start_state_max_bounds_error": 0.1}
        return out


@pytest.fixture(autouse=True)
def _fresh():
    FakeBuilder.instances.clear()


def test_config_dict_names_the_srdf_xacro_with_the_ur_type():
    config = mb.moveit_config_dict(FakeBuilder, ur_type="ur5e")
    (builder,) = FakeBuilder.instances
    assert (builder.robot_name, builder.package_name) == ("ur", "ur_moveit_config")
    assert builder.srdf == (Path("srdf") / "ur.srdf.xacro", {"name": "ur5e"})
    assert config["robot_description_semantic"] == "<robot name='ur5e'/>"


def test_config_dict_keeps_the_ompl_pipeline_and_adds_our_request_params():
    config = mb.moveit_config_dict(FakeBuilder)
    assert config["ompl"]["planning_plugins"] == ["ompl_interface/Planner"]
    assert config["pilz_industrial_motion_planner"]["planning_plugins"]
    ours = yaml.safe_load(mb.default_moveit_cpp_file().read_text())
    assert config[mb.FREE_MOTION_PARAMS]["plan_request_params"]["planning_pipeline"] == "ompl"
    assert config[mb.LINEAR_MOTION_PARAMS]["plan_request_params"]["planner_id"] == "LIN"
    assert config["planning_scene_monitor_options"] == ours["planning_scene_monitor_options"]
    assert not set(ours) & set(mb.PIPELINES)  # our keys never sit on a pipeline's name


def test_an_override_under_a_pipeline_name_is_merged_not_replacing(tmp_path):
    override = tmp_path / "moveit_cpp.yaml"
    override.write_text(yaml.safe_dump({"ompl": {"start_state_max_bounds_error": 0.2}}))
    config = mb.moveit_config_dict(FakeBuilder, moveit_cpp_file=override)
    assert config["ompl"]["start_state_max_bounds_error"] == 0.2
    assert config["ompl"]["planning_plugins"] == ["ompl_interface/Planner"]  # still there


def test_deep_merge_merges_mappings_and_replaces_the_rest():
    base = {"a": {"x": 1, "y": {"z": 2}}, "b": [1, 2]}
    merged = mb.deep_merge(base, {"a": {"y": {"w": 3}}, "b": [3]})
    assert merged == {"a": {"x": 1, "y": {"z": 2, "w": 3}}, "b": [3]}
    assert base == {"a": {"x": 1, "y": {"z": 2}}, "b": [1, 2]}  # not modified


def test_moveit_py_gets_its_own_node_name_and_the_merged_dict(monkeypatch):
    from frankenbot.motion.kinematics import UR5eKinematics
    from frankenbot.motion.safety import SafetyConfig, SafetyEnvelope

    made: dict[str, Any] = {}

    class FakeMoveItPy:
        def __init__(self, node_name: str, config_dict: dict) -> None:
            made.update(node_name=node_name, config=config_dict)

        def get_planning_component(self, group: str) -> str:
            return group

    monkeypatch.setattr(mb, "_moveit_modules", lambda: (FakeMoveItPy, object, FakeBuilder))
    monkeypatch.setattr(mb.MoveItBackend, "_add_table", lambda self: None)
    monkeypatch.setattr(mb.MoveItBackend, "_attach_gripper", lambda self: None)
    kin = UR5eKinematics()
    backend = mb.MoveItBackend(object(), kinematics=kin,
                               envelope=SafetyEnvelope(SafetyConfig(), kin))
    _, arm = backend._session()
    assert arm == mb.PLANNING_GROUP
    assert made["node_name"] == mb.MOVEIT_NODE_NAME != "frankenbot_executor"
    assert made["config"]["ompl"]["planning_plugins"]

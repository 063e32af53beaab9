"""Memory settings: shipped YAML sections are valid, bad values are named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from frankenbot import settings
from frankenbot.errors import ConfigError
from frankenbot.memory.config import MemoryConfig, default_db_path


@pytest.mark.parametrize("setup", ["sim", "real_ur5e", "gazebo"])
def test_shipped_config_sections_are_valid(package_root: Path, setup: str) -> None:
    data = yaml.safe_load((package_root / "config" / f"{setup}.yaml").read_text())
    config = settings.build(MemoryConfig, data["/**/frankenbot_memory"]["ros__parameters"])
    assert config.min_support >= 1 and 0 < config.min_success_rate <= 1


@pytest.mark.parametrize("values, match", [
    ({"min_support": 0}, "min_support"),
    ({"min_success_rate": 1.5}, "min_success_rate"),
    ({"min_pattern_length": 1}, "min_pattern_length"),
    ({"max_pattern_length": 1}, "max_pattern_length"),
    ({"token_budget": 0}, "token_budget"),
    ({"min_support": "3"}, "integer"),
    ({"use_embeddings": 1}, "true or false"),
    ({"threshold": 3}, "unknown setting threshold"),
])
def test_bad_settings_are_refused_with_the_name(values: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        settings.build(MemoryConfig, values)


def test_default_path_is_in_the_user_data_dir() -> None:
    assert default_db_path().name == "memory.sqlite3"
    assert "frankenbot" in default_db_path().parts
    assert MemoryConfig(db_path="~/x.db").resolved_db_path == Path.home() / "x.db"

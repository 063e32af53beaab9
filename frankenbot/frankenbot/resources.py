"""The one place that locates the package's data files: config/, skills/, launch/.

In a source checkout (or a colcon ``--symlink-install``) they sit beside the Python package; in an
installed package they are in the ament share directory. Everything that reads a shipped file goes
through here, so the lookup order cannot drift between modules.
"""

from __future__ import annotations

from pathlib import Path

from frankenbot.errors import ConfigError

_SOURCE_ROOT = Path(__file__).resolve().parents[1]  # frankenbot/ (the ament_python package)


def package_root() -> Path:
    """The frankenbot ament_python package folder (source checkout) or its installed share."""
    if (_SOURCE_ROOT / "config").is_dir():
        return _SOURCE_ROOT
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError as e:  # ament_index ships with rclpy; a bare venv has only the source
        raise ConfigError("cannot locate frankenbot's data files (no source tree, no ament "
                          "index)") from e
    return Path(get_package_share_directory("frankenbot"))


def config_dir() -> Path:
    return package_root() / "config"


def skills_dir() -> Path:
    return package_root() / "skills"


def config_path(name: str | Path) -> Path:
    """A config file: ``name`` as given when it exists or is absolute, else in config/."""
    p = Path(name).expanduser()
    if p.is_absolute() or p.is_file():
        if not p.is_file():
            raise ConfigError(f"config file not found: {p}")
        return p
    c = config_dir() / p
    if not c.is_file():
        raise ConfigError(f"config file {str(name)!r} not found in {config_dir()}")
    return c


def objects_path() -> Path | None:
    """config/objects.yaml (the object catalogue), if the package has one."""
    p = config_dir() / "objects.yaml"
    return p if p.is_file() else None


def fixtures_path() -> Path | None:
    """config/scene_fixtures.yaml, if the package has one."""
    p = config_dir() / "scene_fixtures.yaml"
    return p if p.is_file() else None

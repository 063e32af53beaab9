"""The layers hold: the import contracts are kept, an AST walk agrees, a violation breaks one.

The contracts live in ``.importlinter`` at the repository root (run by ``make lint``). The AST walk
is an independent second opinion: it reads every ``import`` statement, including the lazy ones
inside functions, of every core module.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "frankenbot" / "frankenbot"
CONFIG = REPO_ROOT / ".importlinter"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

CORE = ("program", "anomaly", "execution", "primitives", "motion", "perception", "planner",
        "memory", "ports.py", "common.py", "state.py", "errors.py", "resources.py", "robotiq.py",
        "ur_driver.py", "spatial.py", "settings.py", "transforms.py", "shapes.py",
        "fixture_map.py", "tcp.py")
NOT_FROM_CORE = ("frankenbot.sim", "frankenbot.eval", "frankenbot.bringup", "frankenbot.nodes",
                 "frankenbot.cli", "rclpy", "mujoco", "moveit", "moveit_configs_utils",
                 "tf2_ros", "llama_cpp")
MESSAGE_SUFFIXES = ("_msgs", "_interfaces", "_srvs")  # ROS message / service / action packages
NOT_FROM_SIM = ("frankenbot.planner", "frankenbot.execution", "frankenbot.memory",
                "frankenbot.anomaly", "frankenbot.primitives", "frankenbot.eval",
                "frankenbot.bringup", "frankenbot.nodes", "rclpy")


def _imports(path: Path) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def _violations(files: list[Path], forbidden: tuple[str, ...],
                suffixes: tuple[str, ...] = ()) -> list[str]:
    bad = []
    for f in files:
        for line, name in _imports(f):
            top = name.split(".")[0]
            if any(name == m or name.startswith(m + ".") for m in forbidden) or (
                    top.endswith(suffixes) if suffixes else False):
                bad.append(f"{f.relative_to(PACKAGE)}:{line} imports {name}")
    return bad


def _modules(*parts: str) -> list[Path]:
    files: list[Path] = []
    for p in parts:
        target = PACKAGE / p
        files += sorted(target.rglob("*.py")) if target.is_dir() else [target]
    return files


def test_no_core_module_imports_sim_eval_bringup_nodes_rclpy_or_messages_by_ast() -> None:
    assert _violations(_modules(*CORE), NOT_FROM_CORE, MESSAGE_SUFFIXES) == []


def test_the_contract_names_every_installed_message_package() -> None:
    """import-linter takes whole names only: a message package installed later (or built here,
    frankenbot_interfaces) must be added to the core's forbidden list, or this fails."""
    import configparser
    import importlib.util
    import site

    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    forbidden = set(parser["importlinter:contract:core-is-pure"]["forbidden_modules"].split())
    roots = [Path(p) for p in site.getsitepackages()] + [
        Path(p) for p in sys.path if p and Path(p).is_dir()]
    installed = {d.name for r in roots for d in r.iterdir()
                 if d.is_dir() and d.name.endswith(MESSAGE_SUFFIXES)
                 and not d.name.startswith("ament_") and (d / "msg").is_dir()
                 or d.is_dir() and d.name.endswith(MESSAGE_SUFFIXES) and (d / "srv").is_dir()}
    assert importlib.util.find_spec("sensor_msgs") is None or "sensor_msgs" in installed
    assert installed - forbidden == set()


def test_the_sim_imports_no_brain_module_by_ast() -> None:
    assert _violations(_modules("sim"), NOT_FROM_SIM) == []


def test_the_ast_check_sees_lazy_imports(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from frankenbot.sim.world import SimWorld\n    return SimWorld\n")
    assert _imports(f) == [(2, "frankenbot.sim.world"), (2, "frankenbot.sim.world.SimWorld")]


def _lint(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([str(LINT_IMPORTS), "--config", str(CONFIG), "--no-cache"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter not installed")
def test_import_contracts_are_kept() -> None:
    out = _lint(REPO_ROOT)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert out.stdout.count("KEPT") == 4  # three layers contracts + the understanding pipeline


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter not installed")
def test_a_forbidden_import_breaks_a_contract(tmp_path: Path) -> None:
    copy = tmp_path / "frankenbot"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "planner" / "sneaky.py").write_text(
        '"""A planner module that reaches into the simulator."""\n\n'
        "def peek():\n    from frankenbot.sim.world import SimWorld\n\n    return SimWorld\n")
    out = _lint(tmp_path, pythonpath=tmp_path)
    assert out.returncode != 0
    assert "frankenbot.planner.sneaky -> frankenbot.sim.world" in out.stdout


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter not installed")
@pytest.mark.parametrize("package", ["sensor_msgs.msg", "frankenbot_interfaces.msg",
                                     "control_msgs.action"])
def test_a_core_module_importing_a_message_package_breaks_the_contract(
        tmp_path: Path, package: str) -> None:
    """Message construction belongs in nodes/ (scene_msgs, anomaly_msgs, memory_msgs): a core
    module that builds a message, even lazily inside a function, breaks the core contract."""
    copy = tmp_path / "frankenbot"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "perception" / "to_msg.py").write_text(
        '"""A perception module that builds a ROS message itself."""\n\n'
        f"def to_msg():\n    import {package}\n\n    return {package}\n")
    out = _lint(tmp_path, pythonpath=tmp_path)
    assert out.returncode != 0, out.stdout[-2000:]
    top = package.split(".")[0]
    assert f"frankenbot.perception.to_msg -> {top}" in out.stdout, out.stdout[-3000:]


def test_an_understanding_stage_importing_a_later_one_breaks_the_pipeline_contract(
        tmp_path: Path) -> None:
    copy = tmp_path / "frankenbot"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    words = copy / "planner" / "understanding" / "words.py"
    words.write_text(words.read_text() + "\n\ndef later():\n"
                     "    from frankenbot.planner.understanding import build\n\n"
                     "    return build\n")
    out = _lint(tmp_path, pythonpath=tmp_path)
    assert out.returncode != 0
    said = " ".join(out.stdout.split())  # the report wraps long lines
    assert ("frankenbot.planner.understanding.words -> frankenbot.planner.understanding.build"
            in said)

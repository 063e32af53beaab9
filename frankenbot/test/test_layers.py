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
        "ur_driver.py", "spatial.py")
NOT_FROM_CORE = ("frankenbot.sim", "frankenbot.eval", "frankenbot.bringup", "frankenbot.nodes",
                 "frankenbot.cli", "rclpy", "mujoco")
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


def _violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for f in files:
        for line, name in _imports(f):
            if any(name == m or name.startswith(m + ".") for m in forbidden):
                bad.append(f"{f.relative_to(PACKAGE)}:{line} imports {name}")
    return bad


def _modules(*parts: str) -> list[Path]:
    files: list[Path] = []
    for p in parts:
        target = PACKAGE / p
        files += sorted(target.rglob("*.py")) if target.is_dir() else [target]
    return files


def test_no_core_module_imports_sim_eval_bringup_nodes_or_rclpy_by_ast() -> None:
    assert _violations(_modules(*CORE), NOT_FROM_CORE) == []


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

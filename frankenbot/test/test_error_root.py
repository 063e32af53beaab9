"""Every public exception FrankenBot defines derives from the one root (frankenbot/errors.py),
so the CLI and the nodes turn any of them into a clear message instead of a traceback."""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

from frankenbot.errors import FrankenbotError

PACKAGE = Path(__file__).resolve().parents[1] / "frankenbot"
BUILTIN_ERRORS = {name for name, obj in vars(builtins).items()
                  if isinstance(obj, type) and issubclass(obj, BaseException)}


def _exception_classes() -> list[tuple[str, str]]:
    """(module, class) for every public class whose bases name an exception."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        module = ".".join(("frankenbot", *path.relative_to(PACKAGE).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        for node in tree.body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")
                     for b in node.bases]
            if any(b in BUILTIN_ERRORS or b.endswith(("Error", "Exception", "Refusal",
                                                      "Violation", "Unavailable"))
                   for b in bases):
                found.append((module, node.name))
    return found


def test_every_public_exception_derives_from_the_root() -> None:
    classes = _exception_classes()
    assert len(classes) > 20  # the walk finds them (errors.py alone has nine)
    strays = []
    for module, name in classes:
        cls = getattr(importlib.import_module(module), name)
        if not issubclass(cls, FrankenbotError):
            strays.append(f"{module}.{name}")
    assert strays == []

"""`frankenbot skills list|show|export|import` through the real command entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frankenbot.cli import main

GRAB = 'skill grab(o: object) "detect, then pick" {\n  detect(obj=o)\n  pick(obj=o)\n}\n'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_seed_skills_as_json(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "skills", "--db", str(tmp_path / "m.db"), "list", "--json")
    assert code == 0
    names = {s["name"]: s for s in json.loads(out)}
    assert names["pick_and_place"]["params"] == [["obj", "object"], ["container", "object"]]
    assert names["pick_and_place"]["origin"] == "seed"


def test_export_then_import_into_another_memory(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    src, dst = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    lib = tmp_path / "lib.fb"
    lib.write_text(GRAB)
    assert run(capsys, "skills", "--db", src, "import", str(lib))[0] == 0
    out_file = tmp_path / "out.fb"
    code, _, _ = run(capsys, "skills", "--db", src, "export", str(out_file), "--origin",
                     "imported")
    assert code == 0 and "skill grab(o: object)" in out_file.read_text()
    code, out, _ = run(capsys, "skills", "--db", dst, "--no-seeds", "import", str(out_file))
    assert code == 0 and "1 of 1 skills imported" in out
    code, out, _ = run(capsys, "skills", "--db", dst, "show", "grab")
    assert code == 0 and "# origin: imported" in out and "detect(obj=o)" in out


def test_import_skips_duplicates_and_invalid_skills_with_file_and_line(
        tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lib = tmp_path / "lib.fb"
    lib.write_text(GRAB + 'skill same(a: object, b: object) "x" {\n  pick(obj=a)\n'
                   '  place_in(obj=a, container=b)\n}\n'
                   'skill bad(a: object) "x" {\n  teleport(obj=a)\n}\n')
    code, out, err = run(capsys, "skills", "--db", str(tmp_path / "m.db"), "import", str(lib))
    assert code == 1
    assert "1 of 3 skills imported" in out
    assert f"{lib}:5: skipped same" in err and "pick_and_place" in err
    assert f"{lib}:10: skipped bad" in err and "teleport" in err


def test_syntax_error_in_import_names_the_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lib = tmp_path / "lib.fb"
    lib.write_text('skill x(a: object) "x" {\n  pick(obj=\n}\n')
    code, _, err = run(capsys, "skills", "--db", str(tmp_path / "m.db"), "import", str(lib))
    assert code == 1 and f"{lib}:" in err and "Traceback" not in err


def test_unknown_skill_and_foreign_file_are_clear_errors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "skills", "--db", str(tmp_path / "m.db"), "show", "nope")
    assert code == 1 and "no skill named 'nope'" in err
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    code, _, err = run(capsys, "skills", "--db", str(bad), "list")
    assert code == 1 and "not a FrankenBot memory database" in err
    assert bad.read_text() == "hello"

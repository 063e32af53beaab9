"""`frankenbot check`: exit 0 valid / 1 invalid, readable or JSON diagnostics, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from frankenbot.cli import main
from frankenbot.eval.program_bench import run_benchmark

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "program"
GOOD = FIXTURES / "01_red_in_green_bowl.fb"


def test_valid_file_exits_zero(capsys):
    assert main(["check", str(GOOD)]) == 0
    assert "valid" in capsys.readouterr().out


def test_invalid_file_exits_one_with_positions_and_hints(tmp_path, capsys):
    bad = tmp_path / "bad.fb"
    bad.write_text('task "x" {\n  main {\n    pik(obj=red_block)\n  }\n}\n')
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "3:5: error[unknown-callee]" in out and "did you mean pick?" in out
    assert "invalid" in out


def test_chat_wrapped_program_is_extracted_and_the_removed_text_reported(capsys):
    assert main(["check", str(FIXTURES / "22_chat_wrapped.txt")]) == 0
    out = capsys.readouterr().out
    assert "note: extracted the program; text before the program: Sure!" in out


def test_json_output_is_machine_readable(tmp_path, capsys):
    bad = tmp_path / "bad.fb"
    bad.write_text('task "x" { main { pick(obj=red_block }')
    assert main(["check", str(bad), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["valid"] is False
    (diag,) = data["diagnostics"]
    assert diag["code"] == "syntax" and diag["line"] == 1 and diag["severity"] == "error"


def test_objects_option_checks_the_scene(capsys):
    assert main(["check", str(GOOD), "--objects", "red_block,green_bowl", "--compact"]) == 0
    assert main(["check", str(GOOD), "--objects", "red_block", "--compact"]) == 1
    assert "unknown-object" in capsys.readouterr().out


def test_missing_file_is_a_clear_error_not_a_traceback(capsys):
    assert main(["check", "/nonexistent/prog.fb"]) == 1
    err = capsys.readouterr().err
    assert "cannot read" in err and "Traceback" not in err


def test_stdin_and_binary_garbage_never_print_a_traceback():
    for data in (GOOD.read_bytes(), b"\xff\xfe\x00garbage{{{", b""):
        proc = subprocess.run([sys.executable, "-m", "frankenbot.cli", "check", "-"],
                              input=data, capture_output=True, timeout=60)
        assert b"Traceback" not in proc.stderr + proc.stdout
        assert proc.returncode == (0 if data == GOOD.read_bytes() else 1)


def test_benchmark_quick_mode_reports_every_number(capsys):
    out = run_benchmark(quick=True)
    for key in ("parse_validate_ms", "node_overhead_us", "predicate_us_max", "targets_met"):
        assert key in out
    assert out["program_lines"] == 60
    assert "parse + validate" in capsys.readouterr().out

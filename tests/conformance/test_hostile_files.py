"""Issue 38, files given to the commands: `--expected-failures`, `diff`, `report` and
`--lf --report` open what they are given as the workspace rule opens files (a regular
file only, decided on the opened descriptor, bounded), and a report with deep nesting,
a 100,000-digit integer or a lone surrogate is a located error: each is ``FILE: why``
and exit 2, never a hang, a traceback, MemoryError or diff's "regression" status 1."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hostile_support import cli_with_deadline as _cli
from suite_runner import run_cli

HEADER = json.dumps({"type": "header", "suite_version": "0.1.0", "impl": "x"})


def _report(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def _case(**extra: Any) -> str:
    return json.dumps({"type": "case", "case": "def.x", "requirements": ["DEF-01"],
                       "outcome": "failed", "level": "MUST", "reason": "r", **extra})


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return _report(tmp_path, "good.jsonl", _case())


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


@pytest.fixture
def zero(tmp_path: Path) -> Path:
    path = tmp_path / "zero.jsonl"
    path.symlink_to("/dev/zero")
    return path


BAD_LINES = {
    "deep": '{"type": "case", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep-but-parsable": _case(got=json.loads("[" * 500 + "]" * 500)),
    "huge-integer": '{"type": "case", "x": ' + "9" * 100_000 + "}",
    "lone-surrogate": _case(reason="a\ud800b"),
    "lone-surrogate-key": _case(got={"\udc80": 1}),
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
@pytest.mark.parametrize("command", ["diff", "report"])
def test_a_hostile_report_line_is_a_located_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, good: Path, kind: str,
        command: str) -> None:
    bad = _report(tmp_path, "bad.jsonl", BAD_LINES[kind])
    argv = ([command, str(good), str(bad)] if command == "diff"
            else [command, str(bad), "--markdown", str(tmp_path / "out.md")])
    code, out, err = _cli(capsys, *argv)
    assert code == 2, out + err
    assert f"{bad}:2:" in err, err  # the file and the line
    assert "Traceback" not in err


@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize("command", ["diff", "report"])
def test_a_fifo_or_device_report_is_refused_unread(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, good: Path, kind: str,
        command: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(kind)
    argv = ([command, str(good), str(path)] if command == "diff"
            else [command, str(path), "--markdown", str(tmp_path / "out.md")])
    code, _, err = _cli(capsys, *argv, fifos=(path,) if kind == "fifo" else ())
    assert code == 2, err
    assert f"{path}: the report is not a regular file" in err, err


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_lf_with_a_fifo_or_device_report_is_refused(
        capsys: pytest.CaptureFixture[str], kind: str,
        request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(kind)
    code, _, err = _cli(capsys, "run", "--lf", "--report", str(path),
                        fifos=(path,) if kind == "fifo" else ())
    assert code == 2, err
    assert "--lf: cannot read the previous report" in err and "not a regular file" in err


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_expected_failures_that_is_not_a_bounded_regular_file(
        tmp_path: Path, kind: str, request: pytest.FixtureRequest) -> None:
    if kind == "huge":
        path = tmp_path / "huge.txt"
        with path.open("wb") as handle:
            handle.truncate(5 * 1024 * 1024)  # sparse: 5 MiB of NULs, over the bound
    else:
        path = request.getfixturevalue(kind)
    # a child process with a timeout: a FIFO that blocks fails the test, not the session
    run = run_cli(["run", "--req", "PROTO-01", "--expected-failures", str(path)],
                  cwd=tmp_path, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--expected-failures" in run.stderr and str(path) in run.stderr
    assert ("not a regular file" in run.stderr if kind != "huge"
            else "larger than" in run.stderr), run.stderr
    assert "Traceback" not in run.stdout + run.stderr

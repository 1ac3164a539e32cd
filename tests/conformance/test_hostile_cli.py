"""The ``capconf`` command's own files (SPEC.md 1.2, issue 21): every input is opened as
the reference opens workspace files, so a FIFO, ``/dev/zero``, a directory or hostile
JSON is a located error with exit 2, never a hang or a traceback; ``edit --write`` never
writes through a symbolic link, writes atomically and notices a file changed since it
was read; ``record``/``replay`` refuse bad logs (deep nesting, bad ``files`` keys) as
"bad log", exit 2.

Each command runs in a thread with a deadline, so a regression that blocks on a FIFO
fails here instead of hanging the run (the FIFO is then opened to release it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile_support import cli_with_deadline as run_cli

AGENT = "---\nname: a\ndescription: d\ntools: [read]\n---\nWork.\n"


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.md"
    os.mkfifo(path)
    return path


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent.md"
    path.write_text(AGENT)
    return path


def _refused(code: int, err: str, where: str) -> None:
    assert code == 2, err
    assert where in err and "Traceback" not in err, err


@pytest.mark.parametrize("command", [["validate"], ["prompt"],
                                     ["edit", "--set", "description=x"]])
def test_a_fifo_or_device_as_the_definition_is_a_located_error(
        capsys: pytest.CaptureFixture[str], fifo: Path, command: list[str]) -> None:
    """Bug: `validate FIFO` and `edit FIFO` hang; `edit /dev/zero` is a MemoryError."""
    code, _, err = run_cli(capsys, command[0], str(fifo), *command[1:], fifos=(fifo,))
    _refused(code, err, str(fifo))
    assert "not a regular file" in err
    code, _, err = run_cli(capsys, command[0], "/dev/zero", *command[1:])
    _refused(code, err, "/dev/zero")


def test_a_fifo_or_device_as_the_world_file_is_a_located_error(
        capsys: pytest.CaptureFixture[str], fifo: Path, agent: Path) -> None:
    code, _, err = run_cli(capsys, "validate", str(agent), "--world", str(fifo),
                           fifos=(fifo,))
    _refused(code, err, str(fifo))
    code, _, err = run_cli(capsys, "validate", str(agent), "--world", "/dev/zero")
    _refused(code, err, "/dev/zero")


@pytest.mark.parametrize("value", ["knowledge=[[[[", "knowledge=" + "[" * 100_000,
                                   "knowledge={\"name\": ", "body=@/dev/zero",
                                   "body=@{fifo}", "body=@{missing}"])
def test_edit_option_values_are_located_errors(capsys: pytest.CaptureFixture[str],
                                               fifo: Path, agent: Path, value: str) -> None:
    """Bug: `--set knowledge=[[[[` and `--set body=@/dev/zero` give tracebacks,
    `--set body=@FIFO` hangs."""
    value = value.replace("{fifo}", str(fifo)).replace("{missing}",
                                                       str(agent.parent / "absent.md"))
    before = agent.read_bytes()
    code, _, err = run_cli(capsys, "edit", str(agent), "--set", value, "--write",
                           fifos=(fifo,))
    assert code == 2 and "Traceback" not in err, err
    assert err.startswith("capconf: "), err
    assert agent.read_bytes() == before


def test_edit_write_refuses_to_write_through_a_symbolic_link(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Bug: `edit proj/agent.md --write` with proj/agent.md -> ../elsewhere/victim.md
    rewrites the file outside the folder."""
    (tmp_path / "elsewhere").mkdir()
    victim = tmp_path / "elsewhere" / "victim.md"
    victim.write_text(AGENT)
    (tmp_path / "proj").mkdir()
    link = tmp_path / "proj" / "agent.md"
    link.symlink_to("../elsewhere/victim.md")
    code, _, err = run_cli(capsys, "edit", str(link), "--set", "description=x", "--write")
    _refused(code, err, str(link))
    assert "symbolic link" in err
    assert victim.read_text() == AGENT and link.is_symlink()
    code, out, err = run_cli(capsys, "edit", str(link), "--set", "description=x")
    assert code == 0 and "description: x" in out, err  # reading through it is fine


def test_edit_write_replaces_the_file_atomically(capsys: pytest.CaptureFixture[str],
                                                 agent: Path) -> None:
    agent.chmod(0o640)
    inode = agent.stat().st_ino
    code, _, err = run_cli(capsys, "edit", str(agent), "--set", "description=new",
                           "--write")
    assert code == 0, err
    assert "description: new" in agent.read_text()
    assert agent.stat().st_ino != inode  # a new file renamed over the old one
    assert agent.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in agent.parent.iterdir()) == ["agent.md"]


def test_a_file_changed_since_it_was_read_is_not_overwritten(agent: Path) -> None:
    from capconf.conformance import cli_files

    original = cli_files.snapshot(str(agent), "definition", 1 << 20, follow=False)
    agent.write_text(AGENT + "# someone else's change\n")
    with pytest.raises(cli_files.InputError, match="changed since it was read"):
        cli_files.write_back(original, b"name: b\n")
    assert agent.read_text().endswith("someone else's change\n")
    replaced = agent.parent / "other.md"
    replaced.write_text(AGENT)
    original = cli_files.snapshot(str(agent), "definition", 1 << 20, follow=False)
    os.replace(replaced, agent)  # same bytes, another file
    with pytest.raises(cli_files.InputError, match="changed since it was read"):
        cli_files.write_back(original, b"name: b\n")


def _log(tmp_path: Path, header: str, *lines: str) -> Path:
    step = json.dumps({"step": 1, "op": "registry.list", "args": {},
                       "response": {"ok": True, "result": {}}})
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([header, *(lines or (step,))]) + "\n")
    return path


@pytest.mark.parametrize("files", [
    '{".": "x"}', '{"a\\u0000b": "x"}', '{"a": "x", "a/b": "y"}', '{"\\ud800": "x"}',
    '{"' + "n" * 300 + '": "x"}', '{"' + "d/" * 3000 + 'f": "x"}', '{"a//b": "x"}',
    '{"../x": "x"}', '{"/etc/x": "x"}', '{"a": "\\udfff"}', '{"a": 1}', '[]',
])
def test_bad_files_keys_are_a_bad_log(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                      files: str) -> None:
    """Bug: `"."`, NUL, a file and a folder of the same name, a lone surrogate and
    over-long names give tracebacks and exit 1."""
    path = _log(tmp_path, '{"capconf_log": 1, "files": ' + files + "}")
    code, _, err = run_cli(capsys, "replay", str(path))
    _refused(code, err, f"{path}:1: bad log")


def test_a_deeply_nested_response_is_a_bad_log(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    """Bug: a recorded response nested 900 deep crashes the comparer."""
    deep = "[" * 900 + "]" * 900
    step = ('{"step": 1, "op": "registry.list", "args": {}, "response": {"ok": true, '
            '"result": ' + deep + "}}")
    path = _log(tmp_path, '{"capconf_log": 1}', step)
    code, _, err = run_cli(capsys, "replay", str(path))
    _refused(code, err, f"{path}:2: bad log")


def test_fifo_and_device_logs_and_scenarios_are_refused(
        capsys: pytest.CaptureFixture[str], fifo: Path, tmp_path: Path) -> None:
    """Bug: a FIFO as log or scenario hangs; /dev/zero gives MemoryError."""
    for command in (["replay"], ["record", "--out", str(tmp_path / "out.jsonl")]):
        for path in (str(fifo), "/dev/zero", str(tmp_path)):
            code, _, err = run_cli(capsys, command[0], path, *command[1:], fifos=(fifo,))
            _refused(code, err, path)


def test_record_out_must_be_a_file(capsys: pytest.CaptureFixture[str],
                                   tmp_path: Path) -> None:
    """Bug: `record --out DIR` gives a traceback and exit 1."""
    scenario = tmp_path / "s.jsonl"
    scenario.write_text('{"op": "registry.list", "args": {}}\n')
    (tmp_path / "dir").mkdir()
    code, _, err = run_cli(capsys, "record", str(scenario), "--out", str(tmp_path / "dir"))
    _refused(code, err, str(tmp_path / "dir"))
    code, _, err = run_cli(capsys, "record", str(scenario), "--out",
                           str(tmp_path / "ok.jsonl"))
    assert code == 0, err
    assert json.loads((tmp_path / "ok.jsonl").read_text().splitlines()[1])["step"] == 1

"""Issue 38, the implementation's processes and its stream: the last probes.

- 40 grandchildren that leave the driver's process group with ``setsid()`` (20 after a
  double fork) all outlived the run (killpg never reaches another session); now none
  does, whether the run ends the driver with ``close`` or a ``capconf`` command ends.
- The runner does that without becoming a subreaper itself: run in-process (as here,
  inside pytest) it leaves its host's other children alone.
- An answer sent twice was reported as a schema error of the next op; now it is a
  response whose id answers no outstanding request, naming that id.
- A driver that closes stdout but keeps running was reported as exited; now as having
  closed its stdout, and it is still killed.
- One file name that is not UTF-8 in a folder aborted `validate` for every file (exit
  2, empty SARIF); now it is one error result of its own and the others are validated.

Waits below are bounded polls for the kernel to finish a kill, never timed assertions.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from suite_runner import fixture_env

from capconf.conformance import client
from capconf.conformance.cli import main
from capconf.conformance.client import (
    ImplementationClosedStdout,
    ProtocolViolation,
    SubprocessTransport,
)
from capconf.conformance.driver import Driver

linux_only = pytest.mark.skipif(sys.platform != "linux",
                                reason="containment of setsid() descendants is Linux only")

FAKE = Path(__file__).resolve().parent.parent / "fake_impls" / "escaping.py"
GUARD = 120  # seconds: only a hang reaches it
PR_GET_CHILD_SUBREAPER = 37


def running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in (b"Z", b"X")


def survivors(pids: list[int]) -> list[int]:
    """The pids still running once the kernel has had time to deliver the kills (a
    bounded poll: SIGKILL is delivered at once, reaping is asynchronous)."""
    left = [p for p in pids if running(p)]
    for _ in range(200):
        if not left:
            break
        time.sleep(0.05)
        left = [p for p in left if running(p)]
    return left


def read_pids(path: Path, count: int) -> list[int]:
    for _ in range(400):
        if path.exists() and len(path.read_text().split()) >= count:
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} never held {count} pids")


def kill_left(pids: list[int]) -> None:
    """A failed test must not leave its sleepers behind (they end themselves anyway)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@linux_only
def test_the_driver_runs_under_the_reaper_here() -> None:
    """The tests below are about the Linux containment; they must not pass vacuously
    because it was switched off."""
    assert client.CONTAINED


@linux_only
def test_grandchildren_that_leave_the_group_do_not_outlive_close(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    transport = SubprocessTransport([sys.executable, str(FAKE), "escape", str(pidfile)],
                                    timeout=GUARD)
    try:
        assert transport.exchange({"id": 1, "op": "hello", "args": {}})["ok"] is True
        pids = read_pids(pidfile, 40)
        assert all(running(p) for p in pids)  # they did start and were alive
        sessions = {Path(f"/proc/{p}/stat").read_bytes().rsplit(b")", 1)[1].split()[3]
                    for p in pids}
        assert len(sessions) == 40, "each sleeper leads a session of its own"
    finally:
        transport.close()
    left = survivors(pids)
    kill_left(left)
    assert left == [], f"{len(left)} of 40 grandchildren outlived the driver"


@linux_only
def test_grandchildren_that_leave_the_group_do_not_outlive_a_command(
        tmp_path: Path) -> None:
    """The same through a whole `capconf smoke` run in its own process."""
    pidfile = tmp_path / "pids"
    impl = f"{sys.executable} {FAKE} escape {pidfile}"
    proc = subprocess.run([sys.executable, "-m", "capconf.conformance.cli", "smoke",
                           "--impl", impl, "--timeout", str(GUARD)],
                          capture_output=True, text=True, timeout=GUARD * 2, cwd=tmp_path,
                          env=fixture_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    pids = read_pids(pidfile, 40)
    left = survivors(pids)
    kill_left(left)
    assert left == [], f"{len(left)} of 40 grandchildren outlived `capconf smoke`"


@linux_only
def test_the_runner_leaves_its_hosts_other_children_alone(tmp_path: Path) -> None:
    """In-process (inside pytest) the runner neither becomes a subreaper nor kills a
    child that it did not start for a driver."""
    unrelated = subprocess.Popen(["sleep", "600"])
    try:
        transport = SubprocessTransport([sys.executable, str(FAKE), "escape",
                                         str(tmp_path / "pids")], timeout=GUARD)
        try:
            assert transport.exchange({"id": 1, "op": "hello", "args": {}})["ok"] is True
        finally:
            transport.close()
        assert running(unrelated.pid) and unrelated.poll() is None
        flag = ctypes.c_int(-1)
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0
        assert flag.value == 0, "the runner made its host a subreaper"
    finally:
        unrelated.kill()
        unrelated.wait()
        kill_left(read_pids(tmp_path / "pids", 40))


def test_an_answer_sent_twice_is_named_as_such_and_the_next_case_is_in_step() -> None:
    driver = Driver(SubprocessTransport([sys.executable, str(FAKE), "twice"],
                                        timeout=GUARD))
    try:
        driver.hello()
        with pytest.raises(ProtocolViolation) as caught:
            driver.request("registry.list")
        message = caught.value.message
        assert "response id 1 answers no outstanding request" in message, message
        assert "second answer" in message and "`hello`" in message
        assert "required property" not in message and "invalid response" not in message
        # the stream was one line behind: a fresh process puts the next case in step
        driver.begin_case()
        assert driver.hello(refresh=True)["features"]
    finally:
        driver.close()


class _AnswersTheFirstRequestAgain:
    """A transport (no process) whose second answer is the first one again: the Driver,
    whatever transport it has, names the id before it checks the schema."""

    description = "replays"

    def __init__(self) -> None:
        self.first: dict[str, object] | None = None

    def exchange(self, request: dict[str, object]) -> dict[str, object]:
        if self.first is None:
            self.first = {"id": request["id"], "ok": True,
                          "result": {"implementation": {"name": "x", "language": "x"},
                                     "spec_version": "0.1.0", "features": []}}
        return self.first

    def exchange_raw(self, sent: bytes, op: str = "raw line") -> dict[str, object]:
        raise AssertionError("not used")

    def close(self) -> None:
        pass


def test_any_transports_answer_to_another_request_is_named_before_its_schema() -> None:
    driver = Driver(_AnswersTheFirstRequestAgain())
    driver.hello()
    with pytest.raises(ProtocolViolation) as caught:
        driver.request("registry.list")
    message = caught.value.message
    assert "response id 1 does not match request id 2" in message, message
    assert "answers no outstanding request" in message
    assert "required property" not in message


def test_a_driver_that_closes_stdout_but_runs_on_is_not_reported_as_exited(
        tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    driver = Driver(SubprocessTransport(
        [sys.executable, str(FAKE), "close-stdout", str(pidfile)], timeout=GUARD))
    try:
        driver.hello()
        pid = read_pids(pidfile, 1)[0]
        with pytest.raises(ImplementationClosedStdout) as caught:
            driver.request("registry.list")
        message = caught.value.message
        assert "closed its stdout while still running" in message, message
        assert "exited" not in message
        assert caught.value.outcome == "errored"
    finally:
        driver.close()
    left = survivors([pid])
    kill_left(left)
    assert left == [], "the driver that closed stdout was not killed"


AGENT = "---\nname: {name}\ndescription: d\ntools: Read, NoSuchTool\n---\nBody.\n"


@pytest.fixture
def folder_with_a_bad_name(tmp_path: Path) -> Path:
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "good.md").write_text(AGENT.format(name="good"))
    bad = os.fsencode(folder) + b"/bad\xff.md"
    try:
        with open(bad, "wb") as fh:
            fh.write(AGENT.format(name="bad").encode())
    except OSError as exc:  # a file system that refuses such names cannot hold the probe
        pytest.skip(f"cannot create a non-UTF-8 file name here: {exc}")
    return folder


def test_an_undecodable_name_is_one_error_and_the_other_files_are_validated(
        folder_with_a_bad_name: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = folder_with_a_bad_name
    code = main(["validate", str(folder), "--format", "sarif"])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    by_uri: dict[str, list[dict[str, object]]] = {}
    for r in results:
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        by_uri.setdefault(uri.rsplit("/", 1)[-1], []).append(r)
    assert set(by_uri) == {"good.md", "bad%FF.md"}, by_uri  # the URI of its real bytes
    assert [r["ruleId"] for r in by_uri["bad%FF.md"]] == ["CAPCONF-FILE-NAME"]
    assert by_uri["bad%FF.md"][0]["level"] == "error"
    message = by_uri["bad%FF.md"][0]["message"]
    assert isinstance(message, dict) and "bad\\xff.md is not valid UTF-8" in message["text"]
    assert all(r["level"] != "error" for r in by_uri["good.md"])  # its own warnings
    assert code == 2

    code = main(["validate", str(folder)])
    out = capsys.readouterr().out
    assert "bad\\xff.md: error CAPCONF-FILE-NAME" in out
    assert "\udcff" not in out
    assert "good.md: granted tools: read" in out
    assert "2 files: 0 clean, 1 with warnings, 1 with errors" in out
    assert code == 2


def test_the_exit_status_is_the_bad_names_alone(
        folder_with_a_bad_name: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The good file only has warnings: without the bad name the status is 0."""
    (folder_with_a_bad_name / "good.md").rename(folder_with_a_bad_name.parent / "good.md")
    assert main(["validate", str(folder_with_a_bad_name.parent / "good.md")]) == 0
    capsys.readouterr()

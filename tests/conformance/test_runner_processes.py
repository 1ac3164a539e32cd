"""Drivers behind wrappers (`sh -c`, npx, cargo run, uv run): the real driver is a
grandchild, and the runner must still reach a verdict, kill the whole process group,
never wait on a pipe a grandchild holds, drain a flooding stderr, and leave no orphan.

The subprocess timeouts below are hang guards (before, these commands did not end at
all), not timed assertions.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from suite_runner import fixture_env, run_suite

from capconf.conformance.client import (
    ImplementationCrashed,
    ImplementationTimedOut,
    SubprocessTransport,
)

FAKES = Path(__file__).resolve().parent.parent / "fake_impls"
PY = shlex.quote(sys.executable)
MISBEHAVE = f"{PY} {shlex.quote(str(FAKES / 'misbehave.py'))}"
FLOOD = f"{PY} {shlex.quote(str(FAKES / 'flood.py'))}"
DRIVER = f"{PY} -m capconf.conformance.cli driver"
GUARD = 120  # seconds: only a hang reaches it


def wrapped(inner: str) -> str:
    """``inner`` as a wrapper runs it: a shell that starts it (`sh -c '...'`)."""
    return f"sh -c {shlex.quote(inner)}"


def capconf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "capconf.conformance.cli", *args],
                          capture_output=True, text=True, timeout=GUARD, cwd=cwd,
                          env=fixture_env())


def gone(pid: int) -> bool:
    """The process no longer runs (absent, or a zombie waiting for its reaper)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return True
    return state in ("Z", "X")


def wait_gone(pid: int) -> bool:
    # SIGKILL is delivered at once, but the kernel reaps asynchronously: poll briefly
    for _ in range(100):
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


def read_pid(path: Path) -> int:
    for _ in range(400):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"the wrapper never wrote {path}")


def guarded(check: Callable[[], None]) -> None:
    """Run ``check`` in a thread and fail if it has not ended by GUARD seconds (a hang
    in the transport must fail the test, not stall the test run)."""
    errors: list[BaseException] = []

    def body() -> None:
        try:
            check()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(GUARD)
    assert not thread.is_alive(), f"still blocked after {GUARD} s"
    if errors:
        raise errors[0]


def test_a_wrapper_that_never_answers_gets_a_verdict(tmp_path: Path) -> None:
    """The issue's own command: before, it was still running after 10 minutes."""
    agent = tmp_path / "agent.md"
    agent.write_text("---\nname: a\ndescription: d\ntools: Read\n---\nBody.\n")
    proc = capconf("validate", "--impl", "sh -c 'sleep 1000; :'", "--timeout", "2",
                   str(agent), cwd=tmp_path)
    assert proc.returncode == 2
    assert "no response to `world.setup` within 2 s" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_grandchild_holding_the_pipes_is_killed_with_its_group(tmp_path: Path) -> None:
    """The wrapper's background child keeps stdout and stderr open; a timeout must kill
    it too (closing the pipes used to block on it), and the next request gets a fresh
    process."""
    guarded(lambda: _grandchild_holding_the_pipes(tmp_path))


def _grandchild_holding_the_pipes(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleeper.pid"
    command = wrapped(f"sleep 1000 & echo $! > {shlex.quote(str(pidfile))}; "
                      f"exec {MISBEHAVE} hang definition.parse")
    transport = SubprocessTransport(command, timeout=8)
    try:
        hello = transport.exchange({"id": 1, "op": "hello", "args": {}})
        assert hello["ok"] is True
        sleeper = read_pid(pidfile)
        try:
            transport.exchange({"id": 2, "op": "definition.parse",
                                "args": {"source": "name: a\ndescription: d\nprompt: p\n"}})
        except ImplementationTimedOut as exc:
            assert "process group was killed" in exc.message
        else:
            raise AssertionError("a hung driver answered")
        assert wait_gone(sleeper), "the wrapper's grandchild outlived the timeout"
        pidfile.unlink()
        again = transport.exchange({"id": 3, "op": "hello", "args": {}})
        assert again["ok"] is True
        second = read_pid(pidfile)
    finally:
        transport.close()
    assert wait_gone(second), "close() left the grandchild running"


def test_a_grandchild_flooding_stderr_neither_stalls_nor_hides_the_crash(
        tmp_path: Path) -> None:
    """A grandchild writes to stderr without end and holds the pipes: the driver's crash
    is still reported as a crash (not a timeout) and the flood ends with the group."""
    guarded(_flood_and_crash)


def _flood_and_crash() -> None:
    command = wrapped(f"{FLOOD} & exec {MISBEHAVE} crash definition.parse")
    transport = SubprocessTransport(command, timeout=60)
    try:
        assert transport.exchange({"id": 1, "op": "hello", "args": {}})["ok"] is True
        try:
            transport.exchange({"id": 2, "op": "definition.parse",
                                "args": {"source": "name: a\ndescription: d\nprompt: p\n"}})
        except ImplementationCrashed as exc:
            assert exc.returncode == 3
            assert "flood: xxx" in exc.stderr or "simulated crash" in exc.stderr
            assert len(exc.stderr.encode()) <= 20_000  # a bounded tail, not the flood
        else:
            raise AssertionError("a crashed driver answered")
    finally:
        transport.close()


def test_a_run_through_a_wrapper_reports_hangs_and_goes_on(tmp_path: Path) -> None:
    run = run_suite(tmp_path, wrapped(f"sleep 1000 & exec {MISBEHAVE} hang "
                                      "definition.parse"),
                    "--req", "TOOL-04", "--impl-timeout", "6", timeout=GUARD * 3)
    outcomes = run.outcomes()
    assert outcomes["tool.duplicate.case"] == "timed out", outcomes
    assert run.returncode == 1


def test_an_outer_kill_stops_the_driver_group_and_says_so(tmp_path: Path) -> None:
    """A CI job's timeout sends SIGTERM to capconf: its drivers live in their own
    sessions, so capconf must stop them itself, and say why it ended."""
    pidfile = tmp_path / "sleeper.pid"
    command = wrapped(f"sleep 1000 & echo $! > {shlex.quote(str(pidfile))}; exec {DRIVER}")
    proc = subprocess.Popen([sys.executable, "-m", "capconf.conformance.cli", "run",
                             "--impl", command, "--req", "DELEG-03"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=fixture_env())
    try:
        sleeper = read_pid(pidfile)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, err[-2000:])
    assert "signal 15" in err and "stopped" in err
    assert wait_gone(sleeper), "the driver's grandchild outlived the run"
    if not gone(sleeper):
        os.kill(sleeper, signal.SIGKILL)


def test_one_read_larger_than_the_tail_is_cut_to_the_tail() -> None:
    """A busy machine hands the reader one large chunk: the tail is still bounded."""
    import io

    from capconf.conformance.client import STDERR_TAIL_BYTES, StderrTail

    tail = StderrTail()
    tail.drain(io.BufferedReader(io.BytesIO(b"a" * 50_000 + b"END")))  # type: ignore[arg-type]
    text = tail.text()
    assert len(text.encode()) == STDERR_TAIL_BYTES and text.endswith("END")

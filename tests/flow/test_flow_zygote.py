"""The process runtime's warm parent (``simulator/core/zygote.py``): a worker forked from it
is the process a fresh ``python -I`` worker was (same answers, no inherited descriptor or
environment), its pid stays its own until the host has waited for it, and a host that
forks, or whose zygote dies, still gets workers."""

from __future__ import annotations

import json
import os
import select
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from capconf.simulator.core import zygote
from capconf.simulator.flow.bounds import Bounds
from capconf.simulator.flow.runtimes import WORKER as FLOW_WORKER
from capconf.simulator.flow.runtimes import ProcessRuntime

SCRIPTS = {
    "completes": "x = 1\nemit(x)\n",
    "spawns": "h = spawn('worker', 'first')\nemit(wait(h))\n",
    "raises": "x = 1 // 0\n",
    "restricted": "import os\n",
    "big-shift": "x = 1 << 10**10\n",
    "escape": "x = ().__class__.__base__\n",
}


def _serve(message: dict[str, Any]) -> dict[str, Any] | None:
    """A host that answers every call the same way (the capability is not under test)."""
    if message.get("call") == "spawn":
        return None
    return {"ok": True, "result": {"status": "completed", "report": "done"}}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_forked_worker_answers_as_a_fresh_one(name: str) -> None:
    forked = ProcessRuntime().execute(SCRIPTS[name], _serve)
    fresh = ProcessRuntime(forked=False).execute(SCRIPTS[name], _serve)
    assert forked == fresh


def test_the_deadline_kills_a_forked_worker_and_the_zygote_serves_on() -> None:
    tight = ProcessRuntime(given=Bounds(seconds=0.3, steps=10**9, work=10**12))
    end = tight.execute("for i in range(10**8):\n    x = [i] * 3\n", _serve)
    assert end["end"] == "failed" and end["code"] == "FLOW-LIMIT", end
    assert ProcessRuntime().execute(SCRIPTS["completes"], _serve) == {"end": "completed"}


def _state(pid: int) -> str | None:
    """The process's state letter from /proc (``Z`` for a zombie), None once reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def test_a_worker_holds_only_its_three_descriptors_and_no_environment() -> None:
    worker = zygote.ZYGOTE.spawn(FLOW_WORKER)
    try:
        # once it asks for its first `wait`, the worker is running its script
        worker.stdin.write(json.dumps({"script": "h = spawn('a', 'b')\nwait(h)\n"}) + "\n")
        worker.stdin.flush()
        assert json.loads(worker.stdout.readline())["call"] == "spawn"
        assert json.loads(worker.stdout.readline())["call"] == "wait"
        assert sorted(os.listdir(f"/proc/{worker.pid}/fd")) == ["0", "1", "2"]
        assert Path(f"/proc/{worker.pid}/environ").read_bytes() == b""
        assert os.readlink(f"/proc/{worker.pid}/fd/0").startswith("pipe:")
    finally:
        worker.kill()
        worker.wait()


def test_an_exited_worker_keeps_its_pid_until_the_host_has_waited() -> None:
    """Until ``wait``, the zygote does not reap it: the pid the host signals through its
    pidfd cannot have been given to another process."""
    worker = zygote.ZYGOTE.spawn(FLOW_WORKER)
    worker.stdin.close()  # the worker reads end of input and exits
    select.select([worker.pidfd], [], [], 10)
    assert worker.poll() == 0
    assert _state(worker.pid) == "Z"
    worker.kill()  # a signal to an exited process through its pidfd: nothing happens
    pid = worker.pid
    worker.wait()
    worker.stdout.close()
    assert _state(pid) is None


def test_a_wait_inside_a_spawn_on_the_same_thread_does_not_deadlock() -> None:
    """A channel's finalizer waits for its worker; a garbage collection can run it on the
    thread that is in the middle of ``spawn`` (holding the zygote's lock). The wait
    returns, and the zygote reaps that pid before the next spawn."""
    worker = zygote.ZYGOTE.spawn(FLOW_WORKER)
    worker.stdin.close()
    outcome: list[str] = []

    def waits_while_holding_the_lock() -> None:
        with zygote.ZYGOTE._lock:  # as spawn holds it
            worker.wait(timeout=10)
            outcome.append("returned")

    thread = threading.Thread(target=waits_while_holding_the_lock, daemon=True)
    thread.start()
    thread.join(10)
    deadlocked = thread.is_alive()
    if deadlocked:  # let the thread go before failing
        zygote.ZYGOTE._lock.release()
        thread.join(10)
    assert not deadlocked and outcome == ["returned"]
    worker.stdout.close()
    assert _state(worker.pid) == "Z"  # not reaped yet: the lock was held
    ProcessRuntime().execute(SCRIPTS["completes"], _serve)  # the next spawn reaps it
    assert _state(worker.pid) is None


def test_a_dead_zygote_is_replaced() -> None:
    ProcessRuntime().execute(SCRIPTS["completes"], _serve)
    proc = zygote.ZYGOTE._proc
    assert proc is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert ProcessRuntime().execute(SCRIPTS["completes"], _serve) == {"end": "completed"}
    assert zygote.ZYGOTE._proc is not None and zygote.ZYGOTE._proc.pid != proc.pid


def test_a_forked_host_starts_its_own_zygote() -> None:
    ProcessRuntime().execute(SCRIPTS["completes"], _serve)
    parent_zygote = zygote.ZYGOTE._proc
    assert parent_zygote is not None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the forked host: its own zygote, then the same answer
        code = 1
        try:
            end = ProcessRuntime().execute(SCRIPTS["completes"], _serve)
            own = zygote.ZYGOTE._proc
            ok = end == {"end": "completed"} and own is not None and own.pid != parent_zygote.pid
            code = 0 if ok else 2
        finally:
            zygote.ZYGOTE.close()
            os.write(write, b"%d" % code)
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    answer = os.read(read, 8)
    os.close(read)
    assert os.waitstatus_to_exitcode(status) == 0, answer
    assert parent_zygote.poll() is None  # the child's zygote was its own
    assert ProcessRuntime().execute(SCRIPTS["completes"], _serve) == {"end": "completed"}


def test_closing_ends_and_reaps_the_zygote() -> None:
    ProcessRuntime().execute(SCRIPTS["completes"], _serve)
    proc = zygote.ZYGOTE._proc
    assert proc is not None
    zygote.ZYGOTE.close()
    assert proc.returncode == 0
    assert zygote.ZYGOTE._proc is None

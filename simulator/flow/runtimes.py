"""Script runtimes (FLOW-02): the interchangeable implementers that actually run a
workflow script. A runtime moves host-API messages between the script and the workflow
capability and returns the script's ``end`` message; it never sees the lifecycle events
and has no way to add one: everything it sends is a request the capability answers or
refuses (``spawn``/``wait``/``emit``), or the end.

Two runtimes share the message vocabulary of :mod:`worker` and nothing else:

- ``process``: a ``python -I`` process with an empty environment (forked from a warm
  one, :mod:`zygote`) running the checked script (rewritten to call the meter) with
  ``exec`` and a line tracer, over JSON Lines on stdin/stdout, under OS limits (address
  space, CPU seconds);
- ``thread``: a worker thread running :mod:`interpreter` (a hand-written evaluator of the
  same subset) over two in-memory queues.

Both meter the script identically (:mod:`meter`, the deterministic bounds); both stop
waiting for a script whose own time passes the wall-time backstop (:mod:`bounds`).
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import IO, Any, Protocol

from capconf.simulator.core import zygote
from capconf.simulator.flow import bounds as _bounds
from capconf.simulator.flow import interpreter
from capconf.simulator.flow.bounds import Bounds
from capconf.simulator.flow.meter import Meter

Serve = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""The capability's side of the channel: a request in, an answer out (``None`` for a
pipelined ``spawn``, which is answered by the next call)."""


def worker_gone(message: str) -> dict[str, Any]:
    return {"end": "failed", "code": "FLOW-WORKER-GONE", "message": message}


class ScriptRuntime(Protocol):
    @property
    def name(self) -> str: ...

    def execute(self, script: str, serve: Serve) -> dict[str, Any]:
        """Run ``script``, passing every host-API request to ``serve``; the end message."""


def out_of_time(bounds: Bounds) -> dict[str, Any]:
    return {"end": "failed", "code": "FLOW-LIMIT", "message": f"the script ran longer than "
            f"{bounds.seconds:g} seconds (the deadline backstop)"}


class _Deadline:
    """The wall-time backstop on the script's own time: the clock runs while the host
    waits for the runtime and stops while the host serves a request, so a slow host
    (100,000 spawns through the delegation capability) never counts against a script.
    An I/O-edge safety limit, not part of the model (:mod:`bounds`)."""

    def __init__(self, seconds: float) -> None:
        self.remaining = seconds
        self.since = 0.0

    def resume(self) -> float:
        self.since = time.monotonic()
        return max(self.remaining, 0.0)

    def pause(self) -> None:
        self.remaining -= time.monotonic() - self.since


WORKER = "capconf.simulator.flow.worker"


@dataclass(frozen=True)
class ProcessRuntime:
    """``forked``: the worker is forked from the host's warm zygote (:mod:`zygote`),
    the same process a fresh ``python -I`` worker would be at a fraction of its start-up;
    without it, or when the zygote cannot serve, a fresh interpreter."""

    name: str = "process"
    given: Bounds | None = None
    forked: bool = True

    @property
    def bounds(self) -> Bounds:
        return self.given or _bounds.BOUNDS

    def _start(self) -> subprocess.Popen[str] | zygote.Worker:
        if self.forked:
            with contextlib.suppress(zygote.ZygoteGone, OSError):
                return zygote.ZYGOTE.spawn(WORKER)
        return subprocess.Popen(
            [sys.executable, "-I", "-m", WORKER],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
            env={}, close_fds=True)

    def execute(self, script: str, serve: Serve) -> dict[str, Any]:
        proc = self._start()
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=_read_lines, args=(stdout, lines, self.bounds),
                                  name="workflow-reader", daemon=True)
        reader.start()
        deadline = _Deadline(self.bounds.seconds)
        try:
            stdin.write(json.dumps({"script": script, "bounds": asdict(self.bounds)}) + "\n")
            stdin.flush()
            while True:
                try:
                    line = lines.get(timeout=deadline.resume())
                except queue.Empty:
                    proc.kill()
                    return out_of_time(self.bounds)
                deadline.pause()
                if not line:
                    return worker_gone("the workflow worker exited without ending")
                if not line.endswith("\n"):
                    proc.kill()
                    return worker_gone("the workflow worker sent a line longer than "
                                       f"{self.bounds.message_bytes:,} bytes")
                try:
                    message = json.loads(line)
                except ValueError:
                    return worker_gone("the workflow worker sent a line that is not JSON")
                if not isinstance(message, dict):
                    return worker_gone("the workflow worker sent a non-object message")
                if "end" in message:
                    return message
                answer = serve(message)
                if answer is not None:
                    stdin.write(json.dumps(answer, sort_keys=True) + "\n")
                    stdin.flush()
        except (BrokenPipeError, OSError):
            return worker_gone("the workflow worker closed its channel")
        finally:
            if proc.poll() is None:
                proc.kill()
            for stream in (stdin, stdout):
                with contextlib.suppress(OSError):
                    stream.close()
            proc.wait()


def _read_lines(stdout: IO[str], lines: queue.Queue[str], bounds: Bounds) -> None:
    """Every line the worker writes, each read with a bound (a message is at most
    ``message_bytes`` plus its envelope); ``""`` at the end."""
    try:
        while True:
            line = stdout.readline(bounds.message_bytes + 4096)
            lines.put(line)
            if not line or not line.endswith("\n"):
                return
    except (OSError, ValueError):
        lines.put("")


@dataclass(frozen=True)
class ThreadRuntime:
    name: str = "thread"
    given: Bounds | None = None

    @property
    def bounds(self) -> Bounds:
        return self.given or _bounds.BOUNDS

    def execute(self, script: str, serve: Serve) -> dict[str, Any]:
        channel = interpreter.QueueChannel()

        def work() -> None:
            try:
                end = interpreter.run(channel, script, Meter(self.bounds))
            except BaseException as exc:  # the interpreter's own bug: end, never hang
                end = worker_gone(f"the workflow thread failed: {type(exc).__name__}")
            channel.send(end)

        thread = threading.Thread(target=work, name="workflow", daemon=True)
        thread.start()
        deadline = _Deadline(self.bounds.seconds)
        while True:
            try:
                message = channel.to_host.get(timeout=deadline.resume())
            except queue.Empty:
                # the evaluator stops at its next step; a blocked ask is answered
                channel.cancelled = True
                channel.to_worker.put({"ok": False, "code": "FLOW-LIMIT",
                                       "message": "the host stopped waiting"})
                return out_of_time(self.bounds)
            deadline.pause()
            if "end" in message:
                thread.join()
                return message
            answer = serve(message)
            if answer is not None:
                channel.answer(answer)


RUNTIMES: tuple[ScriptRuntime, ...] = (ProcessRuntime(), ThreadRuntime())
DEFAULT_RUNTIME = "process"


def runtime_named(name: str) -> ScriptRuntime | None:
    return next((r for r in RUNTIMES if r.name == name), None)

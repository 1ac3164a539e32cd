"""Script runtimes (FLOW-02): the interchangeable implementers that actually run a
workflow script. A runtime moves host-API messages between the script and the workflow
capability and returns the script's ``end`` message; it never sees the lifecycle events
and has no way to add one: everything it sends is a request the capability answers or
refuses (``spawn``/``wait``/``emit``), or the end.

Two runtimes share the message vocabulary of :mod:`worker` and nothing else:

- ``process``: a ``python -I`` process with an empty environment running the checked
  script with ``exec`` and a line tracer, over JSON Lines on stdin/stdout;
- ``thread``: a worker thread running :mod:`interpreter` (a hand-written evaluator of the
  same subset) over two in-memory queues.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from capconf.simulator.flow import interpreter

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


@dataclass(frozen=True)
class ProcessRuntime:
    name: str = "process"

    def execute(self, script: str, serve: Serve) -> dict[str, Any]:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "capconf.simulator.flow.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
            env={}, close_fds=True)
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps({"script": script}) + "\n")
            stdin.flush()
            for line in stdout:
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
            return worker_gone("the workflow worker exited without ending")
        finally:
            stdin.close()
            stdout.close()
            proc.wait()


@dataclass(frozen=True)
class ThreadRuntime:
    name: str = "thread"

    def execute(self, script: str, serve: Serve) -> dict[str, Any]:
        channel = interpreter.QueueChannel()

        def work() -> None:
            try:
                end = interpreter.run(channel, script)
            except BaseException as exc:  # the interpreter's own bug: end, never hang
                end = worker_gone(f"the workflow thread failed: {type(exc).__name__}")
            channel.send(end)

        thread = threading.Thread(target=work, name="workflow", daemon=True)
        thread.start()
        while True:
            message = channel.to_host.get()
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

"""The host side of the out-of-process implementer: a child worker process and the JSON
Lines channel to it. One worker per capability, started on the first out-of-process child
and closed when the capability is (its stdin closes, and it exits). The worker is forked
from the host's warm zygote (:mod:`capconf.simulator.core.zygote`) when it can serve: the
same ``python -I`` process, without the ~40 ms of a fresh interpreter's start-up."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import weakref
from typing import IO, Any

from capconf.simulator.core import zygote
from capconf.simulator.delegation.host import HostError

WORKER = "capconf.simulator.delegation.worker"


class WorkerChannel:
    """Implements ``host.Host`` by forwarding every call over the channel."""

    def __init__(self, forked: bool = True) -> None:
        self._forked = forked
        self._proc: subprocess.Popen[str] | zygote.Worker | None = None

    def _process(self) -> subprocess.Popen[str] | zygote.Worker:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
            weakref.finalize(self, _close, self._proc)
        return self._proc

    def _start(self) -> subprocess.Popen[str] | zygote.Worker:
        if self._forked:
            with contextlib.suppress(zygote.ZygoteGone, OSError):
                return zygote.ZYGOTE.spawn(WORKER)
        return subprocess.Popen(
            [sys.executable, "-I", "-m", WORKER], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, encoding="utf-8", env={}, close_fds=True)

    def _ask(self, request: dict[str, Any]) -> Any:
        proc = self._process()
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps(request, sort_keys=True) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise HostError("WORKER-GONE", "the out-of-process child worker exited")
        answer = json.loads(line)
        if not answer["ok"]:
            raise HostError(answer["code"], answer["message"])
        return answer["result"]

    def start(self, child: str, context: list[dict[str, Any]]) -> None:
        self._ask({"op": "start", "child": child, "context": context})

    def follow_up(self, child: str, text: str) -> None:
        self._ask({"op": "follow_up", "child": child, "text": text})

    def progress(self, child: str, text: str) -> None:
        self._ask({"op": "progress", "child": child, "text": text})

    def finish(self, child: str, status: str, report: Any) -> dict[str, Any]:
        result: dict[str, Any] = self._ask({"op": "finish", "child": child, "status": status,
                                            "report": report})
        return result

    def stop(self, child: str) -> dict[str, Any]:
        result: dict[str, Any] = self._ask({"op": "stop", "child": child})
        return result

    def context(self, child: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._ask({"op": "context", "child": child})
        return result

    def close(self) -> None:
        if self._proc is not None:
            _close(self._proc)
            self._proc = None


def _close(proc: subprocess.Popen[str] | zygote.Worker) -> None:
    streams: list[IO[str] | None] = [proc.stdin, proc.stdout]
    for stream in streams:
        if stream is not None:
            stream.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()

"""The driver client: talks to an implementation under test over JSON Lines.

Two transports give identical results: ``InProcessTransport`` calls a dispatcher object
(requests and responses still go through ``json`` so types cannot differ), and
``SubprocessTransport`` runs any command and speaks over its stdin/stdout. A misbehaving
implementation never takes the run down: a dead process, a hang or garbage output each
become a distinct exception, the process is discarded, and the next request starts a
fresh one.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import subprocess
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

MAX_LINE_BYTES = 64 * 1024 * 1024
STDERR_TAIL_BYTES = 16 * 1024


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """JSON as RFC 8259 defines it: Python's parser also accepts NaN and Infinity, which a
    response must never contain (PROTO-03)."""
    return json.loads(text, parse_constant=_no_constant)


class DriverFailure(Exception):
    """Base of everything that is the implementation's fault, with the outcome category
    it maps to in the report."""

    outcome = "errored"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ImplementationError(DriverFailure):
    """The implementation answered ``ok: false`` where the test expected a result."""

    outcome = "errored"

    def __init__(self, op: str, code: str, message: str) -> None:
        super().__init__(f"{op}: implementation returned error {code}: {message}")
        self.op = op
        self.code = code
        self.error_message = message


class NotImplementedByImplementation(DriverFailure):
    outcome = "not implemented"


class ProtocolViolation(DriverFailure):
    """Output that is not a valid response: not JSON, wrong id, wrong shape."""

    outcome = "errored"


class ImplementationCrashed(DriverFailure):
    outcome = "crashed"

    def __init__(self, message: str, returncode: int | None, stderr: str) -> None:
        tail = stderr[-4000:] if stderr else "(no stderr)"
        super().__init__(f"{message} (exit status {returncode}); stderr tail:\n{tail}")
        self.returncode = returncode
        self.stderr = stderr


class ImplementationTimedOut(DriverFailure):
    outcome = "timed out"


class Transport(Protocol):
    description: str

    def exchange(self, request: dict[str, Any]) -> dict[str, Any]: ...

    def exchange_raw(self, sent: bytes, op: str = "raw line") -> dict[str, Any]: ...

    def close(self) -> None: ...


class InProcessTransport:
    """Calls ``handle(request) -> response`` on a dispatcher made by ``factory``."""

    def __init__(self, factory: Callable[[], Any], description: str = "in-process") -> None:
        self._factory = factory
        self._dispatcher: Any = None
        self.description = description

    def exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._dispatcher is None:
            self._dispatcher = self._factory()
        wire = json.loads(json.dumps(request))
        return self._checked(self._dispatcher.handle(wire), str(request.get("op")))

    @staticmethod
    def _checked(response: Any, op: str) -> dict[str, Any]:
        try:
            text = json.dumps(response, sort_keys=True, allow_nan=False, ensure_ascii=False)
            text.encode("utf-8")
        except (ValueError, UnicodeEncodeError) as exc:
            raise ProtocolViolation(f"response to `{op}` is not valid UTF-8 "
                                    f"JSON: {exc}") from None
        decoded: dict[str, Any] = json.loads(text)
        return decoded

    def exchange_raw(self, sent: bytes, op: str = "raw line") -> dict[str, Any]:
        """In process there is no byte stream: the line goes to the dispatcher's own
        ``handle_line`` (the reference decodes lines there for its stdio edge too). A
        dispatcher without one cannot be sent bytes, and such cases are not run."""
        if self._dispatcher is None:
            self._dispatcher = self._factory()
        handle_line = getattr(self._dispatcher, "handle_line", None)
        if handle_line is None:
            raise NotImplementedByImplementation(
                "raw request lines need a byte stream; run with a subprocess transport")
        return self._checked(handle_line(sent), op)

    def close(self) -> None:
        self._dispatcher = None


class SubprocessTransport:
    """Runs ``command`` and exchanges one JSON line per request with a per-request
    timeout. stdout and stderr are drained by threads so a chatty stderr can never
    block the implementation."""

    def __init__(self, command: str | list[str], timeout: float = 10.0,
                 env: dict[str, str] | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.description = " ".join(shlex.quote(a) for a in self.argv)
        self.timeout = timeout
        self.env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._lock = threading.Lock()

    # -- process lifecycle ---------------------------------------------------------------
    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env)
        except OSError as exc:
            raise ImplementationCrashed(f"could not start {self.description}: {exc}", None,
                                        "") from None
        self._lines = queue.Queue()
        self._stderr = deque()
        self._stderr_size = 0
        threading.Thread(target=self._read_stdout, args=(proc, self._lines),
                         daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(proc,), daemon=True).start()
        self._proc = proc
        return proc

    def _read_stdout(self, proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline(MAX_LINE_BYTES + 1)
            if not line:
                lines.put(None)
                return
            lines.put(line)

    def _read_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        while True:
            chunk = proc.stderr.read1(65536) if hasattr(proc.stderr, "read1") else b""
            if not chunk:
                return
            with self._lock:
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr) > 1:
                    self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self) -> str:
        with self._lock:
            return b"".join(self._stderr).decode("utf-8", "replace")

    def _discard(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        return proc.returncode

    def close(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.write(b'{"id": 0, "op": "shutdown", "args": {}}\n')
                proc.stdin.flush()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._discard()

    # -- one exchange ------------------------------------------------------------------------
    def exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.exchange_raw(json.dumps(request).encode("utf-8"), str(request.get("op")))

    def exchange_raw(self, sent: bytes, op: str = "raw line") -> dict[str, Any]:
        """Send one line exactly as given (no newline inside; it is added) and read one
        response: how PROTO-03 cases send bytes that no JSON encoder would produce."""
        request = {"op": op}
        proc = self._proc if self._proc is not None and self._proc.poll() is None else None
        if proc is None:
            self._discard()
            proc = self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write(sent + b"\n")
            proc.stdin.flush()
        except OSError:
            line: bytes | None = None
        else:
            try:
                line = self._lines.get(timeout=self.timeout)
            except queue.Empty:
                self._discard()
                raise ImplementationTimedOut(
                    f"no response to `{request.get('op')}` within {self.timeout:g} s; the "
                    "process was killed and will be restarted") from None
        if line is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2)
            returncode = proc.returncode
            self._discard()
            raise ImplementationCrashed(
                f"the implementation exited while handling `{request.get('op')}`", returncode,
                self.stderr_tail())
        if len(line) > MAX_LINE_BYTES:
            self._discard()
            raise ProtocolViolation(f"response line longer than {MAX_LINE_BYTES} bytes")
        try:
            response = strict_json(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self._discard()
            shown = line[:200].decode("utf-8", "replace").rstrip()
            raise ProtocolViolation(
                f"response to `{request.get('op')}` is not a JSON line: {shown!r}") from None
        if not isinstance(response, dict):
            self._discard()
            raise ProtocolViolation(f"response is not a JSON object: {response!r:.200}")
        return response

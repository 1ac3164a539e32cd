"""The driver client: talks to an implementation under test over JSON Lines.

Two transports give identical results: ``InProcessTransport`` calls a dispatcher object
(requests and responses still go through ``json`` so types cannot differ), and
``SubprocessTransport`` runs any command and speaks over its stdin/stdout. A misbehaving
implementation never takes the run down: a dead process, a hang or garbage output each
become a distinct exception, the process is discarded, and the next request starts a
fresh one.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import re
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol, TypeGuard

MAX_LINE_BYTES = 64 * 1024 * 1024
STDERR_TAIL_BYTES = 16 * 1024
POLL_SECONDS = 0.1
EXIT_GRACE_SECONDS = 2.0
"""After end of file on stdout, how long the process may take to exit before it is
reported as having closed stdout while still running (a bound, not a timing: a process
that exits closes its files first and is a zombie microseconds later)."""
REAPER = Path(__file__).with_name("reaper.py")
CONTAINED = (sys.platform == "linux" and bool(sys.executable) and REAPER.is_file()
             and os.path.isdir("/proc/self"))
"""Whether drivers run under ``reaper.py``, the subreaper that contains descendants which
leave the process group (Linux only; elsewhere the process group is the containment)."""
REAPER_SECONDS = 5.0
ANSWERED_KEPT = 1024
"""Request ids answered by one driver process that are remembered, to name a second
answer to one of them as what it is."""


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

    def __init__(self, op: str, code: str, message: str,
                 error: dict[str, Any] | None = None) -> None:
        super().__init__(f"{op}: implementation returned error {code}: {message}")
        self.op = op
        self.code = code
        self.error_message = message
        # the whole error object: it may locate the problem (world.setup's `path`)
        self.error: dict[str, Any] = dict(error or {"code": code, "message": message})


class NotImplementedByImplementation(DriverFailure):
    outcome = "not implemented"


class ProtocolViolation(DriverFailure):
    """Output that is not a valid response: not JSON, wrong id, wrong shape."""

    outcome = "errored"


class ImplementationClosedStdout(ProtocolViolation):
    """The implementation closed its stdout (or stopped reading its stdin) but kept
    running: it can never answer again, yet it did not exit, so "exited" would send its
    author to the wrong place."""


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
    timeout.

    Drivers are usually started through a wrapper (``sh -c``, ``npx tsx``, ``npm run``,
    ``cargo run``, ``uv run``) whose real driver is a grandchild. So the command runs in a
    session of its own (a new process group), and every ending -- a timeout, a crash, a
    garbage line, ``close`` -- kills the whole group, never only the wrapper: a grandchild
    left alive would keep the pipes open, so the run would wait for its end for good.
    On Linux the command runs under ``reaper.py`` (a child subreaper), so descendants that
    leave the group (``setsid()``, a double fork) are killed and reaped too.
    stdout and stderr are read by daemon threads that own their streams (the main thread
    never closes a stream a reader thread is blocked on, which would wait for the
    reader), and stderr is drained into a bounded tail so a flood never stalls the
    implementation."""

    def __init__(self, command: str | list[str], timeout: float = 10.0,
                 env: dict[str, str] | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.description = " ".join(shlex.quote(a) for a in self.argv)
        self.timeout = timeout
        self.env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._tail = StderrTail()
        self.last_returncode: int | None = None
        self._answered: OrderedDict[int, str] = OrderedDict()  # id -> op, this process

    # -- process lifecycle ---------------------------------------------------------------
    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        INTERRUPTS.starting += 1
        try:
            proc = self._popen(env)
            self._answered = OrderedDict()
        finally:
            INTERRUPTS.starting -= 1
        INTERRUPTS.deliver()  # an outer kill during the start: now the group is known
        self._lines = queue.Queue()
        self._tail = StderrTail()
        threading.Thread(target=_read_lines, args=(proc.stdout, self._lines),
                         daemon=True).start()
        threading.Thread(target=self._tail.drain, args=(proc.stderr,), daemon=True).start()
        return proc

    def _popen(self, env: dict[str, str]) -> subprocess.Popen[bytes]:
        """The driver's process, in a session of its own; on Linux under ``reaper.py``,
        which reports on a pipe of its own whether the driver itself started (a command
        that does not exist is "could not start", not a crash of the reaper)."""
        pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE,
                                 "stderr": subprocess.PIPE, "env": env,
                                 "start_new_session": True}
        if not CONTAINED:
            try:
                proc = subprocess.Popen(self.argv, **pipes)
            except OSError as exc:
                raise ImplementationCrashed(f"could not start {self.description}: {exc}",
                                            None, "") from None
            LIVE.add(self)
            self._proc = proc
            return proc
        read_end, write_end = os.pipe()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER), str(write_end), "--", *self.argv],
                pass_fds=(write_end,), **pipes)
        except OSError as exc:
            os.close(read_end)
            raise ImplementationCrashed(f"could not start {self.description}: {exc}", None,
                                        "") from None
        finally:
            os.close(write_end)
        LIVE.add(self)
        self._proc = proc
        try:
            said = _read_status(read_end)
        finally:
            os.close(read_end)
        if said != "ok":
            self._discard()
            _close_quietly(proc.stdout)
            _close_quietly(proc.stderr)
            why = (said.removeprefix("error ") if said
                   else "its reaper (reaper.py) ended or hung before starting it")
            raise ImplementationCrashed(f"could not start {self.description}: {why}", None,
                                        "")
        return proc

    def stderr_tail(self) -> str:
        return self._tail.text()

    def _next_line(self, proc: subprocess.Popen[bytes]) -> bytes | None:
        """The next stdout line, ``None`` once the implementation has ended: at end of
        file, or when the process it was started as has exited (a grandchild that
        inherited stdout would otherwise keep the pipe open, and the crash would be
        waited for until the timeout). Raises ``queue.Empty`` at the timeout."""
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise queue.Empty
            try:
                return self._lines.get(timeout=min(left, POLL_SECONDS))
            except queue.Empty:
                if proc.poll() is not None:
                    try:  # what it wrote before it exited still counts
                        return self._lines.get(timeout=POLL_SECONDS)
                    except queue.Empty:
                        return None

    def _discard(self) -> int | None:
        """Kill the implementation's whole process group and reap the leader. The reader
        threads see end-of-file once the group is gone and close their own streams."""
        proc, self._proc = self._proc, None
        LIVE.discard(self)
        if proc is None:
            return None
        kill_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        if proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.close()
        self.last_returncode = proc.returncode
        return proc.returncode

    def close(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.write(b'{"id": 0, "op": "shutdown", "args": {}}\n')
                proc.stdin.flush()
                proc.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self._discard()

    # -- one exchange ------------------------------------------------------------------------
    def exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        op = str(request.get("op"))
        response = self.exchange_raw(json.dumps(request).encode("utf-8"), op)
        sent, got = request.get("id"), response.get("id")
        if _is_id(sent) and _is_id(got) and got != sent and got in self._answered:
            # One request is outstanding at a time, so this line answers none: a second
            # answer to an earlier request. The stream is now one line behind; a fresh
            # process puts the next case back in step.
            self._discard()
            raise ProtocolViolation(
                f"response id {got} answers no outstanding request: request {got} "
                f"(`{self._answered[got]}`) was answered already, so this is a second "
                f"answer to it, read where the answer to request {sent} (`{op}`) was "
                "due; one response per request, in order (section 2, Framing)")
        if _is_id(sent):
            self._answered[sent] = op
            if len(self._answered) > ANSWERED_KEPT:
                self._answered.popitem(last=False)
        return response

    def exchange_raw(self, sent: bytes, op: str = "raw line") -> dict[str, Any]:
        """Send one line exactly as given (no newline inside; it is added) and read one
        response: how PROTO-03 cases send bytes that no JSON encoder would produce."""
        proc = self._proc if self._proc is not None and self._proc.poll() is None else None
        if proc is None:
            self._discard()
            proc = self._start()
        assert proc.stdin is not None
        read_nothing = False
        try:
            proc.stdin.write(sent + b"\n")
            proc.stdin.flush()
        except OSError:
            line: bytes | None = None
            read_nothing = True
        else:
            try:
                line = self._next_line(proc)
            except queue.Empty:
                self._discard()
                raise ImplementationTimedOut(
                    f"no response to `{op}` within {self.timeout:g} s; the implementation's "
                    "process group was killed and will be restarted") from None
        if line is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=EXIT_GRACE_SECONDS)
            returncode = proc.returncode
            self._discard()
            if returncode is None:  # end of file, yet the process runs on
                closed = "its stdin" if read_nothing else "its stdout"
                self._tail.wait_closed(1.0)
                tail = self.stderr_tail()
                raise ImplementationClosedStdout(
                    f"the implementation closed {closed} while still running (at `{op}`); "
                    "it can never answer again, so it was killed with every process it "
                    "started; stderr tail:\n" + (tail[-4000:] or "(no stderr)"))
            self._tail.wait_closed(1.0)
            raise ImplementationCrashed(
                f"the implementation exited while handling `{op}`", returncode,
                self.stderr_tail())
        if len(line) > MAX_LINE_BYTES:
            self._discard()
            raise ProtocolViolation(f"response line longer than {MAX_LINE_BYTES} bytes")
        try:
            response = strict_json(line.decode("utf-8"))
        except RecursionError:
            # Valid JSON, but deeper than Python's parser recurses: said as what it is,
            # never as a failed check of the case that happened to read it.
            self._discard()
            raise ProtocolViolation(
                f"response to `{op}` nests deeper than capconf reads (Python's JSON "
                "parser stops at about 1,000 levels); the answer cannot be judged, and "
                "the implementation's process was restarted") from None
        except (UnicodeDecodeError, ValueError):
            self._discard()
            shown = line[:200].decode("utf-8", "replace").rstrip()
            raise ProtocolViolation(
                f"response to `{op}` is not a JSON line: {shown!r}") from None
        if not isinstance(response, dict):
            self._discard()
            raise ProtocolViolation(f"response is not a JSON object: {response!r:.200}")
        if _ESCAPED_SURROGATE.search(line):
            where = lone_surrogate_path(response)
            if where is not None:
                raise ProtocolViolation(
                    f"response to `{op}` holds a lone surrogate (an escaped \\ud800-\\udfff "
                    f"without its pair) at {_path_text(where)}; PROTO-03: every response "
                    "line is valid UTF-8 JSON, no lone surrogate, raw or escaped")
        return response


def _is_id(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_status(fd: int) -> str:
    """What ``reaper.py`` says on its status pipe (``ok`` or ``error WHY``), read to end of
    file; empty if it ended without a word. Bounded in time: a reaper that neither
    speaks nor ends is reported, not waited on."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")[:1000]


# a JSON escape of a surrogate: only a line holding one is searched for a lone one
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_path(value: Any) -> list[str | int] | None:
    """The path of the first string holding a lone surrogate (for a key: of the object
    holding it), or None. Iterative: a response may nest deeply."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                if _SURROGATE.search(key):
                    return path
                stack.append((child, [*path, key]))
        elif isinstance(item, list):
            stack.extend((child, [*path, i]) for i, child in reversed(list(enumerate(item))))
    return None


def _path_text(path: list[str | int]) -> str:
    return "/".join(str(p) for p in path) or "the top level"


class StderrTail:
    """The last ``STDERR_TAIL_BYTES`` of a stream, read to its end by one thread."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()

    def drain(self, stream: IO[bytes] | None) -> None:
        try:
            while stream is not None:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
                if not chunk:
                    break
                with self._lock:
                    self._chunks.append(chunk)
                    self._size += len(chunk)
                    while self._size > STDERR_TAIL_BYTES and len(self._chunks) > 1:
                        self._size -= len(self._chunks.popleft())
                    if self._size > STDERR_TAIL_BYTES:  # one read larger than the tail
                        self._chunks[0] = self._chunks[0][-STDERR_TAIL_BYTES:]
                        self._size = len(self._chunks[0])
        except (OSError, ValueError):
            pass
        finally:
            _close_quietly(stream)
            self._closed.set()

    def wait_closed(self, seconds: float) -> None:
        """Give the reader a moment to take the last words of a process that exited."""
        self._closed.wait(seconds)

    def text(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")


def _read_lines(stream: IO[bytes] | None, lines: queue.Queue[bytes | None]) -> None:
    try:
        while stream is not None:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            lines.put(line)
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)
        _close_quietly(stream)


def _close_quietly(stream: IO[bytes] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.close()


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """End the implementation and everything it started. On Linux ``proc`` is its
    ``reaper.py``: SIGTERM makes it kill and reap every descendant, including those that
    left the group with ``setsid()`` or double-forked, and end. Then (and on other systems
    only this) SIGKILL the session ``proc`` leads (started with ``start_new_session``, so
    its group id is its pid): the wrapper and every process it started that stayed in
    the group. The group may outlive its leader (a daemonised grandchild), so it is
    killed even when the leader has exited already."""
    if CONTAINED and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        _wait_for(proc, REAPER_SECONDS)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


def _wait_for(proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Wait up to ``seconds`` for ``proc`` to end, woken the moment it does (a pidfd):
    ``Popen.wait(timeout=...)`` polls with sleeps, which cost every driver restart
    tens of milliseconds."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # an older kernel: the polling wait
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=seconds)
        return
    try:
        select.select([fd], [], [], seconds)
    finally:
        os.close(fd)
    proc.poll()


class _Interrupts:
    """An interrupt (the run's own SIGTERM, see the command's signal handler) that lands
    while a process is being started is held until the new process group is registered:
    raised inside ``Popen`` it would lose the child, which then outlives the run."""

    def __init__(self) -> None:
        self.starting = 0
        self.pending = False

    def interrupt_now(self) -> bool:
        """Whether the handler may interrupt at once; else the start delivers it."""
        if self.starting:
            self.pending = True
            return False
        return True

    def deliver(self) -> None:
        if self.pending and not self.starting:
            self.pending = False
            raise KeyboardInterrupt


INTERRUPTS = _Interrupts()

LIVE: set[SubprocessTransport] = set()
"""Implementations running now: what an interrupted run must stop (see kill_all). Strong
references: a transport dropped without ``close`` (a run interrupted during collection)
must still have its process group killed at exit."""


def kill_all() -> None:
    """Stop every implementation process group this process started (at exit, or when
    the run itself is terminated), so no driver outlives the run."""
    for transport in list(LIVE):
        transport._discard()


atexit.register(kill_all)

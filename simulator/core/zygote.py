"""A warm parent for the simulator's worker processes: each worker still runs in a process
of its own, forked from a ``python -I`` process that has already imported its module.

A fresh ``python -I -m capconf.simulator.flow.worker`` costs ~40 ms of CPU before it reads
its script (the interpreter, ``site``, the worker's imports), more than most scripts take;
the delegation worker is the same. A whole conformance run starts ~60 workflow workers and
a few delegation workers, the project's tests ~175 and ~75. The zygote pays the start-up
once per host process; a worker then costs a fork.

What a worker sees is what a fresh ``python -I`` one saw: an empty environment, ``-I``, the
host's pipes as its stdin and stdout and the host's current stderr (the three descriptors
are passed with each spawn, ``SCM_RIGHTS``), no other descriptor, default signal
handlers. Its module is imported in the zygote on its first spawn, and its ``main()``
runs in the child.

Control protocol (a Unix stream socket, the zygote's stdin), one request and one answer
at a time: ``spawn MODULE`` with three descriptors, answered ``PID`` (or ``error``: a
module that is not a simulator worker, or that failed to import); ``reap PID``, answered
``ok`` once that child has been waited for. The zygote reaps only when told: until then
an exited child stays a zombie, so its pid cannot be reused while the host still holds
it, and the host signals it through a pidfd opened on that very process (``Worker``).
The zygote ends when the socket closes (its host exited or closed it).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

_MAX_LINE = 128
# a module the zygote will import and run: a worker of one of the simulator's areas
_WORKER_MODULE = re.compile(r"capconf\.simulator\.[a-z_]+\.worker")


def _entry(module: str, entries: dict[str, Callable[[], None]]) -> Callable[[], None] | None:
    """The ``main`` of a worker module, imported on its first spawn (in the zygote, so
    every later fork finds it loaded); None for anything else."""
    if module not in entries:
        if not _WORKER_MODULE.fullmatch(module):
            return None
        try:
            main = getattr(importlib.import_module(module), "main", None)
        except Exception:  # the host falls back to a fresh interpreter
            return None
        if not callable(main):
            return None
        entries[module] = main
    return entries[module]


def serve(control: socket.socket) -> None:
    """The zygote's loop (in the zygote process)."""
    entries: dict[str, Callable[[], None]] = {}
    while True:
        message, fds, _, _ = socket.recv_fds(control, _MAX_LINE, 3)
        if not message:  # the host is done: reap what has ended (its CPU counts upward)
            with contextlib.suppress(ChildProcessError):
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            return
        if message.startswith(b"reap "):
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(message.split()[1]), 0)
            control.sendall(b"ok\n")
            continue
        verb, _, module = message.decode("ascii", "replace").rstrip("\n").partition(" ")
        main = _entry(module, entries) if verb == "spawn" and len(fds) == 3 else None
        if main is None:
            for fd in fds:
                os.close(fd)
            control.sendall(b"error\n")
            continue
        pid = os.fork()
        if pid == 0:
            _child(fds, main)
        for fd in fds:
            os.close(fd)
        control.sendall(f"{pid}\n".encode())


def _child(fds: list[int], main: Callable[[], None]) -> None:
    """In the forked worker: the host's three descriptors as 0, 1 and 2, nothing else
    open, default signals; then the worker, and an exit that never returns into the loop."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        main()
        code = 0
    except BaseException:  # a worker's crash is its exit status
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__):
            with contextlib.suppress(BaseException):
                if stream is not None:
                    stream.flush()
        os._exit(code)


@dataclass
class Worker:
    """A forked worker as the runtime uses a ``Popen``: its pipes, ``poll``, ``kill`` and
    ``wait``; signals go through a pidfd of that process, never a bare pid. Once waited
    for, its pidfd is closed and its pid reaped: a second ``wait`` returns at once, and
    ``kill`` does nothing (that descriptor number may belong to something else by then)."""

    pid: int
    pidfd: int
    stdin: IO[str]
    stdout: IO[str]
    zygote: Zygote
    waited: bool = False

    def poll(self) -> int | None:
        if self.waited:
            return 0
        ready, _, _ = select.select([self.pidfd], [], [], 0)
        return 0 if ready else None

    def kill(self) -> None:
        if not self.waited:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> None:
        """As ``Popen.wait``: ``subprocess.TimeoutExpired`` if it has not ended in time."""
        if self.waited:
            return
        ready, _, _ = select.select([self.pidfd], [], [], timeout)
        if not ready:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0)
        self.waited = True
        os.close(self.pidfd)
        self.zygote.reap(self.pid)


class ZygoteGone(Exception):
    """The zygote could not be started or stopped answering: start the worker fresh."""


class Zygote:
    """The host side: one zygote per host process, started on first use. A process
    forked from the host (the project's test servers fork whole runs) starts its own:
    the socket it inherited belongs to its parent's requests."""

    def __init__(self) -> None:
        self._forget()

    def _forget(self) -> None:
        """The state of a host that has no zygote yet (and, after a fork, a lock that no
        other thread of the parent may be holding)."""
        self._lock = threading.Lock()
        self._unreaped: list[int] = []
        self._owner = -1
        self._control: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-m", "capconf.simulator.core.zygote"],
                stdin=theirs.fileno(), stdout=subprocess.DEVNULL, env={}, close_fds=True)
        except OSError as exc:
            ours.close()
            raise ZygoteGone(str(exc)) from None
        finally:
            theirs.close()
        self._control, self._owner = ours, os.getpid()
        return ours

    def _ask(self, message: bytes, fds: list[int]) -> bytes:
        """One request and its answer line (under the lock)."""
        control = self._control
        if control is None or self._owner != os.getpid():
            control = self._start()
        try:
            socket.send_fds(control, [message], fds)
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = control.recv(_MAX_LINE)
                if not chunk:
                    raise ZygoteGone("the zygote closed its socket")
                answer += chunk
            return answer
        except OSError as exc:
            self._drop()
            raise ZygoteGone(str(exc)) from None
        except ZygoteGone:
            self._drop()
            raise

    def _drop(self, graceful: bool = False) -> None:
        """Stop this host's zygote: ``graceful``, by closing its socket and waiting for
        it (so its CPU, and its workers', is counted in this process's children, as a
        fresh worker's was); otherwise (it stopped answering) by killing it."""
        if self._control is not None and self._owner == os.getpid():
            self._control.close()
            if self._proc is not None:
                try:
                    self._proc.wait(timeout=5 if graceful else 0)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(OSError):
                        self._proc.kill()
                    self._proc.wait()
        self._control, self._proc = None, None
        self._unreaped.clear()  # an ending zygote reaps every child it has

    def spawn(self, module: str) -> Worker:
        """A new worker running ``module``'s ``main()``, its stdin and stdout piped to
        this process."""
        request = f"spawn {module}\n".encode()
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        try:
            with self._lock:
                self._reap_deferred()
                try:
                    answer = self._ask(request, [to_worker_r, from_worker_w, 2])
                except ZygoteGone:  # it died (killed, say): once more, with a new one
                    answer = self._ask(request, [to_worker_r, from_worker_w, 2])
                if not answer.strip().isdigit():
                    raise ZygoteGone(f"the zygote answered {answer!r}")
                pid = int(answer)
                # the child waits for its first line, and the zygote keeps it (a zombie
                # at worst) until told to reap it: this pid is that process
                pidfd = os.pidfd_open(pid)
        except BaseException:
            for fd in (to_worker_w, from_worker_r):
                os.close(fd)
            raise
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        stdin = open(to_worker_w, "w", encoding="utf-8")  # noqa: SIM115 (the worker owns it)
        stdout = open(from_worker_r, encoding="utf-8")  # noqa: SIM115
        return Worker(pid, pidfd, stdin, stdout, self)

    def reap(self, pid: int) -> None:
        """Let the zygote reap ``pid`` (its host has waited for it). Never waits for the
        lock: a worker's ``wait`` may run from a finalizer that a garbage collection
        starts inside ``spawn`` on this very thread, in the middle of its exchange with
        the zygote. Then, or while another thread holds the lock, the pid is reaped
        before the next spawn (or with every other child when the zygote ends)."""
        self._unreaped.append(pid)
        if not self._lock.acquire(blocking=False):
            return
        try:
            self._reap_deferred()
        finally:
            self._lock.release()

    def _reap_deferred(self) -> None:
        """Send the reaps that are due (under the lock)."""
        while self._unreaped:
            pid = self._unreaped.pop()
            if self._control is not None and self._owner == os.getpid():
                with contextlib.suppress(ZygoteGone):
                    self._ask(f"reap {pid}\n".encode(), [])

    def close(self) -> None:
        """End this host's zygote, if it started one: at exit (``atexit``), and before a
        forked host ends with ``os._exit``. A zygote ends on its own when its host dies."""
        with self._lock:
            self._drop(graceful=True)


ZYGOTE = Zygote()
# a forked host starts its own zygote; the parent's socket stays open, and unused, in it
os.register_at_fork(after_in_child=ZYGOTE._forget)
atexit.register(ZYGOTE.close)


if __name__ == "__main__":
    serve(socket.socket(fileno=0))

"""The process that contains one driver and every descendant it ever has (Linux).

Run as ``python -I -S reaper.py STATUS_FD -- ARGV...`` by ``client.SubprocessTransport``
(standalone on purpose: it imports nothing of capconf, so it starts in milliseconds).

*Why a process of its own.* A process group does not contain a driver: a grandchild
that calls ``setsid()`` leaves it, and one that double-forks is an orphan that the
kernel hands to init, so ``killpg`` never reaches it and it outlives the run (#38: 40 of
40 such grandchildren survived). On Linux a *child subreaper* (``prctl
PR_SET_CHILD_SUBREAPER``) receives every orphan among its descendants instead of init,
whatever session or group the orphan moved to. This process is that subreaper for one
driver and nothing else. capconf itself does not become one: it may run inside pytest
or another host whose own helpers start processes, and a subreaper there would collect
(and, at a driver's end, kill) orphans that have nothing to do with the driver. Here
every child is, by construction, the driver or something the driver left behind.

*What it does.* It starts the driver with its own stdin, stdout and stderr (the pipes
to capconf), lets go of them (so end of file on them is the driver's doing), and tells
capconf on STATUS_FD whether the start worked: ``ok`` or the ``OSError`` text, then
closes it. It reaps orphans as they end. When the driver exits, or when capconf asks
it to stop (SIGTERM; SIGINT and SIGHUP too), it kills every child, reaps it, and does it
again for whatever reparented meanwhile, until it has no child at all (``ECHILD``, the
kernel's word, not a listing that could miss one). Then it ends as the driver ended
(the same exit status or signal), so capconf reports the driver's status.

*No races on pids.* It signals only its own children: a pid read from
``/proc/<pid>/stat`` with our pid as parent, and a child's pid cannot be reused before
its parent (we) reaps it, so the kill never reaches an unrelated process.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
UNLISTED_ROUNDS = 5000
"""Rounds (of about a millisecond) in which a child may exist that /proc does not list,
before ``contain`` gives up rather than spin: a listing lags a fork by microseconds."""


class _Stop(Exception):
    """capconf asked this process to end its driver."""


def _stop(signum: int, frame: object) -> None:
    raise _Stop


def become_subreaper() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def children(me: int) -> list[int]:
    """This process's children, living or zombie, from /proc (the field after the
    command name, which may itself hold spaces and parentheses, is the state; then the
    parent pid)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def contain(driver: int | None) -> int | None:
    """Kill and reap every descendant; the driver's wait status if it was reaped here.
    Ends when the kernel says there is no child left: a descendant whose parent is
    killed reparents to us and is caught by the next round. (Bounded, should /proc stop
    listing a child that the kernel still has: see ``UNLISTED_ROUNDS``.)"""
    me = os.getpid()
    status = None
    unlisted = 0
    while unlisted < UNLISTED_ROUNDS:
        killed = children(me)
        for pid in killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in killed:  # SIGKILLed children: waiting on each cannot hang
            with contextlib.suppress(ChildProcessError):
                _, wait_status = os.waitpid(pid, 0)
                if pid == driver:
                    status = wait_status
        try:  # what reparented to us meanwhile, or was not listed yet
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == driver:
            status = wait_status
        if pid == 0 and not killed:
            unlisted += 1  # a child that /proc did not show yet: list again
            time.sleep(0.001)
    return status  # bounded: the caller kills the process group after us


def _end_like(status: int | None) -> int:
    if status is None:
        return 128 + signal.SIGTERM
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        # ending by the driver's SIGSEGV or SIGABRT must not dump this process's core
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


def _started(status_fd: int, argv: list[str]) -> int | None:
    """Start the driver (in our process group) and say so on ``status_fd``."""
    try:
        # Python ignores SIGPIPE for itself; the driver gets the default, as Popen gives
        pid = os.posix_spawnp(argv[0], argv, os.environ,
                              setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as exc:
        os.write(status_fd, f"error {exc}".encode("utf-8", "replace"))
        os.close(status_fd)
        return None
    os.write(status_fd, b"ok")
    os.close(status_fd)
    return pid


def main(args: list[str]) -> int:
    status_fd, argv = int(args[0]), args[2:]
    os.set_inheritable(status_fd, False)  # the driver must not hold it open
    for sig in STOP_SIGNALS:
        signal.signal(sig, _stop)
    driver: int | None = None
    status: int | None = None
    try:
        if not become_subreaper():
            os.write(status_fd, b"error prctl(PR_SET_CHILD_SUBREAPER) failed")
            os.close(status_fd)
            return 127
        driver = _started(status_fd, argv)
        if driver is None:
            return 127
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the pipes are the driver's now
            os.dup2(null, fd)
        os.close(null)
        while status is None:
            pid, wait_status = os.waitpid(-1, 0)  # an orphan ending, or the driver
            if pid == driver:
                status = wait_status
    except _Stop:
        pass
    finally:
        for sig in STOP_SIGNALS:  # a second request to stop must not cut the cleanup
            signal.signal(sig, signal.SIG_IGN)
        reaped = contain(driver)
        status = status if reaped is None else reaped
    return _end_like(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

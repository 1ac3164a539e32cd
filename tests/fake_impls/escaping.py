"""A driver whose descendants try to outlive the run (issue 38, containment), and the
other two ways a driver can break the stream: answering twice, closing stdout.

Usage: python escaping.py MODE [PIDFILE]
MODE: escape PIDFILE -- at `hello`, start 40 grandchildren that leave the driver's
      process group and session with ``setsid()``; 20 of them double-fork first (their
      parent exits, so they are orphans that reparent to the nearest subreaper, or to
      init). Each writes its own pid to PIDFILE, one a line; `hello` is answered once all
      40 are written, so a test reads them before it ends the run. They sleep for 600 s
      and then stop themselves, so a failed test leaves nothing forever.
    | twice -- answers `hello` twice (the same line again), then like the reference.
    | close-stdout [PIDFILE] -- answers `hello` (having written its pid to PIDFILE),
      then closes stdout at the next request and keeps running (it sleeps, reading
      nothing), as a driver whose stdout was closed by a library would.
"""

from __future__ import annotations

import json
import os
import sys
import time

from capconf.simulator.protocol.dispatcher import Dispatcher

GRANDCHILDREN = 40
SLEEP = 600


def _sleeper(pidfile: str) -> None:
    """In a forked child: leave the session, record the pid, sleep, never return."""
    try:
        os.setsid()
        fd = os.open(pidfile, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        # the pipes stay open in this process on purpose: a leak that holds them
        time.sleep(SLEEP)
    finally:
        os._exit(0)


def escape(pidfile: str) -> None:
    for i in range(GRANDCHILDREN):
        if os.fork() != 0:
            continue
        if i % 2 and os.fork() != 0:  # double fork: the middle process exits at once
            os._exit(0)
        _sleeper(pidfile)
    for _ in range(GRANDCHILDREN):  # reap the direct children that exited
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
    for _ in range(2000):  # bounded: at most 100 s
        try:
            with open(pidfile) as fh:
                if len(fh.read().split()) >= GRANDCHILDREN:
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.05)


def main() -> int:
    mode = sys.argv[1]
    if mode == "close-stdout" and len(sys.argv) > 2:
        with open(sys.argv[2], "w") as fh:
            fh.write(f"{os.getpid()}\n")
    dispatcher = Dispatcher()
    for requests, line in enumerate(sys.stdin, 1):
        request = json.loads(line)
        if mode == "close-stdout" and requests > 1:
            sys.stdout.close()
            os.close(1)
            time.sleep(SLEEP)
            return 0
        if mode == "escape" and request.get("op") == "hello":
            escape(sys.argv[2])
        text = json.dumps(dispatcher.handle(request)) + "\n"
        sys.stdout.write(text)
        if mode == "twice" and request.get("op") == "hello":
            sys.stdout.write(text)
        sys.stdout.flush()
        if dispatcher.finished:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())

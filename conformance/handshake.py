"""The one message of a run whose implementation failed the handshake.

Before, a driver that could not start failed each of 678 cases the same way (84 s, 3 MB
of output); the team needs one message: the command, how it ended, its last words on
stderr, and what to check.
"""

from __future__ import annotations

import shlex
from typing import Any

from capconf.conformance.client import (
    DriverFailure,
    ImplementationCrashed,
    ImplementationTimedOut,
    SubprocessTransport,
)
from capconf.conformance.safe_text import console, console_value

STDERR_LINES = 15


def _tail(text: str) -> list[str]:
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-STDERR_LINES:]


def handshake_message(impl: str, transport: Any, failure: DriverFailure,
                      op: str = "hello", outcome: str = "no case was run") -> str:
    """What went wrong at `hello` (or at ``op``, the request that failed after it), and
    what to check, in one block of text."""
    what = "the handshake (`hello`)" if op == "hello" else f"`{op}` (after answering `hello`)"
    lines = [f"capconf: the implementation failed {what}; {outcome}.",
             f"  command:     {console_value(impl)}"]
    stderr = ""
    first = console_value((failure.message.splitlines() or [""])[0]
                          .removesuffix("; stderr tail:"))
    if isinstance(failure, ImplementationCrashed):
        status = failure.returncode
        lines.append(f"  exit status: {status if status is not None else '(did not start)'}")
        lines.append(f"  result:      {first}")
        stderr = failure.stderr
    elif isinstance(failure, ImplementationTimedOut):
        lines.append(f"  result:      {first}")
    else:
        lines.append(f"  result:      {failure.outcome}: {first}")
    if isinstance(transport, SubprocessTransport) and not stderr:
        stderr = transport.stderr_tail()
    tail = _tail(stderr)
    lines.append("  stderr tail:" + ("" if tail else " (nothing on stderr)"))
    lines += [f"    {console_value(ln)}" for ln in tail]
    try:
        argv0 = shlex.split(impl)[0] if impl.strip() else impl
    except ValueError:  # unbalanced quotes: the command as given
        argv0 = impl
    argv0, impl = console_value(argv0), console_value(impl)
    hint = [f"  check:       that `{argv0}` runs from this directory (try it by hand: "
            f"echo '{{\"id\":1,\"op\":\"hello\",\"args\":{{}}}}' | {impl}),",
            "               that it answers each request with one JSON line on stdout "
            "(logs go to stderr),",
            f"               and that it answers `{op}` within --timeout seconds "
            "(a first `cargo run` or `npx` may compile or download first)."]
    if isinstance(failure, ImplementationTimedOut):
        hint.append("               It started but did not answer in time: raise --timeout, "
                    "or check that it flushes stdout after each line.")
    return console("\n".join(lines + hint))

"""``capconf`` commands forked from one warm interpreter (``suite_runner.run_cli``).

A test that runs ``capconf run ...`` in a fresh child process pays ~3.2 CPU-seconds
before its first case: the interpreter, the imports of pytest, the simulator and the
suite, and the collection of the suite's modules. Most of that is the same every time.
This server pays it once: it imports the command, collects the suite once (a
``--collect-only`` run, output discarded, so no case has run and no state of a case is
left behind), freezes what it holds, and then forks one child per job. The child takes
the job's working directory, environment and argument list, points its stdout and
stderr at the job's files and calls the command's own ``main`` — the same code, options,
messages and exit status as the command typed in a shell, from a fresh process of its
own (a crash, a hang or a patched simulator ends with it), and with the ``sys.path`` a
fresh ``python -m`` would have there (the directory, the job's PYTHONPATH, the rest). The
modules the server imported stay imported. In a warm process a
``capconf run`` costs about 0.5 CPU-seconds plus its cases.

    python -m cli_server --jobs-fd N --results-fd M [--workers K] [--profile P]

Two things a warm process would change, undone here. Hypothesis fixes a property case's
settings when its module is imported, so the suite is collected under the job's
``--hypothesis-profile`` (``--profile``; one server per profile, ``suite_runner.run_cli``
picks it). And pytest warns that modules imported before its assertion rewriter cannot
be rewritten: those the warm collection imported were rewritten by it, so the child
does not warn about them (a fresh run imports them under its own rewriter, silently).

Jobs are JSON lines (``CliJob``); each finished job is one JSON line on the results
descriptor (``suite_server.serve`` runs the loop).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CliJob:
    """One command: ``capconf ARGV...`` in ``cwd`` with ``env``, output to two files."""

    name: str
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str]
    stdout: str
    stderr: str
    timeout: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CliJob:
        return cls(str(data["name"]), tuple(data["argv"]), str(data["cwd"]),
                   {str(k): str(v) for k, v in data["env"].items()}, str(data["stdout"]),
                   str(data["stderr"]), float(data["timeout"]))

    @property
    def output_file(self) -> Path:
        """Where a kill is noted (the job's stderr)."""
        return Path(self.stderr)


def _main(argv: list[str]) -> int:
    from capconf.conformance import cli

    try:
        return int(cli.main(argv) or 0)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1


def _redirected(stdout: str, stderr: str) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    for fd, path in ((1, stdout), (2, stderr)):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, fd)
        os.close(out)


def warm(profile: str | None) -> None:
    """Import the command and collect the suite once (under ``profile``), its output
    thrown away, compile the protocol's schemas and build hypothesis's Unicode tables
    (``suite_server.warm_hypothesis``)."""
    saved = os.dup(1), os.dup(2)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="capconf-cli-warm-") as scratch:
        try:
            os.chdir(scratch)
            sys.stdout.flush()
            sys.stderr.flush()
            _redirected(os.devnull, os.devnull)
            chosen = [f"--hypothesis-profile={profile}"] if profile else []
            _main(["run", "--", "--collect-only", "-q", *chosen])
            from suite_server import warm_hypothesis  # after the run: its imports came first

            from capconf.conformance import protocol

            protocol.prepare()
            warm_hypothesis()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.chdir(cwd)


def _entries(pythonpath: str | None) -> list[str]:
    return [os.path.abspath(p) for p in (pythonpath or "").split(os.pathsep) if p]


# sys.path without the server's own first entry and PYTHONPATH: what a child adds its
# job's in front of, as a fresh ``python -m`` in that directory would have it
_BASE_PATH = [p for p in sys.path[1:] if p not in set(_entries(os.environ.get("PYTHONPATH")))]


def _quiet_about(warmed: frozenset[str]) -> None:
    from _pytest.assertion import rewrite

    loud = rewrite.AssertionRewritingHook._warn_already_imported

    def warn(self: rewrite.AssertionRewritingHook, name: str) -> None:
        if name not in warmed:
            loud(self, name)

    rewrite.AssertionRewritingHook._warn_already_imported = warn  # type: ignore[method-assign]


def fork(job: CliJob, warmed: frozenset[str]) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 3
    try:
        _redirected(job.stdout, job.stderr)
        os.chdir(job.cwd)
        os.environ.clear()
        os.environ.update(job.env)
        sys.path[:] = [job.cwd, *_entries(job.env.get("PYTHONPATH")), *_BASE_PATH]
        sys.argv = ["capconf", *job.argv]
        _quiet_about(warmed)
        code = _main(list(job.argv))
    except BaseException:  # a child must never return into the server's loop
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        from suite_server import end_zygote

        end_zygote()
        os._exit(code)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs-fd", type=int, required=True)
    parser.add_argument("--results-fd", type=int, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile", default=None, help="the jobs' --hypothesis-profile")
    ns = parser.parse_args()
    before = frozenset(sys.modules)
    warm(ns.profile)
    warmed = frozenset(sys.modules) - before
    from suite_server import serve  # after the warm run: its imports are the suite's own

    gc.collect()
    gc.freeze()
    with os.fdopen(ns.results_fd, "w", encoding="utf-8") as results:
        serve(ns.jobs_fd, results, ns.workers, CliJob.from_json,
              lambda job: fork(job, warmed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Many conformance runs from one collection: a pytest plugin that forks per run.

Loaded into one ``capconf run`` (``-p suite_server --suite-jobs FILE``), it lets the
session collect the whole suite once and then, instead of running the items, forks one
child per job: the child points the capconf plugin at the job's implementation
(``--impl``), keeps the cases of the job's requirements (``--req``) or just some cases,
optionally stops at the first failure (``-x``), runs them with pytest's own run loop,
writes the job's JSON Lines report and exits. A fork starts from the collected session,
so a job costs only its own cases; in a fresh ``capconf run`` the interpreter start and
the collection were ~1.9 CPU-seconds each time, more than most mutants' cases.

A child is a separate process, so a mutant that patches the simulator patches only its
own copy, and a crash, hang or ``os._exit`` of an implementation ends only that job.
The parent side is ``suite_runner.SuiteBatch``; a finished job is announced as one JSON
line on the file descriptor ``--suite-results-fd``.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib
import inspect
import json
import linecache
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from capconf.conformance import plugin as capconf_plugin
from capconf.conformance import protocol
from capconf.conformance.versions import versions


@dataclass(frozen=True)
class Job:
    """One conformance run: what ``capconf run --impl IMPL --req R... [-- -x]`` would do."""

    name: str
    impl: str
    requirements: tuple[str, ...]
    cases: tuple[str, ...]  # only these case IDs (of those requirements), if any
    first: tuple[str, ...]  # these case IDs run before the others (suite order otherwise)
    first_failure: bool
    workdir: str
    timeout: float  # seconds before the job is killed
    rest: int = 0  # this many cases of other requirements run first (``rest_sample``)
    rest_excludes: tuple[str, ...] = ()  # requirements the rest sample leaves out too
    seed: str = ""  # what draws the rest sample (``sample_rest``); the name when empty

    @classmethod
    def from_json(cls, data: dict[str, Any], timeout: float) -> Job:
        return cls(str(data["name"]), str(data["impl"]), tuple(data["requirements"]),
                   tuple(data["cases"]), tuple(data["first"]), bool(data["first_failure"]),
                   str(data["workdir"]), timeout, int(data.get("rest", 0)),
                   tuple(data.get("rest_excludes", ())), str(data.get("seed", "")))

    @property
    def output_file(self) -> Path:
        """Where the job's output goes (and a kill is noted)."""
        return Path(self.workdir, "output.txt")


class ServedJob(Protocol):
    """What the fork loop needs of a job (a suite job here, a CLI job in ``cli_server``)."""

    @property
    def name(self) -> str: ...

    @property
    def timeout(self) -> float: ...

    @property
    def output_file(self) -> Path: ...


J = TypeVar("J", bound=ServedJob)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("suite_server", "many runs from one collection (tests only)")
    group.addoption("--suite-jobs-fd", type=int, default=None,
                    help="file descriptor: the jobs to run, one JSON line each, until its end")
    group.addoption("--suite-results-fd", type=int, default=None,
                    help="file descriptor: one JSON line per finished job")
    group.addoption("--suite-workers", type=int, default=2, help="jobs at a time")
    group.addoption("--suite-timeout", type=float, default=300.0,
                    help="seconds a job may take before it is killed")
    group.addoption("--suite-warm", action="append", default=[],
                    help="MODULE[:CALLABLE[:ARG]] to import (and call) once before forking, so "
                         "no job pays for it")


def _warm(specs: list[str]) -> None:
    for spec in specs:
        module_name, _, rest = spec.partition(":")
        attribute, _, argument = rest.partition(":")
        module = importlib.import_module(module_name)
        if attribute:
            function = getattr(module, attribute)
            function(argument) if argument else function()


def _warm_caches(session: pytest.Session) -> None:
    """Fill, once, the caches every child would otherwise fill for itself: the
    module-by-file table ``inspect.getmodule`` rebuilds from every loaded module and the
    source lines of the suite's files (a failure report reads both), each item's case
    and requirement IDs and groups, the versions a report's header names, and the
    protocol's compiled schemas."""
    inspect.getmodule(_warm_caches.__code__, __file__)
    for path in {str(item.path) for item in session.items}:
        linecache.getlines(path)
    for item in session.items:
        capconf_plugin.case_groups(item)  # reads (and keeps) its case and requirement IDs
    versions()
    protocol.prepare()
    warm_hypothesis()


def warm_hypothesis() -> None:
    """Hypothesis's Unicode tables, read (or built) once here and inherited by every
    child: the category table and the UTF-8 codec's characters, which the suite's text
    strategies draw from (hypothesis keeps them in memory once built). A name this
    hypothesis does not have only costs each child the build."""
    with contextlib.suppress(ImportError, AttributeError):
        from hypothesis.internal import charmap

        charmap.charmap()
        charmap.intervals_from_codec("utf-8")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    config = session.config
    jobs_fd = config.getoption("suite_jobs_fd")
    if jobs_fd is None:
        return None
    _warm(config.getoption("suite_warm"))
    # Every child makes its tmp_path directories under one base made here: pytest makes
    # numbered directories race-free, but a base made by each child would be cleaned by
    # the next one.
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        factory.getbasetemp()
    _warm_caches(session)
    # What the server holds now is shared by every child; frozen, no child's collector
    # walks it (and copies the pages it touches).
    gc.collect()
    gc.freeze()
    timeout = config.getoption("suite_timeout")
    with os.fdopen(config.getoption("suite_results_fd"), "w", encoding="utf-8") as results:
        serve(jobs_fd, results, config.getoption("suite_workers"),
              lambda data: Job.from_json(data, timeout), lambda job: _fork(session, job))
    return True


def serve(jobs_fd: int, results: Any, workers: int, parse: Callable[[dict[str, Any]], J],
          start: Callable[[J], int]) -> None:
    """Read jobs (JSON lines, each made a job by ``parse``) until end of input, keep
    ``workers`` children (``start`` forks one and returns its pid) busy, and announce
    each job as it ends, in the order they end."""
    pending: list[J] = []
    running: dict[int, tuple[J, float]] = {}
    buffered, more = b"", True
    pause = 0.001
    while more or pending or running:
        while pending and len(running) < max(1, workers):
            job = pending.pop(0)
            running[start(job)] = (job, time.monotonic())
        if _reap(running, results):
            pause = 0.001
            continue
        wait = pause if running else None
        pause = min(pause * 2, 0.02)
        if not more:
            time.sleep(wait or 0)
            continue
        ready, _, _ = select.select([jobs_fd], [], [], wait)
        if ready:
            chunk = os.read(jobs_fd, 1 << 16)
            more = bool(chunk)
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            pending += [parse(json.loads(line)) for line in lines if line.strip()]
            pause = 0.001


def _reap(running: dict[int, tuple[J, float]], results: Any) -> bool:
    """Announce every child that has ended; kill those over their job's timeout. True if
    any ended."""
    ended = False
    while running:
        pid, status, usage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            break
        if pid not in running:
            continue  # not one of ours (cannot happen: the server starts nothing else)
        job, _ = running.pop(pid)
        cpu = round(usage.ru_utime + usage.ru_stime, 3)
        results.write(json.dumps({"name": job.name, "returncode": os.waitstatus_to_exitcode(
            status), "cpu": cpu}) + "\n")
        results.flush()
        ended = True
    now = time.monotonic()
    for pid, (job, started) in list(running.items()):
        if now - started > job.timeout:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with open(job.output_file, "a", encoding="utf-8") as out:
                out.write(f"\nsuite_server: killed after {job.timeout:g} s\n")
            running[pid] = (job, float("inf"))  # killed once; reaped on a later turn
    return ended


def _fork(session: pytest.Session, job: Job) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 3
    try:
        out = os.open(job.output_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(out, 2)
        code = _run_job(session, job)
    except BaseException:  # a child must never return into the server's loop
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        end_zygote()
        os._exit(code)


def end_zygote() -> None:
    """A forked child ends with ``os._exit``, which runs no ``atexit``: end the workflow
    zygote it may have started (``capconf.simulator.core.zygote``) first, so that the
    zygote's CPU and its workers' reach this child's own (the job's CPU, as reported)."""
    module = sys.modules.get("capconf.simulator.core.zygote")
    if module is not None:
        with contextlib.suppress(Exception):
            module.ZYGOTE.close()


def _run_job(session: pytest.Session, job: Job) -> int:
    """In the forked child: the rest of ``capconf run`` for this job, from its collected
    items. The capconf plugin's own hooks are called again with the job's options, so
    its report and its ``--req`` selection are exactly those of a fresh run."""
    config = session.config
    rest = rest_sample(session.items, job.requirements, job.rest_excludes, job.rest,
                       job.seed or job.name)
    config.option.impl = job.impl
    config.option.req = list(job.requirements)
    config.option.report = str(Path(job.workdir, "report.jsonl"))
    config.option.maxfail = 1 if job.first_failure else 0
    capconf_plugin.pytest_configure(config)
    items = list(session.items)
    capconf_plugin.pytest_collection_modifyitems(session, config, items)
    if job.cases:
        wanted = set(job.cases)
        items = [i for i in items if capconf_plugin.case_id(i) in wanted]
    if job.first:
        early = set(job.first)
        items.sort(key=lambda i: capconf_plugin.case_id(i) not in early)  # stable
    items = [i for i in rest if i not in items] + items
    session.items = items
    session.testscollected = len(items)
    main = config.pluginmanager.get_plugin("main")
    with contextlib.suppress(session.Failed, session.Interrupted):
        main.pytest_runtestloop(session)
    status = (pytest.ExitCode.TESTS_FAILED if session.testsfailed
              else pytest.ExitCode.NO_TESTS_COLLECTED if not items else pytest.ExitCode.OK)
    session.exitstatus = status
    config.hook.pytest_sessionfinish(session=session, exitstatus=status)
    return int(status)


def _is_property(item: pytest.Item) -> bool:
    """A hypothesis case: tens of examples each, so a sample of such cases would cost
    more than most mutants' own runs; the mutant's own cases include them."""
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


@dataclass(frozen=True)
class SampledCase:
    """What the rest sample knows of a case."""

    case: str
    requirements: frozenset[str]
    groups: frozenset[str]
    is_property: bool


def rest_sample(items: list[pytest.Item], requirements: tuple[str, ...],
                excludes: tuple[str, ...], count: int, seed: str) -> list[pytest.Item]:
    """The collected items that ``sample_rest`` picks."""
    if count <= 0:
        return []
    by_case = {capconf_plugin.case_id(i): i for i in items}
    cases = [SampledCase(str(cid), frozenset(capconf_plugin.req_ids(i)),
                         frozenset(capconf_plugin.case_groups(i)), _is_property(i))
             for cid, i in by_case.items()]
    return [by_case[c] for c in sample_rest(cases, requirements, excludes, count, seed)]


def sample_rest(cases: list[SampledCase], requirements: tuple[str, ...],
                excludes: tuple[str, ...], count: int, seed: str) -> list[str]:
    """``count`` case IDs that cite none of ``requirements`` and ``excludes``: the control
    that a mutant of those requirements passes the rest of the suite, sampled, since
    running all of it for every mutant would cost more than the mutants themselves.
    (``excludes``: requirements whose cases the mutant is known to break as well.)

    Half (rounded up) come from the feature groups of the requirements' own cases (a
    mutant that breaks its whole area, every world or the handshake fails those), the
    rest from the other groups. Property cases are left out. The choice depends only on
    ``seed`` (the job's name) and the case IDs, so a run is repeatable and every mutant
    draws its own cases."""
    wanted, left_out = set(requirements), set(requirements) | set(excludes)
    groups = frozenset().union(*(c.groups for c in cases if wanted & c.requirements))
    others = sorted((c for c in cases if not left_out & c.requirements and not c.is_property),
                    key=lambda c: hashlib.sha256(f"{seed}\0{c.case}".encode()).hexdigest())
    near = [c.case for c in others if c.groups & groups]
    far = [c.case for c in others if not c.groups & groups]
    half = (count + 1) // 2
    picked = near[:half] + far[:count - half]
    return picked + [c for c in near[half:] + far if c not in picked][:max(0, count - len(picked))]

"""Run the conformance suite in child processes and read their JSON Lines reports.

``run_suite`` is one ``capconf run``; ``SuiteBatch`` is many runs that share one
collection of the suite (the mutant and outside-tester tiers: hundreds of runs)."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Generic, Literal, TypeVar, overload

import pytest

REPO = Path(__file__).resolve().parent.parent
# the outcomes that count as a run failing a case (a kill)
FAILING = frozenset({"failed", "errored", "crashed", "timed out"})
DRIVER = f"{shlex.quote(sys.executable)} -m capconf.conformance.cli driver"


@dataclass
class SuiteRun:
    returncode: int
    output: str
    header: dict[str, Any]
    cases: dict[str, dict[str, Any]]
    cpu: float | None = None  # CPU seconds of the job (a SuiteBatch job), when known

    def outcomes(self) -> dict[str, str]:
        return {cid: c["outcome"] for cid, c in self.cases.items()}


TESTS = Path(__file__).resolve().parent


# Byte code of the child processes, kept out of the source tree. Each child is a fresh
# interpreter that imports the whole simulator and has pytest rewrite every suite module;
# with PYTHONDONTWRITEBYTECODE set (as on this project's machines) it compiled all of it
# from source every time: 7.6 s per `capconf run --req X`, 2.9 s with a shared cache.
# Python and pytest both check a cached file against its source, so a stale one is
# never used.
PYCACHE = Path(tempfile.gettempdir()) / f"capconf-pycache-{os.getuid()}"
# hypothesis keeps its Unicode tables (characters of a codec, of a category) in files of
# its storage directory, `.hypothesis/` under the working directory by default: every
# child run in a new directory rebuilt them, ~2.5 CPU-seconds per run of a case drawing
# UTF-8 text. One directory for every process of the session (examples are not kept
# there: the profiles set no database).
HYPOTHESIS_STORE = Path(tempfile.gettempdir()) / f"capconf-hypothesis-{os.getuid()}"


def fixture_env() -> dict[str, str]:
    """The environment of a child process that may load the tests' own fixtures (the
    mutants, the misbehaving implementations): ``tests/`` on ``PYTHONPATH``, and a shared
    byte-code cache and hypothesis storage outside the tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(HYPOTHESIS_STORE))
    return env


@dataclass(frozen=True)
class RecordedRun:
    """The whole suite against ``capconf driver`` over stdio, with what each case sent."""

    run: SuiteRun
    record: dict[str, dict[str, list[str]]] | None  # None: the recorder wrote nothing


def run_suite(tmp_path: Path, impl: str, *extra: str, timeout: float = 300,
              fresh: bool = False) -> SuiteRun:
    """One ``capconf run`` in a process of its own (``run_cli``: forked from a warm
    interpreter, the command exactly as a user runs it otherwise; ``fresh``: a new
    interpreter). For many runs of the same suite, ``SuiteBatch`` costs a fraction."""
    report = tmp_path / "report.jsonl"
    proc = run_cli(["run", "--impl", impl, "--report", str(report), *extra], cwd=tmp_path,
                   timeout=timeout, fresh=fresh)
    return read_run(report, proc.returncode, proc.stdout + proc.stderr)


def read_run(report: Path, returncode: int, output: str) -> SuiteRun:
    """A run's outcome from its JSON Lines report (header, then one line per case)."""
    lines = [json.loads(ln) for ln in report.read_text().splitlines()] if report.exists() else []
    header = lines[0] if lines else {}
    cases = {ln["case"]: ln for ln in lines[1:] if ln.get("type", "case") == "case"}
    return SuiteRun(returncode, output, header, cases)


@dataclass(frozen=True)
class SuiteJob:
    """What ``capconf run --impl IMPL --req R ... [-- -x]`` would run, as one job of a
    ``SuiteBatch``. ``cases`` narrows it to those case IDs; ``first`` runs those case IDs
    before the others (with ``first_failure``, a known killer first makes a mutant's
    run one case long; the set of cases is the same)."""

    name: str
    impl: str
    requirements: tuple[str, ...] = ()
    first_failure: bool = False
    cases: tuple[str, ...] = ()
    first: tuple[str, ...] = ()
    rest: int = 0  # cases of other requirements to run first (suite_server.rest_sample)
    rest_excludes: tuple[str, ...] = ()  # requirements the rest sample leaves out too
    seed: str = ""  # what draws the rest sample (the job's name when empty)


@dataclass
class ForkedCpu:
    """CPU seconds of fork-server jobs, for ``benchmarks/cpu_per_file.py``: a job is a
    grandchild of the test process, so its CPU reaches ``RUSAGE_CHILDREN`` only when its
    server is reaped (at the end of a module or the session). ``reported`` is every
    finished job's CPU as its server announced it, ``reaped`` the part of that whose
    server has since been reaped (and so is counted by ``RUSAGE_CHILDREN`` as well)."""

    reported: float = 0.0
    reaped: float = 0.0


FORKED_CPU = ForkedCpu()


class _ForkServer:
    """The parent side of a fork server (``suite_server``, ``cli_server``): a child
    process in a session of its own that reads jobs as JSON lines on one pipe and
    announces each finished job on another; ``_wait(name)`` reads until that job's line
    came (jobs end in any order, and any thread may wait)."""

    def __init__(self, root: Path, timeout: float) -> None:
        self.root = root
        self.timeout = timeout
        self._done: dict[str, dict[str, Any]] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._to_server: IO[str] | None = None
        self._results: IO[str] | None = None
        self._lock = threading.Lock()

    def _argv(self, jobs_fd: int, results_fd: int) -> list[str]:
        raise NotImplementedError

    def _start(self) -> None:
        jobs_read, jobs_write = os.pipe()
        results_read, results_write = os.pipe()
        with open(self.root / "server.log", "wb") as log:
            self._proc = subprocess.Popen(self._argv(jobs_read, results_write), cwd=self.root,
                                          env=fixture_env(), stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=subprocess.STDOUT,
                                          pass_fds=(jobs_read, results_write),
                                          start_new_session=True)
        os.close(jobs_read)
        os.close(results_write)
        self._to_server = os.fdopen(jobs_write, "w", encoding="utf-8")
        self._results = os.fdopen(results_read, "r", encoding="utf-8")

    def _send(self, job: dict[str, Any]) -> None:
        with self._lock:
            if self._proc is None:
                self._start()
            assert self._to_server is not None
            try:
                self._to_server.write(json.dumps(job) + "\n")
                self._to_server.flush()
            except BrokenPipeError:
                pass  # the server ended: _wait() says so, with its log

    def _wait(self, name: str) -> dict[str, Any] | None:
        """The finished job's line (returncode, cpu), or None if the server ended first."""
        with self._lock:
            while name not in self._done and self._results is not None:
                line = self._results.readline()
                if not line:
                    self._results.close()
                    self._results = None
                    break
                done = json.loads(line)
                self._done[done["name"]] = done
                FORKED_CPU.reported += float(done.get("cpu") or 0.0)
            return self._done.get(name)

    def _log_tail(self) -> str:
        log = self.root / "server.log"
        return log.read_text(errors="replace")[-4000:] if log.exists() else ""

    def _finished(self) -> bool:
        return True

    def close(self) -> None:
        """End the server: at once, with whatever it still runs (its own process group),
        unless every job has been read."""
        for stream in (self._to_server, self._results):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._to_server = self._results = None
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:  # its input closed, the server ends once its last job has
            proc.wait(timeout=10 if self._finished() else 0.001)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        FORKED_CPU.reaped += sum(float(d.get("cpu") or 0.0) for d in self._done.values())


class SuiteBatch(_ForkServer):
    """Many conformance runs from one collection of the suite (``suite_server``).

    One child ``capconf run`` collects the suite once, then forks a process per job, two
    at a time: a job costs its own cases, not an interpreter start and a collection
    (~1.9 CPU-seconds each). Every job is still its own process, so a mutant patches only
    itself. ``submit`` adds jobs at any time; ``result(name)`` waits for one (jobs end in
    any order).

    ``profile`` is the hypothesis profile of every job (it is fixed when the suite is
    imported); ``warm`` names ``MODULE[:CALLABLE[:ARG]]`` to import once before the
    forks (an implementation's own modules), so no job pays for it.
    """

    def __init__(self, root: Path, jobs: Sequence[SuiteJob] = (), *, profile: str = "ci",
                 warm: Sequence[str] = (), workers: int | None = None,
                 timeout: float = 300) -> None:
        super().__init__(root, timeout)
        self.profile = profile
        self.warm = tuple(warm)
        self.workers = workers or os.cpu_count() or 2
        self._jobs: dict[str, SuiteJob] = {}
        for job in jobs:
            self.submit(job)

    def _argv(self, jobs_fd: int, results_fd: int) -> list[str]:
        return [sys.executable, "-m", "capconf.conformance.cli", "run", "--",
                "-p", "suite_server", "--capture=sys", f"--basetemp={self.root / 'basetemp'}",
                f"--hypothesis-profile={self.profile}", "--suite-jobs-fd", str(jobs_fd),
                "--suite-results-fd", str(results_fd), "--suite-workers", str(self.workers),
                "--suite-timeout", str(self.timeout), *(f"--suite-warm={w}" for w in self.warm)]

    @property
    def names(self) -> frozenset[str]:
        """The jobs submitted so far."""
        return frozenset(self._jobs)

    def submit(self, job: SuiteJob) -> None:
        """Queue one more run (the server starts on the first)."""
        if job.name in self._jobs:
            raise ValueError(f"job {job.name!r} submitted twice")
        self._jobs[job.name] = job
        workdir = self.root / job.name
        workdir.mkdir(parents=True, exist_ok=True)
        self._send({"name": job.name, "impl": job.impl,
                    "requirements": list(job.requirements), "cases": list(job.cases),
                    "first": list(job.first), "rest": job.rest,
                    "rest_excludes": list(job.rest_excludes), "seed": job.seed or job.name,
                    "first_failure": job.first_failure, "workdir": str(workdir)})

    def result(self, name: str) -> SuiteRun:
        job = self._jobs[name]
        done = self._wait(name)
        workdir = self.root / job.name
        output_file = workdir / "output.txt"
        output = output_file.read_text(errors="replace") if output_file.exists() else ""
        if done is None:
            return SuiteRun(-1, f"{output}\nthe suite server ended first:\n{self._log_tail()}",
                            {}, {})
        run = read_run(workdir / "report.jsonl", int(done["returncode"]), output)
        return replace(run, cpu=done.get("cpu"))

    def _finished(self) -> bool:
        return set(self._done) >= set(self._jobs)

    def __enter__(self) -> SuiteBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


Out = TypeVar("Out", str, bytes)


@dataclass(frozen=True)
class CliResult(Generic[Out]):
    """What ``subprocess.run(capture_output=True)`` of the command gives (text or bytes)."""

    returncode: int
    stdout: Out
    stderr: Out
    cpu: float | None = None


class CliServer(_ForkServer):
    """``capconf ARGS...`` forked from one warm interpreter (``cli_server``): the same
    command, options, output and exit status as a fresh process, without its ~3.2
    CPU-seconds of start-up and collection. ``run`` waits for its command; any thread
    may call it."""

    def __init__(self, root: Path, *, profile: str | None = None, workers: int = 2) -> None:
        super().__init__(root, timeout=0)
        self.profile = profile
        self.workers = workers
        self._count = itertools.count(1)

    def _argv(self, jobs_fd: int, results_fd: int) -> list[str]:
        chosen = ["--profile", self.profile] if self.profile else []
        return [sys.executable, "-m", "cli_server", "--jobs-fd", str(jobs_fd),
                "--results-fd", str(results_fd), "--workers", str(self.workers), *chosen]

    def run(self, args: Sequence[str], *, cwd: Path, env: dict[str, str],
            timeout: float) -> CliResult[bytes]:
        name = f"job-{next(self._count)}"
        out = self.root / "jobs" / name
        out.mkdir(parents=True)
        self._send({"name": name, "argv": list(args), "cwd": str(cwd), "env": env,
                    "stdout": str(out / "stdout"), "stderr": str(out / "stderr"),
                    "timeout": timeout})
        done = self._wait(name)
        stdout, stderr = (_read_bytes(out / "stdout"), _read_bytes(out / "stderr"))
        shutil.rmtree(out, ignore_errors=True)
        if done is None:
            ended = f"\nthe CLI server ended first:\n{self._log_tail()}".encode()
            return CliResult(-1, stdout, stderr + ended)
        return CliResult(int(done["returncode"]), stdout, stderr, done.get("cpu"))


def _read_bytes(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


_cli_servers: dict[str | None, CliServer] = {}


def hypothesis_profile(args: Sequence[str]) -> str | None:
    """The ``--hypothesis-profile`` among the pytest options of a ``capconf run`` (after
    ``--``), or None: a warm server serves the profile its suite was imported under."""
    if "--" not in args:
        return None
    rest = list(args[list(args).index("--") + 1:])
    for i, arg in enumerate(rest):
        if arg.startswith("--hypothesis-profile="):
            return arg.split("=", 1)[1]
        if arg == "--hypothesis-profile" and i + 1 < len(rest):
            return rest[i + 1]
    return None


@overload
def run_cli(args: Sequence[str], *, cwd: Path | None = ..., env: dict[str, str] | None = ...,
            timeout: float = ..., text: Literal[True] = ...,
            fresh: bool = ...) -> CliResult[str]: ...


@overload
def run_cli(args: Sequence[str], *, cwd: Path | None = ..., env: dict[str, str] | None = ...,
            timeout: float = ..., text: Literal[False],
            fresh: bool = ...) -> CliResult[bytes]: ...


def run_cli(args: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 300, text: bool = True,
            fresh: bool = False) -> CliResult[str] | CliResult[bytes]:
    """``capconf ARGS...`` in ``cwd`` (this process's by default) with ``env``
    (``fixture_env()`` by default), forked from the session's warm ``CliServer``
    (one per hypothesis profile, started on first use, ended by ``close_cli_server`` at
    the end of the session), like
    ``subprocess.run(..., capture_output=True, text=text)``. ``fresh`` (or
    ``CAPCONF_TESTS_FRESH=1`` for every call, to compare the two) starts a new
    interpreter instead, as a user would."""
    env = fixture_env() if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if fresh or os.environ.get("CAPCONF_TESTS_FRESH") == "1":
        proc = subprocess.run([sys.executable, "-m", "capconf.conformance.cli", *args],
                              capture_output=True, timeout=timeout, cwd=cwd, env=env)
        raw = CliResult(proc.returncode, proc.stdout, proc.stderr)
    else:
        profile = hypothesis_profile(args)
        server = _cli_servers.get(profile)
        if server is None:
            root = Path(tempfile.mkdtemp(prefix="capconf-cli-server-"))
            server = _cli_servers[profile] = CliServer(root, profile=profile)
        raw = server.run(args, cwd=cwd, env=env, timeout=timeout)
    if not text:
        return raw
    return CliResult(raw.returncode, raw.stdout.decode(errors="replace"),
                     raw.stderr.decode(errors="replace"), raw.cpu)


def close_cli_server() -> None:
    """End the session's CLI servers, if any was started, and remove their files."""
    servers = list(_cli_servers.values())
    _cli_servers.clear()
    for server in servers:
        server.close()
        shutil.rmtree(server.root, ignore_errors=True)


# What the session's one suite server imports before it forks (``SuiteBatch(warm=...)``):
# the mutants' table and the reference with the outside testers' shared proxy machinery.
# A tester's own folder is imported in each of its jobs, as its modules share plain names
# with the other folders' (``eyes_inprocess``): ~0.015 CPU-s a job, against the ~0.8 of a
# server's start (its interpreter, the suite's collection and the warm caches) that the
# mutant tier and the three testers' tiers each paid when each had a server of its own.
SESSION_WARM = ("mutants:all_mutants", "eyes_inprocess:load_shared")


def session_batch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SuiteBatch]:
    """The body of the session fixture ``suite_batch`` (conftest.py): one suite server
    for every batch tier of the session, started by its first job, ended with the session.

    Every job runs under the ``fail-fast`` profile: it differs from ``ci`` only after a
    failure (no shrinking), so a run that must pass runs exactly the examples it runs
    under ``ci``, and a run that must fail stops at the first failing example. A hang is
    killed after 600 s (the slowest tier's longest job takes a few seconds)."""
    root = tmp_path_factory.mktemp("suite-batch")
    with SuiteBatch(root, profile="fail-fast", warm=SESSION_WARM, timeout=600) as batch:
        yield batch


@dataclass(frozen=True)
class BatchView:
    """One module's jobs in the session's ``SuiteBatch``, by the module's own names (the
    batch holds them as ``PREFIX.NAME``, so two modules may both name a job ``bom-kept``)."""

    batch: SuiteBatch
    prefix: str

    def submit(self, job: SuiteJob) -> None:
        # the rest sample stays the one the job's own name draws
        self.batch.submit(replace(job, name=f"{self.prefix}.{job.name}",
                                  seed=job.seed or job.name))

    def result(self, name: str) -> SuiteRun:
        return self.batch.result(f"{self.prefix}.{name}")

    @property
    def names(self) -> frozenset[str]:
        """This module's jobs submitted so far."""
        head = f"{self.prefix}."
        return frozenset(n[len(head):] for n in self.batch.names if n.startswith(head))


def batch_of_selected(request: pytest.FixtureRequest,
                      job: Callable[[str], SuiteJob]) -> BatchView:
    """The body of a module fixture: ``job(name)`` for every selected ``name`` of the
    module's tests, submitted to the session's ``suite_batch`` (so ``pytest -k NAME``
    runs one job, and the server starts only if some batch test was selected)."""
    batch: SuiteBatch = request.getfixturevalue("suite_batch")
    view = BatchView(batch, request.module.__name__.rsplit(".", 1)[-1])
    for name in selected(request):
        view.submit(job(name))
    return view


def bug_on_its_case(name: str, impl: str, requirement: str, case: str) -> SuiteJob:
    """An outside tester's wrong runtime on its requirement, the case that must catch it
    first, to the first failure (the case fails first, or it passed and the rest run)."""
    return SuiteJob(name, impl, (requirement,), first_failure=True, first=(case,))


def assert_killed_by_its_case(run: SuiteRun, name: str, requirement: str, case: str) -> None:
    """The run of ``bug_on_its_case`` failed that very case (a weakened case shows up as a
    surviving bug again, even when another case of the requirement still fails)."""
    assert run.cases, run.output[-2000:]
    assert case in run.cases, f"case {case} did not run for {requirement}"
    assert run.cases[case]["outcome"] in FAILING, (
        f"bug {name} passed {case}: {run.cases[case]['outcome']}")


def killed_over_stdio(tmp_path: Path, impl: str, requirement: str) -> SuiteRun:
    """A fresh ``capconf run`` of one requirement's cases against the command ``impl``,
    to the first failure; asserts the run failed a case."""
    run = run_suite(tmp_path, impl, "--req", requirement, "--",
                    "--hypothesis-profile=fail-fast", "-x")
    assert run.cases, run.output[-2000:]
    failing = [cid for cid, c in run.cases.items() if c["outcome"] in FAILING]
    assert failing, f"{impl} survived the {requirement} cases"
    return run


def selected(request: pytest.FixtureRequest, argname: str = "name") -> list[str]:
    """The values of parameter ``argname`` among the tests of the requesting module that
    this session runs (after ``-k``, ``-m`` and node ids), so a module fixture starts only
    the runs its selected tests read: ``pytest -k NAME`` runs one."""
    module = request.module
    values = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is module and callspec is not None \
                and argname in callspec.params:
            values.add(callspec.params[argname])
    return sorted(values)

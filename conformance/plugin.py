"""The pytest plugin that turns the suite into a conformance run.

Load it with ``-p capconf.conformance.plugin`` (``capconf run`` does). It adds ``--impl``, checks
that every case has a stable ID and cites known requirement IDs, skips cases whose
feature group the implementation does not declare (reported as "not implemented", not as
a failure), classifies every result into one of the outcomes of ``capconf.conformance.outcomes``,
applies an expected-failures baseline, and writes the JSON Lines and Markdown reports.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, Phase, settings

from capconf.conformance import baselines, outcomes
from capconf.conformance.client import (
    DriverFailure,
    InProcessTransport,
    SubprocessTransport,
    Transport,
)
from capconf.conformance.driver import Driver
from capconf.conformance.exchange import RecordingTransport
from capconf.conformance.gates import (
    GateError,
    check_baseline,
    check_required_features,
    check_requirement_ids,
)
from capconf.conformance.handshake import handshake_message
from capconf.conformance.harness import Harness
from capconf.conformance.junit import write_junit
from capconf.conformance.report import CaseRecord, RunReport
from capconf.conformance.requirements import requirements
from capconf.conformance.verdicts import describe, save_scenario

settings.register_profile(
    "ci", derandomize=True, max_examples=40, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True)
settings.register_profile(
    "explore", max_examples=1500, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True)

settings.register_profile(
    # For proving that checks can fail (mutant runs): same examples as `ci`, but a failure
    # is reported as found, without spending time on shrinking it.
    "fail-fast", parent=settings.get_profile("ci"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate], report_multiple_bugs=False)

REFERENCE = "reference"
PYTHON_PREFIX = "python:"
_STASH_REPORT = pytest.StashKey[RunReport]()
_STASH_DRIVER = pytest.StashKey[Driver]()
_STASH_BASELINE = pytest.StashKey[baselines.Baseline]()
_STASH_REQUIRED = pytest.StashKey[frozenset[str]]()
_STASH_MARKS = pytest.StashKey[tuple[str | None, tuple[str, ...]]]()
_STASH_GROUPS = pytest.StashKey[frozenset[str]]()
_STASH_COMPARED = pytest.StashKey[tuple[Any, Any] | None]()
_STASH_COLLECT = pytest.StashKey[bool]()
_CONFIG: list[pytest.Config] = []  # the running session's config, for hooks without it
_STASH_CHECKED = pytest.StashKey[
    tuple[tuple[pytest.Item, ...], frozenset[str], frozenset[str]]]()
GATE_ERROR = 2
"""Exit status of a run refused before any case ran: a bad gate value."""
HANDSHAKE_FAILED = 3
"""Exit status of a run stopped at the handshake: the implementation did not start or
did not answer `hello`."""
MAX_BASELINE_BYTES = 4 * 1024 * 1024
"""An expected-failures baseline: a line per case (~800 cases, ~200 bytes each) is
0.2 MiB; a larger file is refused (exit 2), never read without bound."""
NOTHING_RAN = 5
"""Exit status of a run that executed no case (pytest's "no tests" status): never 0."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("capconf", "capconf conformance")
    group.addoption("--impl", default=REFERENCE,
                    help="command that serves the driver protocol on stdio; "
                         "'reference' (default) is the bundled simulator, in-process; "
                         "'python:MODULE:FACTORY[:ARG]' serves a Python implementation "
                         "in-process")
    group.addoption("--impl-timeout", type=float, default=20.0,
                    help="seconds to wait for each response (default 20)")
    group.addoption("--report", default=None, help="write a JSON Lines report here")
    group.addoption("--report-md", default=None, help="write a Markdown summary here")
    group.addoption("--capconf-junit-xml", default=None, help="write JUnit XML (case IDs) here")
    group.addoption("--expected-failures", default=None,
                    help="baseline of cases expected to fail, each with the cause it "
                         "fails for (`case.id  cause: ...  # note`; `capconf baseline`)")
    group.addoption("--req", action="append", default=[],
                    help="run only cases citing this requirement ID (repeatable)")
    group.addoption("--require-features", default="",
                    help="comma-separated feature groups the implementation must declare; "
                         "their cases fail instead of being 'not implemented'")
    group.addoption("--case", action="append", default=[], dest="capconf_cases",
                    help="run only this case ID (repeatable; `capconf run --lf` uses it)")
    group.addoption("--save-failures", default=None,
                    help="write each failing case as a `capconf record` scenario here")


def _gate(check: Callable[[], Any]) -> Any:
    """Run a gate check; a bad value stops the run before any case, exit 2."""
    try:
        return check()
    except GateError as exc:
        import sys

        print(f"capconf: {exc}", file=sys.stderr)
        pytest.exit(f"capconf: {exc}", returncode=GATE_ERROR)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): requirement IDs a case checks")
    config.addinivalue_line("markers", "case(id): the case's stable ID (never reused)")
    config.addinivalue_line("markers", "uses(*groups): feature groups a case uses besides "
                            "those of its requirements (it is gated on them too)")
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("ci")
    config.stash[_STASH_REQUIRED] = frozenset(_gate(lambda: check_required_features(
        config.getoption("require_features"))))
    _gate(lambda: check_requirement_ids(config.getoption("req")))
    config.stash[_STASH_REPORT] = RunReport(impl=config.getoption("impl"))
    _CONFIG[:] = [config]


def make_transport(impl: str, timeout: float) -> Transport:
    if impl == REFERENCE:
        from capconf.conformance.reference import make_dispatcher

        return InProcessTransport(make_dispatcher, "reference simulator (in-process)")
    if impl.startswith(PYTHON_PREFIX):
        return InProcessTransport(python_factory(impl), f"{impl} (in-process)")
    return SubprocessTransport(impl, timeout=timeout)


def python_factory(impl: str) -> Callable[[], Any]:
    """``python:MODULE:FACTORY[:ARG]``: an implementation written in Python, served
    in-process without a pipe. ``FACTORY()`` (or ``FACTORY(ARG)``) returns an object with
    ``handle(request) -> response``; the suite exchanges the same JSON values with it as
    over stdio. The project's own tests use it to run deliberately broken variants of
    the reference, which live among the tests, not in the product."""
    spec = impl.removeprefix(PYTHON_PREFIX)
    module_name, _, rest = spec.partition(":")
    attribute, _, argument = rest.partition(":")
    if not module_name or not attribute:
        raise pytest.UsageError(f"--impl {impl!r}: expected python:MODULE:FACTORY[:ARG]")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise pytest.UsageError(f"--impl {impl!r}: {exc}") from None
    if not argument:
        return cast(Callable[[], Any], factory)
    return lambda: factory(argument)


def case_id(item: pytest.Item) -> str | None:
    """The stable case ID. A parametrized test with one function-level ID gets one case
    per parameter, ``ID[param-id]`` (so give parameters explicit, stable ids); a
    ``pytest.param(..., marks=case(ID))`` names its case itself."""
    return _marks(item)[0]


def req_ids(item: pytest.Item) -> list[str]:
    return list(_marks(item)[1])


def _marks(item: pytest.Item) -> tuple[str | None, tuple[str, ...]]:
    """An item's case ID and requirement IDs, read from its markers once: a run asks
    for them several times per item, and a forked run (the project's own tests fork
    hundreds from one collection) would otherwise walk every item's markers again."""
    cached = item.stash.get(_STASH_MARKS, None)
    if cached is None:
        cached = (_read_case_id(item), _read_req_ids(item))
        item.stash[_STASH_MARKS] = cached
    return cached


def _read_case_id(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for mark in callspec.marks:
            if mark.name == "case" and mark.args:
                return str(mark.args[0])
    marker = item.get_closest_marker("case")
    if not marker or not marker.args:
        return None
    return f"{marker.args[0]}[{callspec.id}]" if callspec is not None else str(marker.args[0])


def _read_req_ids(item: pytest.Item) -> tuple[str, ...]:
    ids: list[str] = []
    for marker in item.iter_markers("req"):
        ids.extend(str(a) for a in marker.args)
    return tuple(sorted(set(ids)))


def case_groups(item: pytest.Item) -> set[str]:
    """The feature groups a case is gated on: those of the requirements it cites, plus
    the groups it only *uses* (``@pytest.mark.uses``: ops or world keys of another
    group that the case needs to set up what it checks). A case runs only when the
    implementation declares all of them (SPEC.md section 2, "Which group serves an
    op"), so a runtime without that group sees "not implemented", never "errored"."""
    cached = item.stash.get(_STASH_GROUPS, None)
    if cached is None:
        table = requirements()
        groups = {table[r].group for r in req_ids(item) if r in table}
        for marker in item.iter_markers("uses"):
            groups.update(str(a) for a in marker.args)
        cached = item.stash[_STASH_GROUPS] = frozenset(groups)
    return set(cached)


def _checked_cases(config: pytest.Config,
                   items: list[pytest.Item]) -> tuple[frozenset[str], frozenset[str]]:
    """The case IDs and the requirement IDs of ``items``, after checking that every item
    has one unique case ID and known requirements and groups (a usage error otherwise).
    Kept per list of items: a run forked from a collected session (the project's own
    tests fork hundreds) checks the same items as its parent did."""
    key = tuple(items)  # the items themselves: compared by identity, kept alive
    cached = config.stash.get(_STASH_CHECKED, None)
    if cached is not None and cached[0] == key:
        return cached[1], cached[2]
    table = requirements()
    problems: list[str] = []
    seen: dict[str, str] = {}
    known = {r.group for r in table.values()}
    for item in items:
        cid = case_id(item)
        reqs = req_ids(item)
        if cid is None:
            problems.append(f"{item.nodeid}: no @pytest.mark.case(ID)")
        elif cid in seen:
            problems.append(f"{item.nodeid}: case ID {cid!r} already used by {seen[cid]}")
        else:
            seen[cid] = item.nodeid
        if not reqs:
            problems.append(f"{item.nodeid}: no @pytest.mark.req(...)")
        problems += [f"{item.nodeid}: unknown requirement {r}" for r in reqs if r not in table]
        problems += [f"{item.nodeid}: unknown feature group {g!r} in @pytest.mark.uses"
                     for m in item.iter_markers("uses") for g in m.args if g not in known]
    if problems:
        raise pytest.UsageError("malformed conformance cases:\n  " + "\n  ".join(problems))
    checked = frozenset(seen), frozenset(r for i in items for r in req_ids(i))
    config.stash[_STASH_CHECKED] = (key, *checked)
    return checked


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Runs before any deselection (ours, `-k`, `-m`): a requirement's status counts
    every case of the suite that cites it, so one whose cases the run did not select
    reads "partly tested" or "not run", never compliant."""
    cases, suite_requirements = _checked_cases(config, items)
    run = config.stash[_STASH_REPORT]
    run.suite_requirements = set(suite_requirements)
    run.suite_size = len(items)
    run.suite_cases = {}
    for item in items:
        for rid in req_ids(item):
            run.suite_cases[rid] = run.suite_cases.get(rid, 0) + 1
    config.stash[_STASH_BASELINE] = _gate(lambda: _baseline(config, set(cases)))
    wanted = set(config.getoption("req"))
    only = set(config.getoption("capconf_cases"))
    if wanted or only:
        keep = [i for i in items if (not wanted or wanted & set(req_ids(i)))
                and (not only or case_id(i) in only)]
        kept = set(map(id, keep))
        config.hook.pytest_deselected(items=[i for i in items if id(i) not in kept])
        items[:] = keep
    if items and not config.option.collectonly:
        _start_driver(config)


def _baseline(config: pytest.Config, known: set[str]) -> baselines.Baseline:
    path = config.getoption("expected_failures")
    if not path:
        return baselines.Baseline("")
    from capconf.conformance.cli_files import InputError, read_input_text
    from capconf.conformance.ledger import ledger_path, read_ledger

    try:  # a regular file, bounded: a FIFO or a link to /dev/zero is refused, never read
        text = read_input_text(path, "baseline", MAX_BASELINE_BYTES)
    except InputError as exc:
        raise GateError(f"--expected-failures: {exc}") from None
    retired = read_ledger(Path(str(ledger_path())).read_text(encoding="utf-8"))[1]
    try:
        baseline = baselines.parse(text, path)
    except baselines.BaselineError as exc:
        raise GateError(f"--expected-failures: {exc}") from None
    check_baseline(baseline.entries, path, known, retired)
    warning = baseline.warning()
    if warning is not None:
        import sys

        print(f"capconf: warning: {warning}", file=sys.stderr)
        config.stash[_STASH_REPORT].warnings.append(warning)
    return baseline


def _start_driver(config: pytest.Config) -> None:
    """Start the implementation and shake hands once, before the first case: an
    implementation that cannot start or answer `hello` stops the run with one message
    (the command, its exit status, its stderr tail, what to check) instead of failing
    every case the same way."""
    transport = RecordingTransport(make_transport(config.getoption("impl"),
                                                  config.getoption("impl_timeout")))
    drv = Driver(transport)
    config.stash[_STASH_DRIVER] = drv
    try:
        drv.hello()
    except Exception as exc:  # a DriverFailure, or an in-process implementation that raised
        import sys

        failure = exc if isinstance(exc, DriverFailure) else DriverFailure(
            f"the implementation raised {type(exc).__name__}: {exc}")
        message = handshake_message(config.getoption("impl"), transport.inner, failure)
        config.stash[_STASH_REPORT].handshake_error = message
        print(message, file=sys.stderr)
        pytest.exit("capconf: the implementation failed the handshake; no case was run",
                    returncode=HANDSHAKE_FAILED)


@pytest.fixture(scope="session")
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    config = request.config
    drv = config.stash.get(_STASH_DRIVER, None)
    if drv is None:
        _start_driver(config)
        drv = config.stash[_STASH_DRIVER]
    yield drv
    drv.close()


@pytest.fixture
def impl(driver: Driver) -> Iterator[Harness]:
    """A harness with a fresh, empty workspace and a default world already set up."""
    with tempfile.TemporaryDirectory(prefix="capconf-ws-") as tmp:
        harness = Harness(driver, Path(os.path.realpath(tmp)))
        harness.setup()
        yield harness


class RequiredFeatureMissing(AssertionError):
    """A case of a group named by ``--require-features`` that `hello` does not declare:
    reported **failed** (the implementation does not do what the run requires), not
    errored (nothing went wrong with the harness)."""


@pytest.fixture(autouse=True)
def _feature_gate(request: pytest.FixtureRequest, driver: Driver) -> None:
    """Cases of a feature group the implementation does not declare in `hello` are
    "not implemented", never failures."""
    driver.begin_case()
    request.config.stash[_STASH_COMPARED] = None
    if isinstance(driver.transport, RecordingTransport):
        driver.transport.begin_case()
    declared = driver.features  # a failing handshake is reported with its own outcome
    missing = sorted(case_groups(request.node) - declared - {"core"})
    required = request.config.stash[_STASH_REQUIRED]
    if set(missing) & required:
        raise RequiredFeatureMissing(
            f"feature group(s) {', '.join(sorted(set(missing) & required))} are required "
            "(--require-features) but not declared in `hello`")
    if missing:
        pytest.skip(f"{outcomes.NOT_IMPLEMENTED_PREFIX}feature group(s) {', '.join(missing)} "
                    "not declared by the implementation")
    driver.declared_case = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
        item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    _bound_longrepr(report)
    category: str | None = None
    reason = ""
    excinfo = call.excinfo
    if excinfo is not None and isinstance(excinfo.value, DriverFailure):
        category = excinfo.value.outcome
        reason = excinfo.value.message
        if category == outcomes.NOT_IMPLEMENTED:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               outcomes.NOT_IMPLEMENTED_PREFIX + reason)
    elif report.skipped:
        text = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        text = text.removeprefix("Skipped: ")
        category = (outcomes.NOT_IMPLEMENTED if text.startswith(outcomes.NOT_IMPLEMENTED_PREFIX)
                    else outcomes.SKIPPED)
        reason = text
    elif report.failed:
        category = (outcomes.FAILED if report.when == "call" or (
            excinfo is not None and isinstance(excinfo.value, RequiredFeatureMissing))
            else outcomes.ERRORED)
        reason = str(excinfo.value)[:2000] if excinfo is not None else report.longreprtext[-2000:]
        if (category == outcomes.FAILED and excinfo is not None
                and type(excinfo.value) is AssertionError):
            reason = f"{_spec_context(item)} | {reason}"
    elif report.when == "call":
        category = outcomes.PASSED

    if category in outcomes.FAILING:
        item.config.stash[_STASH_COLLECT] = True
    cid = case_id(item)
    drv = item.config.stash.get(_STASH_DRIVER, None)
    transport = drv.transport if drv is not None else None
    journal = transport.journal if isinstance(transport, RecordingTransport) else None
    compared = item.config.stash.get(_STASH_COMPARED, None)
    detail = describe(category, reason, excinfo.value if excinfo is not None else None,
                      journal.steps if journal is not None else [], req_ids(item),
                      _docstring(item), compared) if category is not None else None
    if (category in outcomes.FAILING and journal is not None and cid is not None
            and item.config.getoption("save_failures")):
        save_scenario(Path(item.config.getoption("save_failures")), cid, req_ids(item),
                      journal, detail)
    if category is None or cid is None:
        return
    assert detail is not None
    record = CaseRecord(cid, item.nodeid, tuple(req_ids(item)), category, reason.strip(),
                        detail)
    if category in baselines.FAILED_KINDS:
        record = replace(record, fingerprint=baselines.fingerprint(record.to_json()))
    baseline = item.config.stash.get(_STASH_BASELINE, None)
    if baseline is not None and cid in baseline.causes:
        verdict = baselines.judge(category, record.reason, baseline.causes[cid],
                                  record.fingerprint or "")
        record = replace(record, outcome=verdict.outcome, reason=verdict.reason,
                         baseline_cause=verdict.baseline_cause)
        if verdict.outcome == outcomes.EXPECTED_FAILURE:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               f"expected failure (baseline): {reason[:200]}")
        elif verdict.outcome == outcomes.STALE:
            report.outcome = "failed"
            report.longrepr = (f"{cid} is listed in the expected-failures baseline but now "
                               "passes; remove it from the baseline")
        elif verdict.baseline_cause is not None:
            report.longrepr = f"{cid}: {verdict.reason}"
    run: RunReport = item.config.stash[_STASH_REPORT]
    run.record(record, phase=report.when)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    """After a failing case, collect the garbage it left: a failure's exception, its
    traceback and frames form reference cycles holding the case's answers, which the
    collector would free only after more allocations of small objects, so six failing
    cases with 16 MiB answers held them all at once (#38)."""
    config = _CONFIG[0] if _CONFIG else None
    if config is not None and config.stash.get(_STASH_COLLECT, False):
        config.stash[_STASH_COLLECT] = False
        import gc
        import sys

        # pytest keeps the last failure for a post-mortem debugger (its frames hold the
        # case's answers); a later case must not run with them still alive
        for name in ("last_type", "last_value", "last_traceback", "last_exc"):
            if hasattr(sys, name):
                setattr(sys, name, None)
        gc.collect()


MAX_LONGREPR = 20_000
"""Characters of a failure's pytest text kept with its report (pytest keeps every failed
report until the end of the run; the text quotes the answer, which may be 16 MiB)."""


def _bound_longrepr(report: pytest.TestReport) -> None:
    """Cut a failure's text to ``MAX_LONGREPR`` characters, saying so: memory per failing
    case is bounded by what is reported (#38). The report keeps its own cut reason."""
    if not report.failed or isinstance(report.longrepr, (str, tuple)) or report.longrepr is None:
        if isinstance(report.longrepr, str) and len(report.longrepr) > MAX_LONGREPR:
            report.longrepr = _cut_text(report.longrepr)
        return
    text = report.longreprtext
    if len(text) > MAX_LONGREPR:
        report.longrepr = _cut_text(text)


def _cut_text(text: str) -> str:
    return (f"{text[:MAX_LONGREPR // 2]}\n... ({len(text) - MAX_LONGREPR} characters cut; "
            f"the capconf report has the case's detail) ...\n{text[-MAX_LONGREPR // 2:]}")


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any,
                              right: Any) -> list[str] | None:
    """A case writes ``assert got == expected``; pytest's own text of a failing one
    (``assert ['bogus', 'Bo...cp__crm', ...] == [...]``) labels neither side and cuts
    both. Here each side is labelled, cut where it says so, with the first differing
    path; the whole values go to the report's ``expected`` and ``got``."""
    if op != "==":
        return None
    from capconf.conformance.baselines import first_difference
    from capconf.conformance.failures import jsonable

    config.stash[_STASH_COMPARED] = (right, left)
    where = first_difference(jsonable(right), jsonable(left))
    lines = ["the answer differs from what the case expects"
             + (f" (first difference at {where})" if where else ""),
             f"expected: {_labelled_value(right)}", f"got: {_labelled_value(left)}"]
    return lines


def _labelled_value(value: Any, limit: int = 600) -> str:
    text = repr(value)
    return text if len(text) <= limit else (
        f"{text[:limit]}... (cut: {len(text)} characters; the report has it whole)")


def _docstring(item: pytest.Item) -> str:
    function = getattr(item, "function", None)
    return (function.__doc__ or "") if function is not None else ""


def _spec_context(item: pytest.Item) -> str:
    """A plain `assert` in a case says what it compared, not why: put the requirement IDs
    and the bug the case is for (its docstring's first sentence) in front."""
    from capconf.conformance.failures import first_sentence

    return f"{', '.join(req_ids(item))}: {first_sentence(_docstring(item))}".rstrip(": ")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    run = config.stash.get(_STASH_REPORT, None)
    drv = config.stash.get(_STASH_DRIVER, None)
    if run is None:
        return
    if drv is not None and run.handshake_error is None:
        try:
            run.hello = drv.hello()
        except DriverFailure as exc:
            run.hello = {"error": exc.message}
    if (not config.option.collectonly and run.handshake_error is None
            and session.exitstatus in (0, NOTHING_RAN) and not run.executed()):
        # a run that checked nothing (every case deselected, skipped or not
        # implemented) must not look like a passing gate
        session.exitstatus = NOTHING_RAN
        run.nothing_ran = True
    # every report is written whatever its text holds (backslashreplace: a lone surrogate
    # that got past safe_text would otherwise stop the run before the other reports)
    if config.getoption("report"):
        Path(config.getoption("report")).write_text(run.to_jsonl(), encoding="utf-8",
                                                    errors="backslashreplace")
    if config.getoption("report_md"):
        Path(config.getoption("report_md")).write_text(run.to_markdown(), encoding="utf-8",
                                                       errors="backslashreplace")
    if config.getoption("capconf_junit_xml"):
        write_junit(config.getoption("capconf_junit_xml"), run.to_jsonl())


def pytest_unconfigure(config: pytest.Config) -> None:
    """The driver started at collection is closed even when no case ran (an interrupt
    or a gate stopped the run before the session fixture could close it)."""
    drv = config.stash.get(_STASH_DRIVER, None)
    if drv is not None:
        drv.close()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    run = config.stash.get(_STASH_REPORT, None)
    if run is None or (not run.cases and not run.nothing_ran):
        return
    terminalreporter.section("capconf compliance summary")
    for line in run.summary_lines():
        terminalreporter.write_line(line)

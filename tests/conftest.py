from __future__ import annotations

import json
import os
from collections.abc import Generator, Iterator
from typing import Any

import pytest
from golden_ext import PlainTextGolden, keep_golden_of_skipped
from hypothesis import HealthCheck, settings
from suite_runner import (
    DRIVER,
    HYPOTHESIS_STORE,
    PYCACHE,
    RecordedRun,
    SuiteBatch,
    close_cli_server,
    fixture_env,
    read_run,
    run_cli,
    session_batch,
)

# Every child interpreter the tests start (drivers, `capconf run`, proxies) shares one
# byte-code cache outside the tree instead of compiling everything again (see PYCACHE),
# and one hypothesis storage directory for its Unicode tables (see HYPOTHESIS_STORE).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(HYPOTHESIS_STORE))

settings.register_profile(
    "ci", derandomize=True, max_examples=50, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile(
    "explore", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("ci")


# Tiers that start whole `capconf run`s in child processes, marked `slow` here (by node id
# prefix) so that their files stay as their owners wrote them; the mutant and outside-tester
# tiers carry the mark themselves. `pytest -m "not slow"` (the fast loop) leaves them out;
# plain `pytest` runs them.
SLOW_TIERS = (
    "tests/protocol/test_transports.py::test_full_suite_passes_over_subprocess",
    "tests/conformance/test_misbehaving_impl.py::",
    "tests/memory/test_memory_layout_variant.py::",
    # tiers that start other processes for each test (forked `capconf` commands, stdio
    # drivers, sandboxed workflow workers, a wheel or sdist build, a browser): the fast
    # loop keeps the in-process unit, property and golden tests
    "tests/protocol/test_bounded_inputs.py::test_cli_",
    "tests/protocol/test_bounded_inputs.py::test_world_file_round_trip_through_the_cli",
    "tests/protocol/test_bounded_inputs.py::test_two_hundred_thousand_names",
    "tests/protocol/test_replay.py::test_an_implementation_that_dies_mid_replay",
    "tests/protocol/test_fuzz_protocol.py::",
    "tests/protocol/test_protocol_robust.py::test_hostile_line_is_refused",
    "tests/protocol/test_protocol_robust.py::test_non_integer_id_is_refused",
    "tests/flow/test_hostile_flow.py::",
    "tests/project/test_layout.py::test_the_wheel",
    "tests/project/test_packaging.py::",
    "tests/conformance/test_runner_failures.py::",
    "tests/conformance/test_runner_processes.py::",
    "tests/conformance/test_runner_cli.py::",
    "tests/conformance/test_suite_batch.py::",
    "tests/conformance/test_cli.py::",
    "tests/conformance/test_hostile_cli.py::",
    "tests/conformance/test_lint_formats.py::",
    "tests/conformance/test_report_diff.py::",
    "tests/conformance/test_report_e2e.py::",
    "tests/conformance/test_runner_gates.py::",
    "tests/conformance/test_report_browser.py::",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW_TIERS):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """In CI a real-corpus test whose shared folder is missing fails (shared_folder.needs)."""
    marker = item.get_closest_marker("shared_missing")
    if marker is not None:
        pytest.fail(f"CI=true but the shared folder is missing: {marker.args[0]} (clone the "
                    "repository beside the project's shared folder, ../shared)", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A skipped test's golden files are not unused (golden_ext.keep_golden_of_skipped):
    without the shared folder a real-corpus golden test skips, and the session passes."""
    report = yield
    if report.skipped and not hasattr(report, "wasxfail"):
        keep_golden_of_skipped(item)
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The warm ``capconf`` server that ``suite_runner.run_cli`` started, if any, ends."""
    close_cli_server()


@pytest.fixture
def golden(snapshot: Any) -> Any:
    """A syrupy snapshot that writes golden/<module>/<test name>.txt as plain text."""
    return snapshot.use_extension(PlainTextGolden)


@pytest.fixture(scope="session")
def suite_batch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SuiteBatch]:
    """The session's one suite server: the mutants' and the outside testers' batch
    tiers fork their runs from it (``suite_runner.batch_of_selected``)."""
    yield from session_batch(tmp_path_factory)


@pytest.fixture(scope="session")
def whole_suite_over_stdio(tmp_path_factory: pytest.TempPathFactory) -> RecordedRun:
    """One whole-suite run that two checks share: every case passes over the stdio
    transport (tests/protocol/test_transports.py), and every case is gated on the groups it uses
    (tests/conformance/test_case_groups.py, from ``case_recorder``'s record of the same run)."""
    root = tmp_path_factory.mktemp("whole-suite-stdio")
    report, record = root / "report.jsonl", root / "record.json"
    env = {**fixture_env(), "CAPCONF_CASE_RECORD": str(record)}
    proc = run_cli(["run", "--impl", DRIVER, "--report", str(report), "--",
                    "-p", "case_recorder", "-q"], cwd=root, env=env, timeout=1200)
    run = read_run(report, proc.returncode, proc.stdout + proc.stderr)
    data = json.loads(record.read_text(encoding="utf-8")) if record.exists() else None
    return RecordedRun(run, data)

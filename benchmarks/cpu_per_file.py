"""A pytest plugin for ``benchmarks/tiers.py --files``: CPU seconds per test file, and per
test (``--tests``).

``pytest --durations`` reports wall time, which on a shared machine measures the
neighbours. This plugin charges each test file with the CPU seconds (user + sys of the
pytest process and of every child it has reaped: drivers, ``capconf run``s, forks) spent
while its tests ran, setup and teardown included, so a module fixture is charged to its
module (a session fixture to the test that first asked for it, or tore it down); the
jobs of the tests' fork servers are charged to the test that waited for them.
Collection is charged to ``<collection>``. Loaded with ``-p cpu_per_file`` (the
benchmark puts this folder on ``PYTHONPATH``); writes JSON to ``$CAPCONF_CPU_PER_FILE``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections import defaultdict
from collections.abc import Generator

import pytest

_spent: dict[str, float] = defaultdict(float)
_tests: dict[str, int] = defaultdict(int)
_per_test: dict[str, float] = {}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    # jobs of the tests' fork servers, charged when they end rather than when their
    # server is reaped (tests/suite_runner.py, ForkedCpu)
    forked = getattr(sys.modules.get("suite_runner"), "FORKED_CPU", None)
    if forked is not None:
        total += forked.reported - forked.reaped
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, None, None]:
    before = _cpu()
    yield
    _spent["<collection>"] += _cpu() - before


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    before = _cpu()
    yield
    path = item.nodeid.split("::", 1)[0]
    spent = _cpu() - before
    _spent[path] += spent
    _per_test[item.nodeid] = spent
    _tests[path] += 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("CAPCONF_CPU_PER_FILE")
    if not target:
        return
    rows: dict[str, object] = {path: {"cpu": round(cpu, 3), "tests": _tests.get(path, 0)}
                               for path, cpu in _spent.items()}
    rows["<tests>"] = {nodeid: round(cpu, 3) for nodeid, cpu in _per_test.items()}
    with open(target, "w", encoding="utf-8") as out:
        json.dump(rows, out, indent=1, sort_keys=True)

"""Case outcomes and how a run's exit status follows from them.

Seven outcomes an implementation can earn, kept distinct because each asks its team for a
different next step (a timeout is never reported as a crash), plus the two that an
expected-failures baseline adds: ``expected failure`` (listed and still failing: fine)
and ``stale`` (listed but now passing: the baseline must be updated, so the run fails).
"""

from __future__ import annotations

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"
NOT_IMPLEMENTED = "not implemented"
ERRORED = "errored"
CRASHED = "crashed"
TIMED_OUT = "timed out"
EXPECTED_FAILURE = "expected failure"
STALE = "stale"

ALL = (PASSED, FAILED, SKIPPED, NOT_IMPLEMENTED, ERRORED, CRASHED, TIMED_OUT,
       EXPECTED_FAILURE, STALE)
FAILING = frozenset({FAILED, ERRORED, CRASHED, TIMED_OUT, STALE})

NOT_IMPLEMENTED_PREFIX = "not implemented: "

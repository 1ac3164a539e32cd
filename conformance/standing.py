"""A requirement's status from the cases that ran: one pure fold, used by every output
(console summary, Markdown, HTML, JUnit, the report matrix) and written to the JSON Lines
report as one ``{"type": "requirement", ...}`` record per requirement.

A team gates merges on these words, so each must be exactly true. *Compliant* means
every case of the requirement ran and passed; a requirement some of whose cases did not
run (their other feature groups were not declared, or the run selected other cases) is
*partly tested*, never compliant; one none of whose cases ran because their groups were
not declared is *not implemented*, never non-compliant. An *expected failure* (a case
failing as the baseline pins it) is a failure the user accepted: its requirement reads
*expected failure*, never compliant. A stale entry's case passed, and counts as passed.
Every status carries the counts behind it, each saying what it counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from capconf.conformance import outcomes

NON_COMPLIANT = "non-compliant"
EXPECTED_FAILURE = "expected failure"
PARTLY_TESTED = "partly tested"
NOT_IMPLEMENTED = "not implemented"
SKIPPED = "skipped"
NOT_RUN = "not run"
UNTESTED = "untested"
PLANNED = "planned"
COMPLIANT = "compliant"

ORDER = (NON_COMPLIANT, EXPECTED_FAILURE, PARTLY_TESTED, NOT_IMPLEMENTED, SKIPPED, NOT_RUN,
         UNTESTED, PLANNED, COMPLIANT)
"""The statuses, worst first (a summary lists them in this order)."""

MEANING = {
    NON_COMPLIANT: "a case that ran failed, errored, crashed or timed out",
    EXPECTED_FAILURE: "a case fails as the expected-failures baseline pins it (accepted, "
                      "not compliant)",
    PARTLY_TESTED: "the cases that ran passed, but not every case ran",
    NOT_IMPLEMENTED: "no case ran: each needs a feature group the implementation does not "
                     "declare (or was skipped)",
    SKIPPED: "no case ran: each was skipped",
    NOT_RUN: "no case ran, and the run did not select some of them",
    UNTESTED: "the suite has no case for it",
    PLANNED: "planned: no case yet",
    COMPLIANT: "every case ran and passed",
}

_RAN = frozenset({outcomes.PASSED, outcomes.STALE, outcomes.EXPECTED_FAILURE}
                 | (outcomes.FAILING - {outcomes.STALE}))


@dataclass(frozen=True)
class Counts:
    """The cases of one requirement, by what happened to them in one run."""

    cases: int  # cases of the suite that cite the requirement
    ran: int = 0  # cases that ran: passed, failed, errored, crashed, timed out, expected
    passed: int = 0  # ran and passed (a stale baseline entry's case passed)
    failed: int = 0  # ran and failed, errored, crashed or timed out
    expected_failures: int = 0  # ran and failed as the baseline pins
    not_implemented: int = 0  # did not run: a feature group is not declared
    skipped: int = 0  # did not run: skipped
    not_selected: int = 0  # did not run: the run selected other cases (--req, --case, -k)

    def to_json(self) -> dict[str, int]:
        return {"cases": self.cases, "ran": self.ran, "passed": self.passed,
                "failed": self.failed, "expected_failures": self.expected_failures,
                "not_implemented": self.not_implemented, "skipped": self.skipped,
                "not_selected": self.not_selected}


@dataclass(frozen=True)
class Standing:
    """One requirement's status and the counts behind it."""

    requirement: str
    status: str
    counts: Counts

    @property
    def text(self) -> str:
        """The status with what its numbers count: ``partly tested (15 of 46 cases
        ran)``."""
        return f"{self.status} ({explain(self.status, self.counts)})"

    def to_json(self) -> dict[str, Any]:
        return {"type": "requirement", "requirement": self.requirement,
                "status": self.status, "text": self.text, **self.counts.to_json()}


def _n(count: int, word: str = "case") -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def explain(status: str, c: Counts) -> str:
    if status == COMPLIANT:
        return f"all {_n(c.cases)} ran and passed" if c.cases != 1 else "its 1 case passed"
    if status == NON_COMPLIANT:
        return f"{c.failed} of {_n(c.ran)} that ran failed" + (
            f"; {c.ran} of {c.cases} ran" if c.ran < c.cases else "")
    if status == EXPECTED_FAILURE:
        return f"{c.expected_failures} of {_n(c.ran)} that ran fail as the baseline " \
               "expects" + (f"; {c.ran} of {c.cases} ran" if c.ran < c.cases else "")
    if status == PARTLY_TESTED:
        return f"{c.ran} of {_n(c.cases)} ran" + _why_not(c)
    if status in (NOT_IMPLEMENTED, SKIPPED, NOT_RUN):
        none = "its 1 case did not run" if c.cases == 1 else f"none of its {c.cases} cases ran"
        return none + _why_not(c)
    if status == PLANNED:
        return "no case yet"
    return "no case in the suite"


def _why_not(c: Counts) -> str:
    parts = [f"{n} {what}" for n, what in ((c.not_implemented, "not implemented"),
                                           (c.skipped, "skipped"),
                                           (c.not_selected, "not selected")) if n]
    return f": {', '.join(parts)}" if parts else ""


def fold(requirement: str, case_outcomes: Iterable[str], suite_cases: int | None = None,
         planned: bool = False) -> Standing:
    """The status of ``requirement`` from the outcomes of the run's cases citing it;
    ``suite_cases`` is how many cases of the suite cite it (cases the run did not select
    count as not run). Without it (an old report), the run's cases are all there is."""
    seen = list(case_outcomes)
    total = max(suite_cases if suite_cases is not None else len(seen), len(seen))
    ran = sum(1 for o in seen if o in _RAN)
    counts = Counts(
        cases=total, ran=ran,
        passed=sum(1 for o in seen if o in (outcomes.PASSED, outcomes.STALE)),
        failed=sum(1 for o in seen if o in outcomes.FAILING - {outcomes.STALE}),
        expected_failures=seen.count(outcomes.EXPECTED_FAILURE),
        not_implemented=seen.count(outcomes.NOT_IMPLEMENTED),
        skipped=seen.count(outcomes.SKIPPED), not_selected=total - len(seen))
    return Standing(requirement, status_of(counts, planned), counts)


def status_of(c: Counts, planned: bool = False) -> str:
    """The table: the first row whose condition holds."""
    if c.cases == 0:
        return PLANNED if planned else UNTESTED
    if c.failed:
        return NON_COMPLIANT
    if c.expected_failures:
        return EXPECTED_FAILURE
    if c.ran == c.cases:
        return COMPLIANT
    if c.ran:
        return PARTLY_TESTED
    if c.not_selected:  # the run left some out: it cannot say what they would show
        return NOT_RUN
    if c.not_implemented:
        return NOT_IMPLEMENTED
    return SKIPPED


def from_record(record: dict[str, Any]) -> Standing | None:
    """A ``{"type": "requirement"}`` record read back; None when it is not one."""
    rid, status = record.get("requirement"), record.get("status")
    keys = Counts.__dataclass_fields__
    if not isinstance(rid, str) or status not in ORDER or not all(
            isinstance(record.get(k), int) and not isinstance(record.get(k), bool)
            for k in keys):
        return None
    counts = Counts(**{k: int(record[k]) for k in keys})
    # the status is recomputed from the counts: a file cannot claim what they do not show
    return Standing(rid, status_of(counts, planned=status == PLANNED), counts)


def requirement_status(case_outcomes: list[str]) -> str:
    """The status of a requirement whose cases in the suite are exactly these outcomes,
    under the old word "known failures" for an expected failure (for callers that have
    only a list of outcomes, e.g. adapters/make_report.py)."""
    status = fold("", case_outcomes).status
    return "known failures" if status == EXPECTED_FAILURE else status

"""The case-ID ledger (`conformance/case_ids.txt`): every case ID ever used, one per
line; an ID whose case was removed stays, marked `retired`, so it is never reused. Read
by `capconf matrix --update-ledger` and by the expected-failures gate (a baseline line
naming a retired case is refused)."""

from __future__ import annotations

from importlib.resources.abc import Traversable

from capconf.conformance.locations import package_file


def ledger_path() -> Traversable:
    return package_file() / "case_ids.txt"


def read_ledger(text: str) -> tuple[list[str], set[str]]:
    """(all IDs in order, retired IDs); comment lines start with #."""
    ids: list[str] = []
    retired: set[str] = set()
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        ids.append(fields[0])
        if fields[1:] == ["retired"]:
            retired.add(fields[0])
    return ids, retired

"""The ledger of case IDs (`case_ids.txt`): every ID ever used, retired ones marked.

Apart from the matrix so that the plugin, which refuses a baseline line naming no case,
can read it without importing the matrix (which collects the suite through the plugin).
"""

from __future__ import annotations

from typing import Any


def ledger_path() -> Any:
    from capconf.conformance.locations import package_file

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


def updated_ledger(text: str, collected: set[str]) -> str:
    ids, retired = read_ledger(text)
    header = [ln for ln in text.splitlines() if ln.startswith("#")] or [
        "# Every conformance case ID ever used. Never delete or reuse a line: a removed",
        "# case's ID is marked `retired`. Update with `capconf matrix --update-ledger`."]
    known = set(ids)
    lines = list(header)
    for cid in ids:
        gone = cid not in collected
        lines.append(f"{cid} retired" if (gone or cid in retired) else cid)
    lines += sorted(collected - known)
    return "\n".join(lines) + "\n"

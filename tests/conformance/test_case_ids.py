"""Case IDs are stable and never reused: the ledger holds every ID ever used."""

from __future__ import annotations

from pathlib import Path

from capconf.conformance.matrix import collected_case_ids, ledger_path, read_ledger, updated_ledger


def test_every_case_is_in_the_ledger_and_no_retired_id_is_reused() -> None:
    ids, retired = read_ledger(Path(str(ledger_path())).read_text(encoding="utf-8"))
    assert len(ids) == len(set(ids)), "an ID appears twice in case_ids.txt"
    collected = collected_case_ids()
    assert not collected & retired, f"retired IDs reused: {sorted(collected & retired)}"
    missing = collected - set(ids)
    assert not missing, ("new case IDs not in the ledger (capconf matrix --update-ledger): "
                         f"{sorted(missing)}")
    stale = set(ids) - retired - collected
    assert not stale, f"cases removed but not retired in the ledger: {sorted(stale)}"


def test_update_retires_and_appends_without_reordering() -> None:
    old = "# header\nb\na\nc retired\n"
    new = updated_ledger(old, {"a", "d"})
    assert new == "# header\nb retired\na\nc retired\nd\n"
    assert read_ledger(new) == (["b", "a", "c", "d"], {"b", "c"})

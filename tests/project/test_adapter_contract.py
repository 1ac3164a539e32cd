"""Every adapter under adapters/ keeps the contract of adapters/README.md.

Parametrised per adapter folder and per contract item, so a half-built adapter shows
which items it still fails (`pytest tests/project/test_adapter_contract.py -k gemini`).
The checks themselves live in adapters/contract.py; the last tests here show that each
check can fail, on a small adapter folder built in tmp_path.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ADAPTERS = Path(__file__).resolve().parents[2] / "adapters"
sys.path.insert(0, str(ADAPTERS))

import contract  # noqa: E402
import findings  # noqa: E402

FOLDERS = contract.adapters()


@pytest.mark.parametrize("check", contract.CHECKS, ids=[c.name for c in contract.CHECKS])
@pytest.mark.parametrize("adapter", FOLDERS, ids=[p.name for p in FOLDERS])
def test_adapter_keeps_the_contract(adapter: Path, check: contract.Check) -> None:
    problems = check.run(adapter)
    assert not problems, f"{adapter.name}: {check.what}:\n  " + "\n  ".join(problems)


# --- each check can fail ----------------------------------------------------------------

GOOD_README = """# x

## Feature groups

| group | declared? | why |
|---|---|---|
""" + "".join(f"| `{g}` | {'declared' if g == 'def' else 'not declared'} | reason |\n"
              for g in contract.GROUPS) + """
## Vocabulary

| runtime signal | capconf code |
|---|---|
| "Invalid tool name" | `TOOL-UNKNOWN` |
"""


def _adapter(tmp_path: Path) -> Path:
    a = tmp_path / "adapters" / "toy"
    (a / "repro").mkdir(parents=True)
    (a / "README.md").write_text(GOOD_README)
    (a / "package.json").write_text(json.dumps({"dependencies": {"rt": "1.2.3"}}))
    (a / "package-lock.json").write_text(json.dumps(
        {"packages": {"": {"dependencies": {"rt": "1.2.3"}}}}))
    (a / "driver.py").write_text("CODE = 'TOOL-UNKNOWN'\n")
    (a / "repro" / "drops.py").write_text("import json\n")
    (a / "findings.toml").write_text(
        '[findings.drops-agent]\nkind = "a"\ntitle = "t"\nrule = "DEF-01"\n'
        'expected = "e"\nactual = "x"\nseverity = "high"\nissue = "new"\n'
        'draft_title = "dt"\ndraft_body = "db"\nrepro = "repro/drops.py"\n')
    (a / "expected-failures.txt").write_text(
        "def.x  cause: failed: `definition.parse` wrong result  "
        "# kind a [drops-agent]: drops it\n")
    (a / "ci").write_text("capconf run --require-features def --expected-failures e.txt\n"
                          "python adapters/make_report.py --adapter x --check\n")
    return a


def test_a_well_formed_toy_adapter_passes(tmp_path: Path) -> None:
    a = _adapter(tmp_path)
    for check in ("pinned-install", "feature-groups", "vocabulary", "baseline", "findings",
                  "repro", "ci"):
        assert next(c for c in contract.CHECKS if c.name == check).run(a) == [], check


def test_a_range_version_and_a_missing_lock_fail(tmp_path: Path) -> None:
    a = _adapter(tmp_path)
    (a / "package.json").write_text(json.dumps({"dependencies": {"rt": "^1.2.3"}}))
    (a / "package-lock.json").unlink()
    problems = contract.check_pinned_install(a)
    assert any("not an exact version" in p for p in problems)
    assert "no package-lock.json" in problems


def test_a_missing_group_row_and_a_ci_mismatch_fail(tmp_path: Path) -> None:
    a = _adapter(tmp_path)
    text = (a / "README.md").read_text().replace("| `mcp` | not declared | reason |\n", "")
    (a / "README.md").write_text(text)
    (a / "ci").write_text("capconf run --require-features def,tool\n")
    problems = contract.check_feature_groups(a)
    assert "Feature groups: no row for `mcp`" in problems
    assert any("differs from the groups README declares" in p for p in problems)


@pytest.mark.parametrize(("literal", "says"), [
    ("AGENT-BUSY", "is not a SPEC.md code"),
    ("TOOL-LEGACY-FALLBACK", "capconf's own mechanism"),
    ("APPROVAL-DENIED", "not in README's Vocabulary table"),
])
def test_codes_outside_spec_capconf_only_or_unlisted_fail(tmp_path: Path, literal: str,
                                                          says: str) -> None:
    a = _adapter(tmp_path)
    (a / "lib").mkdir()
    (a / "lib" / "ops.mjs").write_text(f"return failure('{literal}', 'text');\n")
    problems = contract.check_vocabulary(a)
    assert any(literal in p and says in p for p in problems), problems


def test_tests_and_repros_may_name_codes(tmp_path: Path) -> None:
    a = _adapter(tmp_path)
    (a / "tests").mkdir()
    (a / "tests" / "t.py").write_text("assert code != 'AGENT-BUSY'\n")
    assert contract.check_vocabulary(a) == []


@pytest.mark.parametrize(("line", "says"), [
    ("def.x  # kind a [drops-agent]: no cause", "no `cause:`"),
    ("def.x  cause: failed: `x` wrong result  # kind a: no finding id", "note is not"),
    ("def.x  cause: failed: `x` wrong result  # kind a [ghost]: n", "`ghost` is not in"),
    ("def.x  cause: failed: `x` wrong result  # kind b [drops-agent]: n", "findings.toml says"),
])
def test_baseline_entries_must_pin_cause_and_cite_a_finding(tmp_path: Path, line: str,
                                                           says: str) -> None:
    a = _adapter(tmp_path)
    (a / "expected-failures.txt").write_text(line + "\n")
    assert any(says in p for p in contract.check_baseline(a))


@pytest.mark.parametrize(("edit", "says"), [
    (("repro = \"repro/drops.py\"\n", ""), "kind a without `repro`"),
    (("draft_body = \"db\"\n", ""), "without draft_title and draft_body"),
    (("kind = \"a\"", "kind = \"b\""), "kind b without `evidence`"),
    (("severity = \"high\"", "severity = \"grave\""), "severity is not"),
    (("issue = \"new\"", "issue = \"javascript:alert(1)\""), "issue is neither"),
    (("repro = \"repro/drops.py\"", "repro = \"../x.py\""), "is not a file under"),
])
def test_findings_schema_fails_where_it_should(tmp_path: Path, edit: tuple[str, str],
                                               says: str) -> None:
    a = _adapter(tmp_path)
    path = a / "findings.toml"
    path.write_text(path.read_text().replace(*edit))
    assert any(says in p for p in findings.problems(findings.load(path), a))


GAP_TABLE = ('\n[findings.no-prompt-tool]\nkind = "gap"\ntitle = "t"\nrule = "APPR-01"\n'
             'missing = "a permission-prompt tool"\nplan = "add one"\n')


def _with_gap(a: Path, note: str = "kind gap [no-prompt-tool]: stops at cards.list") -> Path:
    (a / "findings.toml").write_text((a / "findings.toml").read_text() + GAP_TABLE)
    (a / "expected-failures.txt").write_text(
        (a / "expected-failures.txt").read_text()
        + f"appr.y  cause: errored: `cards.list` answered error `not_implemented`  # {note}\n")
    return a


def test_a_gap_entry_citing_a_gap_table_keeps_the_contract(tmp_path: Path) -> None:
    a = _with_gap(_adapter(tmp_path))
    assert contract.check_baseline(a) == []
    assert contract.check_findings(a) == []
    known = findings.read(a)
    assert known["no-prompt-tool"].is_gap and not known["drops-agent"].is_gap
    assert known["no-prompt-tool"].missing == "a permission-prompt tool"


@pytest.mark.parametrize(("note", "says"), [
    ("kind gap [drops-agent]: n", "kind gap, but findings.toml says kind a"),
    ("kind a [no-prompt-tool]: n", "kind a, but findings.toml says kind gap"),
    ("kind gap [ghost]: n", "gap `ghost` is not in findings.toml"),
    ("kind gap: no id", "`kind gap [gap-id]: ...`"),
    ("kind c [no-prompt-tool]: n", "note is not"),
])
def test_a_gap_note_must_cite_a_gap_table(tmp_path: Path, note: str, says: str) -> None:
    a = _with_gap(_adapter(tmp_path), note)
    assert any(says in p for p in contract.check_baseline(a)), contract.check_baseline(a)


@pytest.mark.parametrize("note", ["adapter gap: the adapter lacks cards.list",
                                  "(adapter gap) lacks cards.list"])
def test_an_adapter_gap_said_under_kind_a_or_b_is_refused(tmp_path: Path, note: str) -> None:
    a = _adapter(tmp_path)
    (a / "expected-failures.txt").write_text(
        f"def.x  cause: failed: `x` wrong result  # kind a [drops-agent]: {note}\n")
    problems = contract.check_baseline(a)
    assert any("an adapter gap is `kind gap [gap-id]:`" in p for p in problems), problems


@pytest.mark.parametrize(("edit", "says"), [
    (('plan = "add one"\n', ""), "kind gap without `plan`"),
    (('missing = "a permission-prompt tool"\n', 'missing = ""\n'),
     "kind gap without `missing`"),
    (('plan = "add one"\n', 'plan = "add one"\nseverity = "high"\n'),
     "`severity` is not a field of an adapter gap"),
    (('plan = "add one"\n', 'plan = "add one"\nrepro = "repro/drops.py"\n'),
     "`repro` is not a field of an adapter gap"),
    (('plan = "add one"\n', 'plan = "add one"\nexpected = "cards"\n'),
     "`expected` is not a field of an adapter gap"),
    (('plan = "add one"\n', 'plan = "add one"\nowner = "me"\n'), "unknown key `owner`"),
    (('plan = "add one"\n', "plan = 3\n"), "kind gap without `plan`"),
])
def test_a_bad_gap_table_is_refused_with_its_location(tmp_path: Path, edit: tuple[str, str],
                                                      says: str) -> None:
    a = _with_gap(_adapter(tmp_path))
    path = a / "findings.toml"
    path.write_text(path.read_text().replace(*edit))
    line = path.read_text().splitlines().index("[findings.no-prompt-tool]") + 1
    problems = contract.check_findings(a)
    assert any(p.startswith(f"findings.toml:{line}: findings.no-prompt-tool: ") and says in p
               for p in problems), problems


def test_a_finding_table_with_gap_fields_is_refused(tmp_path: Path) -> None:
    a = _adapter(tmp_path)
    path = a / "findings.toml"
    path.write_text(path.read_text() + 'plan = "x"\n')
    assert any("findings.drops-agent: unknown key `plan`" in p
               for p in contract.check_findings(a))


@pytest.mark.parametrize(("name", "text"), [
    ("a.py", "from capconf.conformance import x\n"),
    ("b.py", "import driver\n"),
    ("c.mjs", "import {x} from '../lib/vocabulary.mjs';\n"),
    ("d.mjs", "const m = await import('capconf-thing');\n"),
    ("e.sh", "python -m capconf run --impl x\n"),
])
def test_a_repro_importing_capconf_or_the_adapter_fails(tmp_path: Path, name: str,
                                                        text: str) -> None:
    a = _adapter(tmp_path)
    (a / "repro" / name).write_text(text)
    assert any(name in p for p in contract.check_repro(a))


def test_a_repro_may_import_its_own_helpers(tmp_path: Path) -> None:
    a = _adapter(tmp_path)
    (a / "repro" / "_common.mjs").write_text("export const x = 1;\n")
    (a / "repro" / "r.mjs").write_text("import {x} from './_common.mjs';\n"
                                       "import core from '@google/gemini-cli-core';\n")
    assert contract.check_repro(a) == []


def test_a_ci_without_the_freshness_check_fails(tmp_path: Path) -> None:
    a = _adapter(tmp_path)
    (a / "ci").write_text("capconf run --expected-failures e.txt\n"
                          "python adapters/make_report.py run.jsonl base.txt\n")
    assert contract.check_ci(a) == ["ci does not run `make_report.py --adapter ... --check`"]


def test_the_shared_driver_side_pins_what_it_reads_with() -> None:
    """Bug: _driverkit read definitions with whatever PyYAML capconf's range allowed, so a
    PyYAML release could change three adapters' answers unseen."""
    kit = ADAPTERS / "_driverkit"
    pins = [line for line in (kit / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", p) for p in pins)
    for name in ("claude-code", "codex", "opencode"):
        assert "-r adapters/_driverkit/requirements.txt" in (ADAPTERS / name / "ci").read_text()

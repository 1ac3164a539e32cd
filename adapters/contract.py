"""The adapter contract (adapters/README.md) as checks: each takes an adapter folder and
returns what breaks the contract there (empty: kept).

Why as data + pure checks: tests/project/test_adapter_contract.py parametrises them per
adapter folder, so a half-built adapter shows exactly which items it still fails, and the
rules that are tables (the codes no adapter may produce) are tables here, in one place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import findings

from capconf.conformance import baselines, outcomes
from capconf.conformance.areas import AREAS

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "SPEC.md"

# A capconf code as it appears in an adapter's source: a quoted string literal of
# upper-case words joined by hyphens (`'DEF-TYPE'`, `"APPROVAL-DENIED"`).
CODE_LITERAL = re.compile(r"""(['"])([A-Z][A-Z0-9]*(?:-[A-Z][A-Z0-9]*)+)\1""")
SPEC_CODE = re.compile(r"`([A-Z][A-Z0-9]*(?:-[A-Z][A-Z0-9]*)+)`")
EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
SOURCE_SUFFIXES = frozenset({".py", ".mjs", ".js", ".cjs", ".ts", ".mts", ".sh"})
NOT_SOURCE = frozenset({"node_modules", "tests", "repro", ".venv", "__pycache__"})

# SPEC.md codes that name capconf's own mechanism, which no runtime signal can mean: an
# adapter producing one is inventing the reference's behaviour (the audit of issue 35
# found Gemini's adapter creating TOOL-LEGACY-FALLBACK itself; codes SPEC lacks, such
# as AGENT-BUSY, are refused by the SPEC check).
NEVER_PRODUCED: dict[str, str] = {
    "TOOL-LEGACY-FALLBACK": "the world's `legacy_fallback` flag is capconf's test fixture, "
                            "not a runtime's registry: the runtime never says it",
}

# Every feature group a runtime can declare (core is always on).
GROUPS: tuple[str, ...] = tuple(a.group for a in AREAS if a.group != "core")


@dataclass(frozen=True)
class Check:
    name: str
    what: str  # the contract item, as README says it
    run: Callable[[Path], list[str]]


def spec_codes(spec: Path = SPEC) -> frozenset[str]:
    """Every code SPEC.md names (its diagnostic, error and call-code tables and prose)."""
    return frozenset(SPEC_CODE.findall(spec.read_text(encoding="utf-8")))


def adapters(root: Path = ROOT) -> list[Path]:
    """The adapter folders: every directory under adapters/ not hidden or private."""
    base = root / "adapters"
    return sorted(p for p in base.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")))


def source_files(adapter: Path) -> list[Path]:
    """The adapter's own code: what translates (tests and reproductions are not it)."""
    out = []
    for path in sorted(adapter.rglob("*")):
        rel = path.relative_to(adapter).parts
        if any(part in NOT_SOURCE or part.startswith(".") for part in rel[:-1]):
            continue
        if path.is_file() and (path.suffix in SOURCE_SUFFIXES or path.name in {"ci"}):
            out.append(path)
    return out


def code_literals(adapter: Path) -> dict[str, list[str]]:
    """Code -> `file:line` of each literal in the adapter's source."""
    found: dict[str, list[str]] = {}
    for path in source_files(adapter):
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for _, code in CODE_LITERAL.findall(line):
                found.setdefault(code, []).append(f"{path.relative_to(adapter)}:{number}")
    return found


def readme_section(adapter: Path, title: str) -> list[list[str]] | None:
    """The table rows (cells stripped, header and rule dropped) of README.md's
    `## <title>` section; None when the section or its table is missing."""
    path = adapter / "README.md"
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == f"## {title}")
    except StopIteration:
        return None
    rows: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.lstrip().startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    if len(rows) < 2 or not set(rows[1][0]) <= set("-: "):
        return None
    return rows[2:]


def declared_groups(adapter: Path) -> dict[str, str] | None:
    """Group -> `declared` | `not declared`, from README's `## Feature groups` table."""
    rows = readme_section(adapter, "Feature groups")
    if rows is None:
        return None
    return {r[0].strip("`* "): r[1].strip("`* ").lower() for r in rows if len(r) >= 2}


def ci_features(adapter: Path) -> set[str] | None:
    """The groups `ci` passes to `--require-features` (None: no such flag)."""
    ci = adapter / "ci"
    if not ci.is_file():
        return None
    match = re.search(r"--require-features[ =]([\w,-]+)", ci.read_text(encoding="utf-8"))
    return set(match.group(1).split(",")) - {"core"} if match else None


# --- the checks, in README order -------------------------------------------------------

def check_pinned_install(adapter: Path) -> list[str]:
    pkg, lock = adapter / "package.json", adapter / "package-lock.json"
    if not pkg.is_file():
        return ["no package.json"]
    out: list[str] = []
    try:
        deps = json.loads(pkg.read_text(encoding="utf-8")).get("dependencies") or {}
    except json.JSONDecodeError as exc:
        return [f"package.json is not JSON ({exc.msg})"]
    if not deps:
        out.append("package.json pins no dependency")
    out += [f"package.json: {name} {version!r} is not an exact version"
            for name, version in sorted(deps.items()) if not EXACT_VERSION.match(str(version))]
    if not lock.is_file():
        return [*out, "no package-lock.json"]
    try:
        root = json.loads(lock.read_text(encoding="utf-8")).get("packages", {}).get("", {})
    except json.JSONDecodeError as exc:
        return [*out, f"package-lock.json is not JSON ({exc.msg})"]
    if (root.get("dependencies") or {}) != deps:
        out.append("package-lock.json does not lock package.json's dependencies "
                   "(run npm install and commit the lock)")
    return out


def check_feature_groups(adapter: Path) -> list[str]:
    rows = readme_section(adapter, "Feature groups")
    if rows is None:
        return ["README.md has no `## Feature groups` table"]
    table = declared_groups(adapter) or {}
    out = [f"Feature groups: no row for `{g}`" for g in GROUPS if g not in table]
    out += [f"Feature groups: `{g}` is neither `declared` nor `not declared`"
            for g, state in table.items() if state not in {"declared", "not declared"}]
    out += [f"Feature groups: `{r[0]}` gives no reason" for r in rows
            if len(r) < 3 or not r[2].strip()]
    out += [f"Feature groups: `{g}` is not a group of the suite" for g in table
            if g not in GROUPS]
    required = ci_features(adapter)
    declared = {g for g, state in table.items() if state == "declared"}
    if required is not None and required != declared:
        out.append(f"ci's --require-features {sorted(required)} differs from the groups "
                   f"README declares {sorted(declared)}")
    return out


def check_vocabulary(adapter: Path) -> list[str]:
    rows = readme_section(adapter, "Vocabulary")
    if rows is None:
        return ["README.md has no `## Vocabulary` table (runtime signal -> capconf code)"]
    listed = {c for r in rows for c in SPEC_CODE.findall(" | ".join(r[1:]))}
    spec = spec_codes()
    out = [f"Vocabulary lists `{c}`, which SPEC.md does not have" for c in sorted(listed - spec)]
    for code, where in sorted(code_literals(adapter).items()):
        if code not in spec:
            out.append(f"`{code}` ({', '.join(where)}) is not a SPEC.md code: answer what "
                       "the runtime did instead")
        elif code in NEVER_PRODUCED:
            out.append(f"`{code}` ({', '.join(where)}) is capconf's own mechanism: "
                       f"{NEVER_PRODUCED[code]}")
        elif code not in listed:
            out.append(f"`{code}` ({', '.join(where)}) is not in README's Vocabulary table")
    return out


def check_baseline(adapter: Path) -> list[str]:
    path = adapter / "expected-failures.txt"
    if not path.is_file():
        return ["no expected-failures.txt"]
    try:
        parsed = baselines.parse(path.read_text(encoding="utf-8"), str(path))
    except baselines.BaselineError as exc:
        return [str(exc)]
    try:
        known = findings.read(adapter)
    except findings.FindingsError as exc:
        return [str(exc)]
    out: list[str] = []
    for entry in parsed.entries:
        where = f"expected-failures.txt:{entry.line} {entry.case}"
        if entry.cause is None:
            out.append(f"{where}: no `cause:` (convert with capconf baseline --update)")
        note = findings.parse_note(entry.note)
        if note is None:
            out.append(f"{where}: note is not `kind a|b [finding-id]: ...` or "
                       "`kind gap [gap-id]: ...`")
        elif note.id not in known:
            out.append(f"{where}: {'gap' if note.kind == findings.GAP else 'finding'} "
                       f"`{note.id}` is not in findings.toml")
        elif known[note.id].kind != note.kind:
            out.append(f"{where}: kind {note.kind}, but findings.toml says kind "
                       f"{known[note.id].kind}")
        elif note.kind != findings.GAP and findings.GAP_PREFIX.match(note.text):
            out.append(f"{where}: the note says `adapter gap` under kind {note.kind}: an "
                       "adapter gap is `kind gap [gap-id]:` (the runtime was not judged)")
    return out


def check_findings(adapter: Path) -> list[str]:
    path = adapter / "findings.toml"
    if not path.is_file():
        return ["no findings.toml"]
    try:
        found = findings.problems(findings.load(path), adapter)
    except findings.FindingsError as exc:
        return [str(exc)]
    # say where: `findings.toml:12: findings.<id>: ...`
    lines = findings.locate(path)
    out = []
    for problem in found:
        fid = problem.removeprefix("findings.").split(":", 1)[0]
        out.append(f"findings.toml:{lines[fid]}: {problem}" if fid in lines
                   else f"findings.toml: {problem}")
    return out


_PY_IMPORT = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+import|import\s+([\w., ]+))", re.M)
_JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)"""
                        r"""(['"])([^'"]+)\1""", re.M)
_SH_CAPCONF = re.compile(r"^[^#\n]*(?:-m\s+capconf\b|(?:^|[;&|]\s*)capconf\s)", re.M)


def repro_imports(path: Path, adapter: Path) -> list[str]:
    """What a reproduction pulls in from capconf or from the adapter's own code."""
    text = path.read_text(encoding="utf-8", errors="replace")
    own = {p.stem for p in adapter.iterdir() if p.name != "repro"
           and (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").is_file()))}
    bad: list[str] = []
    if path.suffix == ".py":
        for frm, names in _PY_IMPORT.findall(text):
            modules = [frm] if frm else [n.split()[0] for n in names.split(",") if n.strip()]
            for mod in modules:
                top = mod.lstrip(".").split(".")[0]
                if top == "capconf" or top in own or (mod.startswith("..")):
                    bad.append(mod)
    elif path.suffix in {".mjs", ".js", ".cjs", ".ts"}:
        for _, spec in _JS_IMPORT.findall(text):
            if "capconf" in spec:
                bad.append(spec)
            elif spec.startswith("."):
                target = (path.parent / spec).resolve()
                if not target.is_relative_to((adapter / "repro").resolve()):
                    bad.append(spec)
    elif path.suffix == ".sh":
        bad += [m.strip() for m in _SH_CAPCONF.findall(text)]
    return bad


def check_repro(adapter: Path) -> list[str]:
    folder = adapter / "repro"
    scripts = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    out = [f"repro/{p.relative_to(folder)} imports {', '.join(bad)} (a reproduction needs "
           "only the pinned package and Python or Node)"
           for p in scripts for bad in [repro_imports(p, adapter)] if bad]
    try:
        known = findings.read(adapter)
    except findings.FindingsError:
        return out
    if any(f.kind == "a" for f in known.values()) and not scripts:
        out.append("kind a findings but no repro/ folder")
    return out


def run_file(adapter: Path) -> Path:
    return adapter / f"{adapter.name}-run.jsonl"


def check_committed_run(adapter: Path) -> list[str]:
    path = run_file(adapter)
    if not path.is_file():
        return [f"no committed run {path.name}"]
    header: dict[str, object] | None = None
    failing: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            return [f"{path.name} is not JSON Lines"]
        if row.get("type") == "header":
            header = row
        elif row.get("type") == "case" and row.get("outcome") in outcomes.FAILING:
            failing.append(f"{row.get('case')} ({row.get('outcome')})")
    if header is None:
        return [f"{path.name} has no header (not a `capconf run --report` file)"]
    out = []
    declared = {g for g, s in (declared_groups(adapter) or {}).items() if s == "declared"}
    value = header.get("features")
    run_groups = {str(g) for g in value} - {"core"} if isinstance(value, list) else set()
    if declared and run_groups != declared:
        out.append(f"the run declared {sorted(run_groups)}, README declares "
                   f"{sorted(declared)}")
    if failing:
        out.append(f"the committed run is not green against its baseline: "
                   f"{', '.join(failing[:5])}{' ...' if len(failing) > 5 else ''}")
    return out


def check_report(adapter: Path) -> list[str]:
    import make_report  # the generator: the same code `ci` runs
    from runs import InputError

    report = adapter / "REPORT.md"
    if not report.is_file():
        return ["no REPORT.md"]
    if not run_file(adapter).is_file():
        return ["no committed run to regenerate REPORT.md from"]
    try:
        text = make_report.adapter_report(adapter, run_file(adapter))
    except (InputError, findings.FindingsError) as exc:
        return [str(exc)]
    if text != report.read_text(encoding="utf-8"):
        return ["REPORT.md is not make_report's output for the committed run "
                f"(python adapters/make_report.py --adapter adapters/{adapter.name})"]
    return []


def check_ci(adapter: Path) -> list[str]:
    ci = adapter / "ci"
    if not ci.is_file():
        return ["no ci script"]
    text = ci.read_text(encoding="utf-8")
    out = []
    if not re.search(r"make_report\.py\s+--adapter\b[^\n]*--check", text):
        out.append("ci does not run `make_report.py --adapter ... --check`")
    if "--expected-failures" not in text:
        out.append("ci's capconf run has no --expected-failures")
    return out


CHECKS: tuple[Check, ...] = (
    Check("pinned-install", "package.json exact versions + package-lock.json",
          check_pinned_install),
    Check("feature-groups", "README `## Feature groups`: every group, declared or not, "
          "with the reason; ci declares the same", check_feature_groups),
    Check("vocabulary", "every code in the source is a SPEC.md code, not capconf-only, "
          "listed in README `## Vocabulary`", check_vocabulary),
    Check("baseline", "every entry cause-pinned, `kind a|b [finding-id]:` or `kind gap "
          "[gap-id]:` citing findings.toml", check_baseline),
    Check("findings", "findings.toml schema (kind a: repro + issue or draft; kind b: "
          "evidence; kind gap: title, rule, missing, plan and nothing else)",
          check_findings),
    Check("repro", "reproductions import neither capconf nor the adapter", check_repro),
    Check("committed-run", "<runtime>-run.jsonl committed, green, same groups",
          check_committed_run),
    Check("report", "REPORT.md = make_report --adapter for the committed run",
          check_report),
    Check("ci", "ci regenerates REPORT.md with make_report --adapter --check", check_ci),
)

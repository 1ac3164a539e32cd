"""The layout the architecture promises: one import name, one package per area, each area
saying where its requirements, spec text, suite files and goldens are, no import cycles,
and no test fixtures inside the product."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from import_graph import cycles, importers, module_graph, package_of

from capconf.conformance.requirements import requirements

REPO = Path(__file__).resolve().parent.parent.parent
SIMULATOR = REPO / "simulator"
CONFORMANCE = REPO / "conformance"
FIELDS = ("Requirements", "Spec", "Suite", "Golden")
NOT_YET = "(none yet)"


# -- one top-level name, no mutants in the product ------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """Built from a clean copy of the tree: a stale ``build/`` folder of an earlier build
    would otherwise leak old modules into the wheel and hide what this build ships."""
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".tox", "build", "dist", "*.egg-info", "__pycache__", "golden",
        "tests", ".*_cache", ".hypothesis", "node_modules"))
    # the build backend itself, as pip's `wheel --no-build-isolation` would call it (the
    # same setuptools, without pip's own start-up)
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
         "print(b.build_wheel(sys.argv[1]))", str(out)],
        cwd=source, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    name = proc.stdout.strip().splitlines()[-1]
    return zipfile.ZipFile(out / name)


def test_the_wheel_installs_exactly_one_top_level_name(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    tops = {n.split("/")[0] for n in names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert tops - dist_info == {"capconf"}, sorted(tops)
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert wheel.read(top_level).decode().split() == ["capconf"]


def test_the_wheel_ships_the_suite_data_and_no_mutants(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for needed in ("capconf/simulator/protocol/dispatcher.py",
                   "capconf/conformance/cli.py", "capconf/conformance/requirements.yaml",
                   "capconf/conformance/case_ids.txt", "capconf/conformance/pytest.ini",
                   "capconf/conformance/protocol/ops.json",
                   "capconf/conformance/cases/definition.yaml",
                   "capconf/conformance/suite/test_skills.py"):
        assert needed in names, needed
    assert [n for n in names if "mutant" in n.lower()] == []


def test_no_module_imports_a_generic_top_level_name() -> None:
    """`simulator` and `conformance` are folders of the repository, not import names:
    importing them would only work from a clone and would load a second copy."""
    offenders = []
    for path in sorted([*REPO.glob("simulator/**/*.py"), *REPO.glob("conformance/**/*.py"),
                        *REPO.glob("tests/**/*.py"), *REPO.glob("benchmarks/**/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module
                     and node.level == 0 else [])
            offenders += [f"{path.relative_to(REPO)}: {n}" for n in names
                          if n.split(".")[0] in ("simulator", "conformance")]
    assert offenders == []


# -- no import cycles, ground that knows no area ------------------------------------

def test_no_import_cycles() -> None:
    assert cycles(module_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_core_imports_no_area() -> None:
    """``core`` is the ground every area stands on: a core module that imports an area
    (or the composition, which imports them all) would make the ground depend on what
    stands on it, and every area would reach every other through it."""
    graph = module_graph()
    offenders = {m: sorted(d for d in deps if package_of(d) != "core")
                 for m, deps in graph.items() if package_of(m) == "core"}
    assert {m: d for m, d in offenders.items() if d} == {}


def test_no_area_imports_the_protocol_package() -> None:
    """The protocol lists every area's ops (``protocol.op_tables``); an area that imported
    the protocol back would tie each area to all the others through it. What ops share
    (the session, live agents, the wire rules) is ground in ``compose`` and ``core``."""
    graph = module_graph()
    protocol = "capconf.simulator.protocol"
    assert [m for m in importers(graph, protocol) if package_of(m) not in ("protocol", None)
            ] == []
    assert [m for m in importers(graph, f"{protocol}.op_tables")
            if package_of(m) != "protocol"] == []


def test_the_layout_rules_see_a_forbidden_import() -> None:
    graph = {"capconf.simulator.core.names": {"capconf.simulator.skills.parse"}}
    assert package_of("capconf.simulator.core.names") == "core"
    assert [d for d in graph["capconf.simulator.core.names"] if package_of(d) != "core"]
    assert importers(graph, "capconf.simulator.skills") == ["capconf.simulator.core.names"]


# -- one package per area, each saying where its parts are ---------------------------

def _areas() -> dict[str, str]:
    return {p.parent.name: ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or ""
            for p in sorted(SIMULATOR.glob("*/__init__.py"))}


def _field(doc: str, name: str) -> str:
    match = re.search(rf"^{name}: (.+)$", doc, re.M)
    assert match, f"no '{name}:' line"
    return match.group(1)


def _ids(text: str) -> set[str]:
    """``KB-01..08 APPR-06`` -> {KB-01, ..., KB-08, APPR-06}."""
    ids: set[str] = set()
    for prefix, first, last in re.findall(r"([A-Z]+)-(\d+)(?:\.\.(?:[A-Z]+-)?(\d+))?", text):
        for n in range(int(first), int(last or first) + 1):
            ids.add(f"{prefix}-{n:02d}")
    return ids


def test_the_simulator_top_level_holds_only_a_handful_of_modules() -> None:
    assert len(list(SIMULATOR.glob("*.py"))) <= 4
    assert all((p.parent / "__init__.py").exists()
               for p in SIMULATOR.rglob("*.py")), "every folder is a package"


@pytest.mark.parametrize("area", sorted(_areas()))
def test_each_area_names_its_requirements_spec_suite_and_goldens(area: str) -> None:
    doc = _areas()[area]
    for name in FIELDS:
        _field(doc, name)
    assert _ids(_field(doc, "Requirements")) or area == "builtin_tools"
    suite, golden = _field(doc, "Suite"), _field(doc, "Golden")
    for part in suite.split() if suite != NOT_YET else ():
        assert (REPO / part).is_file(), part
    for part in golden.split() if golden != NOT_YET else ():
        assert (REPO / part).is_dir(), part


def test_every_requirement_suite_file_and_golden_folder_has_an_area() -> None:
    docs = _areas().values()
    named_ids = set().union(*(_ids(_field(d, "Requirements")) for d in docs))
    assert sorted(set(requirements()) - named_ids) == []
    named_files = {p for d in docs for p in _field(d, "Suite").split()}
    suite_files = {f"conformance/suite/{p.name}" for p in CONFORMANCE.glob("suite/test_*.py")}
    data_files = {f"conformance/cases/{p.name}" for p in CONFORMANCE.glob("cases/[!_]*.yaml")}
    runner = {"conformance/suite/test_cases.py"}  # runs the data cases named by the areas
    assert sorted((suite_files | data_files) - runner - named_files) == []
    named_golden = {p.rstrip("/") for d in docs for p in _field(d, "Golden").split()
                    if _field(d, "Golden") != NOT_YET}
    golden = {f"golden/{p.name}" for p in (REPO / "golden").iterdir() if p.is_dir()}
    assert sorted(golden - named_golden) == []


# -- the project's tests are grouped like the code ------------------------------------

TESTS = REPO / "tests"
TEST_FOLDERS_BESIDE_AREAS = {"conformance", "project"}  # the suite as a tool, the repo


def test_every_test_file_is_in_the_folder_of_an_area() -> None:
    """A change to one area finds its tests in one folder: no test file at the tests root,
    and every folder of test files is an area (``simulator/<area>/``), the suite as a tool
    (``conformance``) or the repository as a whole (``project``)."""
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    assert sorted(folders - set(_areas()) - TEST_FOLDERS_BESIDE_AREAS) == []
    assert [p for p in TESTS.glob("*/*/test_*.py") if "fake_impls" not in p.parts] == []


def test_the_readme_names_each_areas_test_folder() -> None:
    """README's area table has a `tests` column; each folder it names exists, and each area
    folder of tests is named there."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    header = "| area | IDs | SPEC | reference | suite | golden | tests |"
    assert header in readme
    rows = readme.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    named = set(re.findall(r"`tests/(\w+)/`", "\n".join(r.rsplit("|", 2)[1] for r in rows)))
    for folder in named:
        assert (TESTS / folder).is_dir(), folder
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    assert sorted(folders - named - TEST_FOLDERS_BESIDE_AREAS - {"core"}) == []


def test_the_id_ranges_expand() -> None:
    assert _ids("KB-01..03 APPR-06") == {"KB-01", "KB-02", "KB-03", "APPR-06"}

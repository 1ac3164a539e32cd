"""The suite speaks only the driver protocol: no module of `capconf.conformance` may
import `capconf.simulator`, except the default-implementation adapter."""

from __future__ import annotations

import ast
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parent.parent.parent / "conformance"
ALLOWED = {CONFORMANCE / "reference.py"}


def _is_simulator(name: str) -> bool:
    return name == "capconf.simulator" or name.startswith("capconf.simulator.") \
        or name.split(".")[0] == "simulator"


def _simulator_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _is_simulator(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _is_simulator(node.module) or (node.module == "capconf" and any(
                    a.name == "simulator" for a in node.names)):
                found.append(node.module)
        elif isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            func = ast.unparse(node.func)
            if func.endswith(("import_module", "__import__")) and isinstance(first, ast.Constant) \
                    and _is_simulator(str(first.value)):
                found.append(f"{func}({first.value!r})")
    return [f"{path.relative_to(CONFORMANCE.parent)}:{name}" for name in found]


def test_only_the_reference_adapter_imports_the_simulator() -> None:
    offenders = []
    for path in sorted(CONFORMANCE.rglob("*.py")):
        if path not in ALLOWED:
            offenders += _simulator_imports(path)
    assert offenders == []


def test_the_checker_sees_an_import(tmp_path: Path) -> None:
    probe = CONFORMANCE / "reference.py"
    assert _simulator_imports(probe), "the adapter imports the simulator; the checker must see it"

"""The import graph of the product (``simulator/`` and ``conformance/``), read from the
source with ``ast``, never by importing it: what ``tests/project/test_layout.py`` holds to its
rules (no cycles, ``core`` imports no area, no area imports the protocol package), and
what a reviewer draws to see the layout at a glance.

    python tests/import_graph.py            # simulator packages -> the packages they import
    python tests/import_graph.py --modules  # every module -> the modules it imports
    python tests/import_graph.py --dot      # the package graph as Graphviz DOT

Only absolute imports count (the product uses no relative ones); an import inside a
function or under ``TYPE_CHECKING`` counts too, because it is still a dependency a reader
must know about.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIMULATOR = REPO / "simulator"
CONFORMANCE = REPO / "conformance"
PREFIX = "capconf.simulator."


def module_graph() -> dict[str, set[str]]:
    """Each product module's dotted name -> the product modules it imports."""
    modules: dict[str, Path] = {}
    for folder in (SIMULATOR, CONFORMANCE):
        for path in folder.rglob("*.py"):
            parts = ["capconf", *path.relative_to(REPO).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {m for a in node.names if (m := owner(a.name))}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    target = owner(f"{node.module}.{alias.name}")
                    if target != f"{node.module}.{alias.name}":
                        target = owner(node.module)
                    if target:
                        deps.add(target)
        deps.discard(name)
        graph[name] = deps
    return graph


def package_of(module: str) -> str | None:
    """``capconf.simulator.skills.parse`` -> ``skills``; a top-level module of the
    simulator (``capconf.simulator.areas``) is its own node; None outside the simulator."""
    if module == "capconf.simulator":
        return "simulator"
    if not module.startswith(PREFIX):
        return None
    return module[len(PREFIX):].split(".")[0]


def package_graph(graph: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """The simulator's packages (and top-level modules) -> the ones they import."""
    packages: dict[str, set[str]] = {}
    for module, deps in (module_graph() if graph is None else graph).items():
        source = package_of(module)
        if source is None:
            continue
        targets = packages.setdefault(source, set())
        targets |= {t for d in deps if (t := package_of(d)) and t != source}
    return packages


def importers(graph: dict[str, set[str]], target: str) -> list[str]:
    """The modules that import ``target`` or a module inside it."""
    return sorted(m for m, deps in graph.items()
                  if any(d == target or d.startswith(target + ".") for d in deps))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _text(graph: dict[str, set[str]]) -> str:
    width = max(map(len, graph), default=0)
    return "".join(f"{name:<{width}} -> {' '.join(sorted(graph[name])) or '(nothing)'}\n"
                   for name in sorted(graph))


def _dot(graph: dict[str, set[str]]) -> str:
    edges = "".join(f'  "{a}" -> "{b}";\n' for a in sorted(graph) for b in sorted(graph[a]))
    return "digraph simulator {\n  rankdir=BT;\n" + edges + "}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", action="store_true", help="module level, not packages")
    parser.add_argument("--dot", action="store_true", help="Graphviz DOT instead of text")
    args = parser.parse_args(argv)
    graph = module_graph()
    shown = graph if args.modules else package_graph(graph)
    sys.stdout.write(_dot(shown) if args.dot else _text(shown))
    found = cycles(graph)
    for cycle in found:
        sys.stderr.write("cycle: " + " -> ".join(cycle) + "\n")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())

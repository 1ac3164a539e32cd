"""Generate SPEC.md's tables from the code tables, so the spec cannot drift from the
reference: `python -m capconf.simulator.spec_tables --check SPEC.md` (or `--write`).

A generated region in SPEC.md looks like
    <!-- BEGIN GENERATED: name -->
    ...
    <!-- END GENERATED: name -->
and is replaced whole by the generator called ``name``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capconf.simulator.compose.diagnostic_catalog import all_kinds
from capconf.simulator.tools.catalog import (
    DEFAULT_GRANTABLE,
    DEFAULT_NOT_GRANTABLE,
    DIMENSION_OF,
    LEGACY_SIX,
)


def diagnostic_codes() -> str:
    rows = ["| code | requirement | parse mode | save mode | meaning |", "|---|---|---|---|---|"]
    for kind in all_kinds():
        rows.append(f"| `{kind.code}` | {kind.requirement} | {kind.parse_severity} | "
                    f"{kind.save_severity} | {kind.summary} |")
    return "\n".join(rows)


def default_registry() -> str:
    rows = ["| tool | kind |", "|---|---|"]
    for name in DEFAULT_GRANTABLE:
        kind = ("legacy six" if name in LEGACY_SIX else
                f"dimension tool ({DIMENSION_OF[name]})" if name in DIMENSION_OF else "business")
        rows.append(f"| `{name}` | {kind} |")
    rows += ["", "Deliberately not grantable:", "", "| tool | reason |", "|---|---|"]
    rows += [f"| `{name}` | {reason} |" for name, reason in DEFAULT_NOT_GRANTABLE]
    return "\n".join(rows)


def builtin_tool_schemas() -> str:
    from capconf.simulator.tools.catalog import BUILTIN_TOOLS

    rows = ["| tool | arguments (required in bold) | description |", "|---|---|---|"]
    for spec in BUILTIN_TOOLS:
        required = set(spec.input_schema.get("required", []))
        args = ", ".join(
            (f"**`{name}`**" if name in required else f"`{name}`") + f": {prop.get('type')}"
            for name, prop in spec.input_schema["properties"].items())
        rows.append(f"| `{spec.name}` | {args} | {spec.description} |")
    return "\n".join(rows)


def dimension_tool_schemas() -> str:
    """The skill, knowledge and MCP tools' exact descriptions and input schemas, from the
    constants the reference mounts (TOOL-03), so an implementer never has to read the
    code. The memory tools' are MEM-03's table (memory-tool-schemas), not repeated here."""
    import json

    from capconf.simulator.knowledge.kbsearch import KB_SEARCH_DESCRIPTION, KB_SEARCH_SCHEMA
    from capconf.simulator.mcp.catalog import GATEWAY_TOOLS
    from capconf.simulator.skills.search import SKILL_SEARCH_DESCRIPTION, SKILL_SEARCH_SCHEMA
    from capconf.simulator.skills.use_skill import USE_SKILL_DESCRIPTION, USE_SKILL_SCHEMA

    specs: list[tuple[str, str, Any]] = [
        ("use_skill", USE_SKILL_DESCRIPTION, USE_SKILL_SCHEMA),
        ("skill_search", SKILL_SEARCH_DESCRIPTION, SKILL_SEARCH_SCHEMA),
        ("kb_search", KB_SEARCH_DESCRIPTION, KB_SEARCH_SCHEMA),
        *((t.name, t.description, t.input_schema) for t in GATEWAY_TOOLS),
    ]
    blocks = [f"**{name}**: description\n\n> {description}\n\n```json\n"
              f"{json.dumps(schema, indent=2, ensure_ascii=False)}\n```"
              for name, description, schema in specs]
    return "\n\n".join(blocks)


GENERATORS: dict[str, Callable[[], str]] = {
    "diagnostic-codes": diagnostic_codes,
    "dimension-tool-schemas": dimension_tool_schemas,
    "default-registry": default_registry,
    "builtin-tool-schemas": builtin_tool_schemas,
}


def register(name: str, generator: Callable[[], str]) -> None:
    GENERATORS[name] = generator


_REGION = re.compile(r"(<!-- BEGIN GENERATED: (?P<name>[\w-]+) -->\n)(?P<body>.*?)"
                     r"(<!-- END GENERATED: (?P=name) -->)", re.S)


def _load_extra_generators() -> None:
    """Modules that own a table export ``SPEC_TABLES = {region name: generator}``."""
    import importlib
    import pkgutil

    import capconf.simulator as package

    for info in sorted(pkgutil.walk_packages(package.__path__, package.__name__ + "."),
                       key=lambda i: i.name):
        if info.name == __name__ or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, generator in getattr(module, "SPEC_TABLES", {}).items():
            if GENERATORS.get(name, generator) is not generator:
                raise RuntimeError(f"spec table {name!r} defined twice")
            GENERATORS[name] = generator


def regenerate(text: str) -> str:
    """The code tables, then the regions made from the document itself (its Contents and
    reading paths: their word counts include the code tables)."""
    from capconf.conformance.spec_outline import REGIONS, regenerate_outline

    _load_extra_generators()

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name in REGIONS:
            return match.group(0)
        if name not in GENERATORS:
            raise KeyError(f"SPEC.md names an unknown generated region {name!r}")
        return match.group(1) + GENERATORS[name]().rstrip("\n") + "\n" + match.group(4)

    return regenerate_outline(_REGION.sub(replace, text))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("--check", "--write"):
        print("usage: python -m capconf.simulator.spec_tables --check|--write SPEC.md",
              file=sys.stderr)
        return 2
    path = Path(argv[1])
    text = path.read_text(encoding="utf-8")
    new = regenerate(text)
    if argv[0] == "--write":
        path.write_text(new, encoding="utf-8")
        return 0
    if new != text:
        print(f"{path}: generated tables are out of date; run --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

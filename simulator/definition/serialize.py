"""Write a definition back out (the save path).

Round trip is the contract (DEF-04): every declared key survives, including unknown keys
and names that resolve to nothing (DEF-06). What changes is normalisation only: tool
names take their canonical spelling, repeats collapse to one, keys follow the canonical
order, and the body is written as a literal block so it stays readable in a diff.
"""

from __future__ import annotations

from typing import Any

import yaml

from capconf.simulator.definition.document import Definition, SourceFormat
from capconf.simulator.tools.grants import ToolGrant, ToolStatus


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def saved_tool_names(grant: ToolGrant) -> list[str]:
    """Canonical spelling where the registry knows the name, as written otherwise;
    duplicates dropped (they were reported)."""
    out: list[str] = []
    for r in grant.resolved:
        if r.status is ToolStatus.DUPLICATE:
            continue
        out.append(r.canonical if r.canonical is not None else r.declared.name)
    return out


def document_data(definition: Definition, grant: ToolGrant) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if definition.name is not None:
        data["name"] = definition.name
    if definition.description is not None:
        data["description"] = definition.description
    if definition.tools is not None:
        data["tools"] = saved_tool_names(grant)
    if definition.skills is not None:
        data["skills"] = [s.name for s in definition.skills]
    if definition.mcp_servers is not None:
        data["mcp"] = {"servers": [s.name for s in definition.mcp_servers]}
    if definition.knowledge is not None:
        data["knowledge"] = [{"name": k.name, "glob": k.glob} for k in definition.knowledge]
    if definition.memory is not None:
        data["memory"] = str(definition.memory)
    for key, value in definition.extra:
        if key == "prompt" and definition.format is SourceFormat.MARKDOWN:
            continue  # the conflict was reported; the body is the prompt
        data[key] = value
    return data


def _dump(data: dict[str, Any]) -> str:
    if not data:
        return ""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=4096)


def serialize_definition(definition: Definition, grant: ToolGrant) -> str:
    data = document_data(definition, grant)
    if definition.format is SourceFormat.MARKDOWN:
        body = definition.body + "\n" if definition.body else ""
        return f"---\n{_dump(data)}---\n\n{body}"
    if definition.body:
        data["prompt"] = definition.body + "\n"
    return _dump(data)

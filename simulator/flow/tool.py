"""The model-facing workflow tool (FLOW-02): the consumer the workflow capability offers
a model. Its parameters are the capability's, declared once here, so they are the same
whichever script runtime runs the script: a runtime is the host's choice, never a
parameter the model sees or sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TOOL_NAME = "Workflow"
TOOL_DESCRIPTION = (
    "Run a workflow script: a small Python subset whose spawn(agent_type, prompt) creates "
    "subagents, wait([handles]) collects their reports in order and emit(value) adds to "
    "the result. Answers when the script ends.")
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "script": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
    },
    "required": ["script"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ArgumentProblem:
    code: str
    message: str
    detail: dict[str, Any]


def tool_spec() -> dict[str, Any]:
    return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": PARAMETERS}


def check_arguments(args: Mapping[str, Any],
                    parameters: Mapping[str, Any] = PARAMETERS) -> ArgumentProblem | None:
    """The first way ``args`` breaks the parameter schema (this schema's subset of JSON
    Schema: properties of type string, required, no additional properties)."""
    properties: Mapping[str, Any] = parameters["properties"]
    extra = sorted(set(args) - set(properties))
    if extra and parameters.get("additionalProperties") is False:
        return ArgumentProblem("bad_arguments", "unknown arguments: " + ", ".join(extra),
                               {"unknown": extra, "allowed": sorted(properties)})
    missing = [k for k in parameters.get("required", []) if k not in args]
    if missing:
        return ArgumentProblem("bad_arguments", "missing arguments: " + ", ".join(missing),
                               {"missing": missing})
    for key, value in args.items():
        schema = properties.get(key, {})
        if schema.get("type") == "string" and (
                not isinstance(value, str) or len(value) < schema.get("minLength", 0)):
            return ArgumentProblem("bad_arguments", f"`{key}` must be a non-empty string"
                                   if schema.get("minLength") else f"`{key}` must be a "
                                   "string", {"argument": key})
    return None

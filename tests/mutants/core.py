"""Mutants of the core areas (definitions, tool grants, prompt, protocol) beyond the
first ones in ``mutants.base``: each a plausible real bug, each naming the
requirements whose cases must catch it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from capconf.simulator.compose import world
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.definition import serialize, yamlsource
from capconf.simulator.prompt import assembly as prompt
from capconf.simulator.protocol import core_ops as ops_core
from capconf.simulator.protocol import dispatcher as dispatcher_module
from capconf.simulator.tools import grants as tool_grants
from capconf.simulator.tools import registry
from mutants.base import Mutant, _original, _patch
from mutants.split import ModuleGroup

# definition/document.py before it was split into the document and its parser (issue 24)
definition = ModuleGroup("capconf.simulator.definition.document",
                         "capconf.simulator.definition.parse")


def _body_keeps_front_matter() -> None:
    """The Markdown body is taken from the top of the file, front matter included."""
    real = _original(definition, "_split_front_matter")

    def buggy(text: str) -> tuple[str, str, int] | None:
        split = real(text)
        return None if split is None else (split[0], text, split[2])

    _patch(definition, "_split_front_matter", buggy)


def _zero_based_lines() -> None:
    """Lines reported as the YAML library gives them: 0-based."""
    _patch(yamlsource, "_mark",
           lambda m, offset: yamlsource.Mark(m.line + offset, m.column + 1))


def _save_drops_unknown_keys() -> None:
    """Saving writes only the keys the spec defines; everything else is lost."""
    real = _original(serialize, "document_data")

    def buggy(defn: Any, grant: Any) -> Any:
        return real(replace(defn, extra=()), grant)

    _patch(serialize, "document_data", buggy)


def _no_legacy_fallback() -> None:
    """A backend without a grantable-tool list yields an empty registry."""
    _patch(registry, "LEGACY_SIX", ())


def _copy_drops_memory() -> None:
    """"Copy as system-level" forgets the memory mode."""
    real = ops_core.CORE_OPS["builtins.copy"]

    def buggy(session: Any, args: Any) -> Any:
        result = dict(real(session, args))
        result["document"] = "\n".join(
            ln for ln in result["document"].split("\n") if not ln.startswith("memory:"))
        return result

    ops_core.CORE_OPS["builtins.copy"] = buggy


def _not_grantable_as_unknown() -> None:
    """Deliberately absent tools are reported as plain unknown names, reason lost."""
    _patch(registry.Registry, "refusal", lambda self, written: None)


def _duplicates_granted_twice() -> None:
    real = _original(tool_grants, "resolve_tools")

    def buggy(*args: Any, **kwargs: Any) -> Any:
        grant = real(*args, **kwargs)
        resolved = tuple(replace(r, status=tool_grants.ToolStatus.GRANTED)
                         if r.status is tool_grants.ToolStatus.DUPLICATE else r
                         for r in grant.resolved)
        return replace(grant, resolved=resolved)

    import capconf.simulator.compose.agent as agent

    _patch(agent, "resolve_tools", buggy)


def _memory_before_knowledge() -> None:
    _patch(prompt, "SECTION_ORDER", ("skills", "memory", "knowledge", "mcp"))


def _rewrite(change: Any) -> None:
    """Post-process every answer of the dispatcher: for bugs that live in how results
    are reported rather than in the model (``change(op, args, result)`` edits in place)."""
    real = dispatcher_module.Dispatcher.handle

    def handle(self: Any, request: Any) -> dict[str, Any]:
        response: dict[str, Any] = real(self, request)
        if isinstance(request, dict):
            change(request.get("op"), request.get("args") or {}, response)
        return response

    _patch(dispatcher_module.Dispatcher, "handle", handle)


def _definition_tools_canonical() -> None:
    """`definition.tools` lists canonical names instead of the names as written."""
    def change(op: Any, args: Any, response: dict[str, Any]) -> None:
        result = response.get("result") or {}
        if op == "definition.parse" and result.get("definition"):
            result["definition"]["tools"] = [
                r["canonical"] or r["declared"] for r in result["tool_resolution"]]

    _rewrite(change)


def _block_list_columns() -> None:
    """Diagnostics on block-style list entries report column 1."""
    def change(op: Any, args: Any, response: dict[str, Any]) -> None:
        source = args.get("source") if isinstance(args.get("source"), str) else ""
        lines = source.split("\n")
        for diag in (response.get("result") or {}).get("diagnostics", []):
            line = diag.get("line")
            if line and line <= len(lines) and lines[line - 1].lstrip().startswith("- "):
                diag["column"] = 1

    _rewrite(change)


def _downgraded_warnings() -> None:
    """Unknown keys and repeated tools are reported as info, so a gate never sees them."""
    def change(op: Any, args: Any, response: dict[str, Any]) -> None:
        for diag in (response.get("result") or {}).get("diagnostics", []):
            if diag["code"] in ("DEF-UNKNOWN-KEY", "TOOL-DUPLICATE"):
                diag["severity"] = "info"

    _rewrite(change)


def _compile_ops_without_diagnostics() -> None:
    """prompt.assemble and tools.mounted drop the diagnostics."""
    def change(op: Any, args: Any, response: dict[str, Any]) -> None:
        if op in ("prompt.assemble", "tools.mounted") and response.get("ok"):
            response["result"]["diagnostics"] = []

    _rewrite(change)


def _no_requirement_field() -> None:
    def change(op: Any, args: Any, response: dict[str, Any]) -> None:
        for diag in (response.get("result") or {}).get("diagnostics", []):
            diag["requirement"] = None

    _rewrite(change)


def _rejected_save_returns_document() -> None:
    """A rejected save still hands back a document."""
    def change(op: Any, args: Any, response: dict[str, Any]) -> None:
        result = response.get("result") or {}
        if op == "definition.save" and result.get("saved") is False:
            result["document"] = args.get("source", "")

    _rewrite(change)


def _world_error_path_without_index() -> None:
    def change(op: Any, args: Any, response: dict[str, Any]) -> None:
        error = response.get("error") or {}
        if op == "world.setup" and error.get("path", [])[:2] == ["args", "grantable"]:
            error["path"] = ["args", "grantable"]

    _rewrite(change)


def _size_in_characters() -> None:
    """The 1 MiB limit counted in characters, not bytes."""
    real_decode = _original(yamlsource, "decode_source")

    def decode(data: bytes) -> str:
        text = data.decode("utf-8", "strict") if len(data) <= 4 * yamlsource.MAX_SOURCE_BYTES \
            else data[: 4 * yamlsource.MAX_SOURCE_BYTES].decode("utf-8", "ignore")
        if len(text) > yamlsource.MAX_SOURCE_BYTES:
            return str(real_decode(data))
        return yamlsource.normalize_newlines(text.removeprefix("\ufeff"))

    _patch(yamlsource, "decode_source", decode)
    _patch(definition, "decode_source", decode)


def _depth_off_by_one() -> None:
    _patch(yamlsource, "MAX_DEPTH", yamlsource.MAX_DEPTH + 1)


def _skills_last() -> None:
    _patch(prompt, "SECTION_ORDER", ("knowledge", "mcp", "memory", "skills"))


def _prompt_without_catalog() -> None:
    """The reported parts list the catalog, but the prompt text the model gets does not
    contain it (a renderer and a reporter that drifted apart)."""
    real = _original(prompt, "assemble_prompt")

    def buggy(frame: str, sections: dict[str, str | None], body: str) -> Any:
        good = real(frame, sections, body)
        bare = real(frame, {}, body)
        return prompt.Prompt(bare.text, good.parts)

    import capconf.simulator.compose.agent as agent

    _patch(agent, "assemble_prompt", buggy)


def _registry_case_conflict_accepted() -> None:
    """Names equal up to case are silently merged instead of refused."""
    real = _original(world, "build_registry")

    def buggy(names: Any, refused: Any = None) -> Any:
        if names is not None:
            first: dict[str, str] = {}
            for name in names:
                first.setdefault(ascii_fold(name), name)
            names = list(first.values())
        return real(names, refused)

    _patch(world, "build_registry", buggy)


def _unknown_op_wrong_code() -> None:
    """An unsupported op is answered with an ad-hoc error code."""
    real = dispatcher_module.Dispatcher.handle

    def buggy(self: Any, request: Any) -> dict[str, Any]:
        response: dict[str, Any] = real(self, request)
        if not response["ok"] and response["error"]["code"] == "not_implemented":
            response["error"]["code"] = "unknown_op"
        return response

    _patch(dispatcher_module.Dispatcher, "handle", buggy)


def _short_spec_version() -> None:
    import capconf.simulator.protocol.core_ops as core

    real = core.CORE_OPS["hello"]

    def buggy(session: Any, args: Any) -> Any:
        return {**real(session, args), "spec_version": "0.1"}

    core.CORE_OPS["hello"] = buggy


def _errors_as_text() -> None:
    """Tool failures come back as exception text instead of the envelope."""
    from capconf.simulator.core.envelope import ToolResult

    real = ToolResult.to_json

    def buggy(self: ToolResult) -> dict[str, Any]:
        if self.ok or self.error is None:
            return real(self)
        return {"ok": False, "error": f"{self.error.code}: {self.error.message}"}

    _patch(ToolResult, "to_json", buggy)



MUTANTS: tuple[Mutant, ...] = (
    Mutant("body-keeps-front-matter", "the Markdown body includes the front matter",
           ("DEF-01",), _body_keeps_front_matter),
    Mutant("zero-based-lines", "diagnostic lines are 0-based", ("DEF-03",), _zero_based_lines),
    Mutant("save-drops-unknown-keys", "saving loses keys the spec does not define",
           ("DEF-04",), _save_drops_unknown_keys),
    Mutant("no-legacy-fallback", "no grantable-tool list gives an empty registry",
           ("DEF-05",), _no_legacy_fallback),
    Mutant("copy-drops-memory", "copy as system-level forgets the memory mode",
           ("DEF-07",), _copy_drops_memory),
    Mutant("not-grantable-as-unknown", "deliberately absent tools reported as unknown",
           ("TOOL-01",), _not_grantable_as_unknown),
    Mutant("duplicates-granted-twice", "a tool declared twice is granted twice",
           ("TOOL-04",), _duplicates_granted_twice),
    Mutant("memory-before-knowledge", "catalog sections in the wrong order",
           ("PROMPT-02",), _memory_before_knowledge),
    Mutant("size-in-characters", "the size limit counts characters, not bytes", ("DEF-03",),
           _size_in_characters),
    Mutant("depth-off-by-one", "nesting of 33 levels is accepted", ("DEF-03",),
           _depth_off_by_one),
    Mutant("skills-last", "the skills section comes after memory", ("PROMPT-02",), _skills_last),
    Mutant("prompt-without-catalog", "parts list the catalog but the prompt text lacks it",
           ("PROMPT-01",), _prompt_without_catalog),
    Mutant("registry-case-conflict-accepted", "registry names equal up to case are merged",
           ("PROTO-02",), _registry_case_conflict_accepted),
    Mutant("unknown-op-wrong-code", "an unsupported op answers `unknown_op`",
           ("PROTO-03",), _unknown_op_wrong_code),
    Mutant("short-spec-version", "hello reports the spec version as `0.1`",
           ("PROTO-01",), _short_spec_version),
    Mutant("definition-tools-canonical", "definition.tools lists canonical names, not as written",
           ("TOOL-02",), _definition_tools_canonical),
    Mutant("block-list-columns", "block-list entries are located at column 1", ("DEF-03",),
           _block_list_columns),
    Mutant("downgraded-warnings", "unknown keys and repeated tools reported as info",
           ("DEF-06", "TOOL-04"), _downgraded_warnings),
    Mutant("compile-ops-without-diagnostics", "prompt.assemble/tools.mounted drop diagnostics",
           ("TOOL-03",), _compile_ops_without_diagnostics),
    Mutant("no-requirement-field", "diagnostics carry no requirement ID", ("TOOL-03",),
           _no_requirement_field),
    Mutant("rejected-save-returns-document", "a rejected save still returns a document",
           ("DEF-02",), _rejected_save_returns_document),
    Mutant("world-error-path-without-index", "the world_invalid path stops at `grantable`",
           ("TOOL-04",), _world_error_path_without_index),
    Mutant("errors-as-text", "tool errors are exception text, not an envelope",
           ("CALL-03",), _errors_as_text),
)

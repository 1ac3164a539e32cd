"""Mutants for the classes of slip-throughs of issue 10, and for the `reference-text`
group. They are written as protocol rewrites around the reference dispatcher (the way an
outside tester writes a broken runtime as a proxy), so each bug is a wrong answer on the
wire, whatever the simulator's internals: an MCP path that ignores the tier, a copy that
drops foreign keys, a save that dedents the body, a pull that hands out settled cards,
a read that reveals existence before the decision, case-sensitive memory modes,
dimension tools mounted from `tools`, `tools` absent read as inheritance; plus a BOM kept,
YAML 1.1 words typed, NFKC-folded tool names, a frame kept with its blank lines, and
the reference's own wording and location form changed (caught only by TEXT cases).
"""

from __future__ import annotations

import base64
import os
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from mutants.base import Mutant, _patch

Forward = Callable[[dict[str, Any]], dict[str, Any]]
Rewrite = Callable[[dict[str, Any], dict[str, Any], Forward], dict[str, Any]]
DIMENSION_TOOLS = ("use_skill", "skill_search", "kb_search", "mcp_search", "mcp_describe",
                   "mcp_call", "memory_write", "memory_read", "memory_search")
KNOWN_KEYS = ("name", "description", "tools", "skills", "mcp", "knowledge", "memory",
              "prompt")


def _wrap(rewrite: Rewrite) -> None:
    """Serve every request through ``rewrite(state, request, forward)``; ``state`` is a
    per-dispatcher dict, cleared by a successful `world.setup`."""
    from capconf.simulator.protocol.dispatcher import Dispatcher

    real = Dispatcher.handle

    def handle(self: Any, request: Any) -> dict[str, Any]:
        state: dict[str, Any] = self.__dict__.setdefault("_mutant_state", {})

        def forward(req: dict[str, Any]) -> dict[str, Any]:
            out: dict[str, Any] = real(self, req)
            return out

        if not isinstance(request, dict) or not isinstance(request.get("args", {}), dict):
            return forward(request)
        if request.get("op") == "world.setup":
            response = forward(request)
            if response.get("ok"):
                state.clear()
                state["world"] = dict(request.get("args") or {})
            return response
        return rewrite(state, request, forward)

    _patch(Dispatcher, "handle", handle)


def _result(response: dict[str, Any]) -> dict[str, Any] | None:
    result = response.get("result")
    return result if response.get("ok") and isinstance(result, dict) else None


def _rebuild(result: dict[str, Any]) -> None:
    parts = result.get("parts") or []
    result["prompt"] = "\n\n".join(p["text"] for p in parts) + "\n" if parts else ""


def _side(forward: Forward, op: str, args: dict[str, Any]) -> dict[str, Any] | None:
    return _result(forward({"id": 0, "op": op, "args": args}))


DEF_OPS = ("definition.parse", "definition.save", "prompt.assemble", "tools.mounted",
           "agent.spawn")


def _rewrite_source(request: dict[str, Any], fix: Callable[[str], str]) -> dict[str, Any]:
    args = dict(request.get("args") or {})
    if isinstance(args.get("source"), str):
        args["source"] = fix(args["source"])
    return {**request, "args": args}


# -- the classes of issue 10 ------------------------------------------------------------

def _mcp_ignores_tier() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        if req.get("op") == "approval.setup":
            state["policy"] = dict(req.get("args") or {})
        args = req.get("args") or {}
        if req.get("op") == "tool.call" and args.get("tool") == "mcp_call":
            policy = state.get("policy", {})
            _side(fwd, "approval.setup", {"tier": "confirm-before-change",
                                          "attendance": "attended",
                                          "writable_roots": policy.get("writable_roots", [])})
            try:
                return fwd(req)
            finally:
                if policy:
                    _side(fwd, "approval.setup", policy)
        return fwd(req)

    _wrap(rewrite)


def _drop_unknown_front_matter(document: str) -> str:
    lines, out, skipping = document.split("\n"), [], False
    fences = [i for i, ln in enumerate(lines) if ln == "---"]
    end = fences[1] if document.startswith("---\n") and len(fences) > 1 else len(lines)
    for i, line in enumerate(lines):
        if 0 < i < end:
            key = re.match(r"^([^\s#-][^:]*):", line)
            if key:
                skipping = key.group(1).strip() not in KNOWN_KEYS
            if skipping:
                continue
        out.append(line)
    return "\n".join(out)


def _copy_drops_foreign_keys() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        if req.get("op") == "builtins.copy" and result and isinstance(result.get("document"),
                                                                      str):
            result["document"] = _drop_unknown_front_matter(result["document"])
        return response

    _wrap(rewrite)


def _save_dedents_body() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        doc = result.get("document") if result else None
        if req.get("op") == "definition.save" and result and isinstance(doc, str):
            if doc.startswith("---\n") and "\n---\n" in doc[4:]:
                head, body = doc[4:].split("\n---\n", 1)
                body = "\n".join(line.lstrip() for line in body.split("\n"))
                result["document"] = f"---\n{head}\n---\n{body}"
            else:
                out, block = [], False
                for line in doc.split("\n"):
                    if re.match(r"^prompt:\s*[|>]", line):
                        block = True
                    elif block and line.startswith(" "):
                        line = "  " + line.lstrip()
                    elif line:
                        block = False
                    out.append(line)
                result["document"] = "\n".join(out)
        return response

    _wrap(rewrite)


def _pull_delivers_settled() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        if req.get("op") == "task.stop" and result:
            state.setdefault("settled", []).extend(
                c for c in result.get("settled", []) if c.get("delivered") is None)
        if req.get("op") in ("snapshot.pull", "parent.request.start") and result:
            result["delivered"].extend(dict(c, delivered="pulled")
                                       for c in state.pop("settled", []))
        return response

    _wrap(rewrite)


def _read_reveals_existence() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        args = req.get("args") or {}
        path = (args.get("args") or {}).get("path") if isinstance(args.get("args"), dict) \
            else None
        workspace = str(state.get("world", {}).get("workspace", ""))
        if (req.get("op") == "tool.call" and args.get("tool") == "read"
                and isinstance(path, str) and os.path.isabs(path) and workspace
                and not os.path.realpath(path).startswith(os.path.realpath(workspace) + os.sep)
                and not os.path.exists(path)):
            return {"id": req.get("id"), "ok": True, "result": {
                "ok": False, "error_code": "not_found", "error_message": f"no file {path}",
                "error_detail": {"path": path}, "terminal_for_attempt": True,
                "retry_after_ms": None}}
        return fwd(req)

    _wrap(rewrite)


def _memory_modes_case_sensitive() -> None:
    def fix(source: str) -> str:
        def sub(match: re.Match[str]) -> str:
            value = match.group(2)
            if value.lower() in ("none", "private", "shared") and value != value.lower():
                return match.group(1) + "x" + value[1:]
            return match.group(0)
        return re.sub(r"(?m)^(memory:[ \t]*)(\S+)", sub, source)

    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        return fwd(_rewrite_source(req, fix) if req.get("op") in DEF_OPS else req)

    _wrap(rewrite)


def _declared_tools(source: str) -> list[str]:
    match = re.search(r"(?m)^tools:[ \t]*\[([^\]]*)\]", source)
    return [t.strip() for t in match.group(1).split(",")] if match else []


def _dimension_tools_from_tools() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        source = (req.get("args") or {}).get("source")
        if req.get("op") == "tools.mounted" and result and isinstance(source, str):
            have = {t["name"] for t in result["tools"]}
            result["tools"] += [{"name": t, "description": t, "input_schema": {
                "type": "object"}} for t in _declared_tools(source)
                if t in DIMENSION_TOOLS and t not in have]
        return response

    _wrap(rewrite)


def _tools_absent_inherits() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        source = (req.get("args") or {}).get("source")
        if req.get("op") in DEF_OPS and isinstance(source, str) and not re.search(
                r"(?m)^tools\s*:", source):
            registry = _side(fwd, "registry.list", {}) or {}
            names = ", ".join(registry.get("grantable") or [])
            req = _rewrite_source(req, lambda s: re.sub(
                r"(?m)^(name:.*)$", lambda m: f"{m.group(1)}\ntools: [{names}]", s, count=1))
        return fwd(req)

    _wrap(rewrite)


# -- survivors of the outside tester's proxies ----------------------------------------------

def _bom_kept() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        args = dict(req.get("args") or {})
        raw = args.get("source_b64")
        if req.get("op") in DEF_OPS and isinstance(raw, str):
            data = base64.b64decode(raw)
            if data.startswith(b"\xef\xbb\xbf"):  # kept: decoded as a zero-width character
                args["source_b64"] = base64.b64encode(
                    "\u200b".encode() + data[3:]).decode("ascii")
                req = {**req, "args": args}
        return fwd(req)

    _wrap(rewrite)


_YAML11 = {"on": "True", "yes": "True", "y": "True", "off": "False", "no": "False",
           "n": "False"}


def _yaml11_names() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        if req.get("op") == "definition.parse" and result and result.get("definition"):
            definition = result["definition"]
            if isinstance(definition.get("tools"), list):
                definition["tools"] = [_YAML11.get(t.lower(), t) for t in definition["tools"]]
            for row in result.get("tool_resolution") or []:
                row["declared"] = _YAML11.get(row["declared"].lower(), row["declared"])
        return response

    _wrap(rewrite)


def _tool_names_nfkc() -> None:
    import capconf.simulator.core.names as names
    import capconf.simulator.tools.registry as registry

    def fold(text: str) -> str:
        return unicodedata.normalize("NFKC", text).lower()

    _patch(names, "ascii_fold", fold)
    _patch(registry, "ascii_fold", fold)


def _frame_kept_with_blank_lines() -> None:
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        frame = state.get("world", {}).get("frame")
        if req.get("op") == "prompt.assemble" and result and isinstance(frame, str):
            for part in result["parts"]:
                if part["kind"] == "frame":
                    part["text"] = frame
            _rebuild(result)
        return response

    _wrap(rewrite)


# -- the reference's own wording and layouts (TEXT-01/TEXT-02) ------------------------------

def _reworded_catalog() -> None:
    """Correct behaviour, other words: behaviour cases pass, TEXT-01 cases fail."""
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        if req.get("op") == "prompt.assemble" and result:
            for part in result["parts"]:
                if part["kind"].startswith("catalog."):
                    part["text"] = part["text"].replace("granted to you", "yours to use") \
                        .replace("Load a skill's", "Read a skill's")
            _rebuild(result)
        return response

    _wrap(rewrite)


def _other_location_form() -> None:
    """Skill locations as plain paths: behaviour cases pass, TEXT-02 cases fail."""
    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        result = _result(response)
        content = result.get("content") if result else None
        if isinstance(content, dict) and isinstance(content.get("location"), str):
            content["location"] = content["location"].replace("system:", "/skills/system/")
        return response

    _wrap(rewrite)


def _present_key_declares() -> None:
    """A dimension key that is present at all (null, empty or ill-typed) renders its
    section heading: the prompt of a legacy definition with `mcp:` no longer matches."""
    headings = {"skills": "## Skills", "knowledge": "## Knowledge sources",
                "mcp": "## MCP servers", "memory": "## Memory"}

    def rewrite(state: dict[str, Any], req: dict[str, Any], fwd: Forward) -> dict[str, Any]:
        response = fwd(req)
        source = (req.get("args") or {}).get("source")
        result = _result(response)
        if req.get("op") != "prompt.assemble" or not isinstance(source, str) or not result:
            return response
        parts: list[dict[str, Any]] = list(result.get("parts") or [])
        for key, heading in headings.items():
            kind = f"catalog.{key}"
            if re.search(rf"(?m)^{key}\s*:", source) and all(p.get("kind") != kind
                                                            for p in parts):
                at = next((i for i, p in enumerate(parts) if p.get("kind") == "body"),
                          len(parts))
                parts.insert(at, {"kind": kind, "text": heading})
        result["parts"] = parts
        _rebuild(result)
        return response

    _wrap(rewrite)


MUTANTS = (
    Mutant("mcp-ignores-tier", "the MCP call path always asks, whatever the tier and "
           "attendance", ("APPR-01", "MCP-03"), _mcp_ignores_tier),
    Mutant("copy-drops-foreign-keys", "copy as system-level drops keys that are not "
           "dimensions (model, color, vendor keys)", ("DEF-07",), _copy_drops_foreign_keys),
    Mutant("save-dedents-body", "save strips the indentation of a multi-line body",
           ("DEF-04",), _save_dedents_body),
    Mutant("pull-delivers-settled", "a pull hands out cards settled by TaskStop",
           ("APPR-05",), _pull_delivers_settled),
    Mutant("read-reveals-existence", "read answers not-found for a missing outside file "
           "before the approval decision", ("APPR-01",), _read_reveals_existence),
    Mutant("memory-modes-case-sensitive", "`memory: Private` is not the private mode",
           ("MEM-01",), _memory_modes_case_sensitive),
    Mutant("dimension-tools-from-tools", "dimension tools mounted because `tools` lists "
           "them", ("TOOL-03",), _dimension_tools_from_tools),
    Mutant("tools-absent-inherits", "`tools` absent grants every registry tool",
           ("DEF-01",), _tools_absent_inherits),
    Mutant("bom-kept", "a leading BOM becomes part of the first key", ("DEF-01",),
           _bom_kept),
    Mutant("yaml11-names", "tool names typed by YAML 1.1 (`on` is True)", ("DEF-01",),
           _yaml11_names),
    Mutant("tool-names-nfkc", "tool names folded with NFKC (fullwidth letters resolve)",
           ("TOOL-02",), _tool_names_nfkc),
    Mutant("frame-kept-with-blank-lines", "the frame keeps its own leading/trailing "
           "newlines", ("PROMPT-01",), _frame_kept_with_blank_lines),
    Mutant("present-key-declares", "a dimension key present but null, empty or ill-typed "
           "renders its section heading", ("PROMPT-03",), _present_key_declares),
    Mutant("reworded-catalog", "catalog instruction sentences reworded (correct behaviour, other "
           "words)", ("TEXT-01",), _reworded_catalog),
    Mutant("other-location-form", "skill locations as plain paths (correct behaviour, "
           "another layout)", ("TEXT-02",), _other_location_form),
)

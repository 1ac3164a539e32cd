"""Plausible broken runtimes, each a named perturbation of the reference's traffic.

BUGS[name] = function(px, req, fwd) -> response.  DESCR[name] = (requirement, text).
"""
import base64
import json
import os
import re
import select
import subprocess
import unicodedata

from proxy_base import Proxy  # noqa: F401

BUGS = {}
DESCR = {}

DEF_OPS = ("definition.parse", "definition.save", "prompt.assemble", "tools.mounted", "agent.spawn")
COMPILE_OPS = ("definition.parse", "prompt.assemble", "tools.mounted", "agent.spawn")
DIM_TOOLS = ["use_skill", "skill_search", "kb_search", "mcp_search", "mcp_describe", "mcp_call",
             "memory_write", "memory_read", "memory_search"]
KNOWN_KEYS = ["name", "description", "tools", "skills", "mcp", "knowledge", "memory", "prompt"]
BUDGET = 8388608


def bug(name, req, text):
    def deco(fn):
        BUGS[name] = fn
        DESCR[name] = (req, text)
        return fn
    return deco


def fold(s):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def ok(resp):
    return resp.get("ok") and isinstance(resp.get("result"), dict)


def op_of(req):
    return req.get("op")


def A(req):
    return req.get("args") or {}


def rebuild(result):
    result["prompt"] = "\n\n".join(p["text"] for p in result["parts"]) + "\n"


def walk(obj, fn):
    """Apply fn to every dict in obj (depth first); fn may mutate."""
    if isinstance(obj, dict):
        fn(obj)
        for v in list(obj.values()):
            walk(v, fn)
    elif isinstance(obj, list):
        for v in obj:
            walk(v, fn)


def envelope(resp):
    r = resp.get("result")
    return r if isinstance(r, dict) and "ok" in r and ("content" in r or "error_code" in r) else None


def err_env(code, message, detail, terminal=True):
    return {"ok": False, "error_code": code, "error_message": message, "error_detail": detail,
            "terminal_for_attempt": terminal, "retry_after_ms": None}


def set_tool_names(px, req, resp, fn):
    """fn(list of names) -> new list; applied to spawn/mounted/parse tool lists."""
    if not ok(resp):
        return
    op = op_of(req)
    r = resp["result"]
    if op in ("agent.spawn", "definition.parse", "definition.save"):
        old = list(r.get("tools") or [])
        new = fn(old)
        r["tools"] = new
        if op == "agent.spawn":
            px.removed[r.get("agent")] = set(old) - set(new)
    elif op == "tools.mounted":
        objs = {t["name"]: t for t in r.get("tools", [])}
        new = fn([t["name"] for t in r.get("tools", [])])
        cache = px.state.setdefault("schemas", {})
        r["tools"] = [objs.get(n) or cache.get(n) or
                      {"name": n, "description": n, "input_schema": {"type": "object"}} for n in new]


def remember_schemas(px, resp):
    if ok(resp) and isinstance(resp["result"].get("tools"), list):
        for t in resp["result"]["tools"]:
            if isinstance(t, dict) and "input_schema" in t:
                px.state.setdefault("schemas", {})[t["name"]] = t


def diags(resp):
    if ok(resp):
        return resp["result"].get("diagnostics") or []
    return []


def resolve_outside(px, path):
    """(real path, is outside workspace and writable roots)."""
    ws = px.ws()
    p = path if os.path.isabs(path) else os.path.join(ws, path)
    rp = os.path.realpath(p)
    roots = [os.path.realpath(ws)] + [os.path.realpath(x) for x in px.state.get("roots", [])]
    inside = any(rp == r or rp.startswith(r.rstrip("/") + "/") for r in roots)
    return rp, not inside


def track_policy(px, req, resp):
    if op_of(req) == "approval.setup" and ok(resp):
        px.state["roots"] = A(req).get("writable_roots") or []
        px.state["tier"] = resp["result"]["policy"]["tier"]
    if op_of(req) == "world.setup":
        px.state["roots"] = []
        px.state["tier"] = "confirm-before-change"


def rewrite_block(src, key, fn):
    """Apply fn to the text of top-level key `key` (its line and continuation lines)."""
    lines = src.split("\n")
    out, inblock = [], False
    for ln in lines:
        if re.match(r"^%s\s*:" % re.escape(key), ln):
            inblock = True
            out.append(fn(ln))
            continue
        if inblock and (ln.startswith((" ", "\t", "-")) and not ln.startswith("---")):
            out.append(fn(ln))
            continue
        inblock = False
        out.append(ln)
    return "\n".join(out)


def with_source(req, fn):
    """Rewrite the definition source of a request with fn(text)."""
    a = A(req)
    if isinstance(a.get("source"), str):
        a["source"] = fn(a["source"])
    elif isinstance(a.get("source_b64"), str):
        try:
            txt = base64.b64decode(a["source_b64"]).decode("utf-8")
        except Exception:
            return req
        a["source_b64"] = base64.b64encode(fn(txt).encode("utf-8")).decode()
    return req


def src_text(px, req):
    return px.source_of(A(req)) or ""


# ============================================================ DEF
@bug("def_parse_as_save", "DEF-02", "definition.parse always validates in save mode (one mode only): save severities reported while loading")
def _(px, req, fwd):
    if op_of(req) == "definition.parse":
        req["args"]["mode"] = "save"
    return fwd(req)


@bug("def_save_accepts_misspelled", "DEF-04", "save treats a misspelled capability key (DEF-MISSPELLED-KEY) as a warning and writes the source as is")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "definition.save" and ok(resp) and not resp["result"].get("saved"):
        errs = [d for d in diags(resp) if d["severity"] == "error"]
        if errs and all(d["code"] == "DEF-MISSPELLED-KEY" for d in errs):
            for d in errs:
                d["severity"] = "warning"
            resp["result"]["saved"] = True
            resp["result"]["document"] = src_text(px, req)
    return resp


@bug("def_column_bytes", "DEF-03", "diagnostic columns counted in UTF-8 bytes instead of code points")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in DEF_OPS and ok(resp):
        lines = src_text(px, req).lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for d in diags(resp):
            if d.get("line") and d.get("column") and d["line"] <= len(lines):
                d["column"] = len(lines[d["line"] - 1][: d["column"] - 1].encode("utf-8")) + 1
    return resp


@bug("def_md_line_offset", "DEF-03", "Markdown diagnostics count lines from the first front-matter key (opening --- not counted)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in DEF_OPS and ok(resp) and src_text(px, req).lstrip("\ufeff").startswith("---"):
        for d in diags(resp):
            if d.get("line") and d["line"] > 1:
                d["line"] -= 1
    return resp


@bug("def_dup_key_first", "DEF-03", "DEF-DUPLICATE-KEY located at the first occurrence of the key instead of the repeat")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in DEF_OPS and ok(resp):
        lines = src_text(px, req).replace("\r\n", "\n").split("\n")
        for d in diags(resp):
            if d["code"] == "DEF-DUPLICATE-KEY" and len(d.get("path") or []) == 1:
                k = d["path"][0]
                for i, ln in enumerate(lines):
                    if re.match(r"^%s\s*:" % re.escape(str(k)), ln):
                        d["line"], d["column"] = i + 1, 1
                        break
    return resp


def split_md(doc):
    lines = doc.split("\n")
    if lines and lines[0] == "---":
        for i in range(1, len(lines)):
            if lines[i] in ("---", "..."):
                return lines[: i + 1], lines[i + 1:]
    return None, lines


@bug("def_save_dedent_body", "DEF-04", "save strips the indentation of every line of a multi-line body")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "definition.save" and ok(resp) and resp["result"].get("document"):
        doc = resp["result"]["document"]
        head, body = split_md(doc)
        if head is not None:
            doc = "\n".join(head + [ln.lstrip() for ln in body])
        else:
            out, inprompt = [], False
            for ln in doc.split("\n"):
                if re.match(r"^prompt:\s*[|>]", ln):
                    inprompt = True
                    out.append(ln)
                    continue
                if inprompt and ln.startswith(" "):
                    out.append("  " + ln.lstrip())
                    continue
                inprompt = False
                out.append(ln)
            doc = "\n".join(out)
        resp["result"]["document"] = doc
    return resp


def drop_keys(doc_lines, keep):
    out, skipping = [], False
    for ln in doc_lines:
        m = re.match(r"^([^\s#\-][^:]*):", ln)
        if m and not ln.startswith("---"):
            skipping = m.group(1).strip() not in keep
        elif not (ln.startswith((" ", "\t", "- ")) or ln == "-"):
            skipping = False
        if not skipping:
            out.append(ln)
    return out


@bug("def_save_drops_unknown", "DEF-04", "save drops unknown and foreign top-level keys (model, color, ...)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in ("definition.save", "builtins.copy") and ok(resp) and resp["result"].get("document"):
        doc = resp["result"]["document"]
        head, body = split_md(doc)
        if head is not None:
            doc = "\n".join(drop_keys(head, KNOWN_KEYS) + body)
        else:
            doc = "\n".join(drop_keys(body, KNOWN_KEYS))
        resp["result"]["document"] = doc
    return resp


@bug("def_save_always_markdown", "DEF-04", "save always writes Markdown (front matter + body), even for a YAML source")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in ("definition.save", "builtins.copy") and ok(resp) and resp["result"].get("document"):
        doc = resp["result"]["document"]
        if not doc.startswith("---"):
            import yaml
            try:
                data = yaml.safe_load(doc)
            except Exception:
                return resp
            body = (data or {}).get("prompt") or ""
            lines = drop_keys(doc.split("\n"), [k for k in KNOWN_KEYS if k != "prompt"] + list((data or {}).keys() - {"prompt"}))
            resp["result"]["document"] = "---\n" + "\n".join(lines).rstrip("\n") + "\n---\n\n" + body.rstrip("\n") + "\n"
    return resp


@bug("def_copy_drops_memory", "DEF-07", "copy-as-system-level writes every key except memory")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "builtins.copy" and ok(resp) and resp["result"].get("document"):
        doc = resp["result"]["document"].split("\n")
        resp["result"]["document"] = "\n".join(ln for ln in doc if not ln.startswith("memory:"))
    return resp


@bug("def_builtins_list_no_knowledge", "DEF-07", "builtins.list reports tools/skills/mcp but leaves knowledge empty")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "builtins.list" and ok(resp):
        for b in resp["result"].get("builtins", []):
            b["knowledge"] = []
    return resp


@bug("def_bom_kept", "DEF-01", "a leading UTF-8 BOM is not stripped (it becomes part of the first key)")
def _(px, req, fwd):
    a = A(req)
    if op_of(req) in DEF_OPS:
        if isinstance(a.get("source"), str) and a["source"].startswith("\ufeff"):
            a["source"] = "\u200b" + a["source"][1:]
        elif isinstance(a.get("source_b64"), str):
            raw = base64.b64decode(a["source_b64"])
            if raw.startswith(b"\xef\xbb\xbf"):
                a["source_b64"] = base64.b64encode("\u200b".encode() + raw[3:]).decode()
    return fwd(req)


def src_bytes(a):
    if isinstance(a.get("source"), str):
        return a["source"].encode("utf-8")
    if isinstance(a.get("source_b64"), str):
        try:
            return base64.b64decode(a["source_b64"])
        except Exception:
            return b""
    return b""


@bug("def_size_off_by_one", "DEF-03", "size limit checked with >= : a definition of exactly 1,048,576 bytes is refused")
def _(px, req, fwd):
    if op_of(req) in ("definition.parse", "definition.save") and len(src_bytes(A(req))) == 1048576:
        d = {"code": "DEF-TOO-LARGE", "severity": "error", "message": "the source is too large (1048576 bytes)",
             "path": [], "line": None, "column": None, "requirement": "DEF-03"}
        if op_of(req) == "definition.parse":
            res = {"loaded": False, "definition": None, "tools": [], "tool_resolution": [], "diagnostics": [d]}
        else:
            res = {"saved": False, "document": None, "tools": [], "diagnostics": [d]}
        return {"id": req.get("id"), "ok": True, "result": res}
    return fwd(req)


YAML11 = {"on": True, "off": False, "yes": True, "no": False, "y": True, "n": False, "true": True, "false": False}


@bug("def_yaml11_names", "DEF-01", "tool names go through YAML 1.1 typing: `tools: [on, yes]` become booleans True/False")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "definition.parse" and ok(resp):
        r = resp["result"]
        for row in r.get("tool_resolution", []):
            if row["declared"].lower() in YAML11:
                row["declared"] = str(YAML11[row["declared"].lower()])
        for d in r.get("diagnostics", []):
            d["message"] = re.sub(r"`(on|off|yes|no|y|n|true|false)`", lambda m: "`%s`" % YAML11[m.group(1).lower()], d["message"], flags=re.I)
        if r.get("definition") and isinstance(r["definition"].get("tools"), list):
            r["definition"]["tools"] = [str(YAML11[t.lower()]) if t.lower() in YAML11 else t
                                        for t in r["definition"]["tools"]]
    return resp


@bug("def_crlf_body", "DEF-01", "CRLF line endings are kept in the body (prompt bytes depend on the editor)")
def _(px, req, fwd):
    resp = fwd(req)
    if "\r" in src_text(px, req) and ok(resp):
        r = resp["result"]
        if op_of(req) == "definition.parse" and r.get("definition"):
            r["definition"]["body"] = r["definition"]["body"].replace("\n", "\r\n")
        if op_of(req) == "prompt.assemble":
            for p in r["parts"]:
                if p["kind"] == "body":
                    p["text"] = p["text"].replace("\n", "\r\n")
            rebuild(r)
    return resp


# ============================================================ TOOL
@bug("tool_not_canonical", "TOOL-02", "granted tools are stored/mounted under the declared spelling, not the canonical name")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in COMPILE_OPS and ok(resp):
        p = resp["result"] if op_of(req) == "definition.parse" else px.parse_def(A(req))
        if not p:
            return resp
        m = {}
        for row in p.get("tool_resolution", []):
            if row["status"] == "granted" and row["canonical"] not in m:
                m[row["canonical"]] = row["declared"]
        if op_of(req) == "definition.parse":
            for row in p["tool_resolution"]:
                if row["status"] == "granted":
                    row["canonical"] = row["declared"]
        set_tool_names(px, req, resp, lambda ns: [m.get(n, n) for n in ns])
        if op_of(req) == "tools.mounted":
            for t in resp["result"]["tools"]:
                pass
    return resp


@bug("tool_camel_never_matches", "TOOL-02", "the resolver lower-cases registry names, so camel-case tools (WebFetch, TaskStop) never resolve")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in COMPILE_OPS and ok(resp):
        p = resp["result"] if op_of(req) == "definition.parse" else px.parse_def(A(req))
        if not p:
            return resp
        lost = set()
        for i, row in enumerate(p.get("tool_resolution", [])):
            c = row.get("canonical")
            if c and c != c.lower() and row["status"] in ("granted", "not-in-session"):
                lost.add(c)
                if op_of(req) == "definition.parse":
                    row["status"], row["canonical"] = "unknown", None
                resp["result"].setdefault("diagnostics", []).append(
                    {"code": "TOOL-UNKNOWN", "severity": "warning", "path": ["tools", i], "line": None,
                     "column": None, "requirement": "TOOL-03",
                     "message": "`%s` is not in the grantable-tool registry, so it is not granted." % row["declared"]})
        set_tool_names(px, req, resp, lambda ns: [n for n in ns if n not in lost])
    return resp


def nfkc_fold(s):
    """NFKC-normalise, also through YAML \\uXXXX escapes (the resolver folds decoded names)."""
    s = re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: unicodedata.normalize("NFKC", chr(int(m.group(1), 16))), s)
    return unicodedata.normalize("NFKC", s)


@bug("tool_unicode_fold", "TOOL-02", "tool names compared after Unicode normalisation/case mapping (KELVIN SIGN, fullwidth letters resolve)")
def _(px, req, fwd):
    if op_of(req) in DEF_OPS:
        with_source(req, lambda s: rewrite_block(s, "tools", nfkc_fold))
    return fwd(req)


@bug("tool_session_ignored", "TOOL-03", "condition (b) missing: tools are granted from the registry even when absent from the session tool table")
def _(px, req, fwd):
    if op_of(req) == "world.setup":
        A(req).pop("session_tools", None)
    return fwd(req)


@bug("tool_not_grantable_as_unknown", "TOOL-01", "a deliberately not-grantable tool is reported as TOOL-UNKNOWN, without its reason")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in DEF_OPS and ok(resp):
        for d in diags(resp):
            if d["code"] == "TOOL-NOT-GRANTABLE":
                d["code"], d["requirement"] = "TOOL-UNKNOWN", "TOOL-03"
                d["message"] = "This tool is not in the grantable-tool registry, so it is not granted."
        for row in resp["result"].get("tool_resolution", []) or []:
            if row["status"] == "not-grantable":
                row["status"], row["canonical"] = "unknown", None
    return resp


@bug("tool_dimension_tool_mounts", "TOOL-03", "a dimension tool listed in `tools` (e.g. kb_search) is mounted although its dimension is undeclared")
def _(px, req, fwd):
    resp = fwd(req)
    remember_schemas(px, resp)
    if op_of(req) in COMPILE_OPS and ok(resp):
        p = resp["result"] if op_of(req) == "definition.parse" else px.parse_def(A(req))
        if not p:
            return resp
        extra = []
        for row in p.get("tool_resolution", []):
            if row["status"] == "dimension-tool":
                row["status"] = "granted"
                extra.append(row["canonical"])
        resp["result"]["diagnostics"] = [d for d in diags(resp) if d["code"] != "TOOL-DIMENSION-TOOL"]
        set_tool_names(px, req, resp, lambda ns: ns + [e for e in extra if e not in ns])
    return resp


@bug("tools_absent_inherits", "DEF-01", "`tools` absent is read as 'inherit every session tool' instead of the empty grant")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in COMPILE_OPS and ok(resp):
        p = resp["result"] if op_of(req) == "definition.parse" else px.parse_def(A(req))
        if not p or not p.get("loaded") or p["definition"] is None or p["definition"].get("tools") is not None:
            return resp
        w = px.world or {}
        sess = w.get("session_tools") or w.get("grantable") or ["bash", "read", "write", "edit", "glob", "grep"]
        inherit = [t for t in sess if t not in DIM_TOOLS]
        src = src_text(px, req)
        line = "tools: [%s]" % ", ".join(inherit)
        if src.lstrip("\ufeff").startswith("---"):
            s2 = src.replace("\n", "\n" + line + "\n", 1)
        else:
            s2 = line + "\n" + src
        a2 = {k: v for k, v in A(req).items() if k in ("format", "filename")}
        a2["source"] = s2
        m = px.side("tools.mounted", a2)
        if m:
            px.state.setdefault("schemas", {}).update({t["name"]: t for t in m["tools"]})
            names = [t["name"] for t in m["tools"]]
            set_tool_names(px, req, resp, lambda ns: names)
    return resp


@bug("tool_legacy_fallback_empty", "DEF-05", "a backend without a grantable list (grantable: null) is treated as an empty registry, not the legacy six")
def _(px, req, fwd):
    if op_of(req) == "world.setup" and "grantable" in A(req) and A(req)["grantable"] is None:
        A(req)["grantable"] = []
    return fwd(req)


@bug("tool_dup_silent", "TOOL-04", "a repeated tool is de-duplicated silently (no TOOL-DUPLICATE diagnostic)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in DEF_OPS and ok(resp):
        resp["result"]["diagnostics"] = [d for d in diags(resp) if d["code"] != "TOOL-DUPLICATE"]
    return resp


@bug("world_case_dup_accepted", "TOOL-04", "world.setup accepts a registry with two names equal up to case (keeps the first) instead of world_invalid")
def _(px, req, fwd):
    if op_of(req) == "world.setup" and isinstance(A(req).get("grantable"), list):
        seen, out = set(), []
        for g in A(req)["grantable"]:
            if isinstance(g, str) and fold(g) in seen:
                continue
            seen.add(fold(g) if isinstance(g, str) else g)
            out.append(g)
        A(req)["grantable"] = out
    return fwd(req)


# ============================================================ PROMPT
@bug("prompt_catalog_after_body", "PROMPT-01", "prompt assembled as frame, body, catalog (catalog after the body)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        parts = resp["result"]["parts"]
        order = {"frame": 0, "body": 1}
        parts.sort(key=lambda p: order.get(p["kind"], 2))
        rebuild(resp["result"])
    return resp


@bug("prompt_memory_first", "PROMPT-02", "the resident memory section is rendered first among the catalog sections")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        parts = resp["result"]["parts"]
        order = {"frame": 0, "catalog.memory": 1, "body": 9}
        parts.sort(key=lambda p: order.get(p["kind"], 2))
        rebuild(resp["result"])
    return resp


HEAD = {"skills": ("catalog.skills", "## Skills"), "knowledge": ("catalog.knowledge", "## Knowledge sources"),
        "mcp": ("catalog.mcp", "## MCP servers")}


@bug("prompt_empty_list_heading", "PROMPT-03", "an empty capability list (skills: [], knowledge: [], mcp.servers: []) renders its heading with '(none)'")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        p = px.parse_def(A(req))
        if not p or not p.get("definition"):
            return resp
        d = p["definition"]
        parts = resp["result"]["parts"]
        kinds = [x["kind"] for x in parts]
        for key, (kind, head) in HEAD.items():
            v = d.get(key)
            if key == "mcp":
                v = v.get("servers") if isinstance(v, dict) else None
            if v == [] and kind not in kinds:
                parts.insert(len(parts) - 1, {"kind": kind, "text": head + "\n(none)"})
        order = ["frame", "catalog.skills", "catalog.knowledge", "catalog.mcp", "catalog.memory", "body"]
        parts.sort(key=lambda x: order.index(x["kind"]))
        rebuild(resp["result"])
    return resp


@bug("prompt_frame_not_stripped", "PROMPT-01", "the frame is used with its leading/trailing newlines (not stripped before joining)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp) and isinstance((px.world or {}).get("frame"), str):
        for p in resp["result"]["parts"]:
            if p["kind"] == "frame":
                p["text"] = px.world["frame"]
        rebuild(resp["result"])
    return resp


@bug("prompt_memory_none_blank", "PROMPT-03", "`memory: none` leaves an empty memory slot: one extra blank line before the body")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        p = px.parse_def(A(req))
        if p and p.get("definition") and p["definition"].get("memory") == "none":
            parts = resp["result"]["parts"]
            texts = [x["text"] for x in parts[:-1]] + ["", parts[-1]["text"]]
            resp["result"]["prompt"] = "\n\n".join(texts) + "\n"
    return resp


# ============================================================ SKILL
@bug("skill_unicode_fold", "SKILL-01", "skill names matched with Unicode normalisation (KELVIN SIGN / long s resolve to kit / skill)")
def _(px, req, fwd):
    if op_of(req) in DEF_OPS or op_of(req) == "agent.spawn":
        with_source(req, lambda s: rewrite_block(s, "skills", nfkc_fold))
    if op_of(req) == "tool.call" and A(req).get("tool") == "use_skill":
        a = A(req).get("args")
        if isinstance(a, dict) and isinstance(a.get("name"), str):
            a["name"] = nfkc_fold(a["name"])
    return fwd(req)


@bug("skill_catalog_sorted", "SKILL-04", "skills catalog entries sorted by name instead of declaration order")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        for p in resp["result"]["parts"]:
            if p["kind"] == "catalog.skills":
                lines = p["text"].split("\n")
                head, rest = lines[:2], lines[2:]
                if rest and rest[0].startswith("- name: "):
                    ents = [rest[i:i + 3] for i in range(0, len(rest), 3)]
                    ents.sort(key=lambda e: e[0])
                    p["text"] = "\n".join(head + [x for e in ents for x in e])
        rebuild(resp["result"])
    return resp


@bug("skill_mount_follows_env", "SKILL-02", "use_skill/skill_search mounted only when at least one declared skill is installed")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in ("agent.spawn", "tools.mounted") and ok(resp):
        a = {k: v for k, v in A(req).items() if k in ("source", "source_b64", "format", "filename")}
        pa = px.side("prompt.assemble", a)
        if pa and not any(x["kind"] == "catalog.skills" for x in pa["parts"]):
            set_tool_names(px, req, resp, lambda ns: [n for n in ns if n not in ("use_skill", "skill_search")])
    return resp


def skill_folder(px, agent, name):
    r = px.side("skills.resolved", {"agent": agent})
    if not r:
        return None
    layers = ((px.world or {}).get("skills") or {}).get("layers") or {}
    for s in r["skills"]:
        if fold(s["name"]) == fold(name):
            loc = s["location"]
            m = re.match(r"^([a-z-]+):(.*)/SKILL\.md$", loc)
            if m and m.group(1) in layers:
                base = layers[m.group(1)]
                base = base if os.path.isabs(base) else os.path.join(px.ws(), base)
                return os.path.join(base, m.group(2)), s["name"]
            return os.path.dirname(os.path.join(px.ws(), loc)), s["name"]
    return None


@bug("skill_reference_symlink_escape", "SKILL-05", "reference check is lexical only: a symlink inside the skill folder pointing outside is followed")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("error_code") == "SKILL-REFERENCE-ESCAPE" and \
            env["error_detail"].get("reason") == "resolves-outside-skill-folder":
        a = A(req)["args"]
        f = skill_folder(px, A(req)["agent"], a["name"])
        if f:
            try:
                text = open(os.path.join(f[0], a["reference"]), encoding="utf-8", errors="replace").read()
            except OSError:
                return resp
            resp["result"] = {"ok": True, "content": {"name": f[1], "reference": a["reference"], "text": text}}
    return resp


# ============================================================ KB
def kb_env(req, resp):
    if op_of(req) == "tool.call" and A(req).get("tool") == "kb_search":
        env = envelope(resp)
        if env and env.get("ok"):
            return env["content"]
    return None


@bug("kb_cap_flag_off_by_one", "KB-05", "hit_cap_reached computed as matching_lines >= 50 (true at exactly 50)")
def _(px, req, fwd):
    resp = fwd(req)
    c = kb_env(req, resp)
    if c:
        c["hit_cap_reached"] = c["matching_lines"] >= 50
    return resp


def file_line(px, path, n):
    try:
        data = open(os.path.join(px.ws(), path), "rb").read()
    except OSError:
        return None
    lines = data.split(b"\n")
    if n - 1 >= len(lines):
        return None
    ln = lines[n - 1]
    if ln.endswith(b"\r"):
        ln = ln[:-1]
    return ln.decode("utf-8", "replace")


@bug("kb_text_401", "KB-06", "a long line whose match is near the start is cut to 400 characters plus the ellipsis (401 in all)")
def _(px, req, fwd):
    resp = fwd(req)
    c = kb_env(req, resp)
    if c:
        for h in c["hits"]:
            if h.get("text_truncated") and not h["text"].startswith("\u2026"):
                line = file_line(px, h["path"], h["line"])
                if line:
                    h["text"] = line[:400] + "\u2026"
    return resp


@bug("kb_budget_flag_at_exact", "KB-04", "byte_budget_reached set when bytes_read >= 8 MiB, so an exactly-8-MiB corpus is reported cut")
def _(px, req, fwd):
    resp = fwd(req)
    c = kb_env(req, resp)
    if c:
        c["byte_budget_reached"] = c["bytes_read"] >= BUDGET or c["files_not_read"] > 0 or c["cut_file"] is not None
    return resp


@bug("kb_no_read_unmounts", "KB-08", "knowledge without `read` drops the whole dimension in parse mode (no kb_search, no section)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in ("agent.spawn", "tools.mounted", "prompt.assemble") and ok(resp):
        if any(d["code"] == "KB-REQUIRES-READ" for d in diags(resp)):
            if op_of(req) == "prompt.assemble":
                resp["result"]["parts"] = [p for p in resp["result"]["parts"] if p["kind"] != "catalog.knowledge"]
                rebuild(resp["result"])
            else:
                set_tool_names(px, req, resp, lambda ns: [n for n in ns if n != "kb_search"])
    return resp


def kb_scan_line(line_bytes, terms):
    low = bytes(b + 32 if 65 <= b <= 90 else b for b in line_bytes)
    tm = occ = 0
    for t in terms:
        tb = t.encode("utf-8")
        k = low.count(tb)
        if k:
            tm += 1
            occ += k
    return tm, occ


@bug("kb_symlink_followed", "KB-07", "the walk follows a file symlink whose target is outside the workspace and searches it")
def _(px, req, fwd):
    resp = fwd(req)
    c = kb_env(req, resp)
    if c:
        added = []
        for s in list(c.get("skipped", [])):
            if s["reason"] == "symlink-outside-workspace":
                try:
                    data = open(os.path.join(px.ws(), s["path"]), "rb").read()
                except OSError:
                    continue
                c["skipped"].remove(s)
                c["files_searched"] += 1
                c["bytes_read"] += len(data)
                lines = data.split(b"\n")
                if data.endswith(b"\n"):
                    lines = lines[:-1]
                for i, lb in enumerate(lines):
                    lb = lb[:-1] if lb.endswith(b"\r") else lb
                    tm, occ = kb_scan_line(lb, c["terms"])
                    if tm:
                        txt = lb.decode("utf-8", "replace")
                        added.append({"path": s["path"], "line": i + 1, "text": txt[:400],
                                      "text_truncated": len(txt) > 400, "terms_matched": tm,
                                      "occurrences": occ, "source": (c["hits"][0]["source"] if c["hits"] else "kb")})
        if added:
            hits = c["hits"] + added
            hits.sort(key=lambda h: (-h["terms_matched"], -h["occurrences"], h["path"].encode(), h["line"]))
            c["matching_lines"] += len(added)
            c["hits"] = hits[:50]
            c["hit_cap_reached"] = c["matching_lines"] > 50
    return resp


@bug("kb_escape_wrong_code", "KB-07", "a glob escaping the workspace is reported as KB-GLOB-INVALID instead of KB-SOURCE-OUTSIDE-WORKSPACE")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) in DEF_OPS and ok(resp):
        for d in diags(resp):
            if d["code"] == "KB-SOURCE-OUTSIDE-WORKSPACE":
                d["code"], d["requirement"] = "KB-GLOB-INVALID", "KB-01"
    return resp


# ============================================================ MCP
def mcp_servers(px):
    m = (px.world or {}).get("mcp") or {}
    if isinstance(m.get("mcpServers"), dict):
        return dict(m["mcpServers"])
    if isinstance(m.get("servers"), list):
        return {s["name"]: s for s in m["servers"] if isinstance(s, dict) and "name" in s}
    return {}


def mcp_session(px, server, calls, timeout=8.0):
    """Talk to a configured fake server directly; returns the list of responses."""
    cfg = mcp_servers(px).get(server)
    if not cfg or not cfg.get("command"):
        return []
    env = dict(os.environ)
    env.update(cfg.get("env") or {})
    cwd = os.path.join(px.ws(), cfg.get("cwd") or ".")
    try:
        p = subprocess.Popen([cfg["command"]] + list(cfg.get("args") or []), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    except OSError:
        return []
    out = []

    def send(msg):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()

    def recv():
        r, _, _ = select.select([p.stdout], [], [], timeout)
        if not r:
            return None
        line = p.stdout.readline()
        try:
            return json.loads(line)
        except Exception:
            return None
    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "buggy", "version": "0"}}})
        recv()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i, (method, params) in enumerate(calls):
            send({"jsonrpc": "2.0", "id": i + 2, "method": method, "params": params})
            out.append(recv())
    except Exception:
        pass
    finally:
        try:
            p.stdin.close()
            p.wait(timeout=5)
        except Exception:
            p.kill()
    return out


def granted_servers(px, agent):
    spawn = px.agents.get(agent)
    if not spawn:
        return {}
    p = px.parse_def(spawn)
    if not p or not p.get("definition") or not p["definition"].get("mcp"):
        return {}
    conf = mcp_servers(px)
    out = {}
    for name in p["definition"]["mcp"].get("servers") or []:
        for c in conf:
            if fold(c) == fold(name.strip()):
                out[c] = conf[c]
    return out


def direct_call(px, req, server, tool):
    args = A(req)["args"].get("arguments") or {}
    res = mcp_session(px, server, [("tools/call", {"name": tool, "arguments": args})])
    r = res[0] if res else None
    if not r or "result" not in r:
        return err_env("MCP-SERVER-ERROR", "the server answered an error", {"rpc_code": (r or {}).get("error", {}).get("code")}, False)
    if r["result"].get("isError"):
        return err_env("MCP-TOOL-ERROR", "tool error", {}, None)
    return {"ok": True, "content": {"content": r["result"].get("content", [])}}


def mcp_call_target(px, req):
    if op_of(req) != "tool.call" or A(req).get("tool") != "mcp_call":
        return None
    a = A(req).get("args")
    if not isinstance(a, dict) or not isinstance(a.get("name"), str) or "__" not in a["name"]:
        return None
    s, t = a["name"].split("__", 1)
    g = granted_servers(px, A(req).get("agent"))
    if s not in g:
        return None
    cfg = g[s]
    if cfg.get("enabled") is False or cfg.get("configured") is False:
        return None
    return s, t, cfg


@bug("mcp_ignores_tier", "MCP-03", "the MCP call path skips the approval decision: tools off the allow-list run directly, no card")
def _(px, req, fwd):
    t = mcp_call_target(px, req)
    if t and t[1] not in (t[2].get("allow") or []) and isinstance(A(req)["args"].get("arguments", {}), dict):
        return {"id": req.get("id"), "ok": True, "result": direct_call(px, req, t[0], t[1])}
    return fwd(req)


@bug("mcp_allowlist_casefold", "MCP-03", "the approval allow-list is matched case-insensitively (search_pages pre-approves Search_Pages)")
def _(px, req, fwd):
    t = mcp_call_target(px, req)
    if t:
        allow = t[2].get("allow") or []
        if t[1] not in allow and fold(t[1]) in [fold(x) for x in allow]:
            return {"id": req.get("id"), "ok": True, "result": direct_call(px, req, t[0], t[1])}
    return fwd(req)


@bug("mcp_refusal_contacts_server", "MCP-02", "before refusing an undeclared server the gateway initializes it and lists its tools")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("error_code") == "MCP-SERVER-NOT-GRANTED":
        s = env["error_detail"].get("server")
        for c in mcp_servers(px):
            if isinstance(s, str) and fold(c) == fold(s):
                mcp_session(px, c, [("tools/list", {})])
    return resp


@bug("mcp_refusal_lists_configured", "MCP-02", "the refusal lists every configured server, not only the granted ones")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("error_code") == "MCP-SERVER-NOT-GRANTED":
        gs = env["error_detail"].setdefault("granted_servers", [])
        have = {g["name"] for g in gs}
        for c, cfg in mcp_servers(px).items():
            if c not in have:
                gs.append({"name": c, "status": "ready"})
        gs.sort(key=lambda g: g["name"])
        msg = env["error_message"]
        i = msg.find("Granted MCP servers:")
        if i < 0:
            i = msg.find("This agent is granted no MCP servers.")
        if i >= 0:
            env["error_message"] = msg[:i] + "Granted MCP servers: " + ", ".join(g["name"] for g in gs) + "."
    return resp


@bug("mcp_model_name_casefold", "MCP-01", "names from the model (mcp_call/mcp_describe) are matched ASCII-case-insensitively (NOTION__x reaches notion)")
def _(px, req, fwd):
    if op_of(req) == "tool.call" and A(req).get("tool") in ("mcp_call", "mcp_describe"):
        a = A(req).get("args")
        if isinstance(a, dict) and isinstance(a.get("name"), str) and "__" in a["name"]:
            s, t = a["name"].split("__", 1)
            for c in mcp_servers(px):
                if c != s and fold(c) == fold(s):
                    a["name"] = c + "__" + t
    return fwd(req)


@bug("mcp_disabled_unknown", "MCP-04", "a disabled/unconfigured server is treated as unknown: not granted, no catalog line, MCP-UNKNOWN-SERVER")
def _(px, req, fwd):
    resp = fwd(req)
    if ok(resp):
        for d in diags(resp):
            if d["code"] == "MCP-NOT-CONFIGURED":
                d["code"] = "MCP-UNKNOWN-SERVER"
                d["message"] = "MCP server does not exist in the MCP configuration; remove it from mcp.servers."
        if op_of(req) == "prompt.assemble":
            parts = resp["result"]["parts"]
            for p in parts:
                if p["kind"] == "catalog.mcp":
                    ls = [ln for ln in p["text"].split("\n") if not (ln.startswith("- ") and ("(disabled" in ln or "(not configured" in ln))]
                    p["text"] = "\n".join(ls)
                    if len(ls) <= 2:
                        parts.remove(p)
            rebuild(resp["result"])
    env = envelope(resp)
    if env and env.get("error_code") == "MCP-NOT-CONFIGURED":
        s = A(req)["args"].get("name", "").split("__", 1)[0]
        resp["result"] = err_env("MCP-SERVER-NOT-GRANTED",
                                 "MCP server '%s' is not granted to this agent; it was not contacted. This agent is granted no MCP servers." % s,
                                 {"server": s, "granted_servers": []})
    return resp


@bug("mcp_search_shared_gateway", "MCP-01", "mcp_search goes through the shared gateway: tools of every configured server are listed")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("ok") and A(req).get("tool") == "mcp_search":
        g = granted_servers(px, A(req).get("agent"))
        q = (A(req).get("args") or {}).get("query") or ""
        terms = [fold(t) for t in q.split()]
        tools = env["content"]["tools"]
        for s, cfg in mcp_servers(px).items():
            if s in g or cfg.get("enabled") is False or cfg.get("configured") is False:
                continue
            res = mcp_session(px, s, [("tools/list", {})])
            for t in ((res[0] or {}).get("result") or {}).get("tools", []) if res else []:
                qn = s + "__" + t["name"]
                hay = fold(qn + " " + (t.get("description") or ""))
                if all(x in hay for x in terms):
                    tools.append({"name": qn, "description": t.get("description") or "",
                                  "runs_directly": t["name"] in (cfg.get("allow") or [])})
        tools.sort(key=lambda t: t["name"])
        env["content"]["tools"] = tools[:50]
    return resp


@bug("mcp_catalog_declared_order", "MCP-01", "MCP catalog lists granted servers in declaration order, not code-point order")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        p = px.parse_def(A(req))
        decl = [fold(x.strip()) for x in ((p or {}).get("definition") or {}).get("mcp", {}).get("servers", [])] \
            if p and p.get("definition") and p["definition"].get("mcp") else []
        for part in resp["result"]["parts"]:
            if part["kind"] == "catalog.mcp":
                ls = part["text"].split("\n")
                head, items = ls[:2], ls[2:]

                def key(ln):
                    nm = fold(re.split(r"[ :]", ln[2:], 1)[0])
                    return decl.index(nm) if nm in decl else 999
                items.sort(key=key)
                part["text"] = "\n".join(head + items)
        rebuild(resp["result"])
    return resp


# ============================================================ APPR
@bug("appr_unattended_asks", "APPR-01", "unattended sessions still raise cards (ask is not turned into deny)")
def _(px, req, fwd):
    op = op_of(req)
    a = A(req)
    if op == "approval.setup" and a.get("attendance") == "unattended":
        a["attendance"] = "attended"
        px.state["fake_unatt"] = True
    elif op == "approval.setup":
        px.state["fake_unatt"] = False
    if op == "world.setup":
        px.state["fake_unatt"] = False
    if op == "approval.decide" and a.get("attendance") == "unattended":
        a["attendance"] = "attended"
    resp = fwd(req)
    if px.state.get("fake_unatt") and ok(resp):
        walk(resp["result"], lambda d: d.update(attendance="unattended") if "attendance" in d and "tier" in d else None)
    return resp


@bug("appr_autoedit_bash_anywhere", "APPR-01", "auto-edit treats bash like an edit: allowed in writable roots and outside")
def _(px, req, fwd):
    op = op_of(req)
    a = A(req)
    if op == "approval.decide" and a.get("tier") == "auto-edit" and a.get("action") == "bash" \
            and a.get("target") in ("outside", "inside-writable-root"):
        return {"id": req.get("id"), "ok": True, "result": {
            "verdict": "allow", "reason": "auto-edit: runs without confirmation",
            "rule": "auto-edit/bash/%s/%s" % (a.get("target"), a.get("attendance") or "attended")}}
    if op == "tool.call" and a.get("tool") == "bash" and px.state.get("tier") == "auto-edit":
        ca = a.get("args")
        if isinstance(ca, dict) and isinstance(ca.get("cwd"), str):
            ca.pop("cwd")
    resp = fwd(req)
    track_policy(px, req, resp)
    return resp


@bug("appr_read_ungated", "APPR-01", "`read` is not an approval item: reads outside the workspace run without asking")
def _(px, req, fwd):
    a = A(req)
    if op_of(req) == "tool.call" and a.get("tool") == "read" and isinstance((a.get("args") or {}).get("path"), str) \
            and px.state.get("tier") != "full-access" and "read" in px.removed.get(a.get("agent"), {"read"}) is False:
        pass
    if op_of(req) == "tool.call" and a.get("tool") == "read" and isinstance((a.get("args") or {}).get("path"), str):
        spawn = px.agents.get(a.get("agent"))
        if spawn is not None:
            rp, outside = resolve_outside(px, a["args"]["path"])
            if outside:
                mounted = px.state.get("mounted", {}).get(a.get("agent"), [])
                if "read" in mounted:
                    try:
                        text = open(rp, encoding="utf-8", errors="replace").read()
                        env = {"ok": True, "content": {"lines": text.split("\n"), "offset": 1,
                                                       "path": a["args"]["path"], "truncated": False}}
                    except OSError:
                        env = err_env("not_found", "`%s` is not a file" % a["args"]["path"],
                                      {"path": a["args"]["path"]}, None)
                    return {"id": req.get("id"), "ok": True, "result": env}
    resp = fwd(req)
    track_policy(px, req, resp)
    if op_of(req) == "agent.spawn" and ok(resp):
        px.state.setdefault("mounted", {})[resp["result"]["agent"]] = resp["result"]["tools"]
    return resp


@bug("appr_existence_leak", "APPR-01", "read checks that the file exists before the approval decision (a missing outside file answers not_found, no card)")
def _(px, req, fwd):
    a = A(req)
    if op_of(req) == "tool.call" and a.get("tool") == "read" and isinstance((a.get("args") or {}).get("path"), str) \
            and "read" in px.state.get("mounted", {}).get(a.get("agent"), []):
        rp, outside = resolve_outside(px, a["args"]["path"])
        if outside and not os.path.exists(rp):
            return {"id": req.get("id"), "ok": True, "result": err_env(
                "not_found", "`%s` is not a file" % a["args"]["path"], {"path": a["args"]["path"]}, None)}
    resp = fwd(req)
    track_policy(px, req, resp)
    if op_of(req) == "agent.spawn" and ok(resp):
        px.state.setdefault("mounted", {})[resp["result"]["agent"]] = resp["result"]["tools"]
    return resp


@bug("appr_origin_not_subagent", "APPR-02", "cards raised by subagents are tagged as the parent's own (origin.subagent false)")
def _(px, req, fwd):
    resp = fwd(req)
    if ok(resp):
        walk(resp["result"], lambda d: d.update(subagent=False) if "agent_id" in d and "subagent" in d else None)
    return resp


@bug("appr_taskstop_leaves_pending", "APPR-04", "TaskStop kills the subagent but leaves its pending cards pending")
def _(px, req, fwd):
    if op_of(req) == "task.stop":
        return {"id": req.get("id"), "ok": True, "result": {"settled": [], "results": []}}
    return fwd(req)


@bug("appr_stopped_mislabel", "APPR-04", "a stopped agent's later gated calls answer APPROVAL-DENIED instead of AGENT-STOPPED")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("error_code") == "AGENT-STOPPED":
        env["error_code"] = "APPROVAL-DENIED"
    return resp


def pull_ops():
    return ("snapshot.pull", "parent.request.start")


@bug("appr_pull_redelivers", "APPR-05", "a pull hands out every pending card that was pulled before, again (not exactly once)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "world.setup":
        px.state["pulled"] = []
    if op_of(req) in pull_ops() and ok(resp):
        prev = px.state.setdefault("pulled", [])
        cur = px.side("cards.list", {}) or {"cards": []}
        byid = {c["id"]: c for c in cur["cards"]}
        got = [c["id"] for c in resp["result"]["delivered"]]
        for cid in prev:
            if cid not in got and byid.get(cid, {}).get("state") == "pending":
                resp["result"]["delivered"].append(byid[cid])
        prev.extend(x for x in got if x not in prev)
    return resp


@bug("appr_pull_delivers_settled", "APPR-05", "cards settled by TaskStop before any pull are still delivered by the next pull")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "world.setup":
        px.state["settled_undelivered"] = []
    if op_of(req) == "task.stop" and ok(resp):
        for c in resp["result"].get("settled", []):
            if c.get("delivered") is None:
                px.state.setdefault("settled_undelivered", []).append(c)
    if op_of(req) in pull_ops() and ok(resp):
        for c in px.state.get("settled_undelivered", []):
            c = dict(c, delivered="pulled")
            resp["result"]["delivered"].append(c)
        px.state["settled_undelivered"] = []
    return resp


@bug("appr_pushed_when_not_live", "APPR-05", "cards raised with no live parent request are marked pushed and never delivered by a pull")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "world.setup":
        px.state["fake_pushed"] = set()
    fp = px.state.setdefault("fake_pushed", set())
    env = envelope(resp)
    if env and env.get("error_code") == "APPROVAL-PENDING":
        card = env["error_detail"].get("card") or {}
        if card.get("delivered") is None:
            fp.add(card.get("id"))
    if ok(resp):
        if op_of(req) in pull_ops():
            resp["result"]["delivered"] = [c for c in resp["result"]["delivered"] if c["id"] not in fp]
        walk(resp["result"], lambda d: d.update(delivered="pushed") if d.get("id") in fp and "delivered" in d else None)
    return resp


# ============================================================ MEM
MEM_SCHEMA = {"memory_write": ["file", "content", "daily"], "memory_read": ["file", "daily"], "memory_search": ["query"]}


@bug("mem_unknown_args_ignored", "MEM-03", "memory tools ignore arguments their schema does not define (scope, dir ...) instead of refusing them")
def _(px, req, fwd):
    a = A(req)
    if op_of(req) == "tool.call" and a.get("tool") in MEM_SCHEMA and isinstance(a.get("args"), dict):
        a["args"] = {k: v for k, v in a["args"].items() if k in MEM_SCHEMA[a["tool"]]}
    if op_of(req) == "tool.call_many":
        for c in a.get("calls") or []:
            if isinstance(c, dict) and c.get("tool") in MEM_SCHEMA and isinstance(c.get("args"), dict):
                c["args"] = {k: v for k, v in c["args"].items() if k in MEM_SCHEMA[c["tool"]]}
    return fwd(req)


def mem_dir(px, args):
    p = px.parse_def(args)
    if not p or not p.get("definition"):
        return None
    d = p["definition"]
    m = ((px.world or {}).get("memory") or {})
    if d.get("memory") == "private":
        return os.path.join(px.ws(), m.get("subagent_root", ".capconf/memory/agents"), (d.get("name") or "").lower())
    if d.get("memory") == "shared":
        return os.path.join(px.ws(), m.get("main_dir", ".capconf/memory/main"))
    return None


def mem_part(resp):
    for p in resp["result"].get("parts", []):
        if p["kind"] == "catalog.memory":
            return p
    return None


def block_of(d, name):
    try:
        data = open(os.path.join(d, name), "rb").read()
    except OSError:
        return None, 0
    txt = data.decode("utf-8", "replace").rstrip("\n")
    return ("### %s\n%s" % (name, txt)) if txt else ("### %s" % name), len(data)


@bug("mem_file_budget_strict", "MEM-05", "per-file resident budget checked with < 4096: a file of exactly 4096 bytes is left out")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        part = mem_part(resp)
        d = mem_dir(px, A(req)) if part else None
        if part and d and os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                blk, size = block_of(d, name)
                if blk and size == 4096 and blk in part["text"]:
                    part["text"] = part["text"].replace(
                        blk, "- `%s` omitted: 4096 bytes is over the 4096-byte per-file budget; use memory_read." % name)
            rebuild(resp["result"])
    return resp


@bug("mem_section_stops_at_overflow", "MEM-05", "resident section stops at the first file that overflows 12288 bytes (no first fit for later, smaller files)")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        part = mem_part(resp)
        d = mem_dir(px, A(req)) if part else None
        if part and d and os.path.isdir(d):
            i = part["text"].find("would take the section over")
            if i >= 0:
                head, tail = part["text"][:i], part["text"][i:]
                for name in sorted(os.listdir(d)):
                    blk, size = block_of(d, name)
                    if blk and blk in tail:
                        tail = tail.replace(blk, "- `%s` omitted: %d bytes would take the section over its 12288-byte budget; use memory_read." % (name, size))
                part["text"] = head + tail
                rebuild(resp["result"])
    return resp


@bug("mem_daily_injected", "MEM-06", "daily files are injected into the Memory section like root files")
def _(px, req, fwd):
    resp = fwd(req)
    if op_of(req) == "prompt.assemble" and ok(resp):
        part = mem_part(resp)
        d = mem_dir(px, A(req)) if part else None
        dd = os.path.join(d, "daily") if d else None
        if part and dd and os.path.isdir(dd) and not os.path.islink(dd):
            blocks = []
            for name in sorted(os.listdir(dd)):
                if name.endswith(".md"):
                    blk, size = block_of(dd, name)
                    if blk:
                        blocks.append(blk.replace("### ", "### daily/", 1))
            if blocks:
                part["text"] = part["text"].replace("\n\n(no resident memory files)", "") + "\n\n" + "\n\n".join(blocks)
                rebuild(resp["result"])
    return resp


@bug("mem_mode_case_sensitive", "MEM-01", "memory mode matched case-sensitively: `memory: Private` is DEF-BAD-MEMORY-MODE (counts as none)")
def _(px, req, fwd):
    def fix(s):
        def sub(m):
            v = m.group(2)
            if v.strip().lower() in ("none", "private", "shared") and v.strip() != v.strip().lower():
                return m.group(1) + "x" + v[1:]
            return m.group(0)
        return re.sub(r"(?m)^(memory:[ \t]*)(\S+)", sub, s)
    if op_of(req) in DEF_OPS:
        with_source(req, fix)
    return fwd(req)


@bug("mem_shared_warning", "MEM-01", "the memory: shared consent notice is a warning instead of info")
def _(px, req, fwd):
    resp = fwd(req)
    for d in diags(resp):
        if d["code"] == "MEM-SHARED-CONSENT":
            d["severity"] = "warning"
    return resp


@bug("mem_call_many_reorders", "MEM-07", "tool.call_many runs one agent's calls on a pool, so they land in reverse order")
def _(px, req, fwd):
    if op_of(req) == "tool.call_many" and isinstance(A(req).get("calls"), list):
        calls = A(req)["calls"]
        by = {}
        for i, c in enumerate(calls):
            by.setdefault(json.dumps(c.get("agent") if isinstance(c, dict) else None), []).append(i)
        perm = list(range(len(calls)))  # new position p holds original call perm[p]
        for idx in by.values():
            for p, q in zip(idx, reversed(idx)):
                perm[p] = q
        A(req)["calls"] = [calls[q] for q in perm]
        resp = fwd(req)
        if ok(resp):
            res = resp["result"]["results"]
            back = [None] * len(res)
            for p, q in enumerate(perm):
                back[q] = res[p]
            resp["result"]["results"] = back
        return resp
    return fwd(req)


@bug("mem_search_daily_first", "MEM-06", "memory_search ranks daily files before root files on ties")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("ok") and A(req).get("tool") == "memory_search":
        env["content"]["hits"].sort(key=lambda h: (-h["terms_matched"], -h["occurrences"], not h["daily"], h["file"], h["line"]))
    return resp


@bug("mem_main_switch_gates", "MEM-08", "the main memory's global switch (main_enabled, default off) also disables subagent memory")
def _(px, req, fwd):
    resp = fwd(req)
    if ok(resp) and not ((px.world or {}).get("memory") or {}).get("main_enabled"):
        if op_of(req) in ("agent.spawn", "tools.mounted"):
            set_tool_names(px, req, resp, lambda ns: [n for n in ns if not n.startswith("memory_")])
        if op_of(req) == "prompt.assemble":
            resp["result"]["parts"] = [p for p in resp["result"]["parts"] if p["kind"] != "catalog.memory"]
            rebuild(resp["result"])
    return resp


@bug("mem_hardlink_read", "MEM-10", "memory_read opens a file with several hard links (only symlinks are refused)")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("error_code") == "MEM-NOT-REGULAR-FILE" and env["error_detail"].get("kind") == "hard_linked" \
            and A(req).get("tool") == "memory_read":
        d = mem_dir(px, px.agents.get(A(req)["agent"]) or {})
        a = A(req)["args"]
        if d:
            path = os.path.join(d, "daily", a["file"]) if a.get("daily") else os.path.join(d, a["file"])
            try:
                data = open(path, "rb").read()
            except OSError:
                return resp
            resp["result"] = {"ok": True, "content": {"file": a["file"], "daily": bool(a.get("daily")),
                                                      "content": data[:65536].decode("utf-8", "replace"),
                                                      "size": len(data), "truncated": len(data) > 65536}}
    return resp


# ============================================================ CALL / PROTO
@bug("call_not_mounted_no_list", "CALL-03", "tool_not_mounted refusals omit the list of mounted tools")
def _(px, req, fwd):
    resp = fwd(req)
    env = envelope(resp)
    if env and env.get("error_code") == "tool_not_mounted":
        env["error_detail"].pop("mounted", None)
    return resp


@bug("call_retry_key_missing", "CALL-03", "error envelopes omit retry_after_ms when it does not apply (instead of null)")
def _(px, req, fwd):
    resp = fwd(req)
    if ok(resp):
        walk(resp["result"], lambda d: d.pop("retry_after_ms") if "error_code" in d and d.get("retry_after_ms") is None and "retry_after_ms" in d else None)
    return resp


@bug("proto_bad_request_as_not_impl", "PROTO-03", "malformed requests (missing argument, args not an object) are answered not_implemented")
def _(px, req, fwd):
    resp = fwd(req)
    if not resp.get("ok") and (resp.get("error") or {}).get("code") == "bad_request":
        resp["error"]["code"] = "not_implemented"
    return resp


AGENT_RE = re.compile(r"^agent-(\d+)$")


def map_agent_ids(px, req, fwd, ext_of):
    """Rename agent ids with ext_of(internal_id, counter) consistently in both directions."""
    st = px.state.setdefault("ids", {"i2e": {}, "e2i": {}, "n": 0})
    if op_of(req) == "world.setup":
        st["i2e"], st["e2i"] = {}, {}

    def to_int(v):
        return st["e2i"].get(v, v) if isinstance(v, str) else v
    a = A(req)
    for k in ("agent", "parent"):
        if k in a:
            a[k] = to_int(a[k])
    for c in a.get("calls") or [] if isinstance(a.get("calls"), list) else []:
        if isinstance(c, dict) and "agent" in c:
            c["agent"] = to_int(c["agent"])
    resp = fwd(req)
    if op_of(req) == "world.setup" and ok(resp):
        st["reset"] = True
    if op_of(req) == "agent.spawn" and ok(resp):
        i = resp["result"]["agent"]
        st["n"] += 1
        e = ext_of(i, st)
        st["i2e"][i], st["e2i"][e] = e, i

    def fix(d):
        for k, v in list(d.items()):
            if isinstance(v, str) and v in st["i2e"] and k in ("agent", "agent_id"):
                d[k] = st["i2e"][v]
    if isinstance(resp.get("result"), dict):
        walk(resp["result"], fix)
        # tool_not_mounted etc. carry the agent in messages; ids in free text are left alone
    return resp


@bug("proto_agent_ids_not_reset", "PROTO-02", "agent ids are not restarted by world.setup (a process-wide counter)")
def _(px, req, fwd):
    return map_agent_ids(px, req, fwd, lambda i, st: "agent-%d" % st["n"])

"""eyes4a: wrong runtimes for DEF, TOOL, PROMPT, SKILL, KB, MCP, APPR-01..05, MEM.

Each bug is `fn(px, req, fwd) -> response dict`, registered in BUGS with a one-line
description in DESCR.  Written from SPEC.md, the schemas and the golden transcript only.
"""
import base64
import copy
import json
import os
import re
import unicodedata

BUGS = {}
DESCR = {}

COMPILE_OPS = ("definition.parse", "prompt.assemble", "tools.mounted", "agent.spawn")
DEF_OPS = COMPILE_OPS + ("definition.save",)
SRC_OPS = DEF_OPS + ("memory.locate", "editor.edit", "editor.unknown_names")
WS_CHARS = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
            "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def bug(name, req, text):
    def deco(fn):
        BUGS[name] = fn
        DESCR[name] = (req, text)
        return fn
    return deco


# ---------------------------------------------------------------- helpers
def A(req):
    a = req.get("args")
    return a if isinstance(a, dict) else {}


def ok(resp):
    return bool(resp.get("ok")) and isinstance(resp.get("result"), dict)


def R(resp):
    return resp["result"] if ok(resp) else None


def is_call(req, *tools):
    return req.get("op") == "tool.call" and A(req).get("tool") in tools


def env_err(code, message, detail, terminal=True):
    return {"ok": False, "error_code": code, "error_message": message,
            "error_detail": detail, "terminal_for_attempt": terminal, "retry_after_ms": None}


def reply(req, result):
    return {"id": req.get("id"), "ok": True, "result": result}


def fold(s):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def st(px):
    """Bug state, forgotten on every successful world.setup (see wrap)."""
    return px.state.setdefault("b", {})


def track(px, req, resp):
    if req.get("op") == "world.setup" and ok(resp):
        px.state["b"] = {}
    if req.get("op") == "approval.setup" and ok(resp):
        st(px)["policy"] = resp["result"]["policy"]


def policy(px):
    return st(px).get("policy") or {"tier": "confirm-before-change", "attendance": "attended",
                                     "ask_policy": "ask-parent", "writable_roots": []}


def deep_map_str(obj, fn):
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, list):
        return [deep_map_str(x, fn) for x in obj]
    if isinstance(obj, dict):
        return {deep_map_str(k, fn): deep_map_str(v, fn) for k, v in obj.items()}
    return obj


def deep_replace(obj, pairs):
    def fn(s):
        for a, b in pairs:
            s = s.replace(a, b)
        return s
    return deep_map_str(obj, fn)


def get_source(args):
    if isinstance(args.get("source"), str):
        return args["source"]
    if isinstance(args.get("source_b64"), str):
        try:
            return base64.b64decode(args["source_b64"]).decode("utf-8")
        except Exception:
            return None
    return None


def set_source(req, text):
    req = copy.deepcopy(req)
    a = req["args"]
    if "source" in a:
        a["source"] = text
    else:
        raw = base64.b64decode(a["source_b64"])
        bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
        a["source_b64"] = base64.b64encode(bom + text.lstrip("\ufeff").encode("utf-8")).decode()
    return req


def side_parse(px, args, mode="parse"):
    a = {k: v for k, v in args.items() if k in ("source", "source_b64", "format", "filename")}
    a["mode"] = mode
    return px.side("definition.parse", a)


def agent_args(px, agent):
    return px.agents.get(agent)


def agent_def(px, agent):
    a = agent_args(px, agent)
    if not a:
        return None
    key = ("def", agent)
    c = st(px)
    if key not in c:
        c[key] = side_parse(px, a)
    return c[key]


def workspace(px):
    return (px.world or {}).get("workspace")


def ws_path(px, rel):
    return os.path.join(workspace(px), rel)


def mem_dir(px, agent):
    a = agent_args(px, agent)
    if not a:
        return None
    la = {k: v for k, v in a.items() if k in ("source", "source_b64", "format", "filename")}
    r = px.side("memory.locate", la)
    if not r or not r.get("directory"):
        return None
    return ws_path(px, r["directory"])


def is_markdown(args, text):
    fmt = args.get("format") or "auto"
    if fmt == "markdown":
        return True
    if fmt == "yaml":
        return False
    fn = args.get("filename") or ""
    low = fn.lower()
    if low.endswith((".md", ".markdown")):
        return True
    if low.endswith((".yaml", ".yml")):
        return False
    t = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = t.split("\n")
    return bool(lines) and lines[0].rstrip() == "---" and any(l.rstrip() == "---" for l in lines[1:])


def rebuild_prompt(result):
    result["prompt"] = ("\n\n".join(p["text"] for p in result["parts"]) + "\n") if result["parts"] else ""


def top_blocks(text):
    """[(key, start_line_index, end_line_index_exclusive)] of a YAML mapping's top-level keys."""
    lines = text.split("\n")
    out = []
    for i, ln in enumerate(lines):
        m = re.match(r"^([^\s#:'\"\-][^:]*?)\s*:(\s|$)", ln)
        if m and not ln.startswith(("---", "...")):
            out.append([m.group(1), i, None])
    for j, b in enumerate(out):
        end = out[j + 1][1] if j + 1 < len(out) else len(lines)
        # stop at a markdown closing line
        for k in range(b[1] + 1, end):
            if lines[k].rstrip() in ("---", "..."):
                end = k
                break
        b[2] = end
    return lines, out


def split_md(text):
    """(front matter lines incl. delimiters, body text) of a Markdown source, or None."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") in ("---", "..."):
            return "\n".join(lines[:i + 1]), "\n".join(lines[i + 1:])
    return None


def wrap(fn):
    def inner(px, req, fwd):
        resp = fn(px, req, fwd)
        if resp is None:
            resp = fwd(req)
        track(px, req, resp)
        return resp
    inner.__name__ = fn.__name__
    return inner


def reg(name, requirement, text):
    def deco(fn):
        BUGS[name] = wrap(fn)
        DESCR[name] = (requirement, text)
        return fn
    return deco


def diag(code, severity, message, path, line=None, column=None, requirement=None):
    return {"code": code, "severity": severity, "message": message, "path": path,
            "line": line, "column": column, "requirement": requirement}


# ---------------------------------------------------------------- distances
def osa(a, b):
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            c = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + c)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def lev(a, b):
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[len(b)]


TARGETS = ["name", "description", "tools", "skills", "mcp", "knowledge", "memory", "prompt",
           "servers", "mcp_servers", "mcp.servers"]


def suggest(key, dist, inclusive=False):
    k = fold(key)
    for t in TARGETS:
        dd = dist(k, t)
        if dd <= 2 and (dd <= len(t) / 2 if inclusive else dd < len(t) / 2):
            return "mcp.servers" if t == "servers" else t
    return None


# ================================================================= DEF
def _body_lstrip_source(text):
    sp = split_md(text)
    if sp is None:
        return None
    fm, body = sp
    lines = body.split("\n")
    for i, ln in enumerate(lines):
        if ln.strip(WS_CHARS):
            lines[i] = ln.lstrip(" \t")
            break
    return fm + "\n" + "\n".join(lines)


@reg("def_body_lstrip", "DEF-01",
     "body normalised with a full strip(): the indentation of the body's first line is lost "
     "(only leading blank lines and trailing whitespace may be removed)")
def _(px, req, fwd):
    op = req.get("op")
    if op not in DEF_OPS:
        return None
    a = A(req)
    text = get_source(a)
    if text is None:
        return None
    if is_markdown(a, text):
        new = _body_lstrip_source(text.replace("\r\n", "\n") if "\r\n" in text else text)
        if new is not None and new != text:
            return fwd(set_source(req, new))
        return None
    resp = fwd(req)
    r = R(resp)
    if r and op == "definition.parse" and r.get("definition") and isinstance(r["definition"].get("body"), str):
        r["definition"]["body"] = r["definition"]["body"].lstrip(" \t")
    if r and op == "prompt.assemble":
        for p in r["parts"]:
            if p["kind"] == "body":
                p["text"] = p["text"].lstrip(" \t")
        r["parts"] = [p for p in r["parts"] if p["text"]]
        rebuild_prompt(r)
    return resp


def _swap_dup_blocks(text):
    lines, blocks = top_blocks(text)
    seen = {}
    for b in blocks:
        seen.setdefault(b[0], []).append(b)
    for key, bl in seen.items():
        if len(bl) > 1:
            first, last = bl[0], bl[-1]
            fl = lines[first[1]:first[2]]
            ll = lines[last[1]:last[2]]
            if len(fl) != len(ll):
                return None
            lines[first[1]:first[2]] = ll
            lines[last[1]:last[2]] = fl
            return "\n".join(lines)
    return None


@reg("def_dup_key_last_wins", "DEF-03",
     "a key written twice is reported (DEF-DUPLICATE-KEY at the repeat) but the LAST value is used, "
     "as PyYAML / JS yaml maps do")
def _(px, req, fwd):
    if req.get("op") not in SRC_OPS:
        return None
    a = A(req)
    text = get_source(a)
    if text is None or "\r" in text:
        return None
    if is_markdown(a, text):
        sp = split_md(text)
        if not sp:
            return None
        new = _swap_dup_blocks(sp[0])
        if new is None:
            return None
        return fwd(set_source(req, new + "\n" + sp[1]))
    new = _swap_dup_blocks(text)
    return fwd(set_source(req, new)) if new else None


def _rename_keys(px, req, fwd, pick):
    """Rename top-level keys chosen by pick(key) -> bool to placeholders, forward, restore."""
    a = A(req)
    text = get_source(a)
    if text is None:
        return None
    lines, blocks = top_blocks(text if not is_markdown(a, text) else (split_md(text) or ("",))[0])
    pairs = []
    for i, b in enumerate(blocks):
        if pick(b[0]):
            ph = "qzxqzxk%d" % i
            lines[b[1]] = ph + lines[b[1]][len(b[0]):]
            pairs.append((ph, b[0]))
    if not pairs:
        return None
    if is_markdown(a, text):
        new = "\n".join(lines) + "\n" + split_md(text)[1]
    else:
        new = "\n".join(lines)
    resp = fwd(set_source(req, new))
    return deep_replace(resp, pairs)


@reg("def_misspelled_levenshtein", "DEF-04",
     "misspelled keys found with plain Levenshtein distance (no adjacent swap): `mpc`, `nmae` are "
     "reported DEF-UNKNOWN-KEY and save accepts them")
def _(px, req, fwd):
    if req.get("op") not in SRC_OPS:
        return None

    def pick(k):
        if fold(k) in TARGETS or fold(k) in ("model", "color") or k in ("model", "color"):
            return False
        return suggest(k, osa) is not None and suggest(k, lev) is None
    return _rename_keys(px, req, fwd, pick)


@reg("def_foreign_key_casefold", "DEF-06",
     "foreign keys matched case-insensitively: `Model:`/`COLOR:` are DEF-FOREIGN-KEY (info) "
     "instead of unknown keys")
def _(px, req, fwd):
    if req.get("op") not in SRC_OPS:
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp

    def fix(d):
        if isinstance(d, dict) and d.get("code") == "DEF-UNKNOWN-KEY" and len(d.get("path") or []) == 1 \
                and isinstance(d["path"][0], str) and fold(d["path"][0]) in ("model", "color") \
                and d["path"][0] not in ("model", "color"):
            d.update(code="DEF-FOREIGN-KEY", severity="info", requirement="DEF-06",
                     message="`%s` is defined by other runtimes, not by this spec; it is kept verbatim "
                             "and not interpreted." % d["path"][0])
    for d in r.get("diagnostics") or []:
        fix(d)
    return resp


@reg("def_misspelled_half_inclusive", "DEF-04",
     "misspelled-key threshold checked as distance <= half the target's length (not <): `note`, "
     "`time` (distance 2 from `name`) become DEF-MISSPELLED-KEY, an error on save")
def _(px, req, fwd):
    op = req.get("op")
    if op not in SRC_OPS:
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    save = op == "definition.save" or A(req).get("mode") == "save"
    changed = False
    for d in r.get("diagnostics") or []:
        if d.get("code") == "DEF-UNKNOWN-KEY" and len(d.get("path") or []) == 1:
            k = d["path"][0]
            if isinstance(k, str) and suggest(k, osa) is None:
                s = suggest(k, osa, inclusive=True)
                if s:
                    d.update(code="DEF-MISSPELLED-KEY", severity="error" if save else "warning",
                             requirement="DEF-04",
                             message="`%s` is not a key of this spec, so it grants nothing. Did you mean "
                                     "`%s`? Rename it." % (k, s))
                    changed = True
    if changed and op == "definition.save":
        r["saved"] = False
        r["document"] = None
    return resp


@reg("def_auto_yaml_marker_is_markdown", "DEF-01",
     "format auto-detection looks only at the first line: a YAML definition starting with the "
     "document marker `---` (and no later `---`) is read as Markdown and refused (DEF-NO-FRONT-MATTER)")
def _(px, req, fwd):
    if req.get("op") not in SRC_OPS:
        return None
    a = A(req)
    if (a.get("format") or "auto") != "auto" or a.get("filename"):
        return None
    text = get_source(a)
    if text is None:
        return None
    t = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = t.split("\n")
    if lines and lines[0].rstrip() == "---" and not any(l.rstrip() == "---" for l in lines[1:]):
        r2 = copy.deepcopy(req)
        r2["args"]["format"] = "markdown"
        return fwd(r2)
    return None


@reg("def_lone_cr_kept", "DEF-01",
     "only CRLF is normalised; a lone CR is not a line break for the Markdown splitter (a CR-only "
     "file has no front matter; lone CRs stay in the body)")
def _(px, req, fwd):
    op = req.get("op")
    if op not in SRC_OPS:
        return None
    a = A(req)
    text = get_source(a)
    if text is None:
        return None
    t = text.replace("\r\n", "\n")
    if "\r" not in t or not is_markdown(a, text):
        return None
    sp = split_md(t)
    if sp is None:
        # the whole file is one line: no front matter
        return fwd(set_source(req, t.replace("\r", " ")))
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    body = sp[1]
    bl = body.split("\n")
    while bl and not bl[0].strip(" \t\r"):
        bl.pop(0)
    bug_body = "\n".join(bl).rstrip()
    if op == "definition.parse" and r.get("definition"):
        if r["definition"].get("body") == bug_body.replace("\r", "\n"):
            r["definition"]["body"] = bug_body
    if op == "prompt.assemble":
        for p in r["parts"]:
            if p["kind"] == "body" and p["text"] == bug_body.replace("\r", "\n"):
                p["text"] = bug_body
        rebuild_prompt(r)
    return resp


def _name_line(text):
    for m in re.finditer(r"(?m)^name[ \t]*:[ \t]*(.*)$", text):
        return m
    return None


@reg("def_name_length_utf16", "DEF-01",
     "the 64-character name limit is counted in UTF-16 code units (JS string length): a valid name "
     "of 33-64 supplementary-plane letters (CJK Ext. B) is DEF-BAD-NAME")
def _(px, req, fwd):
    pairs = st(px).get("name_pairs", [])
    if req.get("op") in SRC_OPS:
        a = A(req)
        text = get_source(a)
        if text is not None:
            m = _name_line(text)
            if m:
                raw = m.group(1).strip()
                name = raw.strip("'\"")
                units = sum(2 if ord(c) > 0xFFFF else 1 for c in name)
                if 64 < units and len(name) <= 64 and name:
                    new = text[:m.start(1)] + m.group(1).replace(name, name + "!", 1) + text[m.end(1):]
                    pair = (name + "!", name)
                    if pair not in pairs:
                        pairs.append(pair)
                        st(px)["name_pairs"] = pairs
                    resp = fwd(set_source(req, new))
                    return deep_replace(resp, pairs)
    if pairs:
        return deep_replace(fwd(req), pairs)
    return None


def _bom_of(args):
    if isinstance(args.get("source"), str):
        return args["source"].startswith("\ufeff")
    if isinstance(args.get("source_b64"), str):
        try:
            return base64.b64decode(args["source_b64"]).startswith(b"\xef\xbb\xbf")
        except Exception:
            return False
    return False


def _walk_diags(r, fn):
    def w(o):
        if isinstance(o, dict):
            if "code" in o and "line" in o and "column" in o:
                fn(o)
            for v in o.values():
                w(v)
        elif isinstance(o, list):
            for v in o:
                w(v)
    w(r)


@reg("def_bom_shifts_columns", "DEF-03",
     "a leading BOM is ignored for parsing but counted as a code point: columns of line-1 "
     "diagnostics are one too far right")
def _(px, req, fwd):
    if req.get("op") not in SRC_OPS or not _bom_of(A(req)):
        return None
    resp = fwd(req)
    r = R(resp)
    if r:
        def fn(d):
            if d.get("line") == 1 and isinstance(d.get("column"), int):
                d["column"] += 1
        _walk_diags(r, fn)
    return resp


@reg("def_columns_utf16", "DEF-03",
     "diagnostic columns counted in UTF-16 code units (JS): a supplementary-plane character before "
     "the token counts twice")
def _(px, req, fwd):
    if req.get("op") not in SRC_OPS:
        return None
    text = get_source(A(req))
    if text is None or not any(ord(c) > 0xFFFF for c in text):
        return None
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    resp = fwd(req)
    r = R(resp)
    if r:
        def fn(d):
            ln, col = d.get("line"), d.get("column")
            if isinstance(ln, int) and isinstance(col, int) and 1 <= ln <= len(lines):
                d["column"] = col + sum(1 for c in lines[ln - 1][:col - 1] if ord(c) > 0xFFFF)
        _walk_diags(r, fn)
    return resp


# ================================================================= TOOL
NAME_KEYS = ("tools", "skills", "mcp")
ESCAPES = {"\\u00a0": "      ", "\\u00A0": "      ", "\\xa0": "    ", "\\xA0": "    ",
           "\\u3000": "      ", "\\u2003": "      ", "\\u2002": "      ", "\\u2009": "      ",
           "\\u202f": "      ", "\\u202F": "      ", "\\u205f": "      ", "\\u205F": "      ",
           "\\u1680": "      ", "\\u2007": "      ", "\\u2008": "      ", "\\u200a": "      ",
           "\\u200A": "      ", "\\u2000": "      ", "\\u2001": "      ", "\\u2004": "      ",
           "\\u2005": "      ", "\\u2006": "      ", "\\u0085": "      ", "\\N": "  ", "\\_": "  ",
           "\\L": "  ", "\\P": "  "}
UNI_WS = "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
         "\u2028\u2029\u202f\u205f\u3000"


@reg("tool_unicode_trim", "TOOL-02",
     "declared names (tools, skills, mcp.servers) are trimmed with the language's Unicode-aware "
     "strip(): a name padded with NO-BREAK SPACE or IDEOGRAPHIC SPACE resolves (`\\u00a0read` -> read)")
def _(px, req, fwd):
    if req.get("op") not in SRC_OPS:
        return None
    a = A(req)
    text = get_source(a)
    if text is None:
        return None
    md = is_markdown(a, text)
    t = text
    head = (split_md(t) or (None,))[0] if md else t
    if head is None:
        return None
    lines, blocks = top_blocks(head)
    changed = False
    for key, s, e in blocks:
        if key not in NAME_KEYS:
            continue
        for i in range(s, e):
            ln = lines[i]
            new = "".join(" " if c in UNI_WS else c for c in ln)
            for k, v in ESCAPES.items():
                new = new.replace(k, v)
            if new != ln:
                lines[i] = new
                changed = True
    if not changed:
        return None
    new_head = "\n".join(lines)
    new = new_head + "\n" + split_md(t)[1] if md else new_head
    return fwd(set_source(req, new))


@reg("tool_not_grantable_case_sensitive", "TOOL-01",
     "the not-grantable list is matched exactly, not ASCII-case-insensitively: `approvecard` is "
     "TOOL-UNKNOWN (no reason given) instead of TOOL-NOT-GRANTABLE")
def _(px, req, fwd):
    op = req.get("op")
    if op not in SRC_OPS:
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    if op == "definition.parse":
        bad = set()
        for i, row in enumerate(r.get("tool_resolution") or []):
            if row["status"] == "not-grantable" and row["declared"].strip(" \t") != row["canonical"]:
                row["status"] = "unknown"
                row["canonical"] = None
                bad.add(row["declared"].strip(" \t"))
    for d in r.get("diagnostics") or []:
        if d.get("code") == "TOOL-NOT-GRANTABLE":
            m = re.match(r"`(.*?)` is deliberately", d.get("message", ""))
            name = m.group(1) if m else None
            reg_ng = [x["name"] for x in (px.side("registry.list", {}) or {}).get("not_grantable", [])]
            if name is not None and name not in reg_ng:
                d.update(code="TOOL-UNKNOWN", requirement="TOOL-03", severity="warning",
                         message="`%s` is not in the grantable-tool registry, so it is not granted. "
                                 "Remove it, or pick a tool from the registry." % name)
    return resp


def _reorder_last(names, rows):
    """names: a tools list; rows: tool_resolution. Put repeated granted tools at their last position."""
    last = {}
    for i, row in enumerate(rows):
        if row["status"] in ("granted", "duplicate") and row.get("canonical"):
            last[row["canonical"]] = i
    dup = {row["canonical"] for row in rows if row["status"] == "duplicate"}
    if not dup:
        return names
    idx = [i for i, n in enumerate(names) if n in last]
    sel = sorted((names[i] for i in idx), key=lambda n: last[n])
    out = list(names)
    for i, n in zip(idx, sel):
        out[i] = n
    return out


@reg("tool_duplicate_keeps_last", "TOOL-04",
     "a tool declared twice is granted once but at its LAST position (dict re-insert), so the "
     "mounted order and the saved list change")
def _(px, req, fwd):
    op = req.get("op")
    if op not in DEF_OPS:
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    p = side_parse(px, A(req))
    if not p or not p.get("tool_resolution"):
        return resp
    rows = p["tool_resolution"]
    if op in ("definition.parse", "agent.spawn", "definition.save") and isinstance(r.get("tools"), list):
        r["tools"] = _reorder_last(r["tools"], rows)
    if op == "tools.mounted":
        names = [t["name"] for t in r["tools"]]
        new = _reorder_last(names, rows)
        by = {t["name"]: t for t in r["tools"]}
        r["tools"] = [by[n] for n in new]
    if op == "definition.save" and isinstance(r.get("document"), str):
        doc = r["document"].split("\n")
        for i, ln in enumerate(doc):
            if re.match(r"^tools\s*:\s*$", ln):
                j = i + 1
                ent = []
                while j < len(doc) and re.match(r"^\s*- ", doc[j]):
                    ent.append(j)
                    j += 1
                names = [doc[k].split("- ", 1)[1].strip() for k in ent]
                new = _reorder_last(names, rows)
                for k, n in zip(ent, new):
                    doc[k] = doc[k].split("- ", 1)[0] + "- " + n
                break
        r["document"] = "\n".join(doc)
    return resp


@reg("tool_mcp_style_prefix_case_sensitive", "TOOL-03",
     "the MCP-style check looks for a lower-case `mcp__` prefix only: `MCP__crm__find` is "
     "TOOL-UNKNOWN instead of TOOL-MCP-STYLE (no redirect to mcp.servers)")
def _(px, req, fwd):
    op = req.get("op")
    if op not in SRC_OPS:
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    p = r if op == "definition.parse" else side_parse(px, A(req))
    if not p:
        return resp
    idx = set()
    for i, row in enumerate(p.get("tool_resolution") or []):
        dn = row["declared"].strip(" \t")
        if row["status"] == "mcp-style" and re.match(r"^[Mm][Cc][Pp]__", dn) and not dn.startswith("mcp__"):
            idx.add(dn)
            if op == "definition.parse":
                row["status"] = "unknown"
    for d in r.get("diagnostics") or []:
        if d.get("code") == "TOOL-MCP-STYLE":
            for n in idx:
                if "`%s`" % n in d.get("message", "") or n in d.get("message", ""):
                    d.update(code="TOOL-UNKNOWN", requirement="TOOL-03", severity="warning",
                             message="`%s` is not in the grantable-tool registry, so it is not granted. "
                                     "Remove it, or pick a tool from the registry." % n)
    return resp


# ================================================================= PROMPT
@reg("prompt_frame_full_strip", "PROMPT-01",
     "the frame is strip()ped of all surrounding whitespace, not only of blank lines: a frame "
     "whose first line is indented loses that indentation")
def _(px, req, fwd):
    if req.get("op") == "world.setup" and isinstance(A(req).get("frame"), str):
        r2 = copy.deepcopy(req)
        r2["args"]["frame"] = r2["args"]["frame"].strip()
        resp = fwd(r2)
        if ok(resp):
            px.reset()
            px.world = A(req)
        return resp
    return None


@reg("prompt_blank_frame_is_a_part", "PROMPT-01",
     "the frame is emptied of newlines only: a frame of spaces/tabs (blank lines) still becomes a "
     "`frame` part of whitespace and adds a blank line to every prompt")
def _(px, req, fwd):
    if req.get("op") != "prompt.assemble":
        return None
    resp = fwd(req)
    r = R(resp)
    fr = (px.world or {}).get("frame")
    if r and isinstance(fr, str) and not fr.strip(WS_CHARS) and fr.strip("\n") \
            and not any(p["kind"] == "frame" for p in r["parts"]):
        r["parts"].insert(0, {"kind": "frame", "text": fr.strip("\n")})
        rebuild_prompt(r)
    return resp


@reg("prompt_skills_section_needs_listed", "SKILL-04",
     "the `## Skills` section is rendered only when at least one skill is listed: skills resolved "
     "but all unlisted (include_in_prompt: false) give no section at all")
def _(px, req, fwd):
    if req.get("op") != "prompt.assemble":
        return None
    resp = fwd(req)
    r = R(resp)
    if r:
        n = len(r["parts"])
        r["parts"] = [p for p in r["parts"]
                      if not (p["kind"] == "catalog.skills" and "\n- name:" not in p["text"])]
        if len(r["parts"]) != n:
            rebuild_prompt(r)
    return resp


# ================================================================= SKILL
def resolved(px, agent):
    r = px.side("skills.resolved", {"agent": agent})
    return (r or {}).get("skills") or []


def skill_md_path(px, sk):
    loc = sk.get("location") or ""
    layers = ((px.world or {}).get("skills") or {}).get("layers") or {}
    m = re.match(r"^([a-z-]+):(.*)$", loc)
    if m and m.group(1) in layers:
        base = layers[m.group(1)]
        base = base if os.path.isabs(base) else ws_path(px, base)
        return os.path.join(base, m.group(2))
    return ws_path(px, loc)


def find_skill(px, agent, name):
    for sk in resolved(px, agent):
        if fold(sk["name"]) == fold(name or ""):
            return sk
    return None


@reg("skill_body_crlf_front_matter_kept", "SKILL-04",
     "use_skill strips the SKILL.md front matter only when it is written with LF line endings: a "
     "CRLF (Windows-edited) SKILL.md returns its front matter as part of the body")
def _(px, req, fwd):
    if not is_call(req, "use_skill"):
        return None
    resp = fwd(req)
    r = R(resp)
    args = A(req).get("args") or {}
    if not r or not r.get("ok") or args.get("reference") is not None:
        return resp
    c = r["content"]
    sk = find_skill(px, A(req).get("agent"), c.get("name"))
    if not sk:
        return resp
    try:
        raw = open(skill_md_path(px, sk), "rb").read()
    except OSError:
        return resp
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.startswith(b"---\r\n"):
        return resp
    text = raw.decode("utf-8", "replace")
    lines = text.split("\n")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") in ("---", "..."):
            fm = "\n".join(lines[:i + 1]) + "\n"
            c["body"] = fm + c["body"]
            c["total_bytes"] = len(c["body"].encode("utf-8"))
            break
    return resp


@reg("skill_search_default_limit_max", "SKILL-06",
     "skill_search without `limit` returns up to the maximum (50) results instead of the default 10")
def _(px, req, fwd):
    if is_call(req, "skill_search"):
        args = A(req).get("args")
        if isinstance(args, dict) and "limit" not in args:
            r2 = copy.deepcopy(req)
            r2["args"]["args"]["limit"] = 50
            return fwd(r2)
    return None


@reg("skill_search_limit_clamped", "SKILL-06",
     "skill_search clamps an out-of-range `limit` (0, 51, 1000) into 1..50 instead of refusing it")
def _(px, req, fwd):
    if is_call(req, "skill_search"):
        args = A(req).get("args")
        if isinstance(args, dict) and isinstance(args.get("limit"), int) and not isinstance(args["limit"], bool) \
                and not 1 <= args["limit"] <= 50:
            r2 = copy.deepcopy(req)
            r2["args"]["args"]["limit"] = min(50, max(1, args["limit"]))
            return fwd(r2)
    return None


def skill_tokens(s):
    out, cur = [], []
    for ch in s:
        o = ord(ch)
        if (o < 128 and ch.isalnum()) or (o > 127 and ch not in WS_CHARS):
            cur.append(ch)
        else:
            if cur:
                out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return [fold(t) for t in out]


@reg("skill_search_repeated_query_tokens", "SKILL-06",
     "skill_search sums BM25 over every query token, repeats included: `pdf pdf forms` weighs pdf "
     "twice (spec: repeated query tokens count once)")
def _(px, req, fwd):
    if not is_call(req, "skill_search"):
        return None
    args = A(req).get("args")
    if not isinstance(args, dict) or not isinstance(args.get("query"), str):
        return None
    toks = skill_tokens(args["query"])
    counts = {}
    for t in toks:
        counts[t] = counts.get(t, 0) + 1
    if all(v == 1 for v in counts.values()):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    agent = A(req).get("agent")
    scores = {}
    info = {}
    for t, n in counts.items():
        s = px.side("tool.call", {"agent": agent, "tool": "skill_search", "args": {"query": t, "limit": 50}})
        for res in ((s or {}).get("content") or {}).get("results") or []:
            scores[res["name"]] = scores.get(res["name"], 0) + n * res["score"]
            info[res["name"]] = res
    limit = args.get("limit", 10)
    rows = []
    for name, sc in scores.items():
        row = dict(info[name])
        row["score"] = sc
        rows.append(row)
    rows.sort(key=lambda x: (-x["score"], fold(x["name"]), x["name"]))
    r["content"]["results"] = rows[:limit]
    return resp


@reg("skill_not_granted_lists_closed", "SKILL-10",
     "the `granted` list of a SKILL-NOT-GRANTED refusal names every declared resolved skill, "
     "including the ones closed by a gate in this VM")
def _(px, req, fwd):
    if not is_call(req, "use_skill"):
        return None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("error_code") == "SKILL-NOT-GRANTED":
        det = r.get("error_detail") or {}
        g = det.get("granted")
        if isinstance(g, list):
            closed = [sk["name"] for sk in resolved(px, A(req).get("agent")) if not sk.get("available", True)]
            for n in closed:
                if n not in g:
                    g.append(n)
    return resp


def _ref_err(code, name, reference, reason=None):
    det = {"name": name, "reference": reference}
    if reason:
        det["reason"] = reason
    msg = ("reference %r of skill `%s` %s" %
           (reference, name, "escapes the skill folder (%s)" % reason if reason else "was not found"))
    return env_err(code, msg, det, True)


@reg("skill_reference_dot_segment_refused", "SKILL-05",
     "a `.` path segment in a use_skill reference is refused like `..` (parent-segment): "
     "`./references/api.md` cannot be loaded")
def _(px, req, fwd):
    if not is_call(req, "use_skill"):
        return None
    args = A(req).get("args") or {}
    ref = args.get("reference")
    if isinstance(ref, str) and "\\" not in ref and not ref.startswith("/") and ":" not in ref \
            and ref.strip() and not any(ord(c) < 32 or ord(c) == 127 for c in ref) \
            and "." in ref.split("/") and ".." not in ref.split("/"):
        probe = fwd(req)
        pr = R(probe)
        if pr and pr.get("error_code") in ("SKILL-NOT-GRANTED", "SKILL-UNAVAILABLE", "SKILL-BAD-ARGUMENTS"):
            return probe
        return reply(req, _ref_err("SKILL-REFERENCE-ESCAPE", args.get("name"), ref, "parent-segment"))
    return None


@reg("skill_reference_inside_link_refused", "SKILL-05",
     "use_skill opens references with O_NOFOLLOW at every component: a symlink inside the skill "
     "folder to another file inside it is refused (SKILL-REFERENCE-ESCAPE) instead of followed")
def _(px, req, fwd):
    if not is_call(req, "use_skill"):
        return None
    args = A(req).get("args") or {}
    ref = args.get("reference")
    if not isinstance(ref, str):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    sk = find_skill(px, A(req).get("agent"), args.get("name"))
    if not sk:
        return resp
    folder = os.path.dirname(skill_md_path(px, sk))
    p = folder
    for seg in ref.split("/"):
        if seg in ("", "."):
            continue
        p = os.path.join(p, seg)
        if os.path.islink(p):
            return reply(req, _ref_err("SKILL-REFERENCE-ESCAPE", args.get("name"), ref,
                                       "resolves-outside-skill-folder"))
    return resp


@reg("skill_reference_folder_itself_not_found", "SKILL-05",
     "a reference that resolves to the skill folder itself (`.`, `references/..`-free forms like "
     "`./`) is answered SKILL-REFERENCE-NOT-FOUND (a directory) instead of SKILL-REFERENCE-ESCAPE")
def _(px, req, fwd):
    if not is_call(req, "use_skill"):
        return None
    resp = fwd(req)
    r = R(resp)
    det = (r or {}).get("error_detail") or {}
    if r and r.get("error_code") == "SKILL-REFERENCE-ESCAPE" and det.get("reason") == "resolves-outside-skill-folder":
        args = A(req).get("args") or {}
        ref = args.get("reference")
        sk = find_skill(px, A(req).get("agent"), args.get("name"))
        if sk and isinstance(ref, str):
            folder = os.path.realpath(os.path.dirname(skill_md_path(px, sk)))
            if os.path.realpath(os.path.join(folder, ref)) == folder:
                return reply(req, _ref_err("SKILL-REFERENCE-NOT-FOUND", args.get("name"), ref))
    return resp


def _layer_packages(px, skills_world):
    """{name: folder path} of every package in the world's layers (metadata name)."""
    import yaml
    out = {}
    for layer, base in (skills_world.get("layers") or {}).items():
        base = base if os.path.isabs(base) else ws_path(px, base)
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            continue
        for e in entries:
            f = os.path.join(base, e)
            meta = None
            try:
                if os.path.isfile(os.path.join(f, "skill.yaml")):
                    meta = yaml.safe_load(open(os.path.join(f, "skill.yaml"), encoding="utf-8"))
                elif os.path.isfile(os.path.join(f, "SKILL.md")):
                    t = open(os.path.join(f, "SKILL.md"), encoding="utf-8-sig").read().replace("\r\n", "\n")
                    sp = split_md(t)
                    if sp:
                        meta = yaml.safe_load(sp[0].split("\n", 1)[1].rsplit("\n", 1)[0])
            except Exception:
                meta = None
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                out.setdefault(meta["name"].strip(), f)
    return out


def _world_skill_names(px, req, fwd, field_fn):
    """world.setup with skill names of `preferred`/`amendments` matched exactly: names that only
    match a package up to ASCII case are replaced by a name nothing has."""
    if req.get("op") != "world.setup":
        return None
    sw = A(req).get("skills")
    if not isinstance(sw, dict):
        return None
    names = set(_layer_packages(px, sw).keys()) if workspace(px) or A(req).get("workspace") else set()
    r2 = copy.deepcopy(req)
    changed = field_fn(r2["args"]["skills"], names)
    if not changed:
        return None
    resp = fwd(r2)
    if ok(resp):
        px.reset()
        px.world = A(req)
    return resp


def _with_ws(px, req):
    px.world = dict(px.world or {}, workspace=A(req).get("workspace"))


@reg("skill_amendment_name_exact", "SKILL-08",
     "amendments are matched to skills by exact name, not ASCII-case-insensitively: an amendment "
     "for `PDF` never applies to (nor is held back for) the skill `pdf`")
def _(px, req, fwd):
    if req.get("op") != "world.setup":
        return None
    old = px.world
    _with_ws(px, req)

    def fn(sw, names):
        ch = False
        for am in sw.get("amendments") or []:
            if isinstance(am, dict) and isinstance(am.get("skill"), str) and am["skill"] not in names \
                    and any(fold(n) == fold(am["skill"]) for n in names):
                am["skill"] = am["skill"] + "-x-nomatch"
                ch = True
        return ch
    resp = _world_skill_names(px, req, fwd, fn)
    if resp is None:
        px.world = old
    return resp


@reg("skill_pin_exact", "SKILL-07",
     "preferred pins (`skills.preferred`) are matched by exact name: a pin `PDF` does not mark or "
     "list the declared skill `pdf`")
def _(px, req, fwd):
    if req.get("op") != "world.setup":
        return None
    old = px.world
    _with_ws(px, req)

    def fn(sw, names):
        ch = False
        pins = sw.get("preferred")
        if isinstance(pins, list):
            for i, p in enumerate(pins):
                if isinstance(p, str) and p not in names and any(fold(n) == fold(p) for n in names):
                    pins[i] = p + "-x-nomatch"
                    ch = True
        return ch
    resp = _world_skill_names(px, req, fwd, fn)
    if resp is None:
        px.world = old
    return resp


def _tt_map(px, t):
    if not isinstance(t, str) or not t.strip(" \t"):
        return t
    m = st(px).setdefault("tt", {})
    if t not in m:
        m[t] = "ttq%dq" % len(m)
    return m[t]


def _tt_restore(px, resp):
    m = st(px).get("tt") or {}
    return deep_replace(resp, [(v, k) for k, v in sorted(m.items(), key=lambda kv: -len(kv[1]))])


@reg("pref_task_type_exact", "SKILL-09",
     "task types are compared exactly (no trimming, no ASCII case folding): `Email` set in the "
     "world and ` email` reported by the driver are two task types")
def _(px, req, fwd):
    op = req.get("op")
    if op == "world.setup":
        sw = A(req).get("skills")
        if not isinstance(sw, dict):
            return None
        r2 = copy.deepcopy(req)
        s2 = r2["args"]["skills"]
        px.state["b"] = {}
        for p in s2.get("preferences") or []:
            if isinstance(p, dict) and "task_type" in p:
                p["task_type"] = _tt_map(px, p["task_type"])
        if isinstance(s2.get("offers_asked"), list):
            s2["offers_asked"] = [_tt_map(px, t) for t in s2["offers_asked"]]
        keep = st(px).get("tt")
        resp = fwd(r2)
        track(px, req, resp)
        if keep:
            st(px)["tt"] = keep
        if ok(resp):
            px.reset()
            px.world = A(req)
        return _tt_restore(px, resp)
    if op in ("skills.offer_preference", "skills.set_preferred") and "task_type" in A(req):
        r2 = copy.deepcopy(req)
        r2["args"]["task_type"] = _tt_map(px, A(req)["task_type"])
        return _tt_restore(px, fwd(r2))
    if st(px).get("tt"):
        return _tt_restore(px, fwd(req))
    return None


@reg("pref_offer_used_by_any_event", "SKILL-09",
     "every reported task end records the task type as asked, so a search or quote before the "
     "first completed order uses up the one offer (the order then answers already-asked)")
def _(px, req, fwd):
    if req.get("op") != "skills.offer_preference":
        return None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("reason") == "not-a-completed-transaction":
        px.side("skills.offer_preference", {"task_type": A(req).get("task_type"), "event": "order-completed"})
    return resp


@reg("skill_unavailable_lists_all_closed", "SKILL-10",
     "skill_search names every declared skill closed by a gate in `unavailable`, whatever the "
     "query (a closed skill is revealed by unrelated searches)")
def _(px, req, fwd):
    if not is_call(req, "skill_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("ok"):
        un = r["content"].setdefault("unavailable", [])
        have = {u["name"] for u in un}
        for sk in resolved(px, A(req).get("agent")):
            if not sk.get("available", True) and sk["name"] not in have:
                un.append({"name": sk["name"], "reason": sk.get("unavailable_reason") or "confidential-vm"})
    return resp


# ================================================================= KB
def kb_terms_raw(q):
    out, cur = [], []
    for ch in q:
        if ch in WS_CHARS:
            if cur:
                out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def kb_sort(hits):
    hits.sort(key=lambda h: (-h["terms_matched"], -h["occurrences"], h["path"].encode("utf-8"), h["line"]))


def file_line_bytes(px, path, n):
    try:
        data = open(ws_path(px, path), "rb").read()
    except OSError:
        return None
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines = lines[:-1]
    if not 1 <= n <= len(lines):
        return None
    ln = lines[n - 1]
    return ln[:-1] if ln.endswith(b"\r") else ln


def lower_ascii_bytes(b):
    return bytes(c + 32 if 65 <= c <= 90 else c for c in b)


def kb_knowledge(px, agent):
    p = agent_def(px, agent)
    return ((p or {}).get("definition") or {}).get("knowledge") or []


def _glob_rewrite_source(req, fn):
    """Rewrite knowledge globs (same length) in the source; returns (new_req, pairs) or None."""
    a = A(req)
    text = get_source(a)
    if text is None or "knowledge" not in text:
        return None
    pairs = []

    def sub(m):
        g = m.group(2)
        ng = fn(g)
        if ng != g and len(ng) == len(g):
            pairs.append((ng, g))
        return m.group(1) + ng + m.group(3)
    new = re.sub(r"(glob\s*:\s*[\"']?)([^\"',}\n]+?)([\"']?\s*(?:[,}\n]|$))", sub, text)
    if not pairs:
        return None
    return set_source(req, new), pairs


def _caret_fix(g):
    out, i = [], 0
    while i < len(g):
        if g[i] == "[" and g[i + 1:i + 2] == "^":
            j = g.find("]", i + 3)
            if j > 0:
                out.append("[" + g[i + 2:j] + "^]")
                i = j + 1
                continue
        out.append(g[i])
        i += 1
    return "".join(out)


@reg("kb_glob_caret_not_negation", "KB-01",
     "glob classes use fnmatch rules: only `[!...]` negates, `[^...]` is a class that contains `^` "
     "(`[^a-z]*.md` matches `a.md`, not `B.md`)")
def _(px, req, fwd):
    if req.get("op") in SRC_OPS:
        x = _glob_rewrite_source(req, _caret_fix)
        if x:
            new_req, pairs = x
            st(px).setdefault("glob_pairs", [])
            for p in pairs:
                if p not in st(px)["glob_pairs"]:
                    st(px)["glob_pairs"].append(p)
            return deep_replace(fwd(new_req), st(px)["glob_pairs"])
    if st(px).get("glob_pairs"):
        return deep_replace(fwd(req), st(px)["glob_pairs"])
    return None


@reg("kb_dotslash_stripped_once", "KB-01",
     "a leading `./` is removed once, not repeatedly: `././docs/*.md` keeps a `.` segment and is "
     "dropped as KB-SOURCE-OUTSIDE-WORKSPACE (dot-segment)")
def _(px, req, fwd):
    if req.get("op") in SRC_OPS:
        def fn(g):
            if g.startswith("././"):
                return "z/./" + g[4:]
            return g
        x = _glob_rewrite_source(req, fn)
        if x:
            new_req, pairs = x
            st(px).setdefault("glob_pairs", [])
            for p in pairs:
                if p not in st(px)["glob_pairs"]:
                    st(px)["glob_pairs"].append(p)
            return deep_replace(fwd(new_req), st(px)["glob_pairs"])
    if st(px).get("glob_pairs"):
        return deep_replace(fwd(req), st(px)["glob_pairs"])
    return None


@reg("kb_terms_counted_before_dedup", "KB-03",
     "the 16-term limit is checked before repeats are dropped: `a b a b ...` with 17 terms but "
     "few distinct ones is refused KB-BAD-QUERY")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    q = (A(req).get("args") or {}).get("query")
    if isinstance(q, str):
        raw = kb_terms_raw(q)
        if len(raw) > 16:
            resp = fwd(req)
            r = R(resp)
            if r and r.get("ok"):
                resp["result"] = env_err("KB-BAD-QUERY", "the query has %d terms; at most 16" % len(raw),
                                         {"field": "query"}, None)
            return resp
    return None


def count_overlapping(hay, needle):
    n, i = 0, hay.find(needle)
    while i >= 0:
        n += 1
        i = hay.find(needle, i + 1)
    return n


@reg("kb_overlapping_occurrences", "KB-03",
     "kb_search counts overlapping occurrences (indexOf from i+1): `aa` occurs 3 times in `aaaa`, "
     "which changes `occurrences` and the hit order")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    c = r["content"]
    terms = [t.encode("utf-8") for t in c.get("terms") or []]
    changed = False
    for h in c.get("hits") or []:
        ln = file_line_bytes(px, h["path"], h["line"])
        if ln is None:
            continue
        low = lower_ascii_bytes(ln)
        occ = sum(count_overlapping(low, t) for t in terms if t in low)
        if occ != h["occurrences"]:
            h["occurrences"] = occ
            changed = True
    if changed:
        kb_sort(c["hits"])
    return resp


def kb_available(px, agent):
    s = px.side("tool.call", {"agent": agent, "tool": "kb_search",
                              "args": {"query": "x", "sources": ["\u2603-no-such-source"]}})
    return ((s or {}).get("error_detail") or {}).get("available") or []


@reg("kb_sources_case_sensitive", "KB-02",
     "names in kb_search's `sources` argument are matched exactly: `docs` does not select the "
     "source `Docs` (KB-UNKNOWN-SOURCE)")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    srcs = (A(req).get("args") or {}).get("sources")
    if isinstance(srcs, list) and all(isinstance(s, str) for s in srcs):
        avail = kb_available(px, A(req).get("agent"))
        unknown = [s for s in srcs if s not in avail]
        if unknown and avail is not None:
            probe = fwd(req)
            pr = R(probe)
            if pr and (pr.get("ok") or pr.get("error_code") == "KB-UNKNOWN-SOURCE"):
                probe["result"] = env_err("KB-UNKNOWN-SOURCE", "not a declared knowledge source: " +
                                          ", ".join(unknown), {"available": avail, "unknown": unknown}, None)
            return probe
    return None


@reg("kb_sources_searched_separately", "KB-04",
     "kb_search runs one scan per source and concatenates: a file matched by two sources is read "
     "and reported twice (once per source), and each source gets its own 8 MiB budget")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    args = A(req).get("args") or {}
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    agent = A(req).get("agent")
    avail = kb_available(px, agent)
    sel = args.get("sources") if isinstance(args.get("sources"), list) else avail
    names = []
    for s in sel:
        for n in avail:
            if fold(n) == fold(s) and n not in names:
                names.append(n)
    if len(names) < 2:
        return resp
    parts = []
    for n in names:
        a2 = dict(args, sources=[n])
        s = px.side("tool.call", {"agent": agent, "tool": "kb_search", "args": a2})
        if not s or not s.get("ok"):
            return resp
        parts.append(s["content"])
    c = r["content"]
    hits = [h for p in parts for h in p["hits"]]
    kb_sort(hits)
    total = sum(p["matching_lines"] for p in parts)
    c["hits"] = hits[:50]
    c["matching_lines"] = total
    c["hit_cap_reached"] = total > 50
    for k in ("bytes_read", "files_searched", "files_not_read"):
        c[k] = sum(p[k] for p in parts)
    c["byte_budget_reached"] = any(p["byte_budget_reached"] for p in parts)
    c["cut_file"] = next((p["cut_file"] for p in parts if p["cut_file"]), None)
    c["skipped"] = [x for p in parts for x in p["skipped"]]
    return resp


def kb_files(px, agent, sources):
    from wcmatch import glob as wg
    out = set()
    for k in kb_knowledge(px, agent):
        if sources is not None and not any(fold(k["name"]) == fold(s) for s in sources):
            continue
        g = k["glob"]
        while g.startswith("./"):
            g = g[2:]
        try:
            for p in wg.glob(g, root_dir=workspace(px), flags=wg.GLOBSTAR | wg.FORCEUNIX | wg.CASE):
                full = ws_path(px, p)
                if os.path.isfile(full) and not os.path.islink(full):
                    out.add(p)
        except Exception:
            pass
    return sorted(out, key=lambda p: p.encode("utf-8"))


@reg("kb_zero_byte_files_not_read", "KB-04",
     "after the byte budget is spent, every later file counts in files_not_read, empty (0-byte) "
     "files included")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok") or not r["content"].get("byte_budget_reached"):
        return resp
    c = r["content"]
    cut = (c.get("cut_file") or {}).get("path")
    if cut is None:
        return resp
    srcs = (A(req).get("args") or {}).get("sources")
    files = kb_files(px, A(req).get("agent"), srcs if isinstance(srcs, list) else None)
    extra = [p for p in files if p.encode() > cut.encode() and os.path.getsize(ws_path(px, p)) == 0]
    c["files_not_read"] += len(extra)
    return resp


@reg("kb_cut_file_partial_line_dropped", "KB-04",
     "the file that crosses the byte budget is scanned line by line only up to its last complete "
     "line: the partial last line of the prefix is never matched")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok") or not r["content"].get("cut_file"):
        return resp
    c = r["content"]
    cf = c["cut_file"]
    try:
        with open(ws_path(px, cf["path"]), "rb") as f:
            prefix = f.read(cf["bytes_read"])
    except OSError:
        return resp
    if prefix.endswith(b"\n"):
        return resp
    last = prefix.count(b"\n") + 1
    before = len(c["hits"])
    c["hits"] = [h for h in c["hits"] if not (h["path"] == cf["path"] and h["line"] == last)]
    dropped = before - len(c["hits"])
    if dropped:
        c["matching_lines"] -= dropped
        c["hit_cap_reached"] = c["matching_lines"] > 50
    return resp


def utf16_window(line, m):
    """KB-06 window computed on UTF-16 code units (m: code-unit index of the match)."""
    u = line.encode("utf-16-le")
    L = len(u) // 2

    def sl(a, b):
        return u[2 * a:2 * b].decode("utf-16-le", "replace")
    if L <= 400:
        return line, False
    if m - 100 <= 0:
        return sl(0, 399) + "\u2026", True
    if L - (m - 100) <= 399:
        return "\u2026" + sl(L - 399, L), True
    return "\u2026" + sl(m - 100, m + 298) + "\u2026", True


@reg("kb_text_cap_utf16", "KB-06",
     "the 400-character cap of a hit line is counted in UTF-16 code units (JS string length): a "
     "line of 300 emoji is cut, and windows around a match are shorter than 400 code points")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    terms = [t.encode("utf-8") for t in r["content"].get("terms") or []]
    for h in r["content"].get("hits") or []:
        b = file_line_bytes(px, h["path"], h["line"])
        if b is None:
            continue
        line = b.decode("utf-8", "replace")
        if not any(ord(ch) > 0xFFFF for ch in line):
            continue
        low = lower_ascii_bytes(b)
        pos = min([low.find(t) for t in terms if low.find(t) >= 0] or [0])
        m_cp = len(b[:pos].decode("utf-8", "replace"))
        m_u = len(line[:m_cp].encode("utf-16-le")) // 2
        text, trunc = utf16_window(line, m_u)
        h["text"], h["text_truncated"] = text, trunc
    return resp


@reg("kb_path_order_by_segments", "KB-03",
     "hit ties are ordered by path segments (directory walk order: `docs/a/b.md` before "
     "`docs/a-b.md` and `docs/a.md`) instead of path bytes")
def _(px, req, fwd):
    if not is_call(req, "kb_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("ok"):
        r["content"]["hits"].sort(key=lambda h: (-h["terms_matched"], -h["occurrences"],
                                                 h["path"].split("/"), h["line"]))
    return resp


# ================================================================= MCP
def mcp_config(px):
    m = (px.world or {}).get("mcp") or {}
    out = {}
    if isinstance(m.get("mcpServers"), dict):
        for k, v in m["mcpServers"].items():
            out[k] = v
    for v in m.get("servers") or []:
        if isinstance(v, dict) and "name" in v:
            out[v["name"]] = v
    return out


def granted_servers(px, agent):
    p = agent_def(px, agent)
    decl = (((p or {}).get("definition") or {}).get("mcp") or {}).get("servers") or []
    cfg = mcp_config(px)
    out = []
    for dname in decl:
        for c in cfg:
            if fold(c) == fold(dname.strip()) and c not in out:
                out.append(c)
    return out


@reg("mcp_model_name_trimmed", "MCP-01",
     "qualified names from the model (mcp_describe / mcp_call) are trimmed before matching: "
     "` notion__search_pages\\n` reaches notion (spec N-3: no trimming)")
def _(px, req, fwd):
    if is_call(req, "mcp_describe", "mcp_call"):
        args = A(req).get("args")
        if isinstance(args, dict) and isinstance(args.get("name"), str) and args["name"] != args["name"].strip():
            r2 = copy.deepcopy(req)
            r2["args"]["args"]["name"] = args["name"].strip()
            return fwd(r2)
    return None


@reg("mcp_search_sorted_by_server_then_tool", "MCP-01",
     "mcp_search sorts by (server, tool) pairs instead of the qualified name's code points: "
     "`a__zz` comes before `a-b__zz`")
def _(px, req, fwd):
    if not is_call(req, "mcp_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("ok"):
        r["content"]["tools"].sort(key=lambda t: tuple(t["name"].split("__", 1)))
    return resp


@reg("mcp_null_arguments_as_empty", "MCP-03",
     "mcp_call reads `arguments: null` as `{}` (a `?? {}` default) and calls the tool instead of "
     "answering MCP-ARGUMENTS-INVALID")
def _(px, req, fwd):
    if is_call(req, "mcp_call"):
        args = A(req).get("args")
        if isinstance(args, dict) and "arguments" in args and args["arguments"] is None:
            r2 = copy.deepcopy(req)
            r2["args"]["args"]["arguments"] = {}
            return fwd(r2)
    return None


@reg("mcp_allowlist_after_unattended", "MCP-03",
     "the unattended / never-ask rule is applied before the MCP allow-list: an allow-listed tool "
     "is denied at once in an unattended session instead of running directly")
def _(px, req, fwd):
    if not is_call(req, "mcp_call"):
        return None
    pol = policy(px)
    if pol.get("attendance") != "unattended" and pol.get("ask_policy") != "never-ask":
        return None
    if pol.get("tier") == "full-access":
        return None
    args = A(req).get("args")
    name = args.get("name") if isinstance(args, dict) else None
    if not isinstance(name, str) or "__" not in name:
        return None
    server, tool = name.split("__", 1)
    cfg = mcp_config(px).get(server)
    if not cfg or server not in granted_servers(px, A(req).get("agent")):
        return None
    if cfg.get("enabled", True) is False or cfg.get("configured", True) is False:
        return None
    if tool not in (cfg.get("allow") or []):
        return None
    if not isinstance(args.get("arguments", {}), dict):
        return None
    unatt = pol.get("attendance") == "unattended"
    rule = "%s/mcp/outside/%s" % (pol.get("tier"), pol.get("attendance")) if unatt else "never-ask"
    why = ("unattended, so denied at once instead of asking: " if unatt else
           "approval policy pinned to never-ask, so denied instead of asking: ")
    return reply(req, env_err("APPROVAL-DENIED", "%s was denied: %san MCP tool acts on an external "
                              "system; confirm" % (name, why), {"rule": rule, "tool": name}, True))


@reg("mcp_refusal_lists_declared_spelling", "MCP-02",
     "the MCP-02 refusal lists granted servers as the definition spells them (`Notion`), not under "
     "their configured names (the model then calls a name that does not exist)")
def _(px, req, fwd):
    if not is_call(req, "mcp_describe", "mcp_call"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or r.get("error_code") not in ("MCP-SERVER-NOT-GRANTED", "MCP-NOT-CONFIGURED"):
        return resp
    p = agent_def(px, A(req).get("agent"))
    decl = (((p or {}).get("definition") or {}).get("mcp") or {}).get("servers") or []
    spell = {}
    for dname in decl:
        spell.setdefault(fold(dname.strip()), dname.strip())
    det = r.get("error_detail") or {}
    for g in det.get("granted_servers") or []:
        s = spell.get(fold(g["name"]))
        if s and s != g["name"]:
            r["error_message"] = re.sub(r"(?<=[ ,:])%s(?=[ ,.(])" % re.escape(g["name"]), s, r["error_message"])
            g["name"] = s
    return resp


def split_ascii_space(q):
    return [t for t in q.split(" ") if t]


@reg("mcp_search_splits_on_ascii_space", "MCP-01",
     "mcp_search splits the query on ASCII spaces only: terms separated by a tab, NBSP or "
     "IDEOGRAPHIC SPACE stay one term and match nothing")
def _(px, req, fwd):
    if not is_call(req, "mcp_search"):
        return None
    args = A(req).get("args")
    q = args.get("query") if isinstance(args, dict) else None
    if not isinstance(q, str) or not any(c in WS_CHARS and c != " " for c in q):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    allr = px.side("tool.call", {"agent": A(req).get("agent"), "tool": "mcp_search", "args": {}})
    if not allr or not allr.get("ok"):
        return resp
    terms = [fold(t) for t in split_ascii_space(q)]
    tools = [t for t in allr["content"]["tools"]
             if all(term in fold(t["name"] + " " + (t.get("description") or "")) for term in terms)]
    tools.sort(key=lambda t: t["name"])
    r["content"]["tools"] = tools[:50]
    r["content"]["truncated"] = len(tools) > 50
    return resp


@reg("mcp_search_truncated_at_exactly_50", "MCP-01",
     "mcp_search reports truncated: true when exactly 50 tools match (>= instead of >)")
def _(px, req, fwd):
    if not is_call(req, "mcp_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("ok") and len(r["content"]["tools"]) == 50:
        r["content"]["truncated"] = True
    return resp


def contact_server(px, cfg):
    import subprocess
    import time
    cmd = [cfg.get("command")] + list(cfg.get("args") or [])
    if not cmd[0]:
        return
    cwd = cfg.get("cwd") or "."
    cwd = cwd if os.path.isabs(cwd) else ws_path(px, cwd)
    env = dict(os.environ, **(cfg.get("env") or {}))
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             cwd=cwd, env=env, text=True)
    except Exception:
        return
    try:
        msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "x", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}]
        for m in msgs:
            p.stdin.write(json.dumps(m) + "\n")
            p.stdin.flush()
            if "id" in m:
                p.stdout.readline()
    except Exception:
        pass
    finally:
        try:
            p.stdin.close()
            p.wait(timeout=3)
        except Exception:
            p.kill()


@reg("mcp_disabled_server_contacted", "MCP-04",
     "the gateway connects to (initialize + tools/list) a granted server before checking that it "
     "is disabled / not configured; the call still answers MCP-NOT-CONFIGURED")
def _(px, req, fwd):
    if not is_call(req, "mcp_describe", "mcp_call", "mcp_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    targets = []
    if r.get("error_code") == "MCP-NOT-CONFIGURED":
        targets = [(r.get("error_detail") or {}).get("server")]
    elif r.get("ok") and A(req).get("tool") == "mcp_search":
        targets = [u["server"] for u in r["content"].get("unavailable_servers") or []
                   if u.get("status") in ("disabled", "not-configured")]
    done = st(px).setdefault("contacted", set())
    for s in targets:
        cfg = mcp_config(px).get(s)
        if cfg and s not in done and cfg.get("configured", True) is not False:
            done.add(s)
            contact_server(px, cfg)
    return resp


@reg("mcp_external_knowledge_name_exact", "MCP-05",
     "a knowledge source named like a configured MCP server is flagged MCP-EXTERNAL-AS-KNOWLEDGE "
     "only on an exact match: `Notion` (server `notion`) slips through and saves")
def _(px, req, fwd):
    pairs = st(px).setdefault("kn_pairs", [])
    if req.get("op") in SRC_OPS:
        text = get_source(A(req))
        cfg = list(mcp_config(px).keys())
        if text is not None and cfg:
            new = text
            for m in re.finditer(r"name\s*:\s*[\"']?([A-Za-z0-9._-]+)", text):
                n = m.group(1)
                if n not in cfg and any(fold(c) == fold(n) for c in cfg):
                    ph = n[:-1] + "\u01eb"
                    new = new[:m.start(1)] + ph + new[m.end(1):]
                    if (ph, n) not in pairs:
                        pairs.append((ph, n))
            if new != text:
                return deep_replace(fwd(set_source(req, new)), pairs)
    if pairs:
        return deep_replace(fwd(req), pairs)
    return None


# ================================================================= APPR
def _is_card(o):
    return isinstance(o, dict) and "origin" in o and "state" in o and "id" in o and "action" in o


def apply_card_overrides(px, resp):
    ov = st(px).get("card_ov") or {}
    if not ov:
        return resp

    def w(o):
        if isinstance(o, dict):
            if _is_card(o) and o["id"] in ov:
                o.update(ov[o["id"]])
            for v in o.values():
                w(v)
        elif isinstance(o, list):
            for v in o:
                w(v)
    w(resp)
    return resp


def pending_card(resp):
    r = R(resp)
    if r and r.get("error_code") == "APPROVAL-PENDING":
        return (r.get("error_detail") or {}).get("card")
    return None


@reg("appr_edit_card_action_write", "APPR-02",
     "cards raised by `edit` carry action `write` (edit is treated as a kind of write when the "
     "card is built), not the call's own action `edit`")
def _(px, req, fwd):
    resp = fwd(req)
    if is_call(req, "edit"):
        c = pending_card(resp)
        if c:
            st(px).setdefault("card_ov", {})[c["id"]] = {"action": "write"}
    return apply_card_overrides(px, resp)


@reg("appr_user_denial_not_terminal", "APPR-04",
     "a blocked call whose card the user denies answers APPROVAL-DENIED with "
     "terminal_for_attempt: false (the model retries the same call)")
def _(px, req, fwd):
    resp = fwd(req)
    if req.get("op") == "card.decide" and A(req).get("decision") == "deny":
        r = R(resp)
        if r and isinstance(r.get("result"), dict) and r["result"].get("error_code") == "APPROVAL-DENIED":
            r["result"]["terminal_for_attempt"] = False
    return resp


@reg("appr_status_running_while_waiting", "APPR-04",
     "an agent with a pending card is reported `running` (status kept as a field set at spawn and "
     "on stop), never `suspended`")
def _(px, req, fwd):
    resp = fwd(req)
    r = R(resp)
    if r and req.get("op") == "cards.list":
        for a in r.get("agents") or []:
            if a.get("status") == "suspended":
                a["status"] = "running"
    return resp


def _canonical(args):
    from capconf.simulator.approval.cards import canonical_json
    return canonical_json(args)


def _summary_from(px, req):
    args = A(req).get("args")
    if A(req).get("tool") == "mcp_call" and isinstance(args, dict):
        args = args.get("arguments")
    try:
        return _canonical(args)
    except Exception:
        return None


@reg("appr_summary_cut_utf16", "APPR-02",
     "the card summary is cut after 200 UTF-16 code units (JS slice), not 200 code points: "
     "summaries with emoji are shorter and may end in half a surrogate pair (U+FFFD)")
def _(px, req, fwd):
    resp = fwd(req)
    if req.get("op") == "tool.call":
        c = pending_card(resp)
        if c:
            full = _summary_from(px, req)
            if full is not None:
                u = full.encode("utf-16-le")
                if len(u) // 2 > 200:
                    s = u[:400].decode("utf-16-le", "replace") + "..."
                    if s != c["summary"]:
                        st(px).setdefault("card_ov", {})[c["id"]] = {"summary": s}
    return apply_card_overrides(px, resp)


@reg("appr_summary_ellipsis_at_200", "APPR-02",
     "the card summary gets `...` when it is 200 code points or longer (>= instead of >), so an "
     "exactly-200 summary is shown as cut")
def _(px, req, fwd):
    resp = fwd(req)
    if req.get("op") == "tool.call":
        c = pending_card(resp)
        if c and len(c["summary"]) == 200:
            st(px).setdefault("card_ov", {})[c["id"]] = {"summary": c["summary"] + "..."}
    return apply_card_overrides(px, resp)


def _realpath_of(px, path):
    p = path if os.path.isabs(path) else ws_path(px, path)
    return os.path.realpath(p)


def _inside(p, root):
    root = root.rstrip("/") or "/"
    return p == root or p.startswith(root + "/")


def _target_class(px, path):
    rp = _realpath_of(px, path)
    ws = os.path.realpath(workspace(px))
    if _inside(rp, ws):
        return "inside-workspace"
    for r in policy(px).get("writable_roots") or []:
        if _inside(rp, os.path.realpath(r)):
            return "inside-writable-root"
    return "outside"


@reg("appr_approved_call_re_resolves", "APPR-01",
     "an approved call re-resolves its path when it runs and follows a link planted while the card "
     "waited, as long as the new target is in the same class (e.g. still inside the workspace)")
def _(px, req, fwd):
    if req.get("op") == "tool.call" and A(req).get("tool") in ("write", "edit", "read"):
        resp = fwd(req)
        c = pending_card(resp)
        if c:
            path = (A(req).get("args") or {}).get("path")
            if isinstance(path, str):
                st(px).setdefault("pend", {})[c["id"]] = (A(req)["tool"], A(req).get("args"),
                                                          _target_class(px, path),
                                                          _realpath_of(px, path))
        return resp
    if req.get("op") == "card.decide" and A(req).get("decision") == "approve":
        resp = fwd(req)
        r = R(resp)
        info = (st(px).get("pend") or {}).get(A(req).get("card"))
        if r and info and isinstance(r.get("result"), dict) and r["result"].get("error_code") == "target_changed":
            tool, args, cls, _ = info
            path = args["path"]
            if _target_class(px, path) == cls:
                target = _realpath_of(px, path)
                try:
                    if tool == "write":
                        with open(target, "w", encoding="utf-8") as f:
                            f.write(args["content"])
                        r["result"] = {"ok": True, "content": {"path": path,
                                                               "bytes": len(args["content"].encode())}}
                    elif tool == "edit":
                        t = open(target, encoding="utf-8").read()
                        if t.count(args["old"]) == 1:
                            t = t.replace(args["old"], args["new"])
                            with open(target, "w", encoding="utf-8") as f:
                                f.write(t)
                            r["result"] = {"ok": True, "content": {"path": path, "bytes": len(t.encode())}}
                    elif tool == "read":
                        lines = open(target, encoding="utf-8", errors="replace").read().split("\n")
                        r["result"] = {"ok": True, "content": {"path": path, "offset": 1, "lines": lines,
                                                               "truncated": False}}
                except OSError:
                    pass
        return resp
    return None


@reg("appr_root_inside_workspace_is_a_root", "APPR-01",
     "targets are classified against the writable roots before the workspace: a path in a writable "
     "root that lies inside the workspace is `inside-writable-root`, so auto-within-workspace asks "
     "for a write there")
def _(px, req, fwd):
    if not (req.get("op") == "tool.call" and A(req).get("tool") in ("write", "edit", "bash")):
        return apply_card_overrides(px, fwd(req))
    pol = policy(px)
    if pol.get("tier") not in ("auto-within-workspace", "auto-edit"):
        return apply_card_overrides(px, fwd(req))
    args = A(req).get("args") or {}
    tool = A(req)["tool"]
    path = args.get("cwd", ".") if tool == "bash" else args.get("path")
    if not isinstance(path, str) or workspace(px) is None:
        return apply_card_overrides(px, fwd(req))
    rp = _realpath_of(px, path)
    ws = os.path.realpath(workspace(px))
    roots_in = [os.path.realpath(r) for r in pol.get("writable_roots") or []
                if _inside(os.path.realpath(r), ws)]
    if not any(_inside(rp, r) for r in roots_in):
        return apply_card_overrides(px, fwd(req))
    dec = px.side("approval.decide", {"tier": pol["tier"], "action": tool, "target": "inside-writable-root",
                                      "attendance": pol["attendance"], "ask_policy": pol["ask_policy"]})
    if not dec or dec["verdict"] == "allow":
        return apply_card_overrides(px, fwd(req))
    if dec["verdict"] == "deny":
        return reply(req, env_err("APPROVAL-DENIED", "%s was denied: %s" % (tool, dec["reason"]),
                                  {"rule": dec["rule"], "tool": tool}, True))
    px.side("approval.setup", dict(pol, tier="confirm-before-change"))
    try:
        resp = fwd(req)
    finally:
        px.side("approval.setup", pol)
    c = pending_card(resp)
    if c:
        st(px).setdefault("card_ov", {})[c["id"]] = {"reason": dec["reason"]}
    return apply_card_overrides(px, resp)


# ================================================================= MEM
@reg("mem_list_case_insensitive_order", "MEM-03",
     "memory_read's file listing is sorted with a locale / case-insensitive compare "
     "(`a.md` before `B.md`) instead of code-point order")
def _(px, req, fwd):
    resp = fwd(req)
    if is_call(req, "memory_read"):
        r = R(resp)
        if r and r.get("ok") and "files" in r["content"]:
            for k in ("files", "daily_files"):
                r["content"][k] = sorted(r["content"][k], key=lambda n: (n.lower(), n))
    return resp


@reg("mem_daily_within_budget", "MEM-06",
     "memory_write reports within_resident_budget: true for a small daily entry (size <= 4096 "
     "checked without `not daily`), telling the model a daily file is resident")
def _(px, req, fwd):
    resp = fwd(req)
    if is_call(req, "memory_write"):
        r = R(resp)
        if r and r.get("ok") and r["content"].get("daily"):
            r["content"]["within_resident_budget"] = r["content"]["size"] <= 4096
    return resp


def _nested_by_string(a, b):
    return a.startswith(b) or b.startswith(a)


def _nested_by_path(a, b):
    a2, b2 = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return a2.startswith(b2) or b2.startswith(a2)


@reg("mem_overlap_checked_as_string_prefix", "MEM-04",
     "the subagent_root / main_dir overlap check is a string prefix test: `mem` and `memory` (two "
     "sibling folders) are refused as nested (world_invalid)")
def _(px, req, fwd):
    if req.get("op") == "world.setup":
        m = A(req).get("memory")
        if isinstance(m, dict):
            sr = m.get("subagent_root", ".capconf/memory/agents")
            md = m.get("main_dir", ".capconf/memory/main")
            if isinstance(sr, str) and isinstance(md, str) and _nested_by_string(sr, md) \
                    and not _nested_by_path(sr, md):
                px.reset()
                px.world = None
                return {"id": req.get("id"), "ok": False,
                        "error": {"code": "world_invalid",
                                  "message": "memory.subagent_root %r and memory.main_dir %r overlap" % (sr, md),
                                  "path": ["args", "memory", "subagent_root"]}}
    return None


@reg("mem_query_limit_in_bytes", "MEM-06",
     "memory_search's 256 limit on the query is counted in UTF-8 bytes (Rust `.len()`): a Chinese "
     "query of 90 characters (270 bytes) is refused MEM-BAD-ARGUMENTS")
def _(px, req, fwd):
    if is_call(req, "memory_search"):
        q = (A(req).get("args") or {}).get("query")
        if isinstance(q, str) and len(q) <= 256 < len(q.encode("utf-8", "surrogatepass")):
            probe = fwd(req)
            pr = R(probe)
            if pr and pr.get("ok"):
                probe["result"] = env_err("MEM-BAD-ARGUMENTS", "query is longer than 256 characters",
                                          {"tool": "memory_search", "argument": "query"}, None)
            return probe
    return None


def _append(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


@reg("mem_entry_limit_in_code_points", "MEM-07",
     "the 4096 limit of one memory_write entry is counted in code points (len(str)): a 2,000-"
     "character Chinese entry (6,000 bytes) is appended instead of refused MEM-ENTRY-TOO-LARGE")
def _(px, req, fwd):
    if not is_call(req, "memory_write"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or r.get("error_code") != "MEM-ENTRY-TOO-LARGE":
        return resp
    args = A(req).get("args") or {}
    content = args.get("content")
    entry = content if content.endswith("\n") else content + "\n"
    if len(entry) > 4096:
        return resp
    d = mem_dir(px, A(req).get("agent"))
    if not d:
        return resp
    daily = bool(args.get("daily"))
    folder = os.path.join(d, "daily") if daily else d
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, args["file"])
    data = entry.encode("utf-8")
    try:
        old = os.path.getsize(path) if os.path.exists(path) else 0
        if old:
            with open(path, "rb") as f:
                f.seek(old - 1)
                if f.read(1) != b"\n":
                    data = b"\n" + data
        _append(path, data)
        size = os.path.getsize(path)
    except OSError:
        return resp
    resp["result"] = {"ok": True, "content": {"file": args["file"], "daily": daily, "appended_bytes": len(data),
                                              "size": size, "within_resident_budget": (not daily) and size <= 4096}}
    return resp


@reg("mem_append_without_separator", "MEM-07",
     "memory_write appends `content + \\n` without first adding a newline when the file's last byte "
     "is not one (a hand-edited file), so the entry fuses with the last line")
def _(px, req, fwd):
    if not is_call(req, "memory_write"):
        return None
    args = A(req).get("args") or {}
    d = mem_dir(px, A(req).get("agent"))
    path = None
    old = None
    if d and isinstance(args.get("file"), str) and "/" not in args["file"]:
        path = os.path.join(d, "daily", args["file"]) if args.get("daily") else os.path.join(d, args["file"])
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                old = open(path, "rb").read()
        except OSError:
            old = None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("ok") and old and not old.endswith(b"\n"):
        try:
            now = open(path, "rb").read()
            if now.startswith(old) and now[len(old):len(old) + 1] == b"\n":
                with open(path, "r+b") as f:
                    f.write(old + now[len(old) + 1:])
                    f.truncate()
                c = r["content"]
                c["appended_bytes"] -= 1
                c["size"] -= 1
                c["within_resident_budget"] = (not c["daily"]) and c["size"] <= 4096
        except OSError:
            pass
    return resp


@reg("mem_hardlink_write", "MEM-10",
     "memory_write only refuses symlinks: it appends to a memory file that has several hard links "
     "(e.g. one planted to the main memory's file)")
def _(px, req, fwd):
    if not is_call(req, "memory_write"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or r.get("error_code") != "MEM-NOT-REGULAR-FILE":
        return resp
    det = r.get("error_detail") or {}
    if det.get("kind") not in ("hard_linked", "hardlink", "hard_link"):
        return resp
    args = A(req).get("args") or {}
    d = mem_dir(px, A(req).get("agent"))
    if not d:
        return resp
    path = os.path.join(d, "daily", args["file"]) if args.get("daily") else os.path.join(d, args["file"])
    content = args["content"]
    data = (content if content.endswith("\n") else content + "\n").encode()
    try:
        old = open(path, "rb").read()
        if old and not old.endswith(b"\n"):
            data = b"\n" + data
        _append(path, data)
        size = os.path.getsize(path)
    except OSError:
        return resp
    daily = bool(args.get("daily"))
    resp["result"] = {"ok": True, "content": {"file": args["file"], "daily": daily, "appended_bytes": len(data),
                                              "size": size, "within_resident_budget": (not daily) and size <= 4096}}
    return resp


@reg("mem_file_name_checked_before_unknown_args", "MEM-03",
     "memory tools validate `file` before looking for undefined arguments: `{file: '../x.md', "
     "scope: 'global'}` answers MEM-BAD-FILE-NAME, not MEM-UNKNOWN-ARGUMENT")
def _(px, req, fwd):
    if not is_call(req, "memory_write", "memory_read", "memory_search"):
        return None
    args = A(req).get("args")
    resp = fwd(req)
    r = R(resp)
    if r and r.get("error_code") == "MEM-UNKNOWN-ARGUMENT" and isinstance(args, dict) and "file" in args:
        allowed = (r.get("error_detail") or {}).get("allowed") or []
        r2 = copy.deepcopy(req)
        r2["args"]["args"] = {k: v for k, v in args.items() if k in allowed}
        if A(req)["tool"] == "memory_write":
            r2["args"]["args"].setdefault("content", "x")
        from capconf.simulator.memory import names as mnames
        try:
            prob = mnames.name_problem(args["file"]) if isinstance(args["file"], str) else None
            reason = prob.reason if prob else None
        except Exception:
            reason = None
        if reason is None:
            return resp
        resp["result"] = env_err("MEM-BAD-FILE-NAME", "bad memory file name (%s)" % reason,
                                 {"file": args["file"], "reason": reason}, None)
    return resp


# ---- memory section renderer (checked against the reference before a bug is applied)
MEM_USAGE = ("memory_write appends entries; memory_read and memory_search look them up. Root files are "
             "resident and shown below (at most 4096 bytes per file and 12288 bytes in all); daily files "
             "are found only with memory_search.")


def mem_entries(d):
    """[(name, kind, data)] kind: file | bad_name | symlink | directory | hard_linked | other."""
    from capconf.simulator.memory import names as mnames
    out = []
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return None
    for n in names:
        if not n.lower().endswith(".md"):
            continue
        if mnames.name_problem(n) is not None:
            out.append((n, "bad_name", None))
            continue
        p = os.path.join(d, n)
        s = os.lstat(p)
        import stat
        if stat.S_ISLNK(s.st_mode):
            out.append((n, "symlink", None))
        elif stat.S_ISDIR(s.st_mode):
            out.append((n, "directory", None))
        elif not stat.S_ISREG(s.st_mode):
            out.append((n, "other", None))
        elif s.st_nlink > 1:
            out.append((n, "hard_linked", None))
        else:
            out.append((n, "file", open(p, "rb").read()))
    return out


def render_mem_blocks(entries, invalid_costs=False, count_headings=False, print_bad=False,
                      file_budget_on_stripped=False):
    blocks, total, bad = [], 0, 0
    for n, kind, data in entries:
        if kind == "bad_name":
            if print_bad:
                blocks.append("- `%s` omitted: its name breaks the memory file-name rule." % n)
            else:
                bad += 1
            continue
        if kind != "file":
            blocks.append("- `%s` omitted: not a regular file (%s); memory never follows links." % (n, kind))
            continue
        size = len(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            blocks.append("- `%s` omitted: not valid UTF-8." % n)
            if invalid_costs:
                total += size
            continue
        body = text.rstrip("\n")
        block = ("### %s\n%s" % (n, body)) if body else "### %s" % n
        cost = len(block.encode()) if count_headings else size
        fsize = len(body.encode()) if file_budget_on_stripped else size
        if fsize > 4096:
            blocks.append("- `%s` omitted: %d bytes is over the 4096-byte per-file budget; use memory_read." % (n, size))
        elif total + cost > 12288:
            blocks.append("- `%s` omitted: %d bytes would take the section over its 12288-byte budget; use "
                          "memory_read." % (n, size))
        else:
            total += cost
            blocks.append(block)
    if bad:
        blocks.append("- %d other .md entries skipped: their names break the memory file-name rule." % bad)
    return blocks


def _mem_section_bug(px, req, fwd, **flags):
    if req.get("op") != "prompt.assemble":
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    part = next((p for p in r["parts"] if p["kind"] == "catalog.memory"), None)
    if not part:
        return resp
    la = {k: v for k, v in A(req).items() if k in ("source", "source_b64", "format", "filename")}
    loc = px.side("memory.locate", la)
    if not loc or not loc.get("directory"):
        return resp
    entries = mem_entries(ws_path(px, loc["directory"]))
    if entries is None:
        return resp
    head = "\n".join(part["text"].split("\n")[:3])
    good = render_mem_blocks(entries)
    good_text = head + "\n\n" + ("\n\n".join(good) if good else "(no resident memory files)")
    if good_text != part["text"]:
        return resp
    bad = render_mem_blocks(entries, **flags)
    part["text"] = head + "\n\n" + ("\n\n".join(bad) if bad else "(no resident memory files)")
    rebuild_prompt(r)
    return resp


@reg("mem_invalid_utf8_costs_budget", "MEM-05",
     "a root file that is not valid UTF-8 is omitted with its note but its size is still charged "
     "to the 12288-byte section budget, so later files that fit are omitted")
def _(px, req, fwd):
    return _mem_section_bug(px, req, fwd, invalid_costs=True)


@reg("mem_budget_counts_rendered_block", "MEM-05",
     "the 12288-byte section budget is charged with the rendered block (`### name` line + content) "
     "instead of the file contents only")
def _(px, req, fwd):
    return _mem_section_bug(px, req, fwd, count_headings=True)


@reg("mem_bad_names_printed", "MEM-05",
     "root .md entries whose names break MEM-09 each get a note that prints the name (a name can "
     "carry Markdown or a newline into the prompt) instead of one count line")
def _(px, req, fwd):
    return _mem_section_bug(px, req, fwd, print_bad=True)


@reg("mem_file_budget_on_stripped_text", "MEM-05",
     "the 4096-byte per-file budget is checked on the text after its trailing newlines are dropped, "
     "so a 4097-byte file ending in a newline is injected")
def _(px, req, fwd):
    return _mem_section_bug(px, req, fwd, file_budget_on_stripped=True)


@reg("mem_empty_memory_no_section", "MEM-02",
     "a declared memory with no resident file renders no `## Memory` section at all (the model "
     "is never told it has memory)")
def _(px, req, fwd):
    if req.get("op") != "prompt.assemble":
        return None
    resp = fwd(req)
    r = R(resp)
    if r:
        n = len(r["parts"])
        r["parts"] = [p for p in r["parts"] if not (p["kind"] == "catalog.memory"
                                                    and p["text"].endswith("(no resident memory files)"))]
        if n != len(r["parts"]):
            rebuild_prompt(r)
    return resp


@reg("mem_hit_cut_utf16", "MEM-06",
     "memory_search cuts hit text at 400 UTF-16 code units (JS slice) instead of 400 code points")
def _(px, req, fwd):
    if not is_call(req, "memory_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    d = mem_dir(px, A(req).get("agent"))
    if not d:
        return resp
    for h in r["content"]["hits"]:
        p = os.path.join(d, "daily", h["file"]) if h["daily"] else os.path.join(d, h["file"])
        try:
            lines = open(p, "rb").read().decode("utf-8", "replace").split("\n")
        except OSError:
            continue
        if h["line"] > len(lines):
            continue
        ln = lines[h["line"] - 1]
        if ln.endswith("\r"):
            ln = ln[:-1]
        u = ln.encode("utf-16-le")
        if len(u) // 2 > 400:
            h["text"] = u[:800].decode("utf-16-le", "replace")
            h["line_truncated"] = True
    return resp


@reg("mem_search_budget_stops_at_first_skip", "MEM-06",
     "memory_search stops at the first file that would cross the 8 MiB read budget: every later "
     "file is skipped too, even small ones that would still fit")
def _(px, req, fwd):
    if not is_call(req, "memory_search"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or not r.get("ok"):
        return resp
    c = r["content"]
    sk = [s for s in c.get("skipped") or [] if s.get("reason") == "read_budget"]
    if not sk:
        return resp
    first = min(sk, key=lambda s: (s["daily"], s["file"]))
    key0 = (first["daily"], first["file"])
    d = mem_dir(px, A(req).get("agent"))
    if not d:
        return resp
    later = []
    for daily, folder in ((False, d), (True, os.path.join(d, "daily"))):
        try:
            for n in sorted(os.listdir(folder)):
                p = os.path.join(folder, n)
                if n.endswith(".md") and os.path.isfile(p) and not os.path.islink(p) and (daily, n) > key0:
                    later.append((daily, n, os.path.getsize(p)))
        except OSError:
            pass
    have = {(s["daily"], s["file"]) for s in c["skipped"]}
    removed = 0
    for daily, n, size in later:
        if (daily, n) not in have:
            c["skipped"].append({"file": n, "daily": daily, "reason": "read_budget"})
            c["bytes_read"] -= size
            c["files_searched"] -= 1
            before = len(c["hits"])
            c["hits"] = [h for h in c["hits"] if not (h["daily"] == daily and h["file"] == n)]
            removed += before - len(c["hits"])
    c["total_matches"] -= removed
    return resp


# ================================================================= round 2
def _insert_knowledge(doc, knowledge, md):
    lines = doc.split("\n")
    block = ["knowledge:"] + sum([["- name: %s" % json.dumps(k["name"], ensure_ascii=False),
                                   "  glob: %s" % json.dumps(k["glob"], ensure_ascii=False)] for k in knowledge], [])
    start = 1 if md else 0
    for i in range(start, len(lines)):
        ln = lines[i]
        if md and ln.rstrip() in ("---", "..."):
            return "\n".join(lines[:i] + block + lines[i:])
        m = re.match(r"^([^\s#:'\"-][^:]*?)\s*:", ln)
        if m and m.group(1) not in ("name", "description", "tools", "skills", "mcp"):
            return "\n".join(lines[:i] + block + lines[i:])
    return "\n".join(lines + block)


@reg("kb_requires_read_checks_declared", "KB-08",
     "KB-REQUIRES-READ checks that `read` is DECLARED in `tools`, not that it is granted: knowledge "
     "with `read` declared but absent from the session (TOOL-NOT-IN-SESSION) loads and saves silently")
def _(px, req, fwd):
    op = req.get("op")
    if op not in DEF_OPS:
        return None
    a = A(req)
    p = side_parse(px, a)
    if not p or not p.get("loaded"):
        return None
    declared_read = any(fold(row["declared"].strip(" \t")) == "read" for row in p.get("tool_resolution") or [])
    if not declared_read or not any(d["code"] == "KB-REQUIRES-READ" for d in p["diagnostics"]):
        return None
    if op != "definition.save" and a.get("mode") != "save":
        resp = fwd(req)
        r = R(resp)
        if r:
            r["diagnostics"] = [d for d in r.get("diagnostics") or [] if d.get("code") != "KB-REQUIRES-READ"]
        return resp
    if op != "definition.save":
        resp = fwd(req)
        r = R(resp)
        if r:
            r["diagnostics"] = [d for d in r.get("diagnostics") or [] if d.get("code") != "KB-REQUIRES-READ"]
        return resp
    ps = side_parse(px, a, mode="save")
    diags = [d for d in ps["diagnostics"] if d.get("code") != "KB-REQUIRES-READ"]
    if any(d["severity"] == "error" for d in diags):
        return reply(req, {"saved": False, "document": None, "tools": ps.get("tools"), "diagnostics": diags})
    text = get_source(a)
    md = is_markdown(a, text)
    head = (split_md(text) or (None,))[0] if md else text
    lines, blocks = top_blocks(head)
    kb = [b for b in blocks if b[0] == "knowledge"]
    if not kb:
        return None
    _, s0, e0 = kb[0]
    stripped = "\n".join(lines[:s0] + lines[e0:])
    new = stripped + "\n" + split_md(text)[1] if md else stripped
    resp = fwd(set_source(req, new))
    r = R(resp)
    if not r or not r.get("saved"):
        return None
    r["document"] = _insert_knowledge(r["document"], p["definition"]["knowledge"] or [], md)
    r["diagnostics"] = diags
    return resp


@reg("builtins_list_declared_spelling", "DEF-07",
     "builtins.list reports a built-in's tools as written in its definition (`READ`, `webfetch`), "
     "not the granted canonical names")
def _(px, req, fwd):
    if req.get("op") != "builtins.list":
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    srcs = {}
    for b in (px.world or {}).get("builtins") or []:
        p = side_parse(px, {"source": b.get("source"), "filename": b.get("filename")})
        if p and p.get("definition"):
            srcs[p["definition"].get("name")] = p
    for b in r.get("builtins") or []:
        p = srcs.get(b["name"])
        if not p:
            continue
        spell = {}
        for row in p.get("tool_resolution") or []:
            if row["status"] == "granted":
                spell.setdefault(row["canonical"], row["declared"].strip(" \t"))
        b["tools"] = [spell.get(t, t) for t in b["tools"]]
    return resp


DIMS = {"use_skill": "skills", "skill_search": "skills", "kb_search": "knowledge", "mcp_search": "mcp",
        "mcp_describe": "mcp", "mcp_call": "mcp", "memory_write": "memory", "memory_read": "memory",
        "memory_search": "memory"}


def _dim_at_tools_pos(names, rows):
    """Move the dimension tools named in `tools` (and granted) to their declared position."""
    listed = [row["canonical"] for row in rows if row["status"] == "granted" and row["canonical"] in DIMS]
    if not listed:
        return names
    groups = []
    for t in listed:
        g = [x for x in names if DIMS.get(x) == DIMS[t]]
        if g and g not in groups:
            groups.append(g)
    rest = [x for x in names if not any(x in g for g in groups)]
    out = []
    done = set()
    order = [row["canonical"] for row in rows if row["status"] == "granted"]
    for t in order:
        if t in DIMS:
            g = next((g for g in groups if t in g), None)
            if g and id(g) not in done:
                done.add(id(g))
                out.extend(g)
        elif t in rest and t not in out:
            out.append(t)
    out += [x for x in rest if x not in out]
    for g in groups:
        if id(g) not in done:
            out += g
    return out


@reg("tool_dimension_tool_mounted_at_tools_position", "TOOL-03",
     "a dimension tool also listed in `tools` (dimension declared) mounts its dimension's tools at "
     "its `tools` position instead of in the dimension's place after the granted tools")
def _(px, req, fwd):
    op = req.get("op")
    if op not in ("tools.mounted", "agent.spawn"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    p = side_parse(px, A(req))
    rows = (p or {}).get("tool_resolution") or []
    if op == "agent.spawn":
        new = _dim_at_tools_pos(r["tools"], rows)
        r["tools"] = new
    else:
        names = [t["name"] for t in r["tools"]]
        by = {t["name"]: t for t in r["tools"]}
        r["tools"] = [by[n] for n in _dim_at_tools_pos(names, rows)]
    return resp


@reg("mcp_refusal_in_declaration_order", "MCP-02",
     "the MCP-02 refusal lists the granted servers in declaration order, not code-point order")
def _(px, req, fwd):
    if not is_call(req, "mcp_describe", "mcp_call"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r or r.get("error_code") not in ("MCP-SERVER-NOT-GRANTED", "MCP-NOT-CONFIGURED"):
        return resp
    order = granted_servers(px, A(req).get("agent"))
    det = r.get("error_detail") or {}
    gs = det.get("granted_servers")
    if not isinstance(gs, list) or len(gs) < 2:
        return resp
    gs.sort(key=lambda g: order.index(g["name"]) if g["name"] in order else 99)
    m = re.search(r"Granted MCP servers: (.*)\.$", r.get("error_message", ""))
    if m:
        items = m.group(1).split(", ")
        items.sort(key=lambda it: order.index(it.split(" (")[0]) if it.split(" (")[0] in order else 99)
        r["error_message"] = r["error_message"][:m.start(1)] + ", ".join(items) + "."
    return resp


@reg("mcp_refusal_name_unescaped", "MCP-02",
     "the MCP-02 refusal message embeds the refused server name raw, so a name with a newline "
     "injects lines into the model's context")
def _(px, req, fwd):
    if not is_call(req, "mcp_describe", "mcp_call"):
        return None
    resp = fwd(req)
    r = R(resp)
    if r and r.get("error_code") == "MCP-SERVER-NOT-GRANTED":
        name = (r.get("error_detail") or {}).get("server")
        if isinstance(name, str):
            msg = r["error_message"]
            i, j = msg.find("MCP server "), msg.find(" is not granted")
            if i >= 0 and j > i:
                r["error_message"] = msg[:i] + "MCP server '%s'" % name + msg[j:]
    return resp


@reg("mcp_disabled_wins_over_not_configured", "MCP-04",
     "a server that is both disabled and not configured is reported `disabled` (enable it) instead "
     "of `not-configured` (configure first)")
def _(px, req, fwd):
    resp = fwd(req)
    both = [n for n, c in mcp_config(px).items()
            if c.get("enabled", True) is False and c.get("configured", True) is False]
    if not both or not ok(resp):
        return resp

    def w(o):
        if isinstance(o, dict):
            nm = o.get("name", o.get("server"))
            if nm in both and o.get("status") == "not-configured":
                o["status"] = "disabled"
                if "message" in o and "configure" in o["message"]:
                    o["message"] = "the user can enable it in settings"
            for k, v in list(o.items()):
                if isinstance(v, str):
                    for n in both:
                        v = v.replace("%s (not-configured)" % n, "%s (disabled)" % n)
                        v = v.replace("%s (not configured: the user can configure it in settings)" % n,
                                      "%s (disabled: the user can enable it in settings)" % n)
                        v = v.replace("'%s' exists but is not configured; it is mounted, and its tools work once "
                                      "the user configures it in settings" % n,
                                      "'%s' exists but is disabled; it is mounted, and its tools work once the "
                                      "user enables it in settings" % n)
                        v = v.replace("'%s' is granted but not configured; the user can configure it in settings"
                                      % n, "'%s' is granted but disabled; the user can enable it in settings" % n)
                    o[k] = v
                else:
                    w(v)
        elif isinstance(o, list):
            for i, v in enumerate(o):
                if isinstance(v, str):
                    continue
                w(v)
    w(resp["result"])
    if "parts" in resp["result"]:
        rebuild_prompt(resp["result"])
    return resp


@reg("skill_duplicate_declaration_keeps_last", "SKILL-01",
     "a skill declared twice is kept once at its LAST declaration: catalog and skills.resolved order "
     "follow the repeat's position")
def _(px, req, fwd):
    op = req.get("op")
    if op not in ("prompt.assemble", "skills.resolved"):
        return None
    resp = fwd(req)
    r = R(resp)
    if not r:
        return resp
    if op == "prompt.assemble":
        decl = ((side_parse(px, A(req)) or {}).get("definition") or {}).get("skills") or []
    else:
        decl = ((agent_def(px, A(req).get("agent")) or {}).get("definition") or {}).get("skills") or []
    folded = [fold(x.strip()) for x in decl]
    if len(set(folded)) == len(folded):
        return resp
    last = {f: i for i, f in enumerate(folded)}

    def key(name):
        return last.get(fold(name), 999)
    if op == "skills.resolved":
        r["skills"].sort(key=lambda s: key(s["name"]))
        return resp
    for p in r["parts"]:
        if p["kind"] != "catalog.skills":
            continue
        lines = p["text"].split("\n")
        head, entries, cur = [], [], None
        for ln in lines:
            if ln.startswith("- name: "):
                cur = [ln]
                entries.append(cur)
            elif cur is not None and ln.startswith("  "):
                cur.append(ln)
            elif cur is None:
                head.append(ln)
            else:
                return resp
        pref = [e for e in entries if any(x.startswith("  preferred for:") for x in e)]
        rest = [e for e in entries if e not in pref]
        rest.sort(key=lambda e: key(e[0][len("- name: "):]))
        p["text"] = "\n".join(head + [x for e in pref + rest for x in e])
    rebuild_prompt(r)
    return resp


@reg("appr_stopped_cards_forgotten", "APPR-04",
     "TaskStop deletes the stopped agents' cards after denying them: they vanish from cards.list "
     "and a later card.decide on one answers CARD-NOT-FOUND instead of CARD-ALREADY-SETTLED")
def _(px, req, fwd):
    resp = fwd(req)
    op = req.get("op")
    if op == "task.stop" and ok(resp):
        gone = st(px).setdefault("gone", set())
        for c in resp["result"].get("settled") or []:
            gone.add(c["id"])
    gone = st(px).get("gone") or set()
    if op == "cards.list" and ok(resp):
        resp["result"]["cards"] = [c for c in resp["result"]["cards"] if c["id"] not in gone]
    if op == "card.decide" and A(req).get("card") in gone and not resp.get("ok"):
        resp["error"] = {"code": "CARD-NOT-FOUND", "message": "no card with id %r" % A(req).get("card")}
    return resp


def _lexically_inside(px, path):
    ws = workspace(px).rstrip("/")
    p = path if os.path.isabs(path) else ws + "/" + path
    return p.startswith(ws + "/") or p == ws


@reg("appr_dotdot_not_collapsed", "APPR-01",
     "the target class is decided on the joined path without collapsing `..` (a prefix test on "
     "`<ws>/sub/../../x`), so `../x` paths are classified inside-workspace and run unasked")
def _(px, req, fwd):
    if not (req.get("op") == "tool.call" and A(req).get("tool") in ("write", "read", "bash")):
        return None
    args = A(req).get("args") or {}
    tool = A(req)["tool"]
    path = args.get("cwd") if tool == "bash" else args.get("path")
    if not isinstance(path, str) or ".." not in path.split("/") or workspace(px) is None:
        return None
    if not _lexically_inside(px, path) or _target_class(px, path) != "outside":
        return None
    agent = A(req).get("agent")
    mounted = (px.side("tools.mounted", {k: v for k, v in (agent_args(px, agent) or {}).items()
                                        if k in ("source", "source_b64", "format", "filename")}) or {})
    if tool not in [t["name"] for t in mounted.get("tools") or []]:
        return None
    pol = policy(px)
    dec = px.side("approval.decide", {"tier": pol["tier"], "action": tool, "target": "inside-workspace",
                                      "attendance": pol["attendance"], "ask_policy": pol["ask_policy"]})
    if not dec or dec["verdict"] != "allow":
        return None
    target = _realpath_of(px, path)
    try:
        if tool == "write":
            with open(target, "w", encoding="utf-8") as f:
                f.write(args.get("content", ""))
            return reply(req, {"ok": True, "content": {"path": path, "bytes": len(args.get("content", "").encode())}})
        if tool == "read":
            lines = open(target, encoding="utf-8", errors="replace").read().split("\n")
            return reply(req, {"ok": True, "content": {"path": path, "offset": 1, "lines": lines, "truncated": False}})
        return reply(req, env_err("not_simulated", "bash was allowed, but the reference simulator does not run "
                                  "commands", {"tool": "bash"}, None))
    except OSError as e:
        return reply(req, env_err("not_found", str(e), {"path": path}, None))

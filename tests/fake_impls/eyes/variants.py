"""Correct-but-different runtimes: a good suite must pass them (or fail only on
text the spec itself fixes verbatim)."""
import re

from bugs import walk, ok, envelope, map_agent_ids, A, rebuild

VARIANTS = {}
VDESCR = {}


def variant(name, text):
    def deco(fn):
        VARIANTS[name] = fn
        VDESCR[name] = text
        return fn
    return deco


# ------------------------------------------------------------------ messages
EXACT_CODES = {"MCP-SERVER-NOT-GRANTED", "MEM-SHARED-CONSENT"}   # spec: "MUST be exactly"
SYN = [("is not", "isn't"), ("does not", "doesn't"), ("cannot", "can't"), ("Remove", "Delete"),
       ("remove", "delete"), ("granted", "given"), ("missing", "absent"), ("file", "document"),
       ("should", "ought to"), ("must", "has to"), ("only", "solely"), ("Add", "Put"),
       ("the ", "this "), ("is ", "happens to be ")]
PROTECT = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\b[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)+\b|\S+__\S+|\b\d[\d,]*\b")


def reword(msg, keep=()):
    if not isinstance(msg, str) or not msg:
        return msg
    held = []

    def hold(m):
        held.append(m.group(0))
        return "\x00" + chr(0xE000 + len(held) - 1) + "\x00"
    s = msg
    for k in keep:                     # data carried verbatim (e.g. a not-grantable reason)
        if k and k in s:
            s = s.replace(k, "\x00" + chr(0xE000 + len(held)) + "\x00")
            held.append(k)
    s = PROTECT.sub(hold, s)
    for a, b in SYN:
        s = re.sub(r"\b%s(?=\W|$)" % re.escape(a.strip()), b.strip(), s)
    parts = [p.strip() for p in re.split(r"(?<=[.;])\s+", s) if p.strip()]
    s = "Heads-up: " + " ".join(reversed(parts))
    return re.sub("\x00([\ue000-\uf8ff])\x00", lambda m: held[ord(m.group(1)) - 0xE000], s)


@variant("alt_messages", "every human-readable message (diagnostics, envelopes, protocol errors) reworded; "
         "identifiers, quoted names, numbers and not-grantable reasons kept; the two messages the spec "
         "fixes verbatim (MCP-02 refusal, MEM-SHARED-CONSENT) untouched")
def _(px, req, fwd):
    resp = fwd(req)
    keep = [n.get("reason") for n in ((px.world or {}).get("not_grantable") or []) if isinstance(n, dict)]
    keep += ["The user can enable it in settings", "configures it in settings", "enables it in settings"]

    def fix(d):
        if "code" in d and "severity" in d and "message" in d and d["code"] not in EXACT_CODES:
            d["message"] = reword(d["message"], keep)
        if "error_code" in d and "error_message" in d and d["error_code"] not in EXACT_CODES:
            d["error_message"] = reword(d["error_message"], keep)
    walk(resp, fix)
    if not resp.get("ok") and isinstance(resp.get("error"), dict):
        resp["error"]["message"] = reword(resp["error"].get("message", ""), keep)
    return resp


# ------------------------------------------------------------------ key order
def reverse_keys(o):
    if isinstance(o, dict):
        return {k: reverse_keys(o[k]) for k in reversed(list(o.keys()))}
    if isinstance(o, list):
        return [reverse_keys(x) for x in o]
    return o


@variant("alt_key_order", "every JSON object in every response has its keys in reverse order")
def _(px, req, fwd):
    return reverse_keys(fwd(req))


# ------------------------------------------------------------------ extra keys
@variant("alt_extra_keys", "extra vendor keys on the response line, every result object, every CALL-03 "
         "envelope and every diagnostic (not on cards / skills.resolved, whose schemas are closed)")
def _(px, req, fwd):
    resp = fwd(req)
    resp["x_vendor"] = {"trace": "t-1"}
    r = resp.get("result")
    if isinstance(r, dict) and req.get("op") != "skills.resolved":
        r.setdefault("x_vendor", {"elapsed_ms": 3})

    def fix(d):
        if "code" in d and "severity" in d and "message" in d:
            d["x_hint"] = "vendor"
        if "error_code" in d or ("ok" in d and "content" in d):
            d.setdefault("request_id", "req-42")
    walk(r, fix)
    return resp


# ------------------------------------------------------------------ opaque ids
@variant("alt_agent_ids", "agent ids are other opaque strings (w7-0001, ...), still deterministic per world")
def _(px, req, fwd):
    return map_agent_ids(px, req, fwd, lambda i, st: "w7-%04d" % (len(st["i2e"]) + 1))


CARD_RE = re.compile(r"\bcard-(\d+)\b")


@variant("alt_card_ids", "card ids are other opaque strings (apv_1001, ...); NOTE: APPR-02 fixes `card-N`")
def _(px, req, fwd):
    a = A(req)
    if isinstance(a.get("card"), str):
        m = re.match(r"^apv_(\d+)$", a["card"])
        if m:
            a["card"] = "card-%d" % (int(m.group(1)) - 1000)
    resp = fwd(req)

    def fix(d):
        if isinstance(d.get("id"), str) and CARD_RE.fullmatch(d["id"]) and "state" in d:
            d["id"] = "apv_%d" % (1000 + int(d["id"][5:]))
        if isinstance(d.get("error_message"), str):
            d["error_message"] = CARD_RE.sub(lambda m: "apv_%d" % (1000 + int(m.group(1))), d["error_message"])
    walk(resp, fix)
    return resp


# ------------------------------------------------------------------ catalog wording
CATALOG_LINES = {
    "Load a skill's instructions with use_skill before following it. Skills not listed here may still be found with skill_search.":
        "Call use_skill to read a skill before you apply it; skill_search can find skills that are not shown below.",
    "(No skill is listed; find your skills with skill_search.)":
        "(Nothing is listed here: use skill_search to discover your skills.)",
    "Search these with kb_search; a hit is a line, not an answer: open the file with read.":
        "Use kb_search over these sources. Each hit is one line, not an answer, so open its file with read.",
    "These MCP servers are granted to you. Find their tools with mcp_search, read a tool's input schema with mcp_describe, and call it with mcp_call using its qualified name server__tool. External systems are reached only through them.":
        "You may use the MCP servers below (and only them for external systems): mcp_search finds tools, mcp_describe shows a tool's input schema, mcp_call runs it by its qualified name server__tool.",
    "memory_write appends entries; memory_read and memory_search look them up. Root files are resident and shown below (at most 4096 bytes per file and 12288 bytes in all); daily files are found only with memory_search.":
        "Append with memory_write and look things up with memory_read or memory_search. Root files are shown below (up to 4096 bytes each, 12288 bytes total); daily files only come up in memory_search.",
    "Mode: private. This memory is yours alone: nothing you write here reaches the main agent's memory.":
        "Mode: private. Only you see this memory; none of it reaches the main agent's memory.",
    "Mode: shared. This memory is the main agent's memory: what you write here can enter its prompt, so write only what you have checked.":
        "Mode: shared. You are writing into the main agent's own memory, which can reach its prompt; write only checked facts.",
}


@variant("alt_catalog_wording", "catalog instruction sentences reworded (headings, items, order kept); "
         "NOTE: SKILL-04/KB-02/MCP/MEM-05 print these texts as the section format")
def _(px, req, fwd):
    resp = fwd(req)
    if req.get("op") == "prompt.assemble" and ok(resp):
        for p in resp["result"]["parts"]:
            if p["kind"].startswith("catalog."):
                p["text"] = "\n".join(CATALOG_LINES.get(ln, ln) for ln in p["text"].split("\n"))
        rebuild(resp["result"])
    return resp


# ------------------------------------------------------------------ diagnostic order
@variant("alt_diag_order", "diagnostics listed in reverse order (the spec does not fix their order)")
def _(px, req, fwd):
    resp = fwd(req)
    if ok(resp) and isinstance(resp["result"].get("diagnostics"), list):
        resp["result"]["diagnostics"].reverse()
    return resp

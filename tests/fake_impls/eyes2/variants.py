"""Correct-but-different runtimes (must pass)."""
import copy, hashlib, json, re
from mybugs import BUGS, A

VARIANTS = {}
def variant(fn):
    VARIANTS[fn.__name__] = fn; return fn

def walk_strings(o, fn, key=None):
    if isinstance(o, dict):
        return {k: walk_strings(v, fn, k) for k, v in o.items()}
    if isinstance(o, list):
        return [walk_strings(v, fn, key) for v in o]
    if isinstance(o, str):
        return fn(o, key)
    return o

def plain_hello(req, resp):
    if req.get("op") == "hello" and resp.get("ok"):
        resp["result"]["features"] = [f for f in resp["result"]["features"] if f != "reference-text"]
    return resp

FWD = [(r"\bagent-(\d+)\b", r"ag_\1x"), (r"\bconn-card-(\d+)\b", r"cc#\1"), (r"\bcard-(\d+)\b", r"crd_\1"),
       (r"\breq-(\d+)\b", r"rq:\1"), (r"\bho-(\d+)\b", r"handoff/\1"), (r"\bctx-(\d+)\b", r"context.\1"),
       (r"\bemb-(\d+)\b", r"embed~\1")]
BACK = [(r"\bag_(\d+)x\b", r"agent-\1"), (r"cc#(\d+)\b", r"conn-card-\1"), (r"\bcrd_(\d+)\b", r"card-\1"),
        (r"\brq:(\d+)\b", r"req-\1"), (r"\bhandoff/(\d+)\b", r"ho-\1"), (r"\bcontext\.(\d+)\b", r"ctx-\1"),
        (r"\bembed~(\d+)\b", r"emb-\1")]
HEX = {}

def _sub(pairs):
    def f(s, key):
        for a, b in pairs: s = re.sub(a, b, s)
        return s
    return f

@variant
def var_opaque_ids(px, req, fwd):
    """Other id formats: agents, cards, request/handoff/context/embed ids, trace/span ids."""
    r2 = copy.deepcopy(req)
    r2["args"] = walk_strings(r2.get("args", {}), _sub(BACK))
    # trace ids back
    r2["args"] = walk_strings(r2["args"], lambda s, k: HEX.get(s, s))
    resp = fwd(r2)
    plain_hello(req, resp)
    if resp.get("ok"):
        def hx(s, k):
            if k in ("trace_id", "span_id") and re.fullmatch(r"[0-9a-f]+", s):
                n = hashlib.sha256(s.encode()).hexdigest()[:len(s)]
                HEX[n] = s; return n
            return s
        res = walk_strings(resp["result"], _sub(FWD))
        res = walk_strings(res, hx)
        resp["result"] = res
    return resp

MSG_KEYS = ("error_message", "message")
def reword(s):
    t = s.replace("is not", "isn't").replace("does not", "doesn't").replace("cannot", "can't")
    return "[runtime] " + t[:1].lower() + t[1:] + " (see docs)"

NOTICE = ("Note: you are running as a delegated helper. The permissions you have were set when you started and "
          "you cannot widen them in this session; anything that needs approval is denied automatically. Do not retry "
          "a denied action: tell your delegator in your reply which limit stopped you.")

@variant
def var_wording(px, req, fwd):
    """Own wording for messages, card reasons, the delegated notice and iteration instruction; no reference-text."""
    resp = fwd(req)
    plain_hello(req, resp)
    if resp.get("ok") and req.get("op") not in ("hello",):
        def f(s, k):
            if k in MSG_KEYS: return reword(s)
            if s.startswith("You are a delegated subagent."): return NOTICE
            if k == "instruction": return "Treat the shared workspace as the only memory across rounds; only the previous hand-off is given to you."
            return s
        if not req["op"].startswith(("delegation.", "flow.", "ns.", "call.", "conn.", "exec.", "child.", "history.", "tool.call", "task.", "card", "cards")) \
                or req["op"] == "delegation.log":
            return resp  # other areas and the log's canonical text untouched
        resp["result"] = walk_strings(resp["result"], f)
        def cardreason(o):
            if isinstance(o, dict):
                if "state" in o and isinstance(o.get("reason"), str): o["reason"] = reword(o["reason"])
                for v in o.values(): cardreason(v)
            elif isinstance(o, list):
                for v in o: cardreason(v)
        cardreason(resp["result"])
        if req["op"] == "delegation.context":
            for e in resp["result"].get("entries", []):
                if isinstance(e.get("input"), dict) and "Round " in e.get("text", ""):
                    i = e["input"]
                    e["text"] = "Goal: %s\nRound %d of %d.\n%s\nPrevious hand-off report: %s" % (i["goal"], i["round"], i["max_rounds"], i["instruction"], json.dumps(i["previous_handoff"]))
    if not resp.get("ok") and isinstance(resp.get("error"), dict) and "message" in resp["error"]:
        resp["error"]["message"] = reword(resp["error"]["message"])
    return resp

def add_extra(o, depth=0):
    if isinstance(o, dict):
        for v in list(o.values()): add_extra(v, depth + 1)
        if "ok" in o and ("error_code" in o or "content" in o):
            o["x_runtime"] = {"elapsed_ms": 3}
            o.setdefault("request_id", "r-extra")
            if isinstance(o.get("error_detail"), dict): o["error_detail"]["x_hint"] = "extra"
        for k in ("card", ):
            if isinstance(o.get(k), dict): o[k]["x_card_note"] = "extra"
    elif isinstance(o, list):
        for v in o: add_extra(v, depth + 1)

def reverse_keys(o):
    if isinstance(o, dict): return {k: reverse_keys(o[k]) for k in reversed(list(o.keys()))}
    if isinstance(o, list): return [reverse_keys(v) for v in o]
    return o

@variant
def var_extra_keys(px, req, fwd):
    """Extra keys on envelopes, error details, cards, results, nodes, reports; key order reversed."""
    resp = fwd(req)
    if resp.get("ok") and isinstance(resp.get("result"), dict) and req.get("op") not in ("hello",):
        r = resp["result"]
        add_extra(r)
        op = req["op"]
        if op in ("delegation.tree",):
            for n in r["nodes"]: n["x_started_at"] = 0
        if op == "delegation.inbox":
            for n in r["reports"]: n["x_arrived"] = 1
        if op.startswith(("delegation.", "flow.", "ns.", "call.", "conn.", "exec.", "editor.", "child.", "history.")):
            r["x_impl"] = "variant"
        resp["result"] = reverse_keys(r)
    return resp

@variant
def var_free_order(px, req, fwd):
    """Reverse lists whose order SPEC leaves free: agent types, implementers, available/documented/namespaces lists in details."""
    resp = fwd(req)
    if not resp.get("ok"): return resp
    r = resp["result"]
    op = req["op"]
    if op == "delegation.setup":
        r["agent_types"] = list(reversed(r["agent_types"])); r["implementers"] = list(reversed(r["implementers"]))
    def det(env):
        d = env.get("error_detail")
        if isinstance(d, dict):
            for k in ("available", "documented", "namespaces", "implementers", "mounted"):
                if isinstance(d.get(k), list): d[k] = list(reversed(d[k]))
    if isinstance(r, dict):
        if "error_code" in r: det(r)
        if isinstance(r.get("result"), dict) and "error_code" in r["result"]: det(r["result"])
        for x in r.get("results", []) if isinstance(r.get("results"), list) else []:
            if isinstance(x, dict) and isinstance(x.get("result"), dict): det(x["result"])
    return resp

@variant
def var_tree_order(px, req, fwd):
    """delegation.tree nodes in reverse order (SPEC gives no order for nodes)."""
    resp = fwd(req)
    if req["op"] == "delegation.tree" and resp.get("ok"):
        resp["result"]["nodes"] = list(reversed(resp["result"]["nodes"]))
    return resp

@variant
def var_accepts_extra_task_args(px, req, fwd):
    """DELEG-01: accepts and ignores model-supplied mode/tools/tier/ask_policy (allowed: nothing widens)."""
    if req.get("op") == "tool.call" and A(req).get("tool") == "Task":
        a = A(req).get("args", {})
        if any(k in a for k in ("mode", "tools", "tier", "ask_policy")):
            r2 = copy.deepcopy(req)
            for k in ("mode", "tools", "tier", "ask_policy"): r2["args"]["args"].pop(k, None)
            return fwd(r2)
    return fwd(req)


def add_card_key(o):
    if isinstance(o, dict):
        if "id" in o and "state" in o and "tool" in o: o["x_card_note"] = "extra"
        for v in o.values(): add_card_key(v)
    elif isinstance(o, list):
        for v in o: add_card_key(v)

@variant
def var_card_extra_key(px, req, fwd):
    """Every approval card (wherever it appears) carries one extra key, consistently."""
    resp = fwd(req)
    if resp.get("ok") and req.get("op") != "hello": add_card_key(resp["result"])
    return resp

"""Bugs (and correct variants) written from SPEC.md alone. bug(px, req, fwd) -> response."""
import copy, json, re, urllib.parse

BUGS = {}

def bug(reqid):
    def deco(fn):
        fn.req = reqid
        BUGS[fn.__name__] = fn
        return fn
    return deco

def S(px):
    if px.state.get("_world") is None:
        px.state.clear(); px.state["_world"] = 1
    return px.state

def base(px, req):
    """Reset bug state on world.setup."""
    if req.get("op") == "world.setup":
        px.state.clear()
    return S(px)

def A(req): return req.get("args") or {}
def R(resp): return resp.get("result") if resp.get("ok") else None
def env_err(code, msg, detail=None, terminal=True, retry=None):
    return {"ok": False, "error_code": code, "error_message": msg, "error_detail": detail or {},
            "terminal_for_attempt": terminal, "retry_after_ms": retry}
def ok(req, result): return {"id": req.get("id"), "ok": True, "result": result}

def is_tool(req, name): return req.get("op") == "tool.call" and A(req).get("tool") == name

def limits(st): return st.setdefault("limits", {"max_depth": 3, "max_fanout": 20})

def tree(px): return (px.side("delegation.tree", {}) or {}).get("nodes", [])

# ---------------------------------------------------------------- DELEG
@bug("DELEG-03")
def depth_off_by_one_lenient(px, req, fwd):
    st = base(px, req)
    if req["op"] == "delegation.setup":
        r2 = copy.deepcopy(req); a = r2["args"]
        a["max_depth"] = a.get("max_depth", 3) + 1
        resp = fwd(r2)
        if resp.get("ok"): resp["result"]["limits"]["max_depth"] -= 1
        return resp
    resp = fwd(req)
    if is_tool(req, "Task") and resp.get("ok") and resp["result"].get("error_code") == "DELEGATION-DEPTH":
        resp["result"]["error_detail"]["max_depth"] -= 1
    return resp

@bug("DELEG-03")
def depth_off_by_one_strict(px, req, fwd):
    st = base(px, req)
    if req["op"] == "delegation.setup":
        r2 = copy.deepcopy(req); a = r2["args"]
        md = a.get("max_depth", 3)
        if md >= 1:
            a["max_depth"] = md - 1
        resp = fwd(r2)
        if resp.get("ok") and md >= 1: resp["result"]["limits"]["max_depth"] += 1
        return resp
    resp = fwd(req)
    if is_tool(req, "Task") and resp.get("ok") and resp["result"].get("error_code") == "DELEGATION-DEPTH":
        resp["result"]["error_detail"]["max_depth"] += 1
    return resp

@bug("DELEG-03")
def fanout_off_by_one(px, req, fwd):
    base(px, req)
    if req["op"] == "delegation.setup":
        r2 = copy.deepcopy(req); a = r2["args"]
        a["max_fanout"] = a.get("max_fanout", 20) + 1
        resp = fwd(r2)
        if resp.get("ok"): resp["result"]["limits"]["max_fanout"] -= 1
        return resp
    return fwd(req)

def _own_fanout(px, req, fwd, counter, lenient=True):
    """Reference gets a huge fan-out (only when the bug is more lenient); the proxy enforces its own (buggy) count."""
    st = base(px, req)
    if req["op"] == "delegation.setup" and not lenient:
        limits(st)["max_fanout"] = A(req).get("max_fanout", 20)
        return fwd(req)
    if req["op"] == "delegation.setup":
        r2 = copy.deepcopy(req); a = r2["args"]
        limits(st)["max_fanout"] = a.get("max_fanout", 20)
        a["max_fanout"] = 100000
        resp = fwd(r2)
        if resp.get("ok"): resp["result"]["limits"]["max_fanout"] = limits(st)["max_fanout"]
        return resp
    if is_tool(req, "Task") and not A(req).get("args", {}).get("resume"):
        nodes = tree(px)
        n = counter(nodes, A(req)["agent"], A(req).get("args", {}))
        mf = limits(st)["max_fanout"]
        if n is not None and n >= mf:
            return ok(req, env_err("DELEGATION-FANOUT", "too many running children",
                                   {"fanout": n, "max_fanout": mf}))
    return fwd(req)

@bug("DELEG-03")
def fanout_per_tree(px, req, fwd):
    def c(nodes, agent, targs):
        me = [n for n in nodes if n["agent"] == agent]
        root = me[0]["root"] if me else agent
        return sum(1 for n in nodes if n["root"] == root and n["status"] == "running")
    return _own_fanout(px, req, fwd, c, lenient=False)

@bug("DELEG-03")
def fanout_background_not_counted(px, req, fwd):
    def c(nodes, agent, targs):
        if targs.get("background"): return None
        return sum(1 for n in nodes if n["parent"] == agent and n["status"] == "running" and not n["background"])
    return _own_fanout(px, req, fwd, c)

@bug("DELEG-03")
def fanout_forks_not_counted(px, req, fwd):
    def c(nodes, agent, targs):
        if targs.get("implementer") == "fork": return None
        return sum(1 for n in nodes if n["parent"] == agent and n["status"] == "running" and n["implementer"] != "fork")
    return _own_fanout(px, req, fwd, c)

@bug("DELEG-03")
def fanout_counts_finished(px, req, fwd):
    def c(nodes, agent, targs):
        return sum(1 for n in nodes if n["parent"] == agent)
    return _own_fanout(px, req, fwd, c, lenient=False)

@bug("DELEG-03")
def resume_depth_option_overrides(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "child.resume" and resp.get("ok") and "depth_option" in A(req):
        resp["result"]["handoff"]["depth"] = A(req)["depth_option"]
        px.state.setdefault("depth", {})[A(req)["agent"]] = A(req)["depth_option"]
    if req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]:
            if n["agent"] in px.state.get("depth", {}): n["depth"] = px.state["depth"][n["agent"]]
    return resp

@bug("DELEG-03")
def followup_recounted_top_level(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if is_tool(req, "Task") and A(req).get("args", {}).get("resume") and resp.get("ok") and resp["result"].get("ok"):
        resp["result"]["content"]["depth"] = 1
        px.state.setdefault("depth", {})[resp["result"]["content"]["task_id"]] = 1
    if req["op"] == "child.resume" and resp.get("ok"):
        resp["result"]["handoff"]["depth"] = max(1, A(req).get("depth_option", 0) or 0)
        px.state.setdefault("depth", {})[A(req)["agent"]] = resp["result"]["handoff"]["depth"]
    if req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]:
            if n["agent"] in px.state.get("depth", {}): n["depth"] = px.state["depth"][n["agent"]]
    return resp

@bug("DELEG-02")
def child_tools_capped_by_parent(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "agent.spawn" and resp.get("ok"):
        st.setdefault("tools", {})[resp["result"]["agent"]] = [t["name"] if isinstance(t, dict) else t for t in resp["result"].get("tools", [])]
    if req["op"] == "delegation.tree" and resp.get("ok"):
        tools = st.setdefault("tools", {})
        for n in resp["result"]["nodes"]:
            pt = tools.get(n["parent"])
            if pt is not None:
                n["tools"] = [t for t in n["tools"] if t in pt]
            tools[n["agent"]] = n["tools"]
    return resp

@bug("DELEG-02")
def child_inherits_parent_tools(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "agent.spawn" and resp.get("ok"):
        st.setdefault("tools", {})[resp["result"]["agent"]] = [t["name"] if isinstance(t, dict) else t for t in resp["result"].get("tools", [])]
    if req["op"] == "delegation.tree" and resp.get("ok"):
        tools = st.setdefault("tools", {})
        for n in resp["result"]["nodes"]:
            pt = tools.get(n["parent"]) or []
            n["tools"] = n["tools"] + [t for t in pt if t not in n["tools"]]
            tools[n["agent"]] = n["tools"]
    return resp

@bug("APPR-06")
def child_permissions_live(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "approval.setup" and resp.get("ok"):
        st["policy"] = resp["result"]["policy"]
    pol = st.get("policy")
    if pol and req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]:
            p = n["permissions"]; p.update({k: pol[k] for k in ("tier", "attendance", "writable_roots")})
    if pol and req["op"] == "delegation.log" and resp.get("ok"):
        for e in resp["result"]["events"]:
            if e.get("event") == "sandbox_mode":
                e.update({k: pol[k] for k in ("tier", "attendance", "writable_roots")})
        resp["result"]["text"] = "".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for e in resp["result"]["events"])
    # a child's gated call decided on the live tier
    if pol and req["op"] == "tool.call" and A(req).get("tool") in ("read", "write", "edit", "bash"):
        ag = A(req)["agent"]
        node = [n for n in (px.side("delegation.tree", {}) or {}).get("nodes", []) if n["agent"] == ag]
        if node and resp.get("ok") and resp["result"].get("ok") is not False:
            tgt = A(req).get("args", {}).get("path")
            d = px.side("approval.decide", {"tier": pol["tier"], "action": A(req)["tool"], **({"target": tgt} if tgt else {}),
                                             "attendance": pol["attendance"], "ask_policy": "never-ask"})
            if d and d.get("verdict") == "deny":
                return ok(req, env_err("APPROVAL-DENIED", "denied: " + d.get("reason", ""), {"rule": d.get("rule")}))
    return resp

@bug("APPR-06")
def child_ask_policy_inherited(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "approval.setup" and resp.get("ok"):
        st["policy"] = resp["result"]["policy"]
    ap = (st.get("policy") or {}).get("ask_policy", "ask-parent")
    if req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]: n["permissions"]["ask_policy"] = ap
    if req["op"] == "delegation.log" and resp.get("ok"):
        for e in resp["result"]["events"]:
            if e.get("event") == "approval_policy": e["ask_policy"] = ap
        resp["result"]["text"] = "".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for e in resp["result"]["events"])
    return resp

@bug("APPR-06")
def snapshot_is_sessions_not_parents(px, req, fwd):
    """A grandchild gets the session policy instead of its parent's pin."""
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "approval.setup" and resp.get("ok"):
        st["policy"] = resp["result"]["policy"]
    pol = st.get("policy")
    if pol and req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]:
            if n["depth"] >= 2:
                n["permissions"].update({k: pol[k] for k in ("tier", "attendance", "writable_roots")})
    return resp

@bug("DELEG-06")
def stopped_report_delivered_twice(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.inbox" and resp.get("ok"):
        out = []
        for r in resp["result"]["reports"]:
            out.append(r)
            if r.get("status") == "stopped": out.append(copy.deepcopy(r))
        resp["result"]["reports"] = out
    return resp

@bug("DELEG-06")
def stopped_report_without_progress(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.inbox" and resp.get("ok"):
        for r in resp["result"]["reports"]:
            if r.get("status") == "stopped": r["progress"] = []
    if is_tool(req, "TaskStop") and resp.get("ok") and resp["result"].get("ok") and resp["result"]["content"].get("partial"):
        resp["result"]["content"]["partial"]["progress"] = []
    return resp

@bug("DELEG-06")
def stop_order_parents_first(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if is_tool(req, "TaskStop") and resp.get("ok") and resp["result"].get("ok"):
        resp["result"]["content"]["stopped"] = list(reversed(resp["result"]["content"]["stopped"]))
    if req["op"] == "delegation.log" and resp.get("ok"):
        ev = resp["result"]["events"]
        # stopped events of one cascade: parents first
        idx = [i for i, e in enumerate(ev) if e.get("event") == "stopped"]
        vals = [ev[i] for i in idx][::-1]
        seqs = [ev[i]["seq"] for i in idx]
        for i, v, s in zip(idx, vals, seqs):
            v = dict(v); v["seq"] = s; ev[i] = v
        resp["result"]["text"] = "".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for e in ev)
    return resp

@bug("DELEG-06")
def stop_not_cascading(px, req, fwd):
    st = base(px, req)
    alive = st.setdefault("alive", set())
    if req["op"] == "child.complete" and A(req).get("agent") in alive:
        alive.discard(A(req)["agent"])
        return ok(req, {"delivered": {"parent": "?", "task_id": A(req)["agent"], "agent_type": "?", "status": A(req).get("status", "completed"), "report": A(req).get("report"), "progress": []}})
    resp = fwd(req)
    stopped = None
    if is_tool(req, "TaskStop") and resp.get("ok") and resp["result"].get("ok"):
        stopped = resp["result"]["content"]["stopped"]; target = A(req)["args"]["task_id"]
        resp["result"]["content"]["stopped"] = [target]
    if req["op"] == "task.stop" and resp.get("ok"):
        stopped = []; target = A(req)["agent"]
    if stopped:
        for s in stopped:
            if s != target: alive.add(s)
    if req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]:
            if n["agent"] in alive: n["status"] = "running"
    return resp

@bug("DELEG-06")
def stopped_child_can_complete(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "child.complete" and resp.get("ok") is False and resp["error"]["code"] == "TASK-STOPPED":
        return ok(req, {"delivered": {"parent": "agent-1", "task_id": A(req)["agent"], "agent_type": "x",
                                      "status": A(req).get("status", "completed"), "report": A(req).get("report"), "progress": []}})
    if req["op"] == "child.complete" and resp.get("ok") is True and isinstance(resp["result"], dict) and resp["result"].get("error_code") == "TASK-STOPPED":
        return ok(req, {"delivered": {"parent": "agent-1", "task_id": A(req)["agent"], "agent_type": "x",
                                      "status": A(req).get("status", "completed"), "report": A(req).get("report"), "progress": []}})
    return resp

@bug("DELEG-06")
def stopped_child_can_delegate(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if is_tool(req, "Task") and resp.get("ok") and resp["result"].get("error_code") in ("AGENT-STOPPED", "TASK-STOPPED"):
        st["n"] = st.get("n", 0) + 1
        a = A(req)["args"]
        return ok(req, {"ok": True, "content": {"task_id": "agent-9%d" % st["n"], "status": "delegated", "agent_type": a.get("subagent"),
                                                 "implementer": a.get("implementer", "fresh"), "background": bool(a.get("background")), "depth": 9}})
    return resp

@bug("DELEG-02")
def anyone_may_stop(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "tool.call" and resp.get("ok") and resp["result"].get("error_code") == "NOT-YOUR-TASK":
        a = A(req)
        if a["tool"] == "TaskStop":
            r = px.side("task.stop", {"agent": a["args"]["task_id"]})
            return ok(req, {"ok": True, "content": {"stopped": [a["args"]["task_id"]], "settled": (r or {}).get("settled", []), "partial": None}})
        if a["tool"] == "Task":
            r2 = copy.deepcopy(req)
            # follow-up through the driver's resume op
            hr = px.side("child.resume", {"agent": a["args"]["resume"], "prompt": a["args"].get("prompt", "")})
            if hr: return ok(req, {"ok": True, "content": hr["handoff"]})
    return resp

@bug("APPR-07")
def notice_repeated_on_followup(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.context" and resp.get("ok"):
        e = resp["result"]["entries"]; notice = [x for x in e if x["kind"] == "notice"]
        out = []
        for x in e:
            if x["kind"] == "follow-up" and notice: out.append(copy.deepcopy(notice[0]))
            out.append(x)
        resp["result"]["entries"] = out
    return resp

@bug("APPR-07")
def notice_missing_out_of_process(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.context" and resp.get("ok"):
        node = [n for n in tree(px) if n["agent"] == A(req)["agent"]]
        if node and node[0]["implementer"] not in ("fresh", "fork"):
            resp["result"]["entries"] = [x for x in resp["result"]["entries"] if x["kind"] != "notice"]
    return resp

@bug("DELEG-04")
def fork_seed_includes_in_flight(px, req, fwd):
    st = base(px, req)
    fl = st.setdefault("inflight", {})
    resp = fwd(req)
    if req["op"] == "history.append" and resp.get("ok"):
        fl.setdefault(A(req)["agent"], []).append((A(req)["role"], A(req)["text"]))
    if req["op"] == "history.end_turn" and resp.get("ok"):
        fl[A(req)["agent"]] = []
    if is_tool(req, "Task") and resp.get("ok") and resp["result"].get("ok") and A(req)["args"].get("implementer") == "fork":
        st.setdefault("seeded", {})[resp["result"]["content"]["task_id"]] = list(fl.get(A(req)["agent"], []))
    if req["op"] == "delegation.context" and resp.get("ok") and A(req)["agent"] in st.get("seeded", {}):
        e = resp["result"]["entries"]
        extra = [{"kind": "seed", "role": r, "text": t} for r, t in st["seeded"][A(req)["agent"]]]
        pos = max([i + 1 for i, x in enumerate(e) if x["kind"] in ("seed", "notice")] or [0])
        resp["result"]["entries"] = e[:pos] + extra + e[pos:]
    return resp

@bug("DELEG-04")
def fresh_child_gets_history(px, req, fwd):
    st = base(px, req)
    hist = st.setdefault("hist", {}); fl = st.setdefault("inflight", {})
    resp = fwd(req)
    if req["op"] == "history.append" and resp.get("ok"):
        fl.setdefault(A(req)["agent"], []).append((A(req)["role"], A(req)["text"]))
    if req["op"] == "history.end_turn" and resp.get("ok"):
        hist.setdefault(A(req)["agent"], []).extend(fl.get(A(req)["agent"], [])); fl[A(req)["agent"]] = []
    if is_tool(req, "Task") and resp.get("ok") and resp["result"].get("ok") and A(req)["args"].get("implementer", "fresh") != "fork":
        st.setdefault("seeded", {})[resp["result"]["content"]["task_id"]] = list(hist.get(A(req)["agent"], []))
    if req["op"] == "delegation.context" and resp.get("ok") and st.get("seeded", {}).get(A(req)["agent"]):
        e = resp["result"]["entries"]
        extra = [{"kind": "seed", "role": r, "text": t} for r, t in st["seeded"][A(req)["agent"]]]
        resp["result"]["entries"] = e[:1] + extra + e[1:]
    return resp

@bug("APPR-08")
def log_events_lack_from(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.log" and resp.get("ok"):
        for e in resp["result"]["events"]:
            if e.get("event") in ("sandbox_mode", "approval_policy"): e.pop("from", None)
        resp["result"]["text"] = "".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for e in resp["result"]["events"])
    return resp

@bug("APPR-08")
def log_text_not_canonical(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.log" and resp.get("ok"):
        resp["result"]["text"] = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in resp["result"]["events"])
    return resp

@bug("APPR-08")
def log_no_refused_event(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.log" and resp.get("ok"):
        ev = [e for e in resp["result"]["events"] if e.get("event") != "refused"]
        for i, e in enumerate(ev): e["seq"] = i + 1
        resp["result"]["events"] = ev
        resp["result"]["text"] = "".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for e in ev)
    return resp

@bug("DELEG-01")
def unknown_type_lists_nothing(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "tool.call" and resp.get("ok") and resp["result"].get("error_code") == "UNKNOWN-AGENT-TYPE":
        resp["result"]["error_detail"] = {"subagent": A(req)["args"].get("subagent")}
        resp["result"]["error_message"] = "no such agent type"
    return resp

@bug("DELEG-01")
def implementer_arg_ignored(px, req, fwd):
    base(px, req)
    if is_tool(req, "Task"):
        r2 = copy.deepcopy(req); r2["args"]["args"].pop("implementer", None)
        return fwd(r2)
    return fwd(req)

@bug("DELEG-01")
def background_arg_ignored(px, req, fwd):
    base(px, req)
    if is_tool(req, "Task"):
        r2 = copy.deepcopy(req); r2["args"]["args"].pop("background", None)
        return fwd(r2)
    return fwd(req)

@bug("DELEG-01")
def task_tools_arg_widens(px, req, fwd):
    st = base(px, req)
    if is_tool(req, "Task"):
        a = A(req)["args"]
        if "tools" in a:
            r2 = copy.deepcopy(req); t = r2["args"]["args"].pop("tools"); [r2["args"]["args"].pop(k, None) for k in ("mode", "tier", "ask_policy")]
            resp = fwd(r2)
            if resp.get("ok") and resp["result"].get("ok"):
                st.setdefault("wid", {})[resp["result"]["content"]["task_id"]] = t
            return resp
    resp = fwd(req)
    if req["op"] == "tool.call" and resp.get("ok") and resp["result"].get("error_code") == "tool_not_mounted" \
            and A(req)["tool"] in (st.get("wid", {}).get(A(req)["agent"]) or []):
        return ok(req, {"ok": True, "content": {"tool": A(req)["tool"], "ran": True}})
    if req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]:
            if n["agent"] in st.get("wid", {}) and isinstance(st["wid"][n["agent"]], list):
                n["tools"] = n["tools"] + [t for t in st["wid"][n["agent"]] if t not in n["tools"]]
    return resp

# ---------------------------------------------------------------- FLOW
def _wrap_wait(script):
    out = []; i = 0
    while True:
        j = script.find("wait(", i)
        if j < 0 or (j > 0 and (script[j-1].isalnum() or script[j-1] == "_")):
            if j < 0: out.append(script[i:]); break
            out.append(script[i:j+5]); i = j + 5; continue
        out.append(script[i:j]); depth = 0; k = j + 4
        while k < len(script):
            if script[k] == "(": depth += 1
            elif script[k] == ")":
                depth -= 1
                if depth == 0: break
            k += 1
        out.append("list(reversed(" + script[j:k+1] + "))"); i = k + 1
    return "".join(out)

@bug("FLOW-01")
def flow_wait_order_reversed(px, req, fwd):
    base(px, req)
    if req["op"] == "flow.run":
        r2 = copy.deepcopy(req); r2["args"]["script"] = _wrap_wait(A(req)["script"])
        return fwd(r2)
    return fwd(req)

@bug("FLOW-01")
def flow_imports_allowed(px, req, fwd):
    """imports are not refused: emulated by running the script without the import and the lines using the module"""
    base(px, req)
    if req["op"] == "flow.run":
        s = A(req)["script"]; mods = re.findall(r"^\s*import (\w+)", s, flags=re.M)
        if mods:
            keep = [l for l in s.split("\n") if not re.match(r"\s*import ", l) and not any(re.search(r"\b%s\b" % m, l) for m in mods)]
            r2 = copy.deepcopy(req); r2["args"]["script"] = "\n".join(keep)
            return fwd(r2)
    return fwd(req)

@bug("FLOW-01")
def flow_error_without_line(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "flow.run" and resp.get("ok") and resp["result"].get("error"):
        resp["result"]["error"].pop("line", None)
    return resp

@bug("FLOW-01")
def flow_events_in_delegation_log(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "flow.run" and resp.get("ok"):
        st.setdefault("wf", []).extend(resp["result"]["events"])
    if req["op"] == "delegation.log" and resp.get("ok") and st.get("wf") and "agent" not in A(req):
        ev = resp["result"]["events"]; n = len(ev)
        for e in st["wf"]:
            e = dict(e); n += 1; e["seq"] = n; ev.append(e)
        resp["result"]["text"] = "".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for e in ev)
    return resp

@bug("FLOW-01")
def flow_children_depth_not_incremented(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "flow.run" and resp.get("ok"):
        st.setdefault("fc", set()).update(resp["result"]["children"])
    if req["op"] == "delegation.tree" and resp.get("ok"):
        for n in resp["result"]["nodes"]:
            if n["agent"] in st.get("fc", ()): n["depth"] -= 1
    return resp

@bug("FLOW-01")
def flow_children_skip_notice(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("flow.run",) and resp.get("ok"):
        st.setdefault("fc", set()).update(resp["result"]["children"])
    if req["op"] == "flow.iterate" and resp.get("ok"):
        st.setdefault("fc", set()).update(r["task_id"] for r in resp["result"]["rounds"])
    if req["op"] == "delegation.context" and resp.get("ok") and A(req)["agent"] in st.get("fc", ()):
        resp["result"]["entries"] = [x for x in resp["result"]["entries"] if x["kind"] != "notice"]
    return resp

@bug("FLOW-01")
def flow_completed_before_waited(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "flow.run" and resp.get("ok"):
        ev = resp["result"]["events"]
        w = [i for i, e in enumerate(ev) if e["event"] == "workflow.waited"]
        c = [i for i, e in enumerate(ev) if e["event"] in ("workflow.completed",)]
        if w and c:
            i, j = w[-1], c[-1]
            ev[i], ev[j] = ev[j], ev[i]; ev[i]["seq"], ev[j]["seq"] = ev[j]["seq"], ev[i]["seq"]
    return resp

@bug("FLOW-03")
def iterate_fork_accepted(px, req, fwd):
    base(px, req)
    if req["op"] == "flow.iterate" and A(req).get("implementer") == "fork":
        r2 = copy.deepcopy(req); r2["args"]["implementer"] = "fresh"
        return fwd(r2)
    return fwd(req)

@bug("FLOW-03")
def iterate_round_zero_based(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "flow.iterate" and resp.get("ok"):
        for r in resp["result"]["rounds"]:
            r["round"] -= 1; st.setdefault("rc", set()).add(r["task_id"])
    if req["op"] == "delegation.context" and resp.get("ok") and A(req)["agent"] in st.get("rc", ()):
        for x in resp["result"]["entries"]:
            if isinstance(x.get("input"), dict): x["input"]["round"] -= 1
    return resp

@bug("FLOW-03")
def iterate_all_handoffs_passed(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "flow.iterate" and resp.get("ok"):
        prev = []
        for r in resp["result"]["rounds"]:
            st.setdefault("hist", {})[r["task_id"]] = list(prev); prev.append(r["handoff"])
    if req["op"] == "delegation.context" and resp.get("ok") and A(req)["agent"] in st.get("hist", {}):
        for x in resp["result"]["entries"]:
            if isinstance(x.get("input"), dict): x["input"]["earlier_handoffs"] = st["hist"][A(req)["agent"]][:-1]
    return resp

@bug("FLOW-03")
def iterate_done_ignored(px, req, fwd):
    base(px, req)
    if req["op"] == "flow.iterate":
        r2 = copy.deepcopy(req)
        for r in r2["args"].get("responses", []):
            if r.get("status") == "done": r["status"] = "continue"
        return fwd(r2)
    return fwd(req)

@bug("FLOW-03")
def iterate_blocked_reported_done(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "flow.iterate" and resp.get("ok") and resp["result"]["status"] == "blocked":
        resp["result"]["status"] = "done"
    return resp

# ---------------------------------------------------------------- NS
def catalog(st): return st.get("catalog") or {}

def ns_track(st, req, resp):
    if req["op"] == "ns.setup" and resp.get("ok"):
        st["catalog"] = A(req)["catalog"]

@bug("NS-02")
def ns_schemas_injected_eagerly(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    if req["op"] in ("ns.open", "ns.surface") and resp.get("ok"):
        byname = {n["name"]: n for n in catalog(st).get("namespaces", [])}
        for e in resp["result"]["surface"]:
            n = byname.get(e["namespace"])
            if n and not e["loaded"]:
                e["functions"] = [{"name": n["name"] + "." + f["name"], "description": f["description"], "parameters": f["parameters"]} for f in n["functions"]]
    return resp

def _load(px, ctx, names):
    return px.side("call.invoke", {"context": ctx, "function": "tool_search.load_tool_namespace", "args": {"namespaces": names}})

@bug("NS-04")
def ns_unloaded_call_autoloads(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    if req["op"] == "call.invoke" and resp.get("ok") and resp["result"]["result"].get("error_code") == "namespace_not_loaded":
        ns = A(req)["function"].split(".")[0]
        lf = [n["name"] + "." + f["name"] for n in catalog(st).get("namespaces", []) for f in n["functions"] if f["name"] == "load_tool_namespace"]
        px.side("call.invoke", {"context": A(req)["context"], "function": lf[0] if lf else "tool_search.load_tool_namespace", "args": {"namespaces": [ns]}})
        return fwd(req)
    return resp

@bug("NS-01")
def ns_bare_name_resolves(px, req, fwd):
    st = base(px, req)
    if req["op"] == "call.invoke" and "." not in A(req).get("function", "") and "__" not in A(req).get("function", ""):
        for n in catalog(st).get("namespaces", []):
            for f in n["functions"]:
                if f["name"] == A(req)["function"]:
                    r2 = copy.deepcopy(req); r2["args"]["function"] = n["name"] + "." + f["name"]
                    return fwd(r2)
    resp = fwd(req); ns_track(st, req, resp)
    return resp

@bug("NS-01")
def ns_case_insensitive(px, req, fwd):
    st = base(px, req)
    if req["op"] == "call.invoke":
        r2 = copy.deepcopy(req); r2["args"]["function"] = A(req)["function"].lower()
        return fwd(r2)
    return fwd(req)

@bug("NS-01")
def ns_mcp_separator_resolves(px, req, fwd):
    st = base(px, req)
    if req["op"] == "call.invoke" and "__" in A(req).get("function", "") and "." not in A(req)["function"]:
        r2 = copy.deepcopy(req); r2["args"]["function"] = A(req)["function"].replace("__", ".", 1)
        return fwd(r2)
    if req["op"] == "call.invoke" and A(req).get("function", "").count(".") >= 2:
        r2 = copy.deepcopy(req); r2["args"]["function"] = ".".join(A(req)["function"].split(".")[:2])
        return fwd(r2)
    return fwd(req)

@bug("NS-02")
def ns_load_not_atomic(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    if req["op"] == "call.invoke" and A(req)["function"].endswith(".load_tool_namespace") and resp.get("ok") \
            and resp["result"]["result"].get("error_code") == "unknown_namespace":
        for n in A(req)["args"].get("namespaces", []):
            _load(px, A(req)["context"], [n])
    return resp

@bug("NS-05")
def ns_gated_names_leak(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    if req["op"] == "call.invoke" and resp.get("ok"):
        d = resp["result"]["result"].get("error_detail") or {}
        for k, v in list(d.items()):
            if isinstance(v, list) and all(isinstance(x, str) for x in v) and k in ("namespaces", "visible", "available"):
                d[k] = v + [n["name"] for n in catalog(st).get("namespaces", []) if n["name"] not in v]
    return resp

@bug("NS-05")
def ns_gated_is_not_loaded(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    if req["op"] == "call.invoke" and resp.get("ok") and resp["result"]["result"].get("error_code") == "unknown_function":
        fn = A(req)["function"]
        for n in catalog(st).get("namespaces", []):
            if fn.startswith(n["name"] + ".") and fn.split(".", 1)[1] in [f["name"] for f in n["functions"]] and n["form"] != "core":
                resp["result"]["result"] = env_err("namespace_not_loaded", "load it first", {"namespace": n["name"], "load": "tool_search.load_tool_namespace"}, terminal=False)
    return resp

@bug("NS-04")
def ns_not_loaded_terminal(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        rs = resp["result"].get("results") or [resp["result"]]
        for r in rs:
            if r["result"].get("error_code") == "namespace_not_loaded": r["result"]["terminal_for_attempt"] = True
    return resp

@bug("NS-04")
def ns_not_loaded_detail_empty(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        rs = resp["result"].get("results") or [resp["result"]]
        for r in rs:
            if r["result"].get("error_code") == "namespace_not_loaded": r["result"]["error_detail"] = {}
    return resp

@bug("NS-02")
def ns_new_context_keeps_loaded(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    if req["op"] == "call.invoke" and A(req)["function"].endswith(".load_tool_namespace") and resp.get("ok") and resp["result"]["result"].get("ok"):
        st.setdefault("loaded", set()).update(resp["result"]["result"]["content"].get("loaded", []))
    if req["op"] == "ns.setup": st["loaded"] = set()
    if req["op"] == "ns.open" and resp.get("ok") and st.get("loaded"):
        ctx = resp["result"]["context"]
        vis = [e["namespace"] for e in resp["result"]["surface"]]
        for n in sorted(st["loaded"]):
            if n in vis: _load(px, ctx, [n])
        s = px.side("ns.surface", {"context": ctx})
        if s: resp["result"] = s
    return resp

@bug("NS-02")
def ns_reload_duplicates(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "call.invoke" and A(req)["function"].endswith(".load_tool_namespace") and resp.get("ok") and resp["result"]["result"].get("ok"):
        for n in resp["result"]["result"]["content"].get("already_loaded", []):
            st.setdefault("dup", set()).add((A(req)["context"], n))
    if req["op"] in ("ns.surface",) and resp.get("ok"):
        for e in resp["result"]["surface"]:
            if (A(req)["context"], e["namespace"]) in st.get("dup", ()) and e.get("functions"):
                e["functions"] = e["functions"] + copy.deepcopy(e["functions"])
    return resp

@bug("NS-03")
def ns_core_deferred_on_side_channel(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    chans = catalog(st).get("channels", [])
    if req["op"] in ("ns.open", "ns.surface") and resp.get("ok") and chans and resp["result"]["channel"] != chans[0]:
        for e in resp["result"]["surface"]:
            if e["loaded"] and e["namespace"] != "tool_search" and not e["namespace"].startswith("tool"):
                byname = {n["name"]: n for n in catalog(st).get("namespaces", [])}
                if byname.get(e["namespace"], {}).get("form") == "core":
                    e["loaded"] = False; e.pop("functions", None)
    return resp

@bug("NS-01")
def ns_catalog_accepts_dunder(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "ns.setup" and not resp.get("ok") and resp["error"]["code"] == "catalog_invalid" and "__" in json.dumps(A(req)):
        r2 = json.loads(json.dumps(req).replace("__", "_u_"))
        resp2 = fwd(r2)
        if resp2.get("ok"): return resp2
    return resp

@bug("NS-02")
def ns_invalid_args_extra_key_accepted(px, req, fwd):
    st = base(px, req)
    resp = fwd(req); ns_track(st, req, resp)
    if req["op"] == "call.invoke" and resp.get("ok") and resp["result"]["result"].get("error_code") == "invalid_arguments":
        fn = A(req)["function"]; ns, f = fn.split(".", 1)
        for n in catalog(st).get("namespaces", []):
            for g in n["functions"]:
                if n["name"] == ns and g["name"] == f:
                    req_keys = g["parameters"].get("required", [])
                    if all(k in A(req)["args"] for k in req_keys) and g.get("delivery") == "sync":
                        resp["result"]["result"] = {"ok": True, "content": {"function": fn, "args": A(req)["args"]}}
    return resp

# ---------------------------------------------------------------- CALL
def _stamps(resp):
    r = resp["result"]
    return r.get("results") or [r]

@bug("CALL-01")
def call_many_shares_request_id(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "call.invoke_many" and resp.get("ok") and resp["result"]["results"]:
        first = resp["result"]["results"][0]["stamp"]
        for r in resp["result"]["results"][1:]:
            r["stamp"]["request_id"] = first["request_id"]; r["stamp"]["trace"]["span_id"] = first["trace"]["span_id"]
    return resp

@bug("CALL-01")
def call_many_shares_span(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "call.invoke_many" and resp.get("ok") and resp["result"]["results"]:
        first = resp["result"]["results"][0]["stamp"]
        for r in resp["result"]["results"][1:]:
            r["stamp"]["trace"]["span_id"] = first["trace"]["span_id"]
    return resp

@bug("CALL-01")
def handoff_carries_turn_id(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        for r in _stamps(resp):
            c = r["result"].get("content")
            if r["result"].get("ok") and isinstance(c, dict) and isinstance(c.get("handoff"), dict):
                st.setdefault("ho", {})[c["handoff"]["id"]] = r["stamp"]["parent_request_id"]
                c["handoff"]["request_id"] = r["stamp"]["parent_request_id"]
    if req["op"] == "call.finish" and resp.get("ok"):
        ev = resp["result"]["injected"]
        if ev.get("handoff_id") in st.get("ho", {}): ev["request_id"] = st["ho"][ev["handoff_id"]]
    if req["op"] == "call.transcript" and resp.get("ok"):
        for ev in resp["result"]["events"]:
            if ev.get("kind") == "handoff_result" and ev.get("handoff_id") in st.get("ho", {}): ev["request_id"] = st["ho"][ev["handoff_id"]]
    return resp

@bug("CALL-01")
def on_behalf_parent_is_turn(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        calls = A(req).get("calls") or [A(req)]
        for c, r in zip(calls, _stamps(resp)):
            if not c.get("on_behalf_of"):
                st.setdefault("turn", {})[A(req)["context"]] = r["stamp"]["parent_request_id"]
            elif A(req)["context"] in st.get("turn", {}):
                r["stamp"]["parent_request_id"] = st["turn"][A(req)["context"]]
    return resp

@bug("CALL-01")
def trace_id_per_call(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        for r in _stamps(resp):
            st["t"] = st.get("t", 100) + 1
            r["stamp"]["trace"]["trace_id"] = "%032x" % st["t"]
    return resp

@bug("CALL-01")
def request_ids_restart_per_context(px, req, fwd):
    """request ids are drawn per context, so two contexts reuse req-N"""
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        ctx = A(req)["context"]
        m = st.setdefault("rmap", {})
        for r in _stamps(resp):
            for k in ("request_id",):
                v = r["stamp"][k]
                if v not in m:
                    cnt = st.setdefault("cnt", {}); cnt[ctx] = cnt.get(ctx, 1) + 1
                    m[v] = "req-%d" % cnt[ctx]
                r["stamp"][k] = m[v]
    return resp

@bug("CALL-02")
def finish_injects_twice(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "call.finish":
        key = (A(req)["context"], A(req)["handoff"])
        if resp.get("ok"):
            st.setdefault("fin", {})[key] = resp["result"]["injected"]
        elif key in st.get("fin", {}):
            ev = copy.deepcopy(st["fin"][key]); ev["content"] = A(req).get("content")
            st.setdefault("extra", {}).setdefault(A(req)["context"], []).append(ev)
            return ok(req, {"injected": ev})
    if req["op"] == "call.transcript" and resp.get("ok"):
        resp["result"]["events"] += st.get("extra", {}).get(A(req)["context"], [])
    return resp

@bug("CALL-02")
def handoff_result_injected_early(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        for r in _stamps(resp):
            c = r["result"].get("content")
            if r["result"].get("ok") and isinstance(c, dict) and isinstance(c.get("handoff"), dict):
                st.setdefault("pend", {}).setdefault(A(req)["context"], []).append(c["handoff"])
    if req["op"] == "call.transcript" and resp.get("ok"):
        have = {e.get("handoff_id") for e in resp["result"]["events"]}
        for h in st.get("pend", {}).get(A(req)["context"], []):
            if h["id"] not in have:
                resp["result"]["events"].append({"kind": "handoff_result", "handoff_id": h["id"], "request_id": h["request_id"], "outcome": "pending", "content": None})
    return resp

@bug("CALL-02")
def finish_outcome_ignored(px, req, fwd):
    base(px, req)
    if req["op"] == "call.finish" and "outcome" in A(req):
        r2 = copy.deepcopy(req); r2["args"].pop("outcome"); return fwd(r2)
    return fwd(req)

@bug("CALL-02")
def finish_content_stringified(px, req, fwd):
    base(px, req)
    if req["op"] == "call.finish" and not isinstance(A(req).get("content"), str):
        r2 = copy.deepcopy(req); r2["args"]["content"] = json.dumps(A(req)["content"]); return fwd(r2)
    return fwd(req)

@bug("CALL-04")
def choose_trims_text(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "call.choose" and resp.get("ok"):
        resp["result"]["message"]["text"] = resp["result"]["message"]["text"].strip()
    if req["op"] == "call.transcript" and resp.get("ok"):
        for e in resp["result"]["events"]:
            if e.get("kind") == "user_message" and isinstance(e.get("text"), str): e["text"] = e["text"].strip()
    return resp

@bug("CALL-04")
def choose_nfc_normalises(px, req, fwd):
    import unicodedata
    base(px, req)
    resp = fwd(req)
    if req["op"] == "call.choose" and resp.get("ok"):
        resp["result"]["message"]["text"] = unicodedata.normalize("NFC", resp["result"]["message"]["text"]).replace("\t", " ")
    return resp

@bug("CALL-04")
def choose_no_new_turn(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    ctx = A(req).get("context")
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        for r in _stamps(resp):
            if ctx in st.get("old", {}) and r["stamp"]["parent_request_id"] == st.get("new", {}).get(ctx):
                r["stamp"]["parent_request_id"] = st["old"][ctx]
            elif ctx not in st.get("old", {}):
                st.setdefault("first", {}).setdefault(ctx, r["stamp"]["parent_request_id"])
    if req["op"] == "call.choose" and resp.get("ok") and ctx in st.get("first", {}):
        st.setdefault("old", {})[ctx] = st["first"][ctx]; st.setdefault("new", {})[ctx] = resp["result"]["message"]["request_id"]
    return resp

@bug("CALL-04")
def choose_any_token(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        for r in _stamps(resp):
            c = r["result"].get("content")
            if isinstance(c, dict) and "embed_token" in c: st.setdefault("tok", []).append(c["embed_token"])
    if req["op"] == "call.choose" and not (resp.get("ok")) and st.get("tok"):
        for t in reversed(st["tok"]):
            if t != A(req)["embed_token"]:
                r2 = copy.deepcopy(req); r2["args"]["embed_token"] = t
                resp2 = fwd(r2)
                if resp2.get("ok"): return resp2
    if req["op"] == "call.choose" and not resp.get("ok") and isinstance(A(req).get("option"), int) and A(req)["option"] > 0:
        r2 = copy.deepcopy(req); r2["args"]["option"] = 0
        resp2 = fwd(r2)
        if resp2.get("ok"): return resp2
    return resp

# ---------------------------------------------------------------- CONN
def conn_files_map(req, fn):
    r2 = copy.deepcopy(req)
    for c in r2["args"].get("connectors", []):
        f = c.get("files", {})
        fn(f)
    return r2

@bug("CONN-02")
def conn_group_over_method(px, req, fwd):
    base(px, req)
    if req["op"] == "conn.setup":
        def f(files):
            if "manifest.yaml" in files:
                files["manifest.yaml"] = re.sub(r",\s*default:\s*(allow|ask|deny)\s*", " ", files["manifest.yaml"])
        return fwd(conn_files_map(req, f))
    return fwd(req)

@bug("CONN-02")
def conn_setting_widens(px, req, fwd):
    import yaml
    base(px, req)
    if req["op"] == "conn.setup" and A(req).get("settings"):
        r2 = copy.deepcopy(req)
        for c in r2["args"]["connectors"]:
            f = c["files"]
            try:
                cid = yaml.safe_load(f["connector.yaml"]).get("id")
                m = yaml.safe_load(f["manifest.yaml"])
                for g, v in (A(req)["settings"].get(cid) or {}).items():
                    if g in m.get("actions", {}): m["actions"][g]["default"] = v
                f["manifest.yaml"] = yaml.safe_dump(m, sort_keys=False)
            except Exception:
                pass
        r2["args"].pop("settings")
        return fwd(r2)
    return fwd(req)

@bug("CONN-02")
def conn_setting_ignored(px, req, fwd):
    base(px, req)
    if req["op"] == "conn.setup" and A(req).get("settings"):
        r2 = copy.deepcopy(req); r2["args"].pop("settings"); return fwd(r2)
    return fwd(req)

def _accounts(st): return st.setdefault("acct", {})

@bug("CONN-02")
def conn_scope_skipped_when_allow(px, req, fwd):
    st = base(px, req)
    if req["op"] == "conn.setup" and A(req).get("accounts"):
        st["acct"] = copy.deepcopy(A(req)["accounts"])
    if req["op"] == "conn.account.set":
        _accounts(st)[A(req)["connector"]] = copy.deepcopy(A(req)["account"])
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "missing_scope":
        cid = A(req)["connector"]; acct = _accounts(st).get(cid)
        if acct is not None:
            a2 = copy.deepcopy(acct); a2["scopes"] = list(a2.get("scopes", [])) + resp["result"]["error_detail"].get("missing_scopes", [])
            px.side("conn.account.set", {"connector": cid, "account": a2})
            r = px.side("conn.call", A(req))
            px.side("conn.account.set", {"connector": cid, "account": acct})
            if r and r.get("ok"): return ok(req, r)
    return resp

@bug("CONN-04")
def conn_quota_counts_requests(px, req, fwd):
    base(px, req)
    if req["op"] == "conn.setup":
        def f(files):
            if "manifest.yaml" in files:
                files["manifest.yaml"] = re.sub(r"(\n    [a-z.]+: )\d+", r"\g<1>1", files["manifest.yaml"])
        return fwd(conn_files_map(req, f))
    return fwd(req)

@bug("CONN-04")
def conn_quota_window_never_resets(px, req, fwd):
    st = base(px, req)
    if req["op"] == "conn.clock.advance":
        st["now"] = st.get("now", 0) + A(req).get("ms", 0)
        return ok(req, {"now_ms": st["now"]})
    return fwd(req)

@bug("CONN-04")
def conn_retry_after_seconds(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "connector_rate_limited":
        v = resp["result"].get("retry_after_ms")
        if isinstance(v, int): resp["result"]["retry_after_ms"] = max(1, v // 1000)
    return resp

@bug("CONN-04")
def conn_retry_after_full_window(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "connector_rate_limited":
        resp["result"]["retry_after_ms"] = 60000 if resp["result"].get("retry_after_ms") else None
    return resp

@bug("CONN-07")
def conn_rate_limit_not_terminal(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "connector_rate_limited":
        resp["result"]["terminal_for_attempt"] = False
    return resp

@bug("CONN-07")
def conn_provider_restarts_after_window(px, req, fwd):
    st = base(px, req)
    if req["op"] == "conn.clock.advance": st["adv"] = True
    if req["op"] == "conn.task.start": st["adv"] = False; st["limited"] = False
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "connector_rate_limited":
        if st.get("limited") and st.get("adv"):
            px.side("conn.task.start", {})
            r = px.side("conn.call", A(req))
            if r is not None: st["adv"] = False; return ok(req, r)
        st["limited"] = True; st["adv"] = False
    return resp

@bug("CONN-07")
def conn_completed_empty(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "connector_rate_limited":
        resp["result"]["error_detail"]["completed"] = []
    return resp

def _walk_urls(o, fn):
    if isinstance(o, dict):
        for k, v in o.items():
            if isinstance(v, str) and k.endswith("_url"): o[k] = fn(v)
            else: _walk_urls(v, fn)
    elif isinstance(o, list):
        for v in o: _walk_urls(v, fn)

@bug("CONN-06")
def conn_urls_normalised(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"].startswith("conn.") and resp.get("ok"):
        _walk_urls(resp["result"], lambda u: urllib.parse.quote(urllib.parse.unquote(u), safe=":/?&=#+"))
    return resp

@bug("CONN-06")
def conn_url_fragment_dropped(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"].startswith("conn.") and resp.get("ok"):
        _walk_urls(resp["result"], lambda u: u.split("#")[0])
    return resp

@bug("CONN-06")
def conn_status_cached(px, req, fwd):
    st = base(px, req)
    if req["op"] == "conn.setup": st["called"] = set()
    if req["op"] == "conn.account.set" and A(req).get("connector") in st.get("called", ()):
        return ok(req, {})
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok"):
        st.setdefault("called", set()).add(A(req)["connector"])
    return resp

@bug("CONN-06")
def conn_write_replayed_on_reconnect(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") in ("not_connected", "reauthorization_required", "missing_scope"):
        st.setdefault("failed", []).append(copy.deepcopy(A(req)))
    if req["op"] == "conn.account.set" and A(req)["account"].get("connected") and not A(req)["account"].get("reauthorization_required"):
        for c in st.get("failed", []):
            if c["connector"] == A(req)["connector"]: px.side("conn.call", c)
        st["failed"] = []
    return resp

@bug("CONN-06")
def conn_reauth_retryable(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "reauthorization_required":
        resp["result"]["terminal_for_attempt"] = False; resp["result"]["retry_after_ms"] = 30000
    return resp

@bug("CONN-11")
def conn_commands_from_manifest(px, req, fwd):
    import yaml
    base(px, req)
    if req["op"] == "conn.setup":
        def f(files):
            try:
                m = yaml.safe_load(files["manifest.yaml"])
                doc = files["CONNECTOR.md"]
                meths = [k for g in m.get("actions", {}).values() for k in (g.get("methods") or {})]
                add = "".join("- `%s`\n" % k for k in meths if "`%s`" % k not in doc)
                if add and "## Commands" in doc:
                    i = doc.index("## Commands"); j = doc.index("\n", i) + 1
                    files["CONNECTOR.md"] = doc[:j] + add + doc[j:]
                for k in meths:
                    if k not in (m.get("request_quota") or {}).get("method_costs", {}):
                        m["request_quota"]["method_costs"][k] = 1
                files["manifest.yaml"] = yaml.safe_dump(m, sort_keys=False)
            except Exception:
                pass
        return fwd(conn_files_map(req, f))
    return fwd(req)

@bug("CONN-03")
def conn_card_settled_twice_runs_again(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("conn.call", "conn.custom.call") and resp.get("ok") and resp["result"].get("error_code") == "approval_required":
        st.setdefault("cards", {})[resp["result"]["error_detail"]["card"]["id"]] = (req["op"], copy.deepcopy(A(req)))
    if req["op"] == "conn.card.settle":
        cid = A(req)["card_id"]
        if resp.get("ok") and resp["result"].get("error_code") not in ("no_such_card",) and cid not in st.get("settled", set()):
            st.setdefault("settled", set()).add(cid)
        elif cid in st.get("settled", set()) and A(req).get("choice") == "allow_once" and cid in st.get("cards", {}):
            op, a = st["cards"][cid]
            r = px.side(op, a)
            if r and r.get("error_code") == "approval_required":
                r2 = px.side("conn.card.settle", {"card_id": r["error_detail"]["card"]["id"], "choice": "allow_once"})
                if r2: return ok(req, r2)
    return resp

@bug("CONN-03")
def conn_card_phrase_hardcoded(px, req, fwd):
    base(px, req)
    table = {"users.messages.send": ("send this email in Gmail", {"allow_once": "Send", "deny": "Don't send"}),
             "users.messages.reply": ("reply to this email in Gmail", {"allow_once": "Reply", "deny": "Don't reply"}),
             "users.messages.forward": ("forward this email in Gmail", {"allow_once": "Forward", "deny": "Don't forward"})}
    resp = fwd(req)
    if req["op"] == "conn.call" and resp.get("ok") and resp["result"].get("error_code") == "approval_required":
        card = resp["result"]["error_detail"]["card"]
        if card.get("method") in table:
            card["phrase"], card["buttons"] = table[card["method"]][0], dict(table[card["method"]][1])
        else:
            card["phrase"] = "run this action"; card["buttons"] = {"allow_once": "Allow", "deny": "Deny"}
    return resp

@bug("CONN-03")
def conn_unattended_raises_card(px, req, fwd):
    base(px, req)
    if req["op"] == "conn.setup" and A(req).get("attendance") == "unattended":
        r2 = copy.deepcopy(req); r2["args"]["attendance"] = "attended"; return fwd(r2)
    return fwd(req)

@bug("CONN-03")
def conn_deny_still_runs(px, req, fwd):
    base(px, req)
    if req["op"] == "conn.card.settle" and A(req).get("choice") == "deny":
        r2 = copy.deepcopy(req); r2["args"]["choice"] = "allow_once"
        resp = fwd(r2)
        if resp.get("ok"):
            return ok(req, env_err("approval_denied", "the user declined", {"card_id": A(req)["card_id"]}))
        return resp
    return fwd(req)

def _reg_retry(px, req, fwd, rule, fix):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.custom.register" and resp.get("ok") and resp["result"].get("error_code") == "endpoint_refused" \
            and resp["result"]["error_detail"].get("rule") == rule:
        ep = fix(A(req)["endpoint"])
        if ep:
            a = copy.deepcopy(A(req)); a["endpoint"] = ep
            r = px.side("conn.custom.register", a)
            if r and r.get("ok"): return ok(req, r)
            host = urllib.parse.urlsplit(A(req)["endpoint"]).hostname or "x"
            return ok(req, {"ok": True, "content": {"provider": A(req)["provider"], "host": host}})
    return resp

@bug("CONN-10")
def custom_accepts_any_port(px, req, fwd):
    return _reg_retry(px, req, fwd, "port-443", lambda u: re.sub(r"^(https://[^/]*?):\d+", r"\1", u))

@bug("CONN-10")
def custom_accepts_userinfo(px, req, fwd):
    return _reg_retry(px, req, fwd, "no-userinfo", lambda u: re.sub(r"^https://[^/]*@", "https://", u))

@bug("CONN-10")
def custom_accepts_ip_literals(px, req, fwd):
    return _reg_retry(px, req, fwd, "dns-host", lambda u: "https://api.example.com")

@bug("CONN-10")
def custom_accepts_query(px, req, fwd):
    return _reg_retry(px, req, fwd, "no-query", lambda u: u.split("?")[0])

@bug("CONN-10")
def custom_accepts_http(px, req, fwd):
    return _reg_retry(px, req, fwd, "https", lambda u: re.sub(r"^http://", "https://", u))

@bug("CONN-10")
def custom_provider_prefix_unchecked(px, req, fwd):
    base(px, req)
    if req["op"] == "conn.custom.register" and not str(A(req).get("provider", "")).startswith("custom."):
        a = copy.deepcopy(A(req)); p = a["provider"]
        a["provider"] = "custom." + re.sub(r"[^a-z0-9_-]", "x", p.lower()) if p else "custom.x"
        r = px.side("conn.custom.register", a)
        if r and r.get("ok"):
            r["content"]["provider"] = p; return ok(req, r)
    return fwd(req)

@bug("CONN-10")
def custom_redirect_followed(px, req, fwd):
    st = base(px, req)
    if req["op"] == "conn.custom.register" and A(req).get("server_redirects_to"):
        st.setdefault("redir", {})[A(req)["provider"]] = A(req)["server_redirects_to"]
    resp = fwd(req)
    if req["op"] == "conn.custom.call" and resp.get("ok") and resp["result"].get("error_code") == "approval_required":
        st.setdefault("cardprov", {})[resp["result"]["error_detail"]["card"]["id"]] = A(req)["provider"]
    if req["op"] == "conn.card.settle" and resp.get("ok") and resp["result"].get("error_code") == "redirect_refused":
        p = st.get("cardprov", {}).get(A(req)["card_id"])
        return ok(req, {"ok": True, "content": {"provider": p, "fetched": st.get("redir", {}).get(p), "result": "content from redirect target"}})
    return resp

@bug("CONN-10")
def custom_doc_says_no_approval(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.custom.call" and resp.get("ok") and resp["result"].get("error_code") == "approval_required":
        r = px.side("conn.card.settle", {"card_id": resp["result"]["error_detail"]["card"]["id"], "choice": "allow_once"})
        if r: return ok(req, r)
    return resp

@bug("CONN-10")
def custom_allowed_tools_from_doc(px, req, fwd):
    st = base(px, req)
    if req["op"] == "conn.custom.register":
        st.setdefault("reg", {})[A(req)["provider"]] = copy.deepcopy(A(req))
    resp = fwd(req)
    if req["op"] == "conn.custom.call" and resp.get("ok") and resp["result"].get("error_code") == "tool_not_allowed":
        a = copy.deepcopy(st.get("reg", {}).get(A(req)["provider"]))
        if a:
            a["allowed_tools"] = list(a["allowed_tools"]) + [A(req)["tool"]]
            px.side("conn.custom.register", a)
            r = px.side("conn.custom.call", A(req))
            if r: return ok(req, r)
    return resp

@bug("CONN-14")
def cred_secret_in_card(px, req, fwd):
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.custom.register" and resp.get("ok") and resp["result"].get("ok") and A(req).get("credential"):
        s = resp["result"]["content"].get("surrogate")
        if s: st.setdefault("sur", {})[s] = A(req)["credential"]["secret"]
    if req["op"] == "conn.custom.call" and resp.get("ok") and st.get("sur"):
        t = json.dumps(resp["result"], ensure_ascii=False)
        for s, sec in st["sur"].items(): t = t.replace(s, sec)
        resp["result"] = json.loads(t)
    return resp

@bug("CONN-14")
def cred_secret_echoed_on_register(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.custom.register" and resp.get("ok") and resp["result"].get("ok") and A(req).get("credential"):
        resp["result"]["content"]["credential_hint"] = A(req)["credential"]["secret"][:]
    return resp

@bug("CONN-14")
def cred_any_host(px, req, fwd):
    """surrogate swapped for any host: retries a mismatch after registering the host"""
    st = base(px, req)
    if req["op"] == "conn.custom.register":
        st.setdefault("reg", {})[A(req)["provider"]] = copy.deepcopy(A(req))
    resp = fwd(req)
    if req["op"] in ("conn.custom.call", "conn.card.settle") and resp.get("ok") and resp["result"].get("error_code") == "credential_host_mismatch":
        return ok(req, {"ok": True, "content": {"sent": True}})
    return resp

# ---------------------------------------------------------------- BIN
@bug("BIN-01")
def bin_usable_checked_before_revealed(px, req, fwd):
    st = base(px, req)
    if req["op"] == "exec.setup": st["exec"] = copy.deepcopy(A(req))
    resp = fwd(req)
    if req["op"] == "exec.run" and resp.get("ok") and resp["result"].get("error_code") == "not_revealed":
        ex = [e for e in st.get("exec", {}).get("executors", []) if e["name"] == A(req)["executor"]]
        if ex and ex[0].get("connector") and not st["exec"].get("connected", {}).get(ex[0]["connector"], False):
            resp["result"] = env_err("not_usable", "account not connected", {"executor": A(req)["executor"]})
    return resp

@bug("BIN-01")
def bin_not_usable_retryable(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "exec.run" and resp.get("ok") and resp["result"].get("error_code") == "not_usable":
        resp["result"]["terminal_for_attempt"] = False
    return resp

@bug("BIN-02")
def bin_shortcut_drops_params(px, req, fwd):
    base(px, req)
    if req["op"] == "exec.run" and A(req).get("argv") and str(A(req)["argv"][0]).startswith("+"):
        r2 = copy.deepcopy(req); r2["args"]["argv"] = A(req)["argv"][:1]; return fwd(r2)
    return fwd(req)

@bug("BIN-02")
def bin_unknown_is_invalid_args(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "exec.run" and resp.get("ok") and resp["result"].get("error_code") == "unknown_command":
        resp["result"]["error_code"] = "invalid_arguments"
    return resp

@bug("BIN-02")
def bin_help_omits_shortcuts(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "exec.run" and A(req).get("argv") == ["--help"] and resp.get("ok") and resp["result"].get("ok"):
        def strip(o):
            if isinstance(o, list): return [strip(x) for x in o if not (isinstance(x, str) and x.startswith("+"))]
            if isinstance(o, dict): return {k: strip(v) for k, v in o.items() if not k.startswith("+") and k != "shortcuts"}
            return o
        resp["result"]["content"] = strip(resp["result"]["content"])
    return resp

@bug("BIN-03")
def bin_dial_ignores_acl(px, req, fwd):
    st = base(px, req)
    if req["op"] == "exec.setup": st["broker"] = A(req).get("broker")
    resp = fwd(req)
    if req["op"] == "exec.dial" and resp.get("ok") and resp["result"].get("error_code") == "worker_access_denied":
        r2 = copy.deepcopy(A(req)); r2["principal"] = st.get("broker", "broker")
        r = px.side("exec.dial", r2)
        if r: return ok(req, r)
    return resp

@bug("BIN-03")
def bin_dial_blanket_refusal(px, req, fwd):
    base(px, req)
    if req["op"] == "exec.dial":
        return ok(req, env_err("worker_access_denied", "direct dials are refused", {"principal": A(req).get("principal"), "worker": A(req).get("worker")}))
    return fwd(req)

@bug("BIN-03")
def bin_broker_bypasses_worker_acl(px, req, fwd):
    base(px, req)
    if req["op"] == "exec.setup":
        r2 = copy.deepcopy(req)
        for w in r2["args"].get("workers", []):
            if A(req).get("broker") not in w["acl"]: w["acl"].append(A(req).get("broker"))
        return fwd(r2)
    return fwd(req)

@bug("BIN-03")
def bin_acl_admits_means_revealed(px, req, fwd):
    st = base(px, req)
    if req["op"] == "exec.setup": st["exec"] = copy.deepcopy(A(req))
    resp = fwd(req)
    if req["op"] == "exec.run" and resp.get("ok") and resp["result"].get("error_code") == "not_revealed":
        ex = [e for e in st["exec"]["executors"] if e["name"] == A(req)["executor"]]
        wk = [w for w in st["exec"]["workers"] if ex and w["name"] == ex[0]["worker"]]
        if wk and "cell" in wk[0]["acl"]:
            a = copy.deepcopy(st["exec"])
            for e in a["executors"]:
                if e["name"] == A(req)["executor"]: e["channels"] = list(set(e["channels"]) | {A(req)["channel"]})
            px.side("exec.setup", a)
            r = px.side("exec.run", A(req))
            px.side("exec.setup", st["exec"])
            if r: return ok(req, r)
    return resp

# ---------------------------------------------------------------- EDIT
def _doc_fix(resp, fn):
    r = resp["result"]
    if r.get("document") is not None: r["document"] = fn(r["document"])

@bug("EDIT-02")
def edit_drops_comment_lines(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.edit" and resp.get("ok") and resp["result"].get("applied"):
        _doc_fix(resp, lambda d: "".join(l for l in d.splitlines(True) if not l.lstrip().startswith("#")))
    return resp

@bug("EDIT-02")
def edit_normalises_line_endings(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.edit" and resp.get("ok") and resp["result"].get("applied"):
        _doc_fix(resp, lambda d: d.replace("\r\n", "\n").replace("\r", "\n"))
        r = resp["result"]
        if "document_b64" in r and r.get("document") is not None:
            import base64
            raw = base64.b64decode(r["document_b64"])
            bom = raw.startswith(b"\xef\xbb\xbf")
            r["document_b64"] = base64.b64encode((b"" if bom else b"") + raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")).decode()
    return resp

@bug("EDIT-02")
def edit_strips_trailing_whitespace(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.edit" and resp.get("ok") and resp["result"].get("applied"):
        _doc_fix(resp, lambda d: re.sub(r"[ \t]+(\r?\n)", r"\1", d))
    return resp

@bug("EDIT-02")
def edit_diagnostics_of_source(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.edit" and resp.get("ok") and resp["result"].get("applied"):
        a = {k: v for k, v in A(req).items() if k in ("source", "source_b64", "format", "filename")}
        p = px.side("definition.parse", a)
        if p: resp["result"]["diagnostics"] = p["diagnostics"]
    return resp

@bug("EDIT-03")
def edit_refusal_falls_back_to_rewrite(px, req, fwd):
    import yaml
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.edit" and resp.get("ok") and not resp["result"].get("applied") \
            and (resp["result"].get("refusal") or {}).get("code") == "unsafe_splice":
        src = A(req).get("source")
        if isinstance(src, str):
            try:
                e = A(req)["edit"]
                if src.startswith("---"):
                    _, fm, body = src.split("---", 2)
                else:
                    fm, body = src, None
                d = yaml.safe_load(fm) or {}
                if "value" in e:
                    if e["field"] == "mcp.servers": d.setdefault("mcp", {})["servers"] = e["value"]
                    else: d[e["field"]] = e["value"]
                out = yaml.safe_dump(d, sort_keys=False, allow_unicode=True)
                doc = ("---\n" + out + "---" + body) if body is not None else out
                resp["result"].update({"applied": True, "document": doc, "refusal": None})
            except Exception:
                pass
    return resp

@bug("EDIT-02")
def edit_remove_counts_valid_entries_only(px, req, fwd):
    base(px, req)
    if req["op"] == "editor.edit" and isinstance((A(req).get("edit") or {}).get("remove"), int):
        a = {k: v for k, v in A(req).items() if k in ("source", "source_b64", "format", "filename")}
        p = px.side("definition.parse", a)
        e = A(req)["edit"]
        if p:
            f = e["field"]
            d = p["definition"]
            lst = (d.get("mcp") or {}).get("servers") if f == "mcp.servers" else d.get(f)
            if isinstance(lst, list):
                # index among non-empty string entries -> map to raw index guess: shift by number of bad entries before
                bad = [dg["path"][1] for dg in p["diagnostics"] if dg["code"] in ("DEF-EMPTY-ENTRY", "DEF-TYPE") and len(dg.get("path", [])) == 2 and dg["path"][0] == f.split(".")[0]]
                shift = sum(1 for b in bad if isinstance(b, int) and b <= e["remove"])
                if shift:
                    r2 = copy.deepcopy(req); r2["args"]["edit"]["remove"] = e["remove"] + shift
                    return fwd(r2)
    return fwd(req)

def osa(a, b):
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1): d[i][0] = i
    for j in range(len(b) + 1): d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            c = 0 if a[i-1] == b[j-1] else 1
            d[i][j] = min(d[i-1][j] + 1, d[i][j-1] + 1, d[i-1][j-1] + c)
            if i > 1 and j > 1 and a[i-1] == b[j-2] and a[i-2] == b[j-1]:
                d[i][j] = min(d[i][j], d[i-2][j-2] + 1)
    return d[-1][-1]

@bug("EDIT-04")
def edit_nearest_case_sensitive(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.unknown_names" and resp.get("ok"):
        for u in resp["result"]["unknown"]:
            n = u["name"]; L = len(n); cut = 1 if L <= 4 else 2 if L <= 8 else 3
            u["nearest"] = [c for c in u["nearest"] if osa(n, c) <= cut]
    return resp

@bug("EDIT-04")
def edit_nearest_always_suggests(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.unknown_names" and resp.get("ok"):
        cands = None
        for u in resp["result"]["unknown"]:
            if not u["nearest"]:
                if cands is None:
                    c = px.side("editor.candidates", {}) or {}
                    cands = {"tools": [x["name"] for x in c.get("tools", {}).get("candidates", [])],
                             "skills": [x["name"] for x in c.get("skills", {}).get("candidates", [])],
                             "mcp.servers": [x["name"] for x in c.get("mcp", {}).get("candidates", [])]}
                lst = sorted(cands.get(u["field"], []), key=lambda c: osa(u["name"].lower(), c.lower()))
                u["nearest"] = lst[:1]
    return resp

@bug("EDIT-04")
def edit_nearest_unordered(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.unknown_names" and resp.get("ok"):
        for u in resp["result"]["unknown"]:
            u["nearest"] = sorted(u["nearest"], key=lambda s: s.lower(), reverse=True)
    return resp

@bug("EDIT-04")
def edit_unknown_omits_mcp_style(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.unknown_names" and resp.get("ok"):
        resp["result"]["unknown"] = [u for u in resp["result"]["unknown"] if u["code"] != "TOOL-MCP-STYLE"]
    return resp

@bug("EDIT-01")
def edit_candidates_sorted(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.candidates" and resp.get("ok"):
        resp["result"]["tools"]["candidates"].sort(key=lambda c: c["name"].lower())
    return resp

@bug("EDIT-01")
def edit_candidates_legacy_empty(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.candidates" and resp.get("ok") and resp["result"]["tools"].get("source") == "legacy_fallback":
        resp["result"]["tools"]["candidates"] = []
    return resp

@bug("EDIT-01")
def edit_candidates_hide_disabled_servers(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.candidates" and resp.get("ok"):
        resp["result"]["mcp"]["candidates"] = [c for c in resp["result"]["mcp"]["candidates"] if c.get("state") == "ready"]
    return resp

@bug("EDIT-01")
def edit_skill_last_layer_wins(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "editor.candidates" and resp.get("ok"):
        sk = resp["result"]["skills"]
        byname = {}
        for s in sk.get("shadowed", []):
            byname.setdefault(s["name"].lower(), []).append(s)
        for c in sk["candidates"]:
            hid = byname.get(c["name"].lower())
            if hid:
                last = hid[-1]
                c["layer"], c["location"] = last["layer"], last["location"]
    return resp

@bug("CALL-02")
def handoff_result_injected_at_call(px, req, fwd):
    """the async result is injected into the transcript as soon as the call is made (outcome completed, no content yet)"""
    st = base(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and resp.get("ok"):
        for r in _stamps(resp):
            c = r["result"].get("content")
            if r["result"].get("ok") and isinstance(c, dict) and isinstance(c.get("handoff"), dict):
                st.setdefault("pend", {}).setdefault(A(req)["context"], []).append(c["handoff"])
    if req["op"] == "call.transcript" and resp.get("ok"):
        have = {e.get("handoff_id") for e in resp["result"]["events"]}
        for h in st.get("pend", {}).get(A(req)["context"], []):
            if h["id"] not in have:
                resp["result"]["events"].append({"kind": "handoff_result", "handoff_id": h["id"], "request_id": h["request_id"], "outcome": "completed", "content": None})
    return resp

@bug("CALL-01")
def call_many_completion_order(px, req, fwd):
    base(px, req)
    resp = fwd(req)
    if req["op"] == "call.invoke_many" and resp.get("ok"):
        resp["result"]["results"] = list(reversed(resp["result"]["results"]))
    return resp

@bug("CONN-03")
def conn_approved_args_differ(px, req, fwd):
    """the approved call is sent with the runtime's defaults merged in, not exactly the card's arguments"""
    st = base(px, req)
    resp = fwd(req)
    if req["op"] == "conn.card.settle" and A(req).get("choice") == "allow_once" and resp.get("ok") and resp["result"].get("ok"):
        st["n_appr"] = st.get("n_appr", 0) + 1
    if req["op"] == "conn.journal" and resp.get("ok") and st.get("n_appr"):
        for r in resp["result"]["requests"]:
            if r.get("method", "").startswith(("users.messages.send", "users.messages.reply", "users.messages.forward")) or r.get("connector", "").startswith("custom."):
                if isinstance(r.get("params"), dict): r["params"]["format"] = "full"
    return resp

@bug("DELEG-06")
def stop_leaves_grandchild_cards_pending(px, req, fwd):
    """TaskStop reports only the direct child stopped in `stopped` (subtree stopped silently)"""
    base(px, req)
    resp = fwd(req)
    if is_tool(req, "TaskStop") and resp.get("ok") and resp["result"].get("ok"):
        resp["result"]["content"]["stopped"] = [A(req)["args"]["task_id"]]
    return resp

"""Wrong runtimes of round eyes4b, written from SPEC.md (sections 2, 3 EDIT, 10a, 10b,
11a-11c), the protocol schemas and the seeds.  A bug is bug(px, req, fwd) -> response.
BUGS[name] = function; DESCR[name] = (requirement, one-line description)."""
import base64
import copy
import json
import re

BUGS = {}
DESCR = {}


def bug(name, reqid, text):
    def deco(fn):
        BUGS[name] = fn
        DESCR[name] = (reqid, text)
        return fn
    return deco


# ------------------------------------------------------------------ helpers
def A(req):
    return req.get("args") or {}


def R(resp):
    return resp.get("result") if resp.get("ok") else None


def st_of(px, req):
    """Per-world bug state (forgotten on world.setup)."""
    if req.get("op") == "world.setup":
        px.state.clear()
    return px.state


def ok(req, result):
    return {"id": req.get("id"), "ok": True, "result": result}


def env_err(code, msg, detail=None, terminal=True, retry=None):
    return {"ok": False, "error_code": code, "error_message": msg,
            "error_detail": detail if detail is not None else {},
            "terminal_for_attempt": terminal, "retry_after_ms": retry}


def is_tool(req, name):
    return req.get("op") == "tool.call" and A(req).get("tool") == name


def tree(px):
    return (px.side("delegation.tree", {}) or {}).get("nodes", [])


def node_map(px):
    return {n["agent"]: n for n in tree(px)}


def _line(e, ea):
    return json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=ea) + "\n"


def fix_log(resp, fn):
    """Apply fn(events) -> events to a delegation.log response and re-render its text the
    way the reference escapes it."""
    r = R(resp)
    if r is None:
        return resp
    ea = "".join(_line(e, True) for e in r["events"]) == r.get("text")
    r["events"] = fn(copy.deepcopy(r["events"]))
    r["text"] = "".join(_line(e, ea) for e in r["events"])
    return resp


def fix_nodes(resp, fn):
    r = R(resp)
    if r is not None:
        r["nodes"] = fn(r["nodes"])
    return resp


def tool_env(resp):
    r = R(resp)
    return r if isinstance(r, dict) else None


def stop_target(req):
    """(caller, target) of a stop request, or None."""
    if is_tool(req, "TaskStop"):
        return A(req).get("agent"), (A(req).get("args") or {}).get("task_id")
    if req.get("op") == "task.stop":
        return "driver", A(req).get("agent")
    return None


def stopped_list(req, resp):
    r = R(resp)
    if r is None:
        return None
    if req.get("op") == "task.stop":
        return r.get("stopped")
    if r.get("ok") and isinstance(r.get("content"), dict):
        return r["content"].get("stopped")
    return None


# ================================================================== DELEG / APPR-06..08

@bug("cascade_reports_lost", "DELEG-06",
     "a stop delivers only the named task's partial report; descendants stopped by the cascade "
     "never report to their own parents")
def cascade_reports_lost(px, req, fwd):
    st = st_of(px, req)
    if req["op"] == "delegation.setup":
        st.pop("lost", None)
    resp = fwd(req)
    tgt = stop_target(req)
    if tgt:
        stopped = stopped_list(req, resp) or []
        for a in stopped:
            if a != tgt[1]:
                st.setdefault("lost", set()).add(a)
    if req["op"] == "delegation.inbox" and R(resp):
        lost = st.get("lost", set())
        R(resp)["reports"] = [r for r in R(resp)["reports"]
                              if not (r.get("status") == "stopped" and r.get("task_id") in lost)]
    return resp


@bug("stop_authorised_by_same_root", "DELEG-02",
     "TaskStop and follow-ups are authorised when caller and task share a root (siblings, "
     "descendants, cousins), not only when the caller is an ancestor")
def stop_authorised_by_same_root(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    env = tool_env(resp) if req["op"] == "tool.call" else None
    if env and env.get("error_code") == "NOT-YOUR-TASK":
        caller = A(req).get("agent")
        nodes = node_map(px)
        target = (A(req).get("args") or {}).get("task_id") or (A(req).get("args") or {}).get("resume")
        croot = nodes[caller]["root"] if caller in nodes else caller
        troot = nodes.get(target, {}).get("root")
        if troot is not None and troot == croot:
            # the runtime acts as if the caller were allowed: the stop / follow-up happens
            r2 = copy.deepcopy(req)
            r2["args"]["agent"] = nodes[target]["parent"]
            resp = fwd(r2)
            for a in stopped_list(req, resp) or []:
                px.state.setdefault("by", {})[a] = caller
            return resp
    if req["op"] == "delegation.log":
        by = px.state.get("by", {})

        def f(events):
            for e in events:
                if e["event"] == "stopped" and e["agent"] in by:
                    e["by"] = by[e["agent"]]
            return events
        fix_log(resp, f)
    return resp


@bug("stopped_by_is_parent", "APPR-08",
     "the `stopped` event of a cascaded descendant names its own parent as `by`, not the agent "
     "whose TaskStop reached it")
def stopped_by_is_parent(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.log" and R(resp):
        nodes = None

        def f(events):
            nonlocal nodes
            parents = {e["agent"]: e.get("parent") for e in R(resp)["events"] if e["event"] == "delegated"}
            if A(req).get("agent"):
                full = px.side("delegation.log", {}) or {"events": []}
                parents = {e["agent"]: e.get("parent") for e in full["events"] if e["event"] == "delegated"}
            for e in events:
                if e["event"] == "stopped" and e.get("cascade") and parents.get(e["agent"]):
                    e["by"] = parents[e["agent"]]
            return events
        fix_log(resp, f)
    return resp


@bug("refused_event_depth_is_callers", "APPR-08",
     "the log's `refused` event for a depth refusal records the caller's depth, not the depth "
     "the refused child would have had (the envelope's detail is right)")
def refused_event_depth_is_callers(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.log":
        def f(events):
            for e in events:
                if e["event"] == "refused" and isinstance(e.get("depth"), int):
                    e["depth"] -= 1
            return events
        fix_log(resp, f)
    return resp


@bug("root_is_parent", "DELEG-02",
     "lineage records `root` as the delegating agent (the parent) instead of the top-level "
     "agent of the lineage, in the tree and in the log")
def root_is_parent(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.tree":
        def f(nodes):
            for n in nodes:
                n["root"] = n["parent"]
            return nodes
        fix_nodes(resp, f)
    if req["op"] == "delegation.log":
        def g(events):
            for e in events:
                if e["event"] == "delegated":
                    e["root"] = e["parent"]
            return events
        fix_log(resp, g)
    return resp


def _hist(st, agent):
    return st.setdefault("hist", {}).setdefault(agent, {"turns": [], "cur": []})


def _track_history(st, req, resp):
    if not resp.get("ok"):
        return
    a = A(req)
    if req["op"] == "history.append":
        _hist(st, a["agent"])["cur"].append({"role": a["role"], "text": a["text"]})
    elif req["op"] == "history.end_turn":
        h = _hist(st, a["agent"])
        if h["cur"]:
            h["turns"].append(h["cur"])
        h["cur"] = []


@bug("fork_seeds_last_turn_only", "DELEG-04",
     "a fork is seeded with the parent's last completed turn only, not all completed turns")
def fork_seeds_last_turn_only(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _track_history(st, req, resp)
    if is_tool(req, "Task"):
        env = tool_env(resp)
        if env and env.get("ok") and env["content"].get("implementer") == "fork" \
                and not (A(req).get("args") or {}).get("resume"):
            turns = _hist(st, A(req)["agent"])["turns"]
            drop = sum(len(t) for t in turns[:-1])
            st.setdefault("drop", {})[env["content"]["task_id"]] = drop
    if req["op"] == "delegation.context" and R(resp):
        drop = st.get("drop", {}).get(A(req)["agent"], 0)
        out, n = [], 0
        for e in R(resp)["entries"]:
            if e["kind"] == "seed" and n < drop:
                n += 1
                continue
            out.append(e)
        R(resp)["entries"] = out
    return resp


@bug("fork_seed_taken_lazily", "DELEG-04",
     "a fork's seed is read from the parent's history when the child's context is built, "
     "so turns the parent completes after delegating also reach the fork")
def fork_seed_taken_lazily(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _track_history(st, req, resp)
    if is_tool(req, "Task"):
        env = tool_env(resp)
        if env and env.get("ok") and env["content"].get("implementer") == "fork" \
                and not (A(req).get("args") or {}).get("resume"):
            parent = A(req)["agent"]
            st.setdefault("forks", {})[env["content"]["task_id"]] = (parent, len(_hist(st, parent)["turns"]))
    if req["op"] == "delegation.context" and R(resp):
        f = st.get("forks", {}).get(A(req)["agent"])
        if f:
            parent, n = f
            later = [m for t in _hist(st, parent)["turns"][n:] for m in t]
            ents = R(resp)["entries"]
            pos = max([i for i, e in enumerate(ents) if e["kind"] in ("notice", "seed")] + [-1]) + 1
            R(resp)["entries"] = ents[:pos] + [{"kind": "seed", "role": m["role"], "text": m["text"]}
                                               for m in later] + ents[pos:]
    return resp


@bug("fork_copies_parent_context", "APPR-07",
     "a fork of a delegated child is seeded with the parent's whole context (its notice and "
     "task included), so the fixed notice appears twice")
def fork_copies_parent_context(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    if is_tool(req, "Task"):
        env = tool_env(resp)
        if env and env.get("ok") and env["content"].get("implementer") == "fork" \
                and not (A(req).get("args") or {}).get("resume"):
            st.setdefault("forkparent", {})[env["content"]["task_id"]] = A(req)["agent"]
    if req["op"] == "delegation.context" and R(resp):
        parent = st.get("forkparent", {}).get(A(req)["agent"])
        if parent:
            pctx = px.side("delegation.context", {"agent": parent})
            if pctx and pctx["entries"]:
                pre = [e for e in pctx["entries"] if e["kind"] in ("notice", "task", "follow-up")]
                ents = R(resp)["entries"]
                R(resp)["entries"] = ents[:1] + [dict(e) for e in pre] + ents[1:]
    return resp


@bug("pin_drops_attendance", "APPR-06",
     "the child's pinned sandbox keeps tier and writable roots but not attendance: every child is "
     "pinned `attended`, so an unattended session's children are recorded and decided as attended")
def pin_drops_attendance(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.tree":
        def f(nodes):
            for n in nodes:
                n["permissions"]["attendance"] = "attended"
            return nodes
        fix_nodes(resp, f)
    if req["op"] == "delegation.log":
        def g(events):
            for e in events:
                if e["event"] == "sandbox_mode":
                    e["attendance"] = "attended"
            return events
        fix_log(resp, g)
    if req["op"] == "tool.call":
        env = tool_env(resp)
        if env and env.get("error_code") == "APPROVAL-DENIED" \
                and str((env.get("error_detail") or {}).get("rule", "")).endswith("/unattended"):
            nodes = node_map(px)
            if A(req).get("agent") in nodes:
                env["error_detail"]["rule"] = "never-ask"
                env["error_message"] = env["error_message"].replace(
                    "unattended, so denied at once instead of asking",
                    "approval policy pinned to never-ask, so denied instead of asking")
    return resp


@bug("max_depth_zero_unlimited", "DELEG-03",
     "max_depth is enforced with a truthiness test (`if max_depth and depth > max_depth`), so "
     "`max_depth: 0` disables the depth limit instead of forbidding every delegation")
def max_depth_zero_unlimited(px, req, fwd):
    st_of(px, req)
    if req["op"] == "delegation.setup" and A(req).get("max_depth") == 0:
        r2 = copy.deepcopy(req)
        r2["args"]["max_depth"] = 1000
        resp = fwd(r2)
        if R(resp):
            R(resp)["limits"]["max_depth"] = 0
        return resp
    return fwd(req)


@bug("limits_persist_across_setup", "DELEG-03",
     "a delegation.setup that omits max_depth/max_fanout keeps the previous setup's limits "
     "instead of the defaults 3 / 20")
def limits_persist_across_setup(px, req, fwd):
    st = st_of(px, req)
    if req["op"] == "delegation.setup":
        r2 = copy.deepcopy(req)
        prev = st.get("limits", {})
        for k in ("max_depth", "max_fanout"):
            if k not in r2["args"] and k in prev:
                r2["args"][k] = prev[k]
        resp = fwd(r2)
        if R(resp):
            st["limits"] = dict(R(resp)["limits"])
        return resp
    return fwd(req)


@bug("stop_skips_finished_child", "DELEG-06",
     "TaskStop on a child that already completed is a no-op (nothing listed, nothing stopped): "
     "the finished child can still be followed up or resumed afterwards")
def stop_skips_finished_child(px, req, fwd):
    st_of(px, req)
    tgt = stop_target(req)
    if tgt:
        n = node_map(px).get(tgt[1])
        if n and n["status"] in ("completed", "blocked"):
            # only check authorisation the normal way when the caller is not an ancestor
            anc, cur, nodes = set(), n, node_map(px)
            while cur:
                anc.add(cur["parent"])
                cur = nodes.get(cur["parent"])
            if tgt[0] == "driver":
                return ok(req, {"settled": [], "results": [], "stopped": []})
            if tgt[0] in anc:
                return ok(req, {"ok": True, "content": {"stopped": [], "settled": [], "partial": None}})
    return fwd(req)


@bug("followup_refuses_blocked", "DELEG-01",
     "only a child that reported `completed` counts as finished: a follow-up or resume of a "
     "child that reported `blocked` is refused TASK-NOT-FINISHED")
def followup_refuses_blocked(px, req, fwd):
    st_of(px, req)
    target = None
    if is_tool(req, "Task"):
        target = (A(req).get("args") or {}).get("resume")
    if target:
        n = node_map(px).get(target)
        if n and n["status"] == "blocked":
            return ok(req, env_err("TASK-NOT-FINISHED", "%s is still running" % target, {"task_id": target}))
    if req["op"] == "child.resume":
        n = node_map(px).get(A(req).get("agent"))
        if n and n["status"] == "blocked":
            return {"id": req.get("id"), "ok": False, "error": {
                "code": "TASK-NOT-FINISHED", "message": "%s is still running" % n["agent"]}}
    return fwd(req)


@bug("followup_unauthorised", "DELEG-02",
     "authorisation is checked on TaskStop only: a follow-up (`Task {resume}`) from an agent "
     "that is not an ancestor of the task is accepted")
def followup_unauthorised(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if is_tool(req, "Task") and (A(req).get("args") or {}).get("resume"):
        env = tool_env(resp)
        if env and env.get("error_code") == "NOT-YOUR-TASK":
            target = A(req)["args"]["resume"]
            n = node_map(px).get(target)
            if n:
                r2 = copy.deepcopy(req)
                r2["args"]["agent"] = n["parent"]
                return fwd(r2)
    return resp


@bug("unknown_implementer_lists_nothing", "DELEG-01",
     "an unknown implementer is refused UNKNOWN-IMPLEMENTER without listing the implementers")
def unknown_implementer_lists_nothing(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    env = tool_env(resp) if req["op"] == "tool.call" else None
    if env and env.get("error_code") == "UNKNOWN-IMPLEMENTER":
        env["error_detail"] = {"implementer": env["error_detail"].get("implementer")}
        env["error_message"] = "no implementer '%s'" % env["error_detail"]["implementer"]
    return resp


@bug("inbox_sorted_by_task", "DELEG-01",
     "the parent's inbox is a map keyed by task id: reports come back sorted by task id, not in "
     "arrival order")
def inbox_sorted_by_task(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "delegation.inbox" and R(resp):
        R(resp)["reports"] = sorted(R(resp)["reports"], key=lambda r: str(r.get("task_id")))
    return resp


@bug("resume_ignores_deeper_option", "DELEG-03",
     "a resumed child always keeps its persisted depth: a runtime depth option that is deeper "
     "is ignored (effective depth is the persisted one, not max(persisted, option))")
def resume_ignores_deeper_option(px, req, fwd):
    st_of(px, req)
    if req["op"] == "child.resume" and "depth_option" in A(req):
        r2 = copy.deepcopy(req)
        del r2["args"]["depth_option"]
        return fwd(r2)
    return fwd(req)


@bug("fork_memory_parent_scope", "DELEG-05",
     "a fork child (it inherits the parent's context) also gets the parent's memory scope: its "
     "memory tools read and write the parent's private directory")
def fork_memory_parent_scope(px, req, fwd):
    st_of(px, req)
    if req["op"] == "tool.call" and str(A(req).get("tool", "")).startswith("memory_"):
        nodes = node_map(px)
        n = nodes.get(A(req).get("agent"))
        if n and n["implementer"] == "fork":
            r2 = copy.deepcopy(req)
            r2["args"]["agent"] = n["parent"]
            resp = fwd(r2)
            env = tool_env(resp)
            if env and env.get("error_code") != "tool_not_mounted":
                return resp
    return fwd(req)


# ================================================================== FLOW

def _flow_result(req, resp):
    """The flow.run result inside a flow.run or flow.call response (or None)."""
    r = R(resp)
    if r is None:
        return None
    if req["op"] == "flow.run":
        return r
    if req["op"] == "flow.call" and r.get("ok") and isinstance(r.get("content"), dict):
        return r["content"]
    return None


@bug("flow_failure_stops_children", "FLOW-01",
     "when a workflow fails, the children its script already spawned are stopped as cleanup "
     "(they no longer run, report `stopped`), instead of staying the parent's ordinary children")
def flow_failure_stops_children(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    fr = _flow_result(req, resp)
    if fr and fr.get("status") == "failed":
        nodes = node_map(px)
        for c in fr.get("children", []):
            if nodes.get(c, {}).get("status") == "running":
                px.side("task.stop", {"agent": c})
    return resp


def _add_impl_fork(script):
    import ast
    try:
        tree_ = ast.parse(script)
    except SyntaxError:
        return script
    lines = script.split("\n")
    edits = []
    for node in ast.walk(tree_):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "spawn" \
                and len(node.args) < 3 and not any(k.arg == "implementer" for k in node.keywords) \
                and node.end_lineno is not None:
            edits.append((node.end_lineno, node.end_col_offset))
    for ln, col in sorted(edits, reverse=True):
        b = lines[ln - 1].encode("utf-8")
        pos = col - 1  # the closing parenthesis
        if b[pos:pos + 1] != b")":
            continue
        b = b[:pos] + b', implementer="fork"' + b[pos:]
        lines[ln - 1] = b.decode("utf-8")
    return "\n".join(lines)


@bug("flow_spawn_defaults_to_fork", "FLOW-01",
     "the workflow host API's spawn() defaults to the `fork` implementer (children see the "
     "parent's history) instead of `fresh`")
def flow_spawn_defaults_to_fork(px, req, fwd):
    st_of(px, req)
    if req["op"] == "flow.run" and isinstance(A(req).get("script"), str):
        r2 = copy.deepcopy(req)
        r2["args"]["script"] = _add_impl_fork(A(req)["script"])
        return fwd(r2)
    if req["op"] == "flow.call" and isinstance((A(req).get("args") or {}).get("script"), str):
        r2 = copy.deepcopy(req)
        r2["args"]["args"]["script"] = _add_impl_fork(A(req)["args"]["script"])
        return fwd(r2)
    return fwd(req)


@bug("flow_children_only_waited", "FLOW-01",
     "a run's `children` is built from the reports its waits collected, so children spawned "
     "but never waited for (or spawned before a failure) are not listed")
def flow_children_only_waited(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    fr = _flow_result(req, resp)
    if fr:
        done = [e["task_id"] for e in fr.get("events", []) if e["event"] == "workflow.child_finished"]
        fr["children"] = [c for c in fr.get("children", []) if c in done]
    return resp


@bug("flow_seq_global_counter", "FLOW-02",
     "lifecycle event `seq` comes from one counter for the session, so a second workflow's "
     "events do not count from 1")
def flow_seq_global_counter(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    fr = _flow_result(req, resp)
    if fr:
        off = st.get("seqoff", 0)
        for e in fr.get("events", []):
            e["seq"] += off
        st["seqoff"] = off + len(fr.get("events", []))
    return resp


def _iter_rounds(st, req, resp):
    r = R(resp)
    if req["op"] == "flow.iterate" and r:
        for rd in r.get("rounds", []):
            st.setdefault("rounds", {})[rd["task_id"]] = rd
        return r
    return None


@bug("iterate_instruction_numbered", "FLOW-03",
     "the iteration instruction is templated per round (it names the round), so it is not one "
     "fixed text for every round")
def iterate_instruction_numbered(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _iter_rounds(st, req, resp)
    if req["op"] == "delegation.context" and R(resp):
        for e in R(resp)["entries"]:
            inp = e.get("input")
            if e["kind"] == "task" and isinstance(inp, dict) and "instruction" in inp:
                new = "Round %s: %s" % (inp.get("round"), inp["instruction"])
                e["text"] = e["text"].replace(inp["instruction"], new)
                inp["instruction"] = new
    return resp


@bug("iterate_done_on_last_round_is_max_rounds", "FLOW-03",
     "the loop tests `round == max_rounds` before the child's status, so a child that reports "
     "`done` in the last round is reported as `max_rounds`")
def iterate_done_on_last_round_is_max_rounds(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    r = _iter_rounds(st, req, resp)
    if r and r.get("rounds") and len(r["rounds"]) == A(req).get("max_rounds") \
            and r["status"] in ("done", "blocked"):
        r["status"] = "max_rounds"
    return resp


@bug("iterate_handoff_off_by_one", "FLOW-03",
     "round k is given the hand-off of round k-2 (index off by one); round 2 gets null")
def iterate_handoff_off_by_one(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    r = _iter_rounds(st, req, resp)
    if r:
        hs = {rd["round"]: rd["handoff"] for rd in r.get("rounds", [])}
        for rd in r.get("rounds", []):
            st.setdefault("stale", {})[rd["task_id"]] = hs.get(rd["round"] - 2)
    if req["op"] == "delegation.context" and R(resp) and A(req).get("agent") in st.get("stale", {}):
        for e in R(resp)["entries"]:
            inp = e.get("input")
            if e["kind"] == "task" and isinstance(inp, dict) and "previous_handoff" in inp:
                inp["previous_handoff"] = st["stale"][A(req)["agent"]]
                e["text"] = e["text"].split("Previous hand-off report:")[0] + \
                    "Previous hand-off report: " + json.dumps(inp["previous_handoff"])
    return resp


@bug("iterate_last_round_left_running", "FLOW-03",
     "the iteration returns as soon as a round reports, without ending that round's child: the "
     "last round's child stays running")
def iterate_last_round_left_running(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    r = _iter_rounds(st, req, resp)
    if r and r.get("rounds"):
        st.setdefault("lastrun", set()).add(r["rounds"][-1]["task_id"])
    if req["op"] == "delegation.tree":
        def f(nodes):
            for n in nodes:
                if n["agent"] in st.get("lastrun", set()) and n["status"] in ("completed", "blocked"):
                    n["status"] = "running"
            return nodes
        fix_nodes(resp, f)
    return resp


# ================================================================== NS / CALL

def _ns_track(st, req, resp):
    a = A(req)
    if req["op"] == "ns.setup" and R(resp):
        st["cat"] = a.get("catalog")
        st["ctx"] = {}
    elif req["op"] == "ns.open" and R(resp):
        st.setdefault("ctx", {})[R(resp)["context"]] = {"channel": R(resp)["channel"], "order": []}


def _ns_fn(st, qname):
    cat = st.get("cat") or {}
    if not isinstance(qname, str) or qname.count(".") != 1:
        return None, None
    ns, fn = qname.split(".")
    for n in cat.get("namespaces", []):
        if n["name"] == ns:
            for f in n.get("functions", []):
                if f["name"] == fn:
                    return n, f
    return None, None


@bug("ns_load_casefold", "NS-02",
     "load_tool_namespace matches namespace names case-insensitively (`MAIL` loads `mail`)")
def ns_load_casefold(px, req, fwd):
    st = st_of(px, req)
    if req["op"] == "call.invoke" and str(A(req).get("function", "")).endswith(".load_tool_namespace"):
        names = (A(req).get("args") or {}).get("namespaces")
        cat = st.get("cat") or {}
        if isinstance(names, list):
            real = {n["name"].lower(): n["name"] for n in cat.get("namespaces", [])}
            r2 = copy.deepcopy(req)
            r2["args"]["args"]["namespaces"] = [real.get(x.lower(), x) if isinstance(x, str) else x for x in names]
            resp = fwd(r2)
            _ns_track(st, req, resp)
            return resp
    resp = fwd(req)
    _ns_track(st, req, resp)
    return resp


def _type_ok(v, t):
    m = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict,
         "null": type(None)}
    if isinstance(t, list):
        return any(_type_ok(v, x) for x in t)
    if t not in m:
        return True
    if t in ("integer", "number") and isinstance(v, bool):
        return False
    return isinstance(v, m[t])


@bug("ns_arg_types_unchecked", "NS-01",
     "argument checking only looks at required and unknown keys: an argument of the wrong type "
     "is passed to the function, which runs")
def ns_arg_types_unchecked(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _ns_track(st, req, resp)
    if req["op"] == "call.invoke" and R(resp):
        env = R(resp)["result"]
        if env.get("error_code") == "invalid_arguments":
            n, f = _ns_fn(st, A(req)["function"])
            args = A(req).get("args")
            if f and isinstance(args, dict) and f.get("delivery", "sync") == "sync":
                p = f.get("parameters") or {}
                props = p.get("properties") or {}
                missing = [k for k in p.get("required", []) if k not in args]
                extra = [k for k in args if k not in props] if p.get("additionalProperties") is False else []
                if not missing and not extra:
                    R(resp)["result"] = {"ok": True, "content": {"function": A(req)["function"], "args": args}}
    return resp


@bug("ns_invalid_args_retryable", "CALL-03",
     "an `invalid_arguments` envelope says terminal_for_attempt: false (the model is invited to "
     "retry the same attempt)")
def ns_invalid_args_retryable(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and R(resp):
        rows = R(resp).get("results") if req["op"] == "call.invoke_many" else [R(resp)]
        for row in rows or []:
            env = row.get("result") or {}
            if env.get("error_code") == "invalid_arguments":
                env["terminal_for_attempt"] = False
    return resp


@bug("ns_surface_recent_load_last", "NS-02",
     "the surface lists namespaces in load order (most recently loaded last), so loading an "
     "already loaded namespace again moves it and changes the surface")
def ns_surface_recent_load_last(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _ns_track(st, req, resp)
    a = A(req)
    if req["op"] == "call.invoke" and str(a.get("function", "")).endswith(".load_tool_namespace") and R(resp):
        env = R(resp)["result"]
        ctx = st.get("ctx", {}).get(a.get("context"))
        if env.get("ok") and ctx is not None:
            for x in (a.get("args") or {}).get("namespaces", []):
                if x in ctx["order"]:
                    ctx["order"].remove(x)
                ctx["order"].append(x)
    if req["op"] in ("ns.surface", "ns.open") and R(resp):
        ctx = st.get("ctx", {}).get(R(resp)["context"])
        if ctx and ctx["order"]:
            surf = R(resp)["surface"]
            moved = [s for x in ctx["order"] for s in surf if s["namespace"] == x and s.get("loaded")]
            # core namespaces stay where they are
            moved = [s for s in moved if not _is_core(st, s["namespace"])]
            rest = [s for s in surf if s not in moved]
            R(resp)["surface"] = rest + moved
            R(resp)["bytes"] = len(json.dumps(R(resp)["surface"], sort_keys=True, separators=(",", ":"),
                                              ensure_ascii=False).encode())
    return resp


def _is_core(st, name):
    for n in (st.get("cat") or {}).get("namespaces", []):
        if n["name"] == name:
            return n.get("form") == "core"
    return False


@bug("call_many_chained_parents", "CALL-01",
     "calls issued together are chained: each call of a call.invoke_many batch gets the previous "
     "call's request_id as parent_request_id instead of the turn's")
def call_many_chained_parents(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "call.invoke_many" and R(resp):
        rows = R(resp)["results"]
        for prev, row in zip(rows, rows[1:]):
            row["stamp"]["parent_request_id"] = prev["stamp"]["request_id"]
    return resp


@bug("on_behalf_new_trace", "CALL-01",
     "a call made on behalf of a hand-off starts a new trace (fresh trace_id) instead of sharing "
     "the trace of the call that handed off")
def on_behalf_new_trace(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    if req["op"] in ("call.invoke", "call.invoke_many") and R(resp):
        calls = A(req).get("calls") if req["op"] == "call.invoke_many" else [A(req)]
        rows = R(resp).get("results") if req["op"] == "call.invoke_many" else [R(resp)]
        for c, row in zip(calls or [], rows or []):
            if isinstance(c, dict) and c.get("on_behalf_of"):
                st["tn"] = st.get("tn", 0) + 1
                row["stamp"]["trace"]["trace_id"] = "%032x" % (0xbeef0000 + st["tn"])
    return resp


@bug("handoff_result_fresh_request_id", "CALL-01",
     "the injected hand-off result is stamped with a new request id of its own instead of the "
     "request_id of the call that started the work")
def handoff_result_fresh_request_id(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    fix = st.setdefault("hofix", {})
    if req["op"] == "call.finish" and R(resp):
        ev = R(resp)["injected"]
        st["n"] = st.get("n", 0) + 1
        fix[ev["handoff_id"]] = "req-inj-%d" % st["n"]
        ev["request_id"] = fix[ev["handoff_id"]]
    if req["op"] == "call.transcript" and R(resp):
        for ev in R(resp)["events"]:
            if ev.get("kind") == "handoff_result" and ev.get("handoff_id") in fix:
                ev["request_id"] = fix[ev["handoff_id"]]
    return resp


@bug("not_mounted_retryable", "CALL-03",
     "`tool_not_mounted` is reported terminal_for_attempt: false (retryable), though calling "
     "an unmounted tool again can never succeed")
def not_mounted_retryable(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    env = tool_env(resp) if req["op"] == "tool.call" else None
    if env and env.get("error_code") == "tool_not_mounted":
        env["terminal_for_attempt"] = False
    return resp


@bug("ns_schemas_form_callable_unloaded", "NS-04",
     "functions of a schema-deferred namespace (their names are visible) are callable before the "
     "namespace is loaded; only wholly deferred namespaces answer namespace_not_loaded")
def ns_schemas_form_callable_unloaded(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _ns_track(st, req, resp)
    if req["op"] == "call.invoke" and R(resp):
        env = R(resp)["result"]
        if env.get("error_code") == "namespace_not_loaded":
            n, f = _ns_fn(st, A(req)["function"])
            if n and n.get("form") == "schemas" and f.get("delivery", "sync") == "sync":
                R(resp)["result"] = {"ok": True, "content": {"function": A(req)["function"],
                                                             "args": A(req).get("args")}}
    return resp


# ================================================================== CONN

def _parse_md(md):
    cmds, shorts, on = [], {}, False
    for line in md.splitlines():
        s = line.strip()
        if s.startswith("## "):
            on = s[3:].strip().lower() == "commands"
            continue
        if on and line.startswith("- `"):
            m = re.match(r"- `([^`]+)`\s*(?:->\s*`([^`]+)`)?", line)
            if m:
                cmds.append(m.group(1))
                if m.group(2):
                    shorts[m.group(1)] = m.group(2)
    return cmds, shorts


def _conn_track(st, req, resp):
    import yaml
    a = A(req)
    if req["op"] == "conn.setup" and resp.get("ok"):
        cs = {}
        for c in a.get("connectors", []):
            f = c.get("files", {})
            try:
                y = yaml.safe_load(f.get("connector.yaml", "")) or {}
                m = yaml.safe_load(f.get("manifest.yaml", "") or "") or {} if "manifest.yaml" in f else None
            except Exception:
                continue
            cmds, shorts = _parse_md(f.get("CONNECTOR.md", ""))
            prov = None
            if m:
                prov = (m.get("oauth") or {}).get("provider") or m.get("provider")
            cs[y.get("id")] = {"yaml": y, "manifest": m, "cmds": cmds, "shorts": shorts, "provider": prov}
        st["conns"] = cs
        st["accounts"] = copy.deepcopy(a.get("accounts") or {})
        st["settings"] = copy.deepcopy(a.get("settings") or {})
        st["responses"] = copy.deepcopy(a.get("responses") or {})
        st["env"] = copy.deepcopy(a.get("environment") or {})
    elif req["op"] == "conn.account.set" and resp.get("ok"):
        st.setdefault("accounts", {})[a.get("connector")] = copy.deepcopy(a.get("account"))
    elif req["op"] == "conn.clock.advance" and R(resp):
        st["now"] = R(resp).get("now_ms", 0)


def _method_of(st, connector, command):
    c = st.get("conns", {}).get(connector) or {}
    return c.get("shorts", {}).get(command, command)


def _perm(st, connector, method):
    """Resolved permission of a method (CONN-02), or None."""
    c = st.get("conns", {}).get(connector) or {}
    m = c.get("manifest")
    if not m:
        return None, None
    for gname, g in (m.get("actions") or {}).items():
        meths = g.get("methods") or {}
        if method in meths:
            p = (meths[method] or {}).get("default") or g.get("default")
            s = (st.get("settings", {}).get(connector) or {}).get(gname)
            order = {"allow": 0, "ask": 1, "deny": 2}
            if s in order and order[s] > order.get(p, 0):
                p = s
            return p, gname
    return None, None


def _cost(st, connector, method):
    c = st.get("conns", {}).get(connector) or {}
    m = c.get("manifest") or {}
    return ((m.get("request_quota") or {}).get("method_costs") or {}).get(method, 0)


def _envs(obj):
    """Every CALL-03 envelope inside a response object."""
    if isinstance(obj, dict):
        if "error_code" in obj or ("ok" in obj and ("content" in obj or obj.get("ok") is False)):
            yield obj
        for v in obj.values():
            yield from _envs(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _envs(v)


@bug("conn_guard_skips_shortcuts", "CONN-05",
     "the response guard is looked up by the command name, so a read through a shortcut "
     "(`+read`) is not filtered and one-time codes reach the model")
def conn_guard_skips_shortcuts(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.call" and str(A(req).get("command", "")).startswith("+"):
        env = tool_env(resp)
        if env and env.get("ok") and isinstance(env.get("content"), dict) and env["content"].get("withheld"):
            raw = (st.get("responses", {}).get(A(req)["connector"]) or {}).get(env["content"].get("method"))
            if raw is not None:
                env["content"]["result"] = copy.deepcopy(raw)
                env["content"].pop("withheld", None)
    return resp


PLACE = "[verification code withheld]"


def _count_place(v):
    if isinstance(v, str):
        return v.count(PLACE)
    if isinstance(v, dict):
        return sum(_count_place(x) for x in v.values())
    if isinstance(v, list):
        return sum(_count_place(x) for x in v)
    return 0


@bug("conn_guard_top_level_only", "CONN-05",
     "the response guard filters only the top-level string fields of a read's result; codes in "
     "nested objects and lists (a message list's snippets) pass unfiltered")
def conn_guard_top_level_only(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.call":
        env = tool_env(resp)
        if env and env.get("ok") and isinstance(env.get("content"), dict) and env["content"].get("withheld"):
            raw = (st.get("responses", {}).get(A(req)["connector"]) or {}).get(env["content"].get("method"))
            res = env["content"].get("result")
            if isinstance(raw, dict) and isinstance(res, dict):
                env["content"]["result"] = {k: (res.get(k) if isinstance(raw[k], str) else copy.deepcopy(raw[k]))
                                            for k in raw}
            elif isinstance(raw, list):
                env["content"]["result"] = copy.deepcopy(raw)
            n = _count_place(env["content"]["result"])
            if n:
                env["content"]["withheld"] = n
            else:
                env["content"].pop("withheld", None)
    return resp


def _first_only(filt, raw):
    if isinstance(filt, str) and isinstance(raw, str):
        if filt.count(PLACE) < 2:
            return filt
        parts = filt.split(PLACE)
        m = re.fullmatch(r"(\d+)".join(re.escape(p) for p in parts), raw, re.S)
        if not m:
            return filt
        out = parts[0] + PLACE + parts[1]
        for i in range(2, len(parts)):
            out += m.group(i) + parts[i]
        return out
    if isinstance(filt, dict) and isinstance(raw, dict):
        return {k: _first_only(v, raw.get(k)) for k, v in filt.items()}
    if isinstance(filt, list) and isinstance(raw, list) and len(filt) == len(raw):
        return [_first_only(a, b) for a, b in zip(filt, raw)]
    return filt


@bug("conn_guard_first_code_only", "CONN-05",
     "the response guard withholds only the first code in a text (search-and-replace once): "
     "a second one-time code in the same field reaches the model")
def conn_guard_first_code_only(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.call":
        env = tool_env(resp)
        if env and env.get("ok") and isinstance(env.get("content"), dict) and env["content"].get("withheld"):
            raw = (st.get("responses", {}).get(A(req)["connector"]) or {}).get(env["content"].get("method"))
            if raw is not None:
                env["content"]["result"] = _first_only(env["content"]["result"], raw)
                n = _count_place(env["content"]["result"])
                env["content"]["withheld"] = n
                if not n:
                    env["content"].pop("withheld")
    return resp


@bug("conn_deny_before_connected", "CONN-02",
     "the permission deny is checked before the connection: a denied method of a disconnected "
     "connector answers permission_denied instead of not_connected with its connect_url")
def conn_deny_before_connected(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.call":
        env = tool_env(resp)
        if env and env.get("error_code") == "not_connected":
            c, meth = A(req)["connector"], _method_of(st, A(req)["connector"], A(req).get("command"))
            p, g = _perm(st, c, meth)
            if p == "deny":
                return ok(req, env_err("permission_denied",
                                       "%s is not permitted: the connector method's resolved permission is deny" % meth,
                                       {"connector": c, "group": g, "method": meth, "permission": "deny"}))
    return resp


def _same_key(connector, method, params):
    return json.dumps([connector, method, params], sort_keys=True)


@bug("conn_read_timeout_uncertain", "CONN-13",
     "every timed-out call is treated as an uncertain write: a read that times out answers "
     "outcome_uncertain and may not be called again until its outcome is verified")
def conn_read_timeout_uncertain(px, req, fwd):
    st = st_of(px, req)
    pend = st.setdefault("uncertain", {})
    if req["op"] == "conn.call":
        c = A(req).get("connector")
        meth = _method_of(st, c, A(req).get("command"))
        k = _same_key(c, meth, A(req).get("params"))
        if k in pend.values():
            rid = [r for r, v in pend.items() if v == k][0]
            return ok(req, env_err("outcome_unverified",
                                   "an earlier %s with these arguments timed out after it was sent; check its "
                                   "outcome before sending it again" % meth,
                                   {"connector": c, "method": meth, "request_id": rid}, terminal=False))
    if req["op"] == "conn.verify" and A(req).get("request_id") in pend:
        rid = A(req)["request_id"]
        c, meth, _ = json.loads(pend.pop(rid))
        return ok(req, {"ok": True, "content": {"request_id": rid, "connector": c, "method": meth, "applied": False}})
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.call":
        env = tool_env(resp)
        if env and env.get("error_code") == "provider_timeout":
            c = A(req)["connector"]
            meth = _method_of(st, c, A(req).get("command"))
            st["rid"] = st.get("rid", 0) + 1
            rid = "conn-req-9%03d" % st["rid"]
            pend[rid] = _same_key(c, meth, A(req).get("params"))
            return ok(req, env_err("outcome_uncertain",
                                   "%s timed out after it was sent; whether it took effect is unknown" % meth,
                                   {"connector": c, "method": meth, "request_id": rid}, terminal=False))
    return resp


def _channel_closed(st, connector):
    c = st.get("conns", {}).get(connector) or {}
    chans = ((c.get("yaml") or {}).get("availability") or {}).get("channels")
    ch = st.get("env", {}).get("channel")
    return chans is not None and ch is not None and ch not in chans


@bug("conn_gate_order_channel_first", "CONN-09",
     "gates are checked channel before VM type: a connector closed by both answers "
     "channel_unrevealed instead of confidential_vm_unavailable")
def conn_gate_order_channel_first(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "confidential_vm_unavailable":
            c = (env.get("error_detail") or {}).get("connector") or A(req).get("connector")
            if _channel_closed(st, c):
                env["error_code"] = "channel_unrevealed"
                env["error_detail"]["gate"] = "channel"
                env["error_message"] = env["error_message"].replace("(confidential_vm)", "(channel)")
    return resp


@bug("conn_gate_offers_connect_link", "CONN-09",
     "a gate refusal (region, VM type, channel) carries the account's connect_url, as every "
     "connector refusal does in this runtime: it promises a way in that does not exist")
def conn_gate_offers_connect_link(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") in ("region_unavailable", "confidential_vm_unavailable", "channel_unrevealed"):
            c = (env.get("error_detail") or {}).get("connector") or A(req).get("connector")
            acct = st.get("accounts", {}).get(c) or {}
            env["error_detail"]["connect_url"] = acct.get("connect_url") or "https://connect.invalid/%s" % c
    return resp


@bug("conn_registry_lists_outside", "CONN-12",
     "always-on and device connectors are also recorded in the connection-state registry (as "
     "connected), instead of only under `outside`")
def conn_registry_lists_outside(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.registry" and R(resp):
        for o in R(resp).get("outside", []):
            R(resp)["entries"].append({"id": o["id"], "state": "connected"})
    return resp


def _card_of(env):
    return (env.get("error_detail") or {}).get("card") if env else None


@bug("conn_custom_approval_sticky", "CONN-10",
     "approving one call of a custom connector's tool allows that tool for the rest of the "
     "session: later calls (other arguments) run without a card")
def conn_custom_approval_sticky(px, req, fwd):
    st = st_of(px, req)
    approved = st.setdefault("sticky", set())
    cards = st.setdefault("customcards", {})
    resp = fwd(req)
    if req["op"] == "conn.custom.call":
        env = tool_env(resp)
        card = _card_of(env) if env and env.get("error_code") == "approval_required" else None
        if card:
            key = (A(req).get("provider"), A(req).get("tool"))
            cards[card["id"]] = key
            if key in approved:
                d = px.side("card.decide", {"card": card["id"], "decision": "approve"})
                if d is not None:
                    return ok(req, d["result"])
    if req["op"] in ("card.decide", "conn.card.settle") and resp.get("ok"):
        cid = A(req).get("card") or A(req).get("card_id")
        if cid in cards and A(req).get("decision", A(req).get("choice")) in ("approve", "allow_once"):
            approved.add(cards[cid])
    return resp


@bug("conn_cred_secret_in_refusal", "CONN-14",
     "the credential_host_mismatch refusal names the credential it refused to send, secret "
     "included, in its message and detail")
def conn_cred_secret_in_refusal(px, req, fwd):
    st = st_of(px, req)
    if req["op"] == "conn.custom.register" and isinstance(A(req).get("credential"), dict):
        st.setdefault("secrets", []).append(A(req)["credential"].get("secret"))
    resp = fwd(req)
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "credential_host_mismatch" and st.get("secrets"):
            sec = st["secrets"][-1]
            env["error_message"] += " (credential %s is registered for other hosts)" % sec
            env["error_detail"]["credential"] = sec
    return resp


@bug("conn_missing_cost_defaults_zero", "CONN-01",
     "a documented command without a unit cost in the manifest loads with cost 0 (free, never "
     "counted against the quota) instead of failing the load")
def conn_missing_cost_defaults_zero(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    tries = 0
    while req["op"] == "conn.setup" and not resp.get("ok") and tries < 20 \
            and resp["error"].get("code") == "connector_invalid" \
            and "no unit cost" in resp["error"].get("message", ""):
        tries += 1
        path = resp["error"]["path"]
        i, meth = path[2], path[-1]
        r2 = copy.deepcopy(req)
        man = r2["args"]["connectors"][i]["files"]["manifest.yaml"]
        man2 = re.sub(r"(\n(\s+)method_costs:\s*\n)", lambda m: m.group(1) + m.group(2) + "  %s: 0\n" % meth, man, 1)
        if man2 == man:
            break
        r2["args"]["connectors"][i]["files"]["manifest.yaml"] = man2
        req = r2
        resp = fwd(req)
    _conn_track(st, req, resp)
    return resp


@bug("conn_shortcut_documents_target", "CONN-11",
     "a shortcut makes its target method exist: `+x -> m` loads even when `m` is not documented, "
     "and `m` is then callable directly")
def conn_shortcut_documents_target(px, req, fwd):
    st = st_of(px, req)
    if req["op"] == "conn.setup":
        r2 = copy.deepcopy(req)
        for c in r2["args"].get("connectors", []):
            f = c.get("files") or {}
            md = f.get("CONNECTOR.md")
            if isinstance(md, str):
                cmds, shorts = _parse_md(md)
                extra = [t for t in shorts.values() if t not in cmds]
                if extra:
                    lines = md.split("\n")
                    for j, line in enumerate(lines):
                        if line.strip().lower() == "## commands":
                            for t in reversed(extra):
                                lines.insert(j + 1, "- `%s`" % t)
                            break
                    f["CONNECTOR.md"] = "\n".join(lines)
        resp = fwd(r2)
        _conn_track(st, req, resp)
        return resp
    resp = fwd(req)
    _conn_track(st, req, resp)
    return resp


def _attempt_track(st, req, resp):
    """Per attempt: every conn.call as (connector, method, ran)."""
    if req["op"] == "conn.task.start" and resp.get("ok"):
        st.setdefault("past", []).extend(e for e in st.get("attempt", []) if e[2])
        st["attempt"] = []
    if req["op"] == "conn.call":
        env = tool_env(resp)
        if env is not None and env.get("error_code") != "connector_rate_limited":
            meth = _method_of(st, A(req).get("connector"), A(req).get("command"))
            st.setdefault("attempt", []).append((A(req).get("connector"), meth, bool(env.get("ok"))))


@bug("conn_completed_counts_refusals", "CONN-07",
     "the progress report of a provider stop (`completed`) lists every call of the attempt, "
     "refused ones (denied, asked, unsupported) included, not only the calls that ran")
def conn_completed_counts_refusals(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    _attempt_track(st, req, resp)
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "connector_rate_limited" and isinstance(env.get("error_detail"), dict) \
                and "completed" in env["error_detail"]:
            env["error_detail"]["completed"] = [{"connector": c, "method": m} for c, m, _ in st.get("attempt", [])]
    return resp


@bug("conn_completed_spans_attempts", "CONN-07",
     "the progress list of a provider stop is kept for the session: calls of earlier attempts "
     "appear in `completed` after conn.task.start")
def conn_completed_spans_attempts(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    _attempt_track(st, req, resp)
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "connector_rate_limited" and isinstance(env.get("error_detail"), dict) \
                and "completed" in env["error_detail"] and st.get("past"):
            env["error_detail"]["completed"] = [{"connector": c, "method": m} for c, m, _ in st["past"]] + \
                env["error_detail"]["completed"]
    return resp


@bug("conn_stop_outlives_attempt", "CONN-07",
     "a stopped provider stays stopped for the session: conn.task.start does not clear it, so a "
     "new attempt is refused at once")
def conn_stop_outlives_attempt(px, req, fwd):
    st = st_of(px, req)
    stopped = st.setdefault("stopped", {})
    if req["op"] == "conn.call" and A(req).get("connector") in stopped and st.get("newattempt"):
        c = A(req)["connector"]
        return ok(req, env_err("connector_rate_limited",
                               "the %s service limit was reached; stop using it for this task" % stopped[c],
                               {"completed": [], "provider": stopped[c]}, terminal=True, retry=None))
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.task.start" and stopped:
        st["newattempt"] = True
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "connector_rate_limited":
            prov = (env.get("error_detail") or {}).get("provider")
            c = A(req).get("connector")
            if c:
                stopped[c] = prov or c
                for cid, info in st.get("conns", {}).items():
                    if info.get("provider") and info.get("provider") == prov:
                        stopped[cid] = prov
    return resp


@bug("conn_card_buttons_generic", "CONN-03",
     "connector cards use the client's generic button labels (`Allow once` / `Deny`); the "
     "manifest's per-method labels are not read")
def conn_card_buttons_generic(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    for env in list(_envs(R(resp))) if R(resp) else []:
        card = _card_of(env)
        if card and "buttons" in card:
            card["buttons"] = {"allow_once": "Allow once", "deny": "Deny"}
    if req["op"] in ("card.decide", "conn.card.settle") and R(resp) and isinstance(R(resp).get("card"), dict) \
            and "buttons" in R(resp)["card"]:
        R(resp)["card"]["buttons"] = {"allow_once": "Allow once", "deny": "Deny"}
    return resp


@bug("conn_provider_reason_trimmed", "CONN-13",
     "a provider failure's reason is rebuilt as {code, message}: the provider's `status` and "
     "`detail` are dropped")
def conn_provider_reason_trimmed(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "provider_error":
            rs = (env.get("error_detail") or {}).get("reason")
            if isinstance(rs, dict):
                env["error_detail"]["reason"] = {k: rs[k] for k in ("code", "message") if k in rs}
    return resp


@bug("conn_provider_retry_after_dropped", "CONN-13",
     "a provider failure always answers retry_after_ms: null, dropping the provider's own "
     "retry-after")
def conn_provider_retry_after_dropped(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "provider_error":
            env["retry_after_ms"] = None
    return resp


@bug("conn_shortcut_skips_scopes", "CONN-02",
     "required scopes are looked up under the command name, so a shortcut (`+read`, `+send`) "
     "runs its method without the account having the method's scope")
def conn_shortcut_skips_scopes(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.call" and str(A(req).get("command", "")).startswith("+"):
        env = tool_env(resp)
        if env and env.get("error_code") == "missing_scope":
            c = A(req)["connector"]
            acct = st.get("accounts", {}).get(c)
            if acct is not None:
                wide = copy.deepcopy(acct)
                wide["scopes"] = list(acct.get("scopes") or []) + list(env["error_detail"].get("missing_scopes") or [])
                px.side("conn.account.set", {"connector": c, "account": wide})
                resp = fwd(req)
                px.side("conn.account.set", {"connector": c, "account": acct})
    return resp


@bug("conn_quota_metered_at_entry", "CONN-04",
     "units are charged when a call enters the connector gateway, before permission, scope and "
     "approval: denied, asked and scope-refused calls use up the per-minute budget")
def conn_quota_metered_at_entry(px, req, fwd):
    st = st_of(px, req)
    q = st.setdefault("q", {})
    if req["op"] == "conn.task.start":
        st["qstop"] = set()
        st["qran"] = []
    if req["op"] == "conn.call":
        c = A(req).get("connector")
        info = st.get("conns", {}).get(c)
        meth = _method_of(st, c, A(req).get("command"))
        if info and info.get("manifest") and meth in info["cmds"]:
            prov = info.get("provider")
            if prov in st.get("qstop", set()):
                return ok(req, env_err("connector_rate_limited",
                                       "the %s service limit was reached; stop using it for this task" % prov,
                                       {"completed": list(st.get("qran", [])), "provider": prov}, retry=None))
            now = st.get("now", 0)
            win = now // 60000
            limit = (info["manifest"].get("request_quota") or {}).get("units_per_minute_per_user") or 0
            used = q.get(c, (win, 0))
            used = used[1] if used[0] == win else 0
            cost = _cost(st, c, meth)
            if limit and used + cost > limit:
                st.setdefault("qstop", set()).add(prov)
                return ok(req, env_err("connector_rate_limited",
                                       "the %s service limit was reached; stop using it for this task" % prov,
                                       {"completed": list(st.get("qran", [])), "provider": prov},
                                       retry=60000 - now % 60000))
            q[c] = (win, used + cost)
    resp = fwd(req)
    _conn_track(st, req, resp)
    if req["op"] == "conn.setup" and resp.get("ok"):
        st["q"] = {}
        st["qstop"] = set()
        st["qran"] = []
    for env in list(_envs(R(resp))) if R(resp) else []:
        if env.get("error_code") == "connector_rate_limited":
            p = (env.get("error_detail") or {}).get("provider")
            if p:
                st.setdefault("qstop", set()).add(p)
        elif env.get("ok") is True and isinstance(env.get("content"), dict) and "units" in env["content"]:
            st.setdefault("qran", []).append({"connector": env["content"].get("connector"),
                                              "method": env["content"].get("method")})
    return resp


# ================================================================== BIN

def _exec_track(st, req, resp):
    if req["op"] == "exec.setup" and R(resp):
        st["exec"] = copy.deepcopy(A(req))


def _executor(st, name):
    for e in (st.get("exec") or {}).get("executors", []):
        if e.get("name") == name:
            return e
    return None


def _argv_method(ex, argv):
    """(method, params or error) for `<method|+short> --params JSON` argv, or None."""
    if not argv:
        return None
    cmd = argv[0]
    meth = (ex.get("shortcuts") or {}).get(cmd, cmd)
    if meth not in (ex.get("methods") or {}):
        return None
    if len(argv) == 3 and argv[1] == "--params":
        try:
            return meth, json.loads(argv[2])
        except Exception:
            return meth, ValueError()
    if len(argv) == 1:
        return meth, {}
    return None


@bug("bin_required_params_unchecked", "BIN-02",
     "the CLI validates that --params is a JSON object but not the method's required "
     "parameters: a call missing one runs")
def bin_required_params_unchecked(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _exec_track(st, req, resp)
    if req["op"] == "exec.run":
        env = tool_env(resp)
        if env and env.get("error_code") == "invalid_arguments" and (env.get("error_detail") or {}).get("missing"):
            ex = _executor(st, A(req).get("executor"))
            mp = _argv_method(ex, A(req).get("argv") or []) if ex else None
            if mp and isinstance(mp[1], dict):
                return ok(req, {"ok": True, "content": {"executor": ex["name"], "method": mp[0], "params": mp[1]}})
    return resp


@bug("bin_params_any_json", "BIN-02",
     "--params accepts any JSON value (an array, a string, a number) and passes it to the "
     "method; only text that is not JSON is refused")
def bin_params_any_json(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _exec_track(st, req, resp)
    if req["op"] == "exec.run":
        env = tool_env(resp)
        if env and env.get("error_code") == "invalid_arguments":
            ex = _executor(st, A(req).get("executor"))
            mp = _argv_method(ex, A(req).get("argv") or []) if ex else None
            if mp and not isinstance(mp[1], (dict, ValueError)):
                return ok(req, {"ok": True, "content": {"executor": ex["name"], "method": mp[0], "params": mp[1]}})
    return resp


def _acl_prefix_admits(st, worker, principal):
    for w in (st.get("exec") or {}).get("workers", []):
        if w.get("name") == worker:
            return any(isinstance(p, str) and p and isinstance(principal, str) and principal.startswith(p)
                       for p in w.get("acl", []))
    return False


@bug("bin_acl_prefix_match", "BIN-03",
     "the worker's socket ACL admits a principal whose name starts with an admitted one "
     "(`cell` admits `cell-evil`), on the direct and the normal path")
def bin_acl_prefix_match(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _exec_track(st, req, resp)
    env = tool_env(resp) if req["op"] in ("exec.dial", "exec.run") else None
    if env and env.get("error_code") == "worker_access_denied":
        if req["op"] == "exec.dial":
            if _acl_prefix_admits(st, A(req).get("worker"), A(req).get("principal")):
                w = next(x for x in st["exec"]["workers"] if x["name"] == A(req)["worker"])
                admit = next(p for p in w["acl"] if A(req)["principal"].startswith(p))
                r2 = copy.deepcopy(req)
                r2["args"]["principal"] = admit
                return fwd(r2)
        else:
            ex = _executor(st, A(req).get("executor"))
            broker = (st.get("exec") or {}).get("broker")
            if ex and _acl_prefix_admits(st, ex.get("worker"), broker):
                mp = _argv_method(ex, A(req).get("argv") or [])
                if mp and isinstance(mp[1], dict):
                    return ok(req, {"ok": True, "content": {"executor": ex["name"], "method": mp[0], "params": mp[1]}})
    return resp


@bug("bin_help_served_locally", "BIN-01",
     "`--help` and `schema` are answered from the executor's local description without the "
     "state checks: an unrevealed (or unusable) executor lists its commands and schemas")
def bin_help_served_locally(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _exec_track(st, req, resp)
    if req["op"] == "exec.run":
        env = tool_env(resp)
        argv = A(req).get("argv") or []
        ex = _executor(st, A(req).get("executor"))
        if env and env.get("error_code") in ("not_revealed", "not_usable", "worker_access_denied") and ex \
                and argv and argv[0] in ("--help", "schema"):
            if argv[0] == "--help":
                cmds = list((ex.get("shortcuts") or {}).keys()) + list((ex.get("methods") or {}).keys()) + \
                    ["schema", "--help"]
                return ok(req, {"ok": True, "content": {"commands": cmds, "executor": ex["name"]}})
            if len(argv) == 2:
                meth = (ex.get("shortcuts") or {}).get(argv[1], argv[1])
                if meth in (ex.get("methods") or {}):
                    return ok(req, {"ok": True, "content": {"method": meth,
                                                            "parameters": ex["methods"][meth]}})
    return resp


@bug("bin_unprovisioned_reported_unrevealed", "BIN-01",
     "an executor that is not installed on the host is reported `not_revealed` (the runtime "
     "only knows what the cell is shown), merging the first two states")
def bin_unprovisioned_reported_unrevealed(px, req, fwd):
    st = st_of(px, req)
    resp = fwd(req)
    _exec_track(st, req, resp)
    env = tool_env(resp) if req["op"] == "exec.run" else None
    if env and env.get("error_code") == "not_provisioned":
        env["error_code"] = "not_revealed"
        env["error_message"] = "the executor is not shown to this channel's cell"
        env["error_detail"]["channel"] = A(req).get("channel")
    return resp


# ================================================================== EDIT

def _doc_map(resp, fn_text, fn_bytes=None):
    r = R(resp)
    if not r or not r.get("applied") or r.get("document") is None:
        return resp
    r["document"] = fn_text(r["document"])
    if "document_b64" in r:
        raw = base64.b64decode(r["document_b64"])
        if fn_bytes:
            raw = fn_bytes(raw)
        else:
            raw = r["document"].encode("utf-8")
        r["document_b64"] = base64.b64encode(raw).decode()
    return resp


def _source_text(px, args):
    return px.source_of(args)


@bug("edit_inserted_lines_lf", "EDIT-02",
     "text the editor writes (an inserted key, a rewritten list) uses LF line endings even in a "
     "CRLF or CR document; untouched lines keep theirs")
def edit_inserted_lines_lf(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "editor.edit":
        src = _source_text(px, A(req))
        r = R(resp)
        if src and r and r.get("applied") and r.get("document") and ("\r\n" in src or "\r" in src):
            import difflib
            eol = "\r\n" if "\r\n" in src else "\r"
            a = src.splitlines(keepends=True)
            b = r["document"].splitlines(keepends=True)
            out = []
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
                seg = b[j1:j2]
                if tag in ("replace", "insert"):
                    seg = [x[:-len(eol)] + "\n" if x.endswith(eol) else x for x in seg]
                out.extend(seg)
            new = "".join(out)
            _doc_map(resp, lambda d: new)
            # diagnostics of the returned document (lines and columns do not move)
    return resp


@bug("edit_drops_bom", "EDIT-02",
     "an edit of a document that starts with a UTF-8 BOM returns it without the BOM")
def edit_drops_bom(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "editor.edit":
        _doc_map(resp, lambda d: d[1:] if d.startswith("\ufeff") else d,
                 lambda b: b[3:] if b.startswith(b"\xef\xbb\xbf") else b)
    return resp


@bug("edit_remove_negative_index", "EDIT-03",
     "`remove` indexes the entry list like a Python list: -1 removes the last entry instead "
     "of being refused")
def edit_remove_negative_index(px, req, fwd):
    st_of(px, req)
    e = A(req).get("edit") if req["op"] == "editor.edit" else None
    if isinstance(e, dict) and isinstance(e.get("remove"), int) and not isinstance(e["remove"], bool) \
            and e["remove"] < 0:
        n = 0
        while n < 200:
            probe = copy.deepcopy(A(req))
            probe["edit"]["remove"] = n
            r = px.side("editor.edit", probe)
            if not r or (r.get("refusal") or {}).get("code") == "no_such_entry":
                break
            n += 1
        r2 = copy.deepcopy(req)
        r2["args"]["edit"]["remove"] = n + e["remove"]
        return fwd(r2)
    return fwd(req)


@bug("edit_unknown_names_once", "EDIT-04",
     "editor.unknown_names lists each unknown name once per field: a repeated unknown entry "
     "gets no chip of its own (and no removal edit)")
def edit_unknown_names_once(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "editor.unknown_names" and R(resp):
        seen, out = set(), []
        for u in R(resp)["unknown"]:
            k = (u.get("field"), str(u.get("name")).lower())
            if k in seen:
                continue
            seen.add(k)
            out.append(u)
        R(resp)["unknown"] = out
    return resp


@bug("edit_in_session_always_true", "EDIT-01",
     "tool candidates report in_session: true for every registry tool; the session tool table "
     "is not consulted")
def edit_in_session_always_true(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "editor.candidates" and R(resp):
        for c in R(resp)["tools"]["candidates"]:
            c["in_session"] = True
    return resp


@bug("edit_not_grantable_in_candidates", "EDIT-01",
     "the tool selector offers the deliberately not-grantable tools as candidates too (the "
     "back-end lists every tool it knows)")
def edit_not_grantable_in_candidates(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "editor.candidates" and R(resp):
        t = R(resp)["tools"]
        for ng in t.get("not_grantable", []):
            t["candidates"].append({"name": ng["name"], "in_session": False})
    return resp


@bug("edit_shadowed_skills_offered", "EDIT-01",
     "skill candidates list every package of every layer: a name shadowed by an earlier layer "
     "appears again as a candidate of its own layer")
def edit_shadowed_skills_offered(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    if req["op"] == "editor.candidates" and R(resp):
        sk = R(resp)["skills"]
        win = {c["name"].lower(): c for c in sk.get("candidates", [])}
        for s in sk.get("shadowed", []):
            w = win.get(str(s.get("name")).lower(), {})
            sk["candidates"].append({"name": s["name"], "description": w.get("description", ""),
                                     "layer": s.get("layer"), "location": s.get("location"), "shadowed": []})
    return resp


@bug("edit_diagnostics_save_mode", "EDIT-02",
     "the diagnostics an edit returns come from the save validator (save-mode severities) "
     "instead of a parse-mode parse of the returned document")
def edit_diagnostics_save_mode(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    r = R(resp) if req["op"] == "editor.edit" else None
    if r and r.get("applied") and r.get("document") is not None:
        a = {k: v for k, v in A(req).items() if k in ("format", "filename")}
        if "document_b64" in r:
            a["source_b64"] = r["document_b64"]
        else:
            a["source"] = r["document"]
        a["mode"] = "save"
        p = px.side("definition.parse", a)
        if p is not None:
            r["diagnostics"] = p["diagnostics"]
    return resp


@bug("edit_comma_string_becomes_flow_list", "EDIT-02",
     "setting `tools` written as a comma-separated string writes a flow list (`[a, b]`) "
     "instead of keeping the string form")
def edit_comma_string_becomes_flow_list(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    e = A(req).get("edit") if req["op"] == "editor.edit" else None
    r = R(resp)
    if isinstance(e, dict) and e.get("field") == "tools" and isinstance(e.get("value"), list) and e["value"] \
            and r and r.get("applied") and r.get("document"):
        src = _source_text(px, A(req)) or ""
        m = re.search(r"(?m)^tools:[ \t]*([^\[\r\n#][^\r\n]*)$", src)
        if m:
            def f(d):
                return re.sub(r"(?m)^(tools:[ \t]*)([^\[\r\n#][^\r\n]*?)([ \t]*(#[^\r\n]*)?)$",
                              lambda mm: mm.group(1) + "[" + ", ".join(e["value"]) + "]" + mm.group(3), d, 1)
            _doc_map(resp, f)
    return resp


@bug("edit_scalar_written_raw", "EDIT-02",
     "a new scalar value (name, description) is spliced in as written, without YAML quoting: "
     "`a: b # c` becomes a nested mapping or a comment")
def edit_scalar_written_raw(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    e = A(req).get("edit") if req["op"] == "editor.edit" else None
    r = R(resp)
    if isinstance(e, dict) and e.get("field") in ("name", "description") and isinstance(e.get("value"), str) \
            and r and r.get("applied") and r.get("document") and "\n" not in e["value"]:
        fld, val = e["field"], e["value"]

        def f(d):
            return re.sub(r"(?m)^(%s:[ \t]*)(\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^']|'')*')" % fld,
                          lambda mm: mm.group(1) + val, d, 1)
        _doc_map(resp, f)
        if r["document"] is not None:
            a = {k: v for k, v in A(req).items() if k in ("format", "filename")}
            a["source"] = r["document"]
            p = px.side("definition.parse", a)
            if p is not None:
                r["diagnostics"] = p["diagnostics"]
    return resp


@bug("edit_missing_entry_unsafe", "EDIT-03",
     "`remove` of an index the field does not have is refused `unsafe_splice` (the splice "
     "failed) instead of `no_such_entry`")
def edit_missing_entry_unsafe(px, req, fwd):
    st_of(px, req)
    resp = fwd(req)
    r = R(resp) if req["op"] == "editor.edit" else None
    if r and (r.get("refusal") or {}).get("code") == "no_such_entry":
        r["refusal"]["code"] = "unsafe_splice"
    return resp


@bug("edit_empty_list_removes_key", "EDIT-02",
     "setting a list field to [] deletes the key (as `null` does) instead of writing an empty "
     "list, so the definition changes from `[]` to absent")
def edit_empty_list_removes_key(px, req, fwd):
    st_of(px, req)
    e = A(req).get("edit") if req["op"] == "editor.edit" else None
    if isinstance(e, dict) and e.get("value") == [] and e.get("field") in ("tools", "skills", "mcp.servers",
                                                                            "knowledge"):
        r2 = copy.deepcopy(req)
        r2["args"]["edit"]["value"] = None
        return fwd(r2)
    return fwd(req)

"""Proxy base: runs `capconf driver` as a child and lets a named bug rewrite traffic.

A bug is a function bug(px, req, fwd) -> response dict, where fwd(req) forwards a
(possibly rewritten) request to the reference and returns its parsed response.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def capconf_cmd():
    exe = os.path.join(os.path.dirname(sys.executable), "capconf")
    if os.path.exists(exe):
        return [exe, "driver"]
    return [sys.executable, "-m", "capconf.conformance.cli", "driver"]


class Proxy:
    def __init__(self, bug, log=None):
        self.bug = bug
        self.child = subprocess.Popen(capconf_cmd(), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True,
                                      encoding="utf-8", bufsize=1)
        self.side_id = 900000000
        self.log = open(log, "a") if log else None
        self.reset()
        self.state = {}

    def reset(self):
        self.world = None          # args of the last good world.setup
        self.agents = {}           # agent id -> spawn args
        self.parent_live = True
        self.removed = {}          # agent id -> set of tool names a bug unmounted

    # -- child I/O -------------------------------------------------------
    def raw(self, line):
        self.child.stdin.write(line.rstrip("\n") + "\n")
        self.child.stdin.flush()
        out = self.child.stdout.readline()
        if not out:
            sys.exit(1)
        return out

    def fwd(self, req):
        return json.loads(self.raw(json.dumps(req, ensure_ascii=False)))

    def side(self, op, args):
        """A request of the proxy's own (not seen by the harness)."""
        self.side_id += 1
        resp = self.fwd({"id": self.side_id, "op": op, "args": args})
        return resp.get("result") if resp.get("ok") else None

    # -- helpers -----------------------------------------------------------
    def ws(self):
        return (self.world or {}).get("workspace")

    def source_of(self, args):
        if "source" in args and isinstance(args["source"], str):
            return args["source"]
        if "source_b64" in args:
            import base64
            try:
                return base64.b64decode(args["source_b64"]).decode("utf-8", "replace")
            except Exception:
                return None
        return None

    def parse_def(self, args):
        a = {k: v for k, v in args.items() if k in ("source", "source_b64", "format", "filename")}
        return self.side("definition.parse", a)

    # -- main loop ---------------------------------------------------------
    def handle(self, line):
        try:
            req = json.loads(line)
        except Exception:
            return self.raw(line).rstrip("\n")
        if not isinstance(req, dict) or not isinstance(req.get("args", {}), dict) \
                or not isinstance(req.get("op"), str):
            return self.raw(line).rstrip("\n")
        op = req["op"]
        args = req.get("args", {}) or {}
        # generic: tools a bug unmounted are not callable
        if op == "tool.call" and args.get("tool") in self.removed.get(args.get("agent"), ()):
            resp = {"id": req.get("id"), "ok": True, "result": {
                "ok": False, "error_code": "tool_not_mounted",
                "error_message": "`%s` is not mounted for this agent" % args.get("tool"),
                "error_detail": {"tool": args.get("tool"), "mounted": []},
                "terminal_for_attempt": True, "retry_after_ms": None}}
        else:
            try:
                resp = self.bug(self, req, self.fwd)
            except Exception:
                import traceback
                import tempfile
                with open(os.environ.get("PROXY_ERR", os.path.join(tempfile.gettempdir(), "capconf_eyes_proxy_errors.log")),
                          "a") as f:
                    f.write("bug=%s op=%s\n%s\n" % (getattr(self.bug, "__name__", "?"), op, traceback.format_exc()))
                raise
        if resp is None:
            resp = self.fwd(req)
        # bookkeeping
        if resp.get("ok"):
            if op == "world.setup":
                self.reset()
                self.world = args
            elif op == "agent.spawn":
                self.agents[resp["result"].get("agent")] = args
            elif op == "parent.request.start":
                self.parent_live = True
            elif op == "parent.request.end":
                self.parent_live = False
        out = json.dumps(resp, ensure_ascii=False)
        if self.log:
            self.log.write("-> " + line.rstrip("\n")[:4000] + "\n<- " + out[:4000] + "\n")
            self.log.flush()
        return out

    def run(self):
        for line in sys.stdin:
            if not line.strip():
                continue
            out = self.handle(line)
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
            try:
                if json.loads(line).get("op") == "shutdown":
                    break
            except Exception:
                pass
        try:
            self.child.stdin.close()
            self.child.wait(timeout=5)
        except Exception:
            pass


def identity(px, req, fwd):
    return fwd(req)

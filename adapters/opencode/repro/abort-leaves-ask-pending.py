"""Finding (new; related to anomalyco/opencode #29422, stale permission prompts after an
interrupted approval): aborting a session whose tool call waits on a permission ask ends
the call ("Tool execution aborted") but leaves the ask pending: `GET /permission` still
lists it after the abort, so a client shows an approvable prompt for a call that no longer
exists (capconf APPR-04: a stop settles every pending card of the stopped agent).

Direct reproduction, no capconf: `opencode serve` with a private HOME, the adapter's own
scripted model on 127.0.0.1 (it emits one `write`), a session whose own ruleset says
`edit: ask`, then `POST /session/{id}/abort`. Exit 0 = reproduced.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from _serve import serve

WRITER = ("---\ndescription: writes notes\nmode: subagent\npermission:\n  edit: allow\n---\n"
          "Write the notes.\n")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp), {"writer": WRITER}) as oc:
        target = oc.proj / "notes.md"
        session = oc.http("POST", "/session", {"title": "repro", "permission": [
            {"permission": "edit", "pattern": "*", "action": "ask"}]})["id"]
        oc.prompt(session, "writer", "w", ("write", {"filePath": str(target),
                                                     "content": "hello"}))
        asks = oc.wait_asks(session)
        if not asks:
            print("not reproduced: OpenCode never asked")
            return 1
        oc.http("POST", f"/session/{session}/abort", {})
        oc.wait_idle(session)
        time.sleep(1)
        still = [a for a in oc.http("GET", "/permission") if a.get("id") == asks[0]["id"]]
        states = oc.tool_states(session)
        print(f"ask before abort: {asks[0]['id']} ({asks[0]['permission']}); listed after "
              f"abort: {bool(still)}; tool part: "
              f"{[(s.get('status'), s.get('error')) for s in states]}")
        if still and any(s.get("status") == "error" for s in states) and not target.exists():
            print("REPRODUCED: the call was aborted but its ask is still pending")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

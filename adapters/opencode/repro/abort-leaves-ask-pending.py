"""Finding (new; related to anomalyco/opencode #29422, stale permission prompts after an
interrupted approval): aborting a session whose tool call waits on a permission ask ends
the call in OpenCode's record ("Tool execution aborted") but leaves the ask pending:
`GET /permission` still lists it after the abort, and approving it then (`once`) WRITES
THE FILE, while the session's stored tool part still says the call was aborted. A client
shows an approvable prompt for a call that no longer exists, and approving it acts
(capconf APPR-04: a stop settles every pending card of the stopped agent as denied).

Direct reproduction, no capconf: `opencode serve` with a private HOME, a scripted model on
127.0.0.1 (it emits one `write`), a session whose own ruleset says `edit: ask`,
`POST /session/{id}/abort`, then `POST /permission/{id}/reply {"reply": "once"}`.
Exit 0 = reproduced.
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
        before = [(t.get("status"), t.get("error")) for t in oc.tool_states(session)]
        print(f"ask {asks[0]['id']} ({asks[0]['permission']}) listed after the abort: "
              f"{bool(still)}; tool part after the abort: {before}")
        oc.http("POST", f"/permission/{asks[0]['id']}/reply", {"reply": "once"})
        deadline = time.monotonic() + 15
        while not target.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        after = [(t.get("status"), t.get("error")) for t in oc.tool_states(session)]
        print(f"after approving the leftover ask: file written: {target.exists()}; "
              f"tool part: {after}")
        aborted = all(st == "error" and "abort" in str(err).lower() for st, err in after)
        if still and after and aborted and target.exists():
            print("REPRODUCED: the aborted call's ask stays pending, and approving it writes "
                  "the file while OpenCode's record says the call was aborted")
            return 0
        print("not reproduced")
        return 1

if __name__ == "__main__":
    sys.exit(main())

"""Finding (anomalyco/opencode #40160, open: "Symlink inside the project bypasses
external_directory"): OpenCode decides whether a path is outside the project on the path
string and then writes through whatever the path resolves to. Measured with 1.18.33, two
shapes, both with the session ruleset `external_directory: ask` (so any write outside the
project must ask first):
1. a symlink `link -> OUTSIDE` already in the project: `write link/d.txt` runs at once,
   without an ask, and the file lands in OUTSIDE (capconf appr.tier.workspace-roots-outside);
2. a write to `notes.txt` inside the project waits on its `edit` ask; while it waits,
   `notes.txt` becomes a symlink to OUTSIDE/notes.txt; the approved write then overwrites
   the outside file (capconf appr.write/edit.link-planted-while-pending).

Direct reproduction, no capconf: `opencode serve`, the adapter's scripted model on
127.0.0.1 emitting the two `write` calls, OpenCode's own reply API. Exit 0 = reproduced.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from _serve import serve

WRITER = ("---\ndescription: writes notes\nmode: subagent\npermission:\n  edit: allow\n---\n"
          "Write the notes.\n")
RULES = [{"permission": "external_directory", "pattern": "*", "action": "ask"}]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp), {"writer": WRITER}) as oc:
        outside = Path(tmp) / "OUTSIDE"
        outside.mkdir()
        (oc.proj / "link").symlink_to(outside)
        s1 = oc.http("POST", "/session", {"title": "existing link", "permission": RULES})["id"]
        oc.prompt(s1, "writer", "a", ("write", {"filePath": str(oc.proj / "link" / "d.txt"),
                                                "content": "ESCAPED"}))
        asked1 = False
        for _ in range(100):  # until the call ended or OpenCode asked
            asked1 = bool(oc.asks(s1))
            if asked1 or any(st.get("status") in ("completed", "error")
                             for st in oc.tool_states(s1)):
                break
            time.sleep(0.2)
        escaped = (outside / "d.txt").exists()
        print(f"1. existing link: asked={asked1} written outside={escaped} "
              f"{[(st.get('status'), st.get('error')) for st in oc.tool_states(s1)]}")

        (outside / "notes.txt").write_text("victim\n")
        s2 = oc.http("POST", "/session", {"title": "planted link", "permission": [
            *RULES, {"permission": "edit", "pattern": "*", "action": "ask"}]})["id"]
        oc.prompt(s2, "writer", "b", ("write", {"filePath": str(oc.proj / "notes.txt"),
                                                "content": "PLANTED-WRITE"}))
        asks = oc.wait_asks(s2)
        if not asks:
            print("not reproduced: the inside write never asked")
            return 1
        (oc.proj / "notes.txt").symlink_to(outside / "notes.txt")
        oc.http("POST", f"/permission/{asks[0]['id']}/reply", {"reply": "once"})
        time.sleep(1)
        oc.wait_idle(s2)
        planted = (outside / "notes.txt").read_text()
        print(f"2. planted link: asked for {asks[0]['permission']}; outside file now "
              f"{planted!r}; asked again: {bool(oc.asks(s2))}")
        if not asked1 and escaped and planted == "PLANTED-WRITE":
            print("REPRODUCED: both writes landed outside the project through a symlink")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

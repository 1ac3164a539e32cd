"""Finding (new): OpenCode's `write` and `edit` on a FIFO in the project never end. The
tool opens the FIFO like a file and blocks (no reader ever comes), so the call's part
stays `running`, the turn never finishes and nothing answers the model (capconf
appr.fifo.never-blocks: a FIFO where a file is expected must get an error, never a
blocked call). `read` of the same FIFO does answer.

Direct reproduction, no capconf: `opencode serve`, the adapter's scripted model on
127.0.0.1 emitting one `write` to `pipe.txt` (a FIFO) with every permission allowed; after
20 s the part is still running. Exit 0 = reproduced.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from pathlib import Path

from _serve import serve

WRITER = ("---\ndescription: writes notes\nmode: subagent\npermission:\n  \"*\": allow\n---\n"
          "Write the notes.\n")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp), {"writer": WRITER}) as oc:
        fifo = oc.proj / "pipe.txt"
        os.mkfifo(fifo)
        session = oc.http("POST", "/session", {"title": "fifo"})["id"]
        oc.prompt(session, "writer", "f", ("write", {"filePath": str(fifo), "content": "x"}))
        states: list[dict[str, object]] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            states = oc.tool_states(session)
            if any(s.get("status") in ("completed", "error") for s in states):
                break
            time.sleep(0.5)
        print(f"after 20 s the write's part is: {[s.get('status') for s in states]}")
        oc.http("POST", f"/session/{session}/abort", {})
        hung = bool(states) and all(s.get("status") == "running" for s in states)
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # let the blocked writer go
        if hung and stat.S_ISFIFO(os.lstat(fifo).st_mode):
            print("REPRODUCED: the write on a FIFO never ended")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""Finding (new): OpenCode's `write`, `edit` and `read` on a FIFO in the project never end.
The tool opens the FIFO like a file and blocks (no writer or reader ever comes), so the
call's part stays `running`, the turn never finishes and nothing answers the model
(capconf appr.fifo.never-blocks: a FIFO where a file is expected must get an error, never
a blocked call). This reproduces `write` and `read`.

Direct reproduction, no capconf: `opencode serve`, the adapter's scripted model on
127.0.0.1 emitting a `write` and a `read` of `pipe.txt` (a FIFO) with every permission
allowed; after 12 s both parts are still running. Exit 0 = reproduced.
"""

from __future__ import annotations

import contextlib
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
        sessions = {}
        for tool, args in (("write", {"filePath": str(fifo), "content": "x"}),
                           ("read", {"filePath": str(fifo)})):
            sessions[tool] = oc.http("POST", "/session", {"title": tool})["id"]
            oc.prompt(sessions[tool], "writer", tool, (tool, args))
        time.sleep(12)
        hung = {}
        for tool, session in sessions.items():
            states = oc.tool_states(session)
            print(f"after 12 s the {tool}'s part is: {[s.get('status') for s in states]}")
            hung[tool] = bool(states) and all(s.get("status") == "running" for s in states)
            oc.http("POST", f"/session/{session}/abort", {})
        # let the blocked writer and reader go
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        if all(hung.values()) and stat.S_ISFIFO(os.lstat(fifo).st_mode):
            print("REPRODUCED: write and read on a FIFO never ended")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

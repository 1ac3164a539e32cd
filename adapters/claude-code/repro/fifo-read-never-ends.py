"""New on the pinned 2.1.328: a subagent's `Read` of a FIFO in the project never ends (no
tool_result comes back; the agent is stuck), where the spec wants an error at once.
capconf's rule (seeds; SPEC APPR-01, section 1.1): a FIFO or other special file where a
file is expected is an error (`not_a_regular_file`), never a blocked call.

Standalone: the pinned npm package and Python's standard library. Prints REPRODUCED and
exits 0 when no result for the Read arrived within 20 seconds.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cc import main_then, result_text, run, text, tool_use

FILES = {".claude/agents/w.md": "---\nname: w\ndescription: reads\ntools: Read\n---\nRead.\n"}
LIMIT = 20.0


def main() -> int:
    seen: dict[str, object] = {}
    answered = threading.Event()

    def sub(req, n):  # type: ignore[no-untyped-def]
        if n == 1:
            fifo = os.path.join(seen["project"], "pipe.txt")  # type: ignore[arg-type]
            return [tool_use("t_read", "Read", {"file_path": fifo})]
        for b in req.tool_results():
            if b.get("tool_use_id") == "t_read":
                seen["result"] = (b.get("is_error"), result_text(b)[:200])
                answered.set()
        return [text("done")]

    def before(project: str) -> None:
        seen["project"] = project
        os.mkfifo(os.path.join(project, "pipe.txt"))

    with contextlib.suppress(TimeoutError):  # the hang this reproduces
        run(FILES, main_then({"description": "d", "prompt": "go", "subagent_type": "w"},
                             sub), timeout=LIMIT, before=before)
    print(f"Read of a FIFO answered within {LIMIT:.0f} s: {answered.is_set()} "
          f"({seen.get('result')!r})")
    if not answered.is_set():
        print("REPRODUCED: Claude Code's Read of a FIFO never ended")
        return 0
    print("not reproduced")
    return 1


if __name__ == "__main__":
    sys.exit(main())

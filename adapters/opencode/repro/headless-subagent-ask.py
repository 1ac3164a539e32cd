"""Finding (public issue #13974, as cited in shared/design/peers.md; the earlier hang of the
same situation is #36868 / #41991, whose fix #35823 made headless `run` reject a child's
asks): in headless `opencode run`, a subagent's `ask` has nobody to answer it. Measured
with 1.18.33: the parent delegates with `task` to a subagent whose `edit` permission is
`ask`; the child's `write` is auto-rejected (never a hang), and the rejection ends the
whole subagent: the parent's `task` result is an error instead of the child's report
(capconf APPR: a deny fails that one call, the child goes on).

Direct reproduction, no capconf: the real binary, a private HOME, and the adapter's own
scripted model on 127.0.0.1 (it emits exactly the two tool calls). Exit 0 = reproduced.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from _private_env import ScriptedModel, Turn, find_binary, private_env, write_scripted_config


def main() -> int:
    binary = find_binary()
    model = ScriptedModel()
    with tempfile.TemporaryDirectory() as tmp:
        home, proj = Path(tmp, "home"), Path(tmp, "proj")
        (proj / ".opencode" / "agent").mkdir(parents=True)
        write_scripted_config(home, model)
        (proj / ".opencode" / "agent" / "writer.md").write_text(
            "---\ndescription: writes notes\nmode: subagent\npermission:\n  edit: ask\n---\n"
            "Write the notes.\n")
        target = proj / "notes.md"
        model.register("child", Turn(tool_call=("write", {"filePath": str(target),
                                                          "content": "hello"})))
        parent = model.register("parent", Turn(tool_call=("task", {
            "subagent_type": "writer", "description": "write notes",
            "prompt": "Write notes. capconf-turn:child"})))
        env = private_env(home)
        try:
            done = subprocess.run([str(binary), "run", "--pure", "Delegate. capconf-turn:parent"],
                                  cwd=proj, env=env, capture_output=True, text=True,
                                  timeout=240, check=False)
        finally:
            model.close()
        output = done.stdout + done.stderr
        rejected = "auto-rejecting" in output
        written = target.exists()
        result = parent.tool_result or ""
        print(f"exit={done.returncode} auto-rejected={rejected} file written={written}")
        print(f"the parent's task result: {result[:300]!r}")
        if rejected and not written and "Write the notes" not in result:
            print("REPRODUCED: the child's ask was auto-rejected and the subagent ended with it")
            return 0
        print("not reproduced\n" + output[-2000:])
        return 1


if __name__ == "__main__":
    sys.exit(main())

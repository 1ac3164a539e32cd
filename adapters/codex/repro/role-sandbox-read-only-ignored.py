"""A role's `sandbox_mode = "read-only"` is ignored: the spawned child writes.

Codex 0.169.0, `codex exec -s workspace-write`; role `reader` says
`sandbox_mode = "read-only"`; the child runs `touch probe.txt` with exec_command.
Expected: the write fails (read-only sandbox). Prints FINDING when the file exists.
Public issue: https://github.com/openai/codex/issues/45482
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _codex import NS, Model, agent_id, call, codex_exec, say

ws = Path(tempfile.mkdtemp(prefix="codex-repro-ws-"))
model = Model({
    "root": [call("spawn_agent", {"agent_type": "reader", "message": "turn:child"}, NS),
             lambda out: call("wait_agent", {"targets": [agent_id(out)]}, NS), say("end")],
    "child": [call("exec_command", {"cmd": "touch probe.txt"}), say("child end")],
})
role = ('name = "reader"\ndescription = "read-only reader"\n'
        'developer_instructions = "Read only."\nsandbox_mode = "read-only"\n')
codex_exec(model, {"reader": role}, ws, "turn:root", ["-s", "workspace-write"])
model.close()
written = (ws / "probe.txt").exists()
print("child tool output:", (model.seen["child"][1]["output"] if len(model.seen["child"]) > 1
                             else None))
print("FINDING: the read-only role wrote probe.txt" if written
      else "not reproduced: the write was refused")
sys.exit(0 if written else 1)

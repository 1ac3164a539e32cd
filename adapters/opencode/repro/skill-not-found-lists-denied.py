"""Finding (new; related: #29727, and the reordering proposed in PR #29738, not in 1.18.33):
OpenCode's `skill` tool looks a name up before it checks the agent's `skill` permission,
and its "not found" error lists every discovered skill. An agent allowed only `pdf` that
asks for a skill that does not exist is told the names of the skills its own rules deny
(`secret` here), which its system prompt correctly leaves out (capconf SKILL-06: skills
not declared MUST NOT be found or listed; SKILL-02: the refusal names the granted ones).

Direct reproduction, no capconf: the real binary (`opencode run`), a private HOME, two
skills in a `skills.paths` folder, an agent whose rule is `skill: {"*": deny, pdf: allow}`,
and the adapter's scripted model on 127.0.0.1 emitting `skill {name: ghost}`.
Exit 0 = reproduced.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from _private_env import ScriptedModel, Turn, run_agent, write_scripted_config


def main() -> int:
    model = ScriptedModel()
    with tempfile.TemporaryDirectory() as tmp:
        home, proj, skills = Path(tmp, "home"), Path(tmp, "proj"), Path(tmp, "skills")
        (proj / ".opencode" / "agent").mkdir(parents=True)
        for name, description in (("pdf", "Fill PDF forms"), ("secret", "Payroll secrets")):
            (skills / name).mkdir(parents=True)
            (skills / name / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: {description}\n---\n\nSteps.\n")
        write_scripted_config(home, model)
        (proj / "opencode.json").write_text(json.dumps({"skills": {"paths": [str(skills)]}}))
        (proj / ".opencode" / "agent" / "helper.md").write_text(
            "---\ndescription: helps\nmode: primary\npermission:\n  skill:\n"
            "    \"*\": deny\n    pdf: allow\n---\nWork.\n")
        turn = model.register("t", Turn(tool_call=("skill", {"name": "ghost"})))
        done = run_agent(home, proj, model, "helper", "Load a skill. capconf-turn:t")
        system, result = turn.system or "", turn.tool_result or ""
        print(f"exit={done.returncode}")
        print(f"system prompt lists secret: {'secret' in system}; lists pdf: {'pdf' in system}")
        print(f"the tool result the model got: {result[:300]!r}")
        if "<name>pdf</name>" in system and "secret" not in system and "secret" in result:
            print("REPRODUCED: the not-found error names a skill the agent's rule denies")
            return 0
        print("not reproduced\n" + (done.stdout + done.stderr)[-2000:])
        return 1


if __name__ == "__main__":
    sys.exit(main())

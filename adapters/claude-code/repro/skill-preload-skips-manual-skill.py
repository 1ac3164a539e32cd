"""anthropics/claude-code#51007 on the pinned 2.1.328: an agent whose definition lists
`skills: plain, manual` gets the full text of `plain` preloaded but not of `manual`,
whose SKILL.md says `disable-model-invocation: true`; nothing tells the agent or the
user that a declared skill was left out. capconf's rule (seeds; SPEC SKILL-01, SKILL-03):
every declared skill is resolved, and one that cannot be given is reported.

Standalone: the pinned npm package and Python's standard library. Prints REPRODUCED and
exits 0 when the plain skill's body reached the subagent and the manual one's did not.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cc import main_then, run, text

FILES = {
    ".claude/agents/w.md":
        "---\nname: w\ndescription: uses two skills\nskills: plain, manual\n---\nWork.\n",
    ".claude/skills/plain/SKILL.md":
        "---\nname: plain\ndescription: a plain skill\n---\nPLAIN-BODY-MARK\n",
    ".claude/skills/manual/SKILL.md":
        "---\nname: manual\ndescription: a manual skill\ndisable-model-invocation: true\n"
        "---\nMANUAL-BODY-MARK\n",
}


def main() -> int:
    seen: dict[str, bool] = {}

    def sub(req, n):  # type: ignore[no-untyped-def]
        if n == 1:
            blob = json.dumps(req.get("messages")) + json.dumps(req.get("system"))
            seen["plain"] = "PLAIN-BODY-MARK" in blob
            seen["manual"] = "MANUAL-BODY-MARK" in blob
            seen["named"] = "manual" in blob
        return [text("done")]

    run(FILES, main_then({"description": "d", "prompt": "go", "subagent_type": "w"}, sub))
    print(f"plain skill's body preloaded: {seen.get('plain')}; "
          f"manual skill's body preloaded: {seen.get('manual')}")
    if seen.get("plain") and seen.get("manual") is False:
        print("REPRODUCED: the declared skill with disable-model-invocation was not "
              "preloaded")
        return 0
    print("not reproduced")
    return 1


if __name__ == "__main__":
    sys.exit(main())

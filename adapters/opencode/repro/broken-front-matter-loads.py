"""Finding (public: anomalyco/opencode#42350, open; #24181 and #12254 closed): an agent
file whose front matter does not parse still loads. OpenCode's Markdown reader retries a
front matter js-yaml refuses with a sanitised copy; gray-matter 4.0.3 caches a file before
parsing it, so when the sanitised copy is the same text the retry is answered from that
cache: no keys, the whole file as content. The agent then loads under its file name, with
the default mode (`all`, not the `subagent` it wrote), the default `*: allow` permission,
and the raw file as its prompt. capconf's DEF-03 refuses a document that is not YAML
(cases def.unreadable.compiling-ops.syntax, def.syntax-error.located, def.markdown.unclosed).

Direct reproduction, no capconf: the real binary in a private HOME, `opencode debug agent`
on one broken file. Exit 0 = reproduced.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _private_env import find_binary, private_env

BROKEN = "---\nname: [\ndescription: d\nmode: subagent\n---\nBody.\n"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        home, proj = Path(tmp, "home"), Path(tmp, "proj")
        (proj / ".opencode" / "agent").mkdir(parents=True)
        home.mkdir()
        (proj / ".opencode" / "agent" / "broken.md").write_text(BROKEN)
        done = subprocess.run([str(find_binary()), "debug", "agent", "broken", "--pure"],
                              cwd=proj, env=private_env(home), capture_output=True,
                              text=True, timeout=120, check=False)
        print(f"exit={done.returncode}")
        try:
            agent = json.loads(done.stdout)
        except ValueError:
            print("no agent printed:", done.stdout[:300], done.stderr[-300:])
            return 1
        allow_all = any(r.get("permission") == "*" and r.get("action") == "allow"
                        for r in agent.get("permission") or [])
        print(f"name={agent.get('name')} mode={agent.get('mode')} allow_all={allow_all} "
              f"prompt starts {str(agent.get('prompt'))[:20]!r}")
        if agent.get("name") == "broken" and agent.get("mode") != "subagent" and allow_all \
                and str(agent.get("prompt", "")).startswith("---\nname: ["):
            print("REPRODUCED: an agent file whose front matter does not parse loads, with "
                  "no keys, the default `*: allow` and the whole file as its prompt")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

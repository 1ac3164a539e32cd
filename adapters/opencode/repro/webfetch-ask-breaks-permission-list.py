"""Finding (new): while a `webfetch` call waits on its permission ask, OpenCode's own
`GET /permission` answers 400 ("Expected JSON value, got undefined at [0].metadata.timeout")
when the call gave no `timeout` (an optional argument): the pending request's metadata
holds `undefined`, which the response schema refuses. No client can then list any pending
ask of that instance, the webfetch one or any other, so none can be answered through the
listing (capconf APPR-02: every ask must reach the parent's board).

Direct reproduction, no capconf: `opencode serve`, the adapter's scripted model on
127.0.0.1 emitting one `webfetch` without `timeout`, a session ruleset `webfetch: ask`.
Exit 0 = reproduced.
"""

from __future__ import annotations

import sys
import tempfile
import time
import urllib.error
from pathlib import Path

from _serve import serve

FETCHER = ("---\ndescription: fetches\nmode: subagent\npermission:\n  webfetch: allow\n---\n"
           "Fetch.\n")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp), {"fetcher": FETCHER}) as oc:
        session = oc.http("POST", "/session", {"title": "fetch", "permission": [
            {"permission": "webfetch", "pattern": "*", "action": "ask"}]})["id"]
        oc.prompt(session, "fetcher", "f", ("webfetch", {
            "url": f"http://127.0.0.1:{oc.model.port}/v1/models", "format": "text"}))
        error = ""
        for _ in range(100):
            try:
                oc.http("GET", "/permission")
            except urllib.error.HTTPError as e:
                error = f"{e.code} {e.read().decode(errors='replace')[:300]}"
                break
            time.sleep(0.2)
        running = [s.get("status") for s in oc.tool_states(session)]
        print(f"GET /permission: {error or 'listed fine'}; webfetch part: {running}")
        oc.http("POST", f"/session/{session}/abort", {})
        if error.startswith("400") and "timeout" in error:
            print("REPRODUCED: a pending webfetch ask makes GET /permission fail")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())

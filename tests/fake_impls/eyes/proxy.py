"""A protocol proxy over `capconf driver` that injects one named bug or one
correct-but-different variant (written by an independent tester from SPEC.md alone;
see tests/test_eyes_proxy.py). ``--plain`` drops the opt-in `reference-text` group from
`hello`, as a runtime with its own wording would."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_base import Proxy, identity  # noqa: E402

import bugs  # noqa: E402
import variants  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--bug", default="none")
ap.add_argument("--log")
ap.add_argument("--plain", action="store_true")
a = ap.parse_args()
table = {"none": identity}
table.update(bugs.BUGS)
table.update(variants.VARIANTS)
fn = table[a.bug]


def plain(px, req, fwd):
    resp = fn(px, req, fwd)
    if a.plain and req.get("op") == "hello" and resp and resp.get("ok"):
        feats = resp["result"].get("features") or []
        resp["result"]["features"] = [f for f in feats if f != "reference-text"]
    return resp


plain.__name__ = a.bug
Proxy(plain if a.plain else fn, a.log).run()

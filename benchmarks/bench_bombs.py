"""Peak memory and outcome of the hostile inputs of issue 9, each in a fresh interpreter.

Run: `python benchmarks/bench_bombs.py [--tree CHECKOUT] [--limit-mib 2048]`

`--tree` measures another checkout of capconf (e.g. a `git worktree` of the commit before
the fix) by putting it first on PYTHONPATH. Each bomb runs in its own child process under
an address-space limit (RLIMIT_AS, default 2 GiB) so a bomb that still explodes is
stopped instead of exhausting a shared machine; the child reports its outcome, its RSS
high-water mark (`ru_maxrss`) and its wall time. Results are in bench_bombs.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import io, json, resource, sys, time
from pathlib import Path
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
name, tmp = sys.argv[1], Path(sys.argv[3])
start = time.perf_counter()

def alias_bomb(levels):
    names = "abcdefghijklmnop"
    lines = ["a: &a [lol]"]
    for i in range(1, levels + 1):
        lines.append(f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i-1]}"] * 8) + "]")
    return "\n".join(lines) + "\n"

def run():
    if name.startswith("world-alias-"):
        from capconf.conformance import cli
        path = tmp / "world.yaml"
        path.write_text(alias_bomb(int(name.rsplit("-", 1)[1])))
        try:
            args = cli._world_args(str(path), None)
        except SystemExit:
            return "refused"
        return f"sent {len(json.dumps(args)):,} bytes"
    if name == "tools-200000":
        from capconf.simulator.definition.document import parse_definition
        out = parse_definition("name: a\ntools: " + ",".join(["t"] * 200_000) + "\n")
        return f"{len(out.diagnostics):,} diagnostics"
    if name in ("deep-json", "int-5000", "surrogate", "nan"):
        from capconf.simulator.protocol import stdio
        line = {"deep-json": b"[" * 100_000,
                "int-5000": b'{"id": 1, "op": "hello", "args": {"n": ' + b"9" * 5000 + b"}}",
                "surrogate": b'{"id": 1, "op": "x\\ud800"}',
                "nan": b'{"id": 1, "op": "hello", "args": {"x": NaN}}'}[name]
        data = line + b'\n{"id": 2, "op": "hello"}\n'
        try:
            out = io.BytesIO()
            stdio.serve(io.BytesIO(data), out)
            text = out.getvalue()
        except TypeError:  # the text-mode stdio of older checkouts
            out = io.StringIO()
            stdio.serve(io.StringIO(data.decode("utf-8", "surrogateescape")), out)
            text = out.getvalue().encode("utf-8", "surrogateescape")
        first = json.loads(text.splitlines()[0])
        answered = len(text.splitlines())
        status = "ok" if first.get("ok") else first["error"]["code"]
        return f"{status}, {answered} of 2 answered"
    raise SystemExit(f"unknown bomb {name}")

try:
    outcome = run()
except MemoryError:
    outcome = "MemoryError (address-space limit)"
except BaseException as exc:
    outcome = f"crash: {type(exc).__name__}: {str(exc)[:60]}"
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"bomb": name, "outcome": outcome, "peak_rss_mib": round(rss, 1),
                  "seconds": round(time.perf_counter() - start, 2)}))
'''

BOMBS = ("world-alias-6", "world-alias-7", "world-alias-9", "tools-200000", "deep-json",
         "int-5000", "surrogate", "nan")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--limit-mib", type=int, default=2048)
    parser.add_argument("bombs", nargs="*", default=list(BOMBS))
    ns = parser.parse_args()
    env = dict(os.environ)
    if ns.tree is not None:
        env["PYTHONPATH"] = str(ns.tree.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        for bomb in ns.bombs:
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, bomb, str(ns.limit_mib * 1024 * 1024), tmp],
                capture_output=True, env=env, timeout=600, cwd=tmp)
            lines = proc.stdout.decode().strip().splitlines()
            if lines:
                print(json.dumps(json.loads(lines[-1])))
            else:
                print(json.dumps({"bomb": bomb, "outcome": f"killed ({proc.returncode})",
                                  "stderr": proc.stderr.decode()[-200:]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

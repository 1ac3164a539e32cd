"""Hostile workflow scripts (FLOW-01 bounds, issue 21): the driver's peak memory and the
time to a verdict for each, on each runtime, against a trivial script measured in the
same run (the baseline).

Each script runs in a fresh interpreter (an in-process dispatcher, as `capconf driver`
serves it), so the peak resident memory it reports (``ru_maxrss``) is that script's own;
the process runtime's worker is a child process and is not counted in the driver's peak.
A script that gets no verdict within ``--timeout`` seconds, or whose driver dies (e.g.
under ``--memory-cap``), is reported as such instead of a number.

Run: `python benchmarks/flow_hostile.py [--runtime process thread] [--timeout 120]
[--memory-cap-mb 3000]`. Prints one line per script and runtime: verdict (error code),
seconds to the verdict, peak MiB, and both as ratios to the baseline.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

SCRIPTS = {
    "baseline": "emit(1)\n",
    "emit-10MB-x300": "x = 'a' * 10**7\nfor i in range(300):\n    emit(x)\n",
    "spawn-10MB-x200": "p = 'a' * 10**7\nfor i in range(200):\n    h = spawn('worker', p)\n",
    "emit-900KB-x300": "x = 'a' * 900000\nfor i in range(300):\n    emit(x)\n",
    "spawn-900KB-x200": "p = 'a' * 900000\nfor i in range(200):\n    h = spawn('worker', p)\n",
    "sum-range-1e13": "x = sum(range(10**13))\n",
    "pow-9-9-9": "x = 9**9**9\n",
    "sorted-key-emit": "x = sorted(range(3 * 10**6), key=emit)\n",
}
WORKER = "name: worker\ndescription: d\ntools: [read]\nprompt: Work.\n"
LEAD = "name: lead\ndescription: d\ntools: [Task]\nprompt: Lead.\n"


def one(name: str, runtime: str) -> dict[str, Any]:
    """Run one script in this interpreter; its verdict, seconds and peak MiB."""
    from capconf.conformance.cases import default_world
    from capconf.simulator.protocol.dispatcher import Dispatcher

    dispatcher = Dispatcher()
    ids = iter(range(1, 1_000_000))

    def request(op: str, **args: Any) -> Any:
        response = dispatcher.handle({"id": next(ids), "op": op, "args": args})
        return response["result"] if response["ok"] else {"error": response["error"]}

    with tempfile.TemporaryDirectory() as ws:
        request("world.setup", **default_world(), workspace=ws, frame="F")
        request("delegation.setup", agent_types=[WORKER, LEAD], max_fanout=300)
        parent = request("agent.spawn", source=LEAD)["agent"]
        start = time.perf_counter()
        result = request("flow.run", agent=parent, script=SCRIPTS[name], runtime=runtime,
                         responses={"worker": {"report": {"ok": True}}})
        seconds = time.perf_counter() - start
    error = result.get("error") or {}
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"verdict": result.get("status", "answered") + (f" {error.get('code')}"
                                                          if error else ""),
            "seconds": seconds, "peak_mib": peak_mib}


def measure(name: str, runtime: str, timeout: float, cap_mb: int) -> dict[str, Any]:
    def limit() -> None:
        cap = cap_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    # a session of its own: on a timeout the whole group goes, the process runtime's
    # worker (a grandchild) included
    proc = subprocess.Popen([sys.executable, __file__, "--one", name, "--runtime", runtime],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=limit if cap_mb else None)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"verdict": f"no verdict in {timeout:g} s", "seconds": None, "peak_mib": None}
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode != 0 or not out.strip():
        tail = (err.strip().splitlines() or ["?"])[-1][:60]
        return {"verdict": f"driver died ({tail})", "seconds": None, "peak_mib": None}
    last: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return last


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", nargs="+", default=["process", "thread"])
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--memory-cap-mb", type=int, default=3000,
                        help="RLIMIT_AS of each driver, so an unbounded script cannot take "
                        "the machine down (0: none)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.runtime[0])))
        return
    for runtime in args.runtime:
        base = measure("baseline", runtime, args.timeout, args.memory_cap_mb)
        for name in SCRIPTS:
            got = base if name == "baseline" else measure(name, runtime, args.timeout,
                                                          args.memory_cap_mb)
            if got["seconds"] is None:
                print(f"{runtime:>7} {name:<16} {got['verdict']}")
                continue
            print(f"{runtime:>7} {name:<16} {got['verdict']:<24} {got['seconds']:7.3f} s "
                  f"(x{got['seconds'] / base['seconds']:.1f})  peak {got['peak_mib']:7.1f} MiB "
                  f"(x{got['peak_mib'] / base['peak_mib']:.2f})")


if __name__ == "__main__":
    main()

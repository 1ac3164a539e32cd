"""Fan-out of N children through a workflow (FLOW-01 over DELEG), simulated end to end:
the script runs in its worker process, each "create a subagent" crosses the channel to
the host and goes through the delegation capability (limits, permission pin, child
session, event log), then the script waits for every report.

Run: `python benchmarks/flow_fanout.py [--runs 3] [--sizes 1000 10000] [--runtime process|thread]`
(FLOW-02: the script runtime; the default is the reference's default, `process`). Prints the median
time per size and the ratio of the largest to the smallest (linear: ratio ~ size ratio).

`--log-sizes 1000 10000 100000` then reads the delegation log (`delegation.log`, the whole
tree, through the dispatcher and the stdio edge's encoder) after a fan-out of each size,
and prints the read time per size and the ratio largest/smallest against the size ratio
(linear: about equal). The smallest size is the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from capconf.conformance.cases import default_world
from capconf.simulator.core.wire import encode_response
from capconf.simulator.protocol.dispatcher import Dispatcher

WORKER = "name: worker\ndescription: d\ntools: [read]\nprompt: Work.\n"
LEAD = "name: lead\ndescription: d\ntools: [Task]\nprompt: Lead.\n"
SCRIPT = "hs = [spawn('worker', 'part') for i in range({n})]\nemit(len(wait(hs)))\n"


def once(n: int, runtime: str) -> float:
    return fan_out(n, runtime)[0]


def fan_out(n: int, runtime: str, read_log: bool = False) -> tuple[float, float, float]:
    """Seconds for the fan-out of ``n`` children, and (with ``read_log``) the wall and CPU
    seconds of one read of the whole delegation log afterwards (0.0 otherwise). CPU time
    is printed too: on a loaded machine it moves much less than wall time."""
    dispatcher = Dispatcher()
    counter = iter(range(1, 1_000_000))

    def request(op: str, **args: Any) -> Any:
        response = dispatcher.handle({"id": next(counter), "op": op, "args": args})
        assert response["ok"], response
        return response["result"]

    with tempfile.TemporaryDirectory() as ws:
        request("world.setup", **default_world(), workspace=ws, frame="F")
        request("delegation.setup", agent_types=[WORKER, LEAD], max_fanout=n)
        parent = request("agent.spawn", source=LEAD)["agent"]
        start = time.perf_counter()
        result = request("flow.run", agent=parent, script=SCRIPT.format(n=n), runtime=runtime,
                         responses={"worker": {"report": {"ok": True}}})
        elapsed = time.perf_counter() - start
        assert result["status"] == "completed" and result["result"] == [n], result["error"]
        log_read = log_cpu = 0.0
        if read_log:
            start, cpu = time.perf_counter(), time.process_time()
            response = dispatcher.handle({"id": next(counter), "op": "delegation.log",
                                          "args": {}})
            line = encode_response(response)
            log_read, log_cpu = time.perf_counter() - start, time.process_time() - cpu
            assert response["ok"] and len(response["result"]["events"]) >= 3 * n, len(line)
        request("shutdown")
    return elapsed, log_read, log_cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runtime", default="process")
    parser.add_argument("--log-sizes", type=int, nargs="*", default=[],
                        help="also time a delegation.log read after these fan-outs")
    args = parser.parse_args()
    medians = {}
    for n in args.sizes:
        medians[n] = statistics.median(once(n, args.runtime) for _ in range(args.runs))
        print(f"{n:>6} children: {medians[n]:.3f} s (median of {args.runs}, {args.runtime})")
    small, large = min(medians), max(medians)
    print(f"ratio {large}/{small}: {medians[large] / medians[small]:.2f} "
          f"(size ratio {large / small:.0f})")
    if args.log_sizes:
        samples = {n: [fan_out(n, args.runtime, read_log=True)[1:] for _ in range(args.runs)]
                   for n in args.log_sizes}
        reads = {n: statistics.median(s[0] for s in runs) for n, runs in samples.items()}
        cpus = {n: statistics.median(s[1] for s in runs) for n, runs in samples.items()}
        for n in reads:
            print(f"{n:>6} children: delegation.log read {reads[n]:.3f} s wall, "
                  f"{cpus[n]:.3f} s CPU (median of {args.runs})")
        small, large = min(reads), max(reads)
        print(f"log read ratio {large}/{small}: {reads[large] / reads[small]:.2f} wall, "
              f"{cpus[large] / cpus[small]:.2f} CPU (size ratio {large / small:.0f})")


if __name__ == "__main__":
    main()

"""The workflow worker (FLOW-01): runs one checked script in its own process and sends
every host-API call back to the host over a JSON Lines channel (stdin/stdout), one
request and one answer at a time, so results and their order are deterministic.

First line from the host: ``{"script": TEXT}``. Then the worker sends
``{"call": "wait"|"emit", ...}`` and reads ``{"ok": true, "result"}`` or
``{"ok": false, "code", "message", "line"?}``; ``{"call": "spawn", "handle", ...}`` is
pipelined (no answer; a refusal comes back on the next call). It ends with
``{"end": "completed"|"failed", ...}``.
"""

from __future__ import annotations

import ast
import json
import sys
from types import FrameType
from typing import Any, TextIO

from capconf.simulator.flow.bounds import BOUNDS, Bounds
from capconf.simulator.flow.meter import FlowLimit, HostFunction, Meter
from capconf.simulator.flow.restricted import SAFE_BUILTINS, check_script
from capconf.simulator.flow.rewrite import bindings, rewrite


class HostRefused(Exception):
    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line


class Channel:
    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin, self.stdout = stdin, stdout

    def send(self, message: dict[str, Any]) -> None:
        self.send_text(json.dumps(message, sort_keys=True))

    def send_text(self, text: str) -> None:
        """One message already encoded by the meter (:meth:`Meter.encode`)."""
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def ask_text(self, text: str) -> Any:
        self.send_text(text)
        answer = json.loads(self.stdin.readline())
        if not answer["ok"]:
            raise HostRefused(answer["code"], answer["message"], answer.get("line"))
        return answer["result"]


def run(channel: Channel, script: str, meter: Meter | None = None) -> dict[str, Any]:
    violation = check_script(script)
    if violation is not None:
        return {"end": "failed", "code": "FLOW-RESTRICTED", **violation.to_json()}
    meter = meter or Meter()
    spawned = [0]

    def spawn(agent_type: str, prompt: str, implementer: str = "fresh") -> str:
        """Pipelined: the host answers nothing now; a refusal is raised at the script's
        next host call (or its end), naming the line of the refused spawn."""
        spawned[0] += 1
        handle = f"h{spawned[0]}"
        channel.send_text(meter.encode({
            "call": "spawn", "handle": handle, "agent_type": agent_type, "prompt": prompt,
            "implementer": implementer, "line": _caller_line()}, "spawn"))
        return handle

    def wait(handles: list[str]) -> list[Any]:
        result: list[Any] = channel.ask_text(meter.encode(
            {"call": "wait", "handles": list(handles)}, "wait"))
        return result

    def emit(value: Any) -> None:
        meter.emitted()
        channel.ask_text(meter.encode({"call": "emit", "value": value}, "emit"))

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != "<workflow>":
            return None
        if event == "line":
            meter.step()
        return tracer

    namespace: dict[str, Any] = {"__builtins__": SAFE_BUILTINS, **bindings(meter),
                                 "spawn": HostFunction("spawn", spawn),
                                 "wait": HostFunction("wait", wait),
                                 "emit": HostFunction("emit", emit)}
    try:
        code = compile(rewrite(ast.parse(script)), "<workflow>", "exec")
    except (SyntaxError, RecursionError, MemoryError) as exc:
        return {"end": "failed", "code": "FLOW-RESTRICTED", "line": 0, "column": 0,
                "message": f"the script cannot be compiled: {type(exc).__name__}"}
    sys.settrace(tracer)
    try:
        exec(code, namespace)  # the checked script, with the whitelisted builtins only
    except HostRefused as exc:
        return {"end": "failed", "code": exc.code, "message": exc.message,
                "line": exc.line if exc.line is not None else _line(exc)}
    except FlowLimit as exc:
        return {"end": "failed", "code": exc.code, "message": exc.message, "line": _line(exc)}
    except MemoryError as exc:
        return {"end": "failed", "code": "FLOW-LIMIT", "line": _line(exc),
                "message": f"the script needed more than {meter.bounds.memory_bytes:,} "
                "bytes"}
    except Exception as exc:  # the script's own error, reported with its line
        return {"end": "failed", "code": "FLOW-SCRIPT-ERROR",
                "message": f"{type(exc).__name__}: {exc}", "line": _line(exc)}
    finally:
        sys.settrace(None)
    return {"end": "completed"}


def _caller_line() -> int | None:
    """The script line of the host call being made (the innermost ``<workflow>`` frame)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != "<workflow>":
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_lineno if frame is not None else None


def _line(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<workflow>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _limit_resources(bounds: Bounds) -> None:
    """The backstop at the OS edge (never the model's bound, :mod:`bounds`): address
    space and CPU seconds. The CPU limit's signal ends the script as a located error."""
    import resource
    import signal

    def out_of_time(signum: int, frame: FrameType | None) -> None:
        raise FlowLimit("FLOW-LIMIT", f"the script used more than {bounds.cpu_seconds} "
                        "CPU seconds")

    resource.setrlimit(resource.RLIMIT_AS, (bounds.memory_bytes, bounds.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (bounds.cpu_seconds, bounds.cpu_seconds + 2))
    signal.signal(signal.SIGXCPU, out_of_time)


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but the channel writes to the host's pipe
    channel = Channel(sys.stdin, out)
    first = json.loads(sys.stdin.readline())
    given = first.get("bounds")
    bounds = Bounds(**given) if isinstance(given, dict) else BOUNDS
    _limit_resources(bounds)
    channel.send(run(channel, str(first.get("script", "")), Meter(bounds)))


if __name__ == "__main__":
    main()

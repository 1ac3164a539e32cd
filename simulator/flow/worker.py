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

import json
import sys
from types import FrameType
from typing import Any, TextIO

from capconf.simulator.flow.restricted import SAFE_BUILTINS, STEP_BUDGET, check_script


class HostRefused(Exception):
    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line


class StepBudgetExceeded(Exception):
    pass


class Channel:
    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin, self.stdout = stdin, stdout

    def send(self, message: dict[str, Any]) -> None:
        self.stdout.write(json.dumps(message, sort_keys=True) + "\n")
        self.stdout.flush()

    def ask(self, message: dict[str, Any]) -> Any:
        self.send(message)
        answer = json.loads(self.stdin.readline())
        if not answer["ok"]:
            raise HostRefused(answer["code"], answer["message"], answer.get("line"))
        return answer["result"]


def run(channel: Channel, script: str) -> dict[str, Any]:
    violation = check_script(script)
    if violation is not None:
        return {"end": "failed", "code": "FLOW-RESTRICTED", **violation.to_json()}

    spawned = [0]

    def spawn(agent_type: str, prompt: str, implementer: str = "fresh") -> str:
        """Pipelined: the host answers nothing now; a refusal is raised at the script's
        next host call (or its end), naming the line of the refused spawn."""
        spawned[0] += 1
        handle = f"h{spawned[0]}"
        channel.send({"call": "spawn", "handle": handle, "agent_type": agent_type,
                      "prompt": prompt, "implementer": implementer,
                      "line": sys._getframe(1).f_lineno})
        return handle

    def wait(handles: list[str]) -> list[Any]:
        result: list[Any] = channel.ask({"call": "wait", "handles": list(handles)})
        return result

    def emit(value: Any) -> None:
        channel.ask({"call": "emit", "value": value})

    steps = [0]

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != "<workflow>":
            return None
        if event == "line":
            steps[0] += 1
            if steps[0] > STEP_BUDGET:
                raise StepBudgetExceeded
        return tracer

    namespace: dict[str, Any] = {"__builtins__": SAFE_BUILTINS, "spawn": spawn,
                                 "wait": wait, "emit": emit}
    code = compile(script, "<workflow>", "exec")
    sys.settrace(tracer)
    try:
        exec(code, namespace)  # the checked script, with the whitelisted builtins only
    except HostRefused as exc:
        return {"end": "failed", "code": exc.code, "message": exc.message,
                "line": exc.line if exc.line is not None else _line(exc)}
    except StepBudgetExceeded:
        return {"end": "failed", "code": "FLOW-STEP-BUDGET",
                "message": f"the script ran more than {STEP_BUDGET} lines"}
    except Exception as exc:  # the script's own error, reported with its line
        return {"end": "failed", "code": "FLOW-SCRIPT-ERROR",
                "message": f"{type(exc).__name__}: {exc}", "line": _line(exc)}
    finally:
        sys.settrace(None)
    return {"end": "completed"}


def _line(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<workflow>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but the channel writes to the host's pipe
    channel = Channel(sys.stdin, out)
    first = json.loads(sys.stdin.readline())
    channel.send(run(channel, str(first.get("script", ""))))


if __name__ == "__main__":
    main()

"""A driver that behaves like the reference except on one op, where it misbehaves.

Usage: python misbehave.py MODE OP
MODE: crash | hang | garbage | wrong-id | bad-shape | deep | exit-at-start | no-features |
      not-implemented
"""

from __future__ import annotations

import json
import sys
import time

from capconf.simulator.protocol.dispatcher import Dispatcher


def main() -> int:
    mode, target = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    if mode == "exit-at-start":
        print("fatal: cannot start (simulated)", file=sys.stderr)
        return 7
    dispatcher = Dispatcher(features=() if mode == "no-features" else ("def", "tool", "prompt"))
    for line in sys.stdin:
        request = json.loads(line)
        response = dispatcher.handle(request)
        if request.get("op") == target:
            if mode == "crash":
                print(f"panic: simulated crash in {target}", file=sys.stderr)
                sys.stderr.flush()
                return 3
            if mode == "hang":
                time.sleep(3600)
            if mode == "garbage":
                sys.stdout.write("Traceback? no: this is not JSON\n")
                sys.stdout.flush()
                continue
            if mode == "deep":  # valid JSON, nested past what a JSON reader recurses into
                nested = "[" * 5000 + "]" * 5000
                sys.stdout.write(f'{{"id": {request["id"]}, "ok": true, '
                                 f'"result": {{"x": {nested}}}}}\n')
                sys.stdout.flush()
                continue
            if mode == "wrong-id":
                response["id"] = -1
            if mode == "bad-shape" and response.get("ok"):
                response["result"] = {"tools": "read"}
            if mode == "not-implemented":
                response = {"id": request.get("id"), "ok": False,
                            "error": {"code": "not_implemented", "message": "not yet"}}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
        if dispatcher.finished:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())

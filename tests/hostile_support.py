"""A reference driver in process for the hostile-input tests (issue 21): one request at
a time through the dispatcher, the same wire checks as the stdio driver, so an answer
that would be ``internal`` on the wire is ``internal`` here.
And the ``capconf`` command in process under a deadline, for the hostile-file tests."""

from __future__ import annotations

import itertools
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.cli import main
from capconf.conformance.reference import make_dispatcher


class Driver:
    def __init__(self) -> None:
        self.dispatcher = make_dispatcher()
        self.ids = itertools.count(1)

    def send(self, op: str, **args: Any) -> dict[str, Any]:
        """The whole response; never ``internal`` (the rule every hostile test holds)."""
        response: dict[str, Any] = self.dispatcher.handle(
            {"id": next(self.ids), "op": op, "args": args})
        assert response.get("error", {}).get("code") != "internal", response
        return response

    def ok(self, op: str, **args: Any) -> Any:
        response = self.send(op, **args)
        assert response["ok"], response
        return response["result"]


CLI_DEADLINE = 30.0


def cli_with_deadline(capsys: pytest.CaptureFixture[str], *argv: str,
                      fifos: tuple[Path, ...] = ()) -> tuple[int, str, str]:
    """``capconf ARGV`` in process, in a thread with a deadline: a regression that blocks
    on a FIFO fails the test (the FIFOs are then opened to release the thread) instead of
    hanging the run; a traceback fails it too."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["code"] = main(list(argv))
        except SystemExit as exc:
            box["code"] = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # a traceback is the failure being tested
            box["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(CLI_DEADLINE)
    if thread.is_alive():
        for fifo in fifos:  # release a blocked open, then fail
            os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
        pytest.fail(f"capconf {' '.join(argv)} did not answer in {CLI_DEADLINE} s")
    out, err = capsys.readouterr()
    assert "error" not in box, f"traceback: {box.get('error')!r}"
    return int(box["code"]), out, err

"""A reference driver in process for the hostile-input tests (issue 21): one request at
a time through the dispatcher, the same wire checks as the stdio driver, so an answer
that would be ``internal`` on the wire is ``internal`` here."""

from __future__ import annotations

import itertools
from typing import Any

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

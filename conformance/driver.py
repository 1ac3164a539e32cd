"""A typed face on the driver protocol for tests: request ids, validation, errors.

``request`` returns the result of an ok response and raises a ``DriverFailure``
otherwise; ``request_error`` is for tests that expect the implementation to refuse.
"""

from __future__ import annotations

import itertools
from typing import Any

from capconf.conformance.client import (
    DriverFailure,
    ImplementationError,
    NotImplementedByImplementation,
    ProtocolViolation,
    Transport,
)
from capconf.conformance.protocol import validate_response


class Driver:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._ids = itertools.count(1)
        self._hello: dict[str, Any] | None = None
        self._broken: DriverFailure | None = None
        # Set once a case's feature groups are known to be declared: from then on an op
        # answered `not_implemented` is the implementation contradicting its own `hello`.
        self.declared_case = False

    def begin_case(self) -> None:
        """Forget an earlier case's failure: each case gets a fresh chance."""
        self._broken = None
        self.declared_case = False

    def _send(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        # Once the implementation crashed, hung or sent garbage in this case, the case has
        # its outcome; further requests fail at once instead of restarting the process
        # again and again (hypothesis would otherwise replay every example against it).
        if self._broken is not None:
            raise self._broken
        try:
            return self._exchange(op, args)
        except DriverFailure as exc:
            self._broken = exc
            raise

    def _exchange(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        response = self.transport.exchange({"id": request_id, "op": op, "args": args})
        got = response.get("id")
        if isinstance(got, int) and not isinstance(got, bool) and got != request_id:
            # an answer to another request: its id is the finding, not the schema of a
            # result that was never meant for `op`
            raise ProtocolViolation(
                f"response id {got} does not match request id {request_id} (`{op}`): it "
                "answers no outstanding request; one response per request, in order")
        problems = validate_response(op, response)
        if problems:
            raise ProtocolViolation(f"invalid response to `{op}`: " + "; ".join(problems[:5]))
        if got != request_id:
            raise ProtocolViolation(
                f"response id {response.get('id')!r} does not match request id {request_id}")
        return response

    def send(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        """The validated response envelope of one request, whatever its ``ok`` (replay
        compares refusals as well as results)."""
        return self._send(op, args)

    def send_raw(self, line: bytes) -> dict[str, Any]:
        """Send ``line`` as one request line, byte for byte, and return the response,
        whatever its ``ok`` (PROTO-03 cases: invalid UTF-8, NaN, deep nesting). The
        envelope is validated; the id is the test's to check."""
        if self._broken is not None:
            raise self._broken
        try:
            response = self.transport.exchange_raw(line)
            problems = validate_response("raw line", response)
            if problems:
                raise ProtocolViolation("invalid response to a raw line: "
                                        + "; ".join(problems[:5]))
        except DriverFailure as exc:
            self._broken = exc
            raise
        return response

    def request(self, op: str, args: dict[str, Any] | None = None) -> Any:
        response = self._send(op, args or {})
        if not response["ok"]:
            error = response["error"]
            if error["code"] == "not_implemented" and not self.declared_case:
                raise NotImplementedByImplementation(f"`{op}`: {error['message']}")
            if error["code"] == "not_implemented":
                raise ImplementationError(
                    op, "not_implemented", "the implementation declares this case's feature "
                    f"group(s) in `hello` but does not implement `{op}`: {error['message']}")
            raise ImplementationError(op, error["code"], error["message"], error)
        return response["result"]

    def request_error(self, op: str, args: dict[str, Any] | None = None,
                      not_implemented_expected: bool = False) -> dict[str, Any]:
        """The error of a request that must be refused; a success is a test failure.
        ``not_implemented`` means the op is missing (the case is "not implemented") unless
        the test expects exactly that answer."""
        response = self._send(op, args or {})
        if response["ok"]:
            raise AssertionError(f"`{op}` was expected to be refused but succeeded: "
                                 f"{str(response['result'])[:300]}")
        error: dict[str, Any] = response["error"]
        if error["code"] == "not_implemented" and not not_implemented_expected:
            if self.declared_case:
                raise ImplementationError(
                    op, "not_implemented", "the implementation declares this case's feature "
                    f"group(s) in `hello` but does not implement `{op}`: {error['message']}")
            raise NotImplementedByImplementation(f"`{op}`: {error['message']}")
        return error

    def hello(self, refresh: bool = False) -> dict[str, Any]:
        if self._hello is None or refresh:
            self._hello = self.request("hello")
        return self._hello

    @property
    def features(self) -> frozenset[str]:
        return frozenset(self.hello()["features"])

    def close(self) -> None:
        self.transport.close()

"""What the fake provider does with a request besides answering it (CONN-13): it fails
with its own reason, or the request times out after it was sent, with an effect the
runtime cannot see until it asks the provider.

A test scripts these per method, in order (``conn.setup`` ``outcomes``); a method with
no outcome left answers normally. Parsing is here so that the runtime holds values, never
raw JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProviderError:
    """The provider's own answer: passed on as it came, nothing added (no cause, no
    retry time the provider did not give)."""
    code: str
    message: str
    detail: Mapping[str, Any] = field(default_factory=dict)
    retry_after_ms: int | None = None
    status: int | None = None
    """The HTTP status the provider answered with, when the script gives one."""

    @property
    def rate_limited(self) -> bool:
        """The provider said "too many requests" (CONN-07): a 429, or a 403 whose code is
        one of the rate-limit reasons. Any other failure is only the provider's reason."""
        return self.status == 429 or (self.status == 403
                                      and self.code in RATE_LIMIT_403_CODES)


RATE_LIMIT_403_CODES = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
"""The codes that make a 403 a rate limit (CONN-07's "rate-limit 403"), as Google APIs
spell them; every other 403 is a refusal of its own kind (a permission, a policy)."""


@dataclass(frozen=True)
class Timeout:
    """The request went out and no answer came back; ``applied`` is what really happened
    at the provider, visible only through a status query."""
    applied: bool


Outcome = ProviderError | Timeout


class OutcomeError(ValueError):
    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def parse_outcome(raw: Any, path: tuple[str | int, ...]) -> Outcome:
    if isinstance(raw, dict) and set(raw) == {"error"} and isinstance(raw["error"], dict):
        error = raw["error"]
        code, message = error.get("code"), error.get("message", "")
        detail, retry = error.get("detail", {}), error.get("retry_after_ms")
        status = error.get("status")
        if not isinstance(code, str) or not code or not isinstance(message, str):
            raise OutcomeError((*path, "error"), "an error is {code, message, status?, detail?, "
                               "retry_after_ms?} with a non-empty string code")
        if not isinstance(detail, dict):
            raise OutcomeError((*path, "error", "detail"), "must be an object")
        if retry is not None and (not isinstance(retry, int) or isinstance(retry, bool)
                                  or retry < 0):
            raise OutcomeError((*path, "error", "retry_after_ms"),
                               "must be a non-negative integer")
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)
                                   or not 100 <= status <= 599):
            raise OutcomeError((*path, "error", "status"), "must be an HTTP status (100-599)")
        return ProviderError(code, message, dict(detail), retry, status)
    if isinstance(raw, dict) and set(raw) == {"timeout"} and isinstance(raw["timeout"], dict):
        applied = raw["timeout"].get("applied")
        if not isinstance(applied, bool):
            raise OutcomeError((*path, "timeout", "applied"), "must be true or false")
        return Timeout(applied)
    raise OutcomeError(path, "an outcome is {error: {...}} or {timeout: {applied}}")

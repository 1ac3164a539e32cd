"""What a fake provider's scripted error counts as a rate limit (SPEC.md CONN-07, "what the
provider's answer counts as a rate limit"; seed 001 4.3): a 429 whatever its code, or a
403 with a rate-limit reason; nothing else, and no status means no rate limit."""

from __future__ import annotations

import pytest

from capconf.simulator.connectors.outcomes import OutcomeError, ProviderError, parse_outcome


@pytest.mark.parametrize(("status", "code", "limited"), [
    (429, "anything", True), (429, "backendError", True),
    (403, "rateLimitExceeded", True), (403, "userRateLimitExceeded", True),
    (403, "insufficientPermissions", False), (403, "ratelimitexceeded", False),
    (500, "rateLimitExceeded", False), (None, "rateLimitExceeded", False),
])
def test_only_a_429_or_a_rate_limit_403_is_a_rate_limit(status: int | None, code: str,
                                                         limited: bool) -> None:
    error = {"code": code, "message": "m", **({} if status is None else {"status": status})}
    outcome = parse_outcome({"error": error}, ("o",))
    assert isinstance(outcome, ProviderError)
    assert (outcome.status, outcome.rate_limited) == (status, limited)


@pytest.mark.parametrize("status", ["429", 429.0, True, 99, 600])
def test_a_status_that_is_not_an_http_status_is_refused_with_its_path(status: object) -> None:
    with pytest.raises(OutcomeError) as caught:
        parse_outcome({"error": {"code": "x", "message": "m", "status": status}}, ("o", 0))
    assert caught.value.path == ("o", 0, "error", "status")

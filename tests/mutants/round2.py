"""Mutants for the round-2 decisions of the third outside implementer (SPEC.md, the
"Decisions: ... (outside implementer, round 3, part 2)" tables): each is a guess a
runtime author made, or would make, before the rule was written down."""

from __future__ import annotations

from capconf.simulator.connectors import outcomes
from mutants.base import Mutant


def _provider_rate_limit_ignored() -> None:
    """Only the manifest's quota stops a provider: a 429 from the provider itself is an
    ordinary provider error, and the next method is sent at once."""
    outcomes.ProviderError.rate_limited = property(  # type: ignore[method-assign]
        lambda self: False)


def _every_403_is_a_rate_limit() -> None:
    """Every 403 (and every 429) stops the provider: a permission refusal becomes a
    rate limit the provider never reported."""
    outcomes.ProviderError.rate_limited = property(  # type: ignore[method-assign]
        lambda self: self.status in (403, 429))


MUTANTS: tuple[Mutant, ...] = (
    Mutant("r2-provider-rate-limit-ignored", "a provider's 429 / rate-limit 403 does not "
           "stop the provider", ("CONN-07",), _provider_rate_limit_ignored),
    Mutant("r2-every-403-is-a-rate-limit", "any 403 stops the provider as a rate limit",
           ("CONN-07",), _every_403_is_a_rate_limit),
)

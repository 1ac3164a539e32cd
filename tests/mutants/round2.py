"""Mutants for the connector, flow, skills, knowledge and memory points SPEC.md decides
(each requirement's "Decided points"): each is a guess a runtime author made, or would
make, before the rule was written down."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.connectors import outcomes, runtime
from capconf.simulator.core.envelope import ToolResult
from mutants.base import Mutant, _original, _patch


def _provider_rate_limit_ignored() -> None:
    """Only the manifest's quota stops a provider: a 429 from the provider itself is an
    ordinary provider error, and the next method is sent at once."""
    _patch(outcomes.ProviderError, "rate_limited", property(lambda self: False))


def _every_403_is_a_rate_limit() -> None:
    """Every 403 (and every 429) stops the provider: a permission refusal becomes a
    rate limit the provider never reported."""
    _patch(outcomes.ProviderError, "rate_limited",
           property(lambda self: self.status in (403, 429)))


def _background_only_gated_when_synced() -> None:
    """The Background setting is read only for connectors that declare a sync, as if the
    setting were about syncing: a connector without one is open to background work."""
    real = _original(runtime.ConnectorRuntime, "call")

    def call(self: runtime.ConnectorRuntime, connector_id: str, command: str,
             params: Mapping[str, Any], background: bool = False) -> ToolResult:
        connector = self.connectors.get(connector_id)
        if connector is not None and not connector.read_methods:
            background = False
        return real(self, connector_id, command, params, background)

    _patch(runtime.ConnectorRuntime, "call", call)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("r2-provider-rate-limit-ignored", "a provider's 429 / rate-limit 403 does not "
           "stop the provider", ("CONN-07",), _provider_rate_limit_ignored),
    Mutant("r2-every-403-is-a-rate-limit", "any 403 stops the provider as a rate limit",
           ("CONN-07",), _every_403_is_a_rate_limit),
    Mutant("r2-background-only-when-synced", "a connector without a sync is open to "
           "background work", ("CONN-08",), _background_only_gated_when_synced),
)

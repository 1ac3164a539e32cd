"""Mutants of the executors area (BIN-01..03)."""

from __future__ import annotations

from typing import Any

from mutants.base import Mutant, _original, _patch


def _one_reason() -> None:
    """Every missing state answers the same `unavailable`."""
    from capconf.simulator.core.envelope import failure
    from capconf.simulator.executors.model import ExecutorWorld

    real = _original(ExecutorWorld, "state_refusal")

    def buggy(self: Any, name: str, channel: str) -> Any:
        refusal = real(self, name, channel)
        if refusal is None:
            return None
        return failure("unavailable", "not available", {"executor": name},
                       terminal_for_attempt=True)

    _patch(ExecutorWorld, "state_refusal", buggy)


def _usable_before_revealed() -> None:
    """Usability is checked before the channel's reveal, leaking hidden executors."""
    from capconf.simulator.core.envelope import failure
    from capconf.simulator.executors.model import STATES, ExecutorWorld

    real = _original(ExecutorWorld, "state_refusal")

    def buggy(self: Any, name: str, channel: str) -> Any:
        executor = self.executors.get(name)
        if (executor is not None and executor.provisioned and executor.connector is not None
                and not self.connected.get(executor.connector)):
            return failure("not_usable", STATES[2][1], {"executor": name},
                           terminal_for_attempt=True)
        return real(self, name, channel)

    _patch(ExecutorWorld, "state_refusal", buggy)


def _free_text_help() -> None:
    """`--help` prints a usage line instead of the commands in the envelope."""
    from capconf.simulator.core.envelope import success
    from capconf.simulator.executors import model

    _patch(model, "_help", lambda executor: success("usage: see the manual"))


def _shortcut_is_other() -> None:
    """A `+` shortcut runs without its method's parameters."""
    from capconf.simulator.executors import model

    real = _original(model, "cli")

    def buggy(executor: Any, argv: list[str]) -> Any:
        if argv and argv[0].startswith("+"):
            argv = argv[:1]
        return real(executor, argv)

    _patch(model, "cli", buggy)


def _gating_only() -> None:
    """The worker trusts channel gating: a direct dial is never checked."""
    from capconf.simulator.core.envelope import success
    from capconf.simulator.executors.model import ExecutorWorld

    _patch(ExecutorWorld, "dial", lambda self, principal, worker, method, params: success(
        {"worker": worker, "method": method}))


def _acl_only() -> None:
    """The normal path skips the channel's reveal when the worker would admit the call."""
    from capconf.simulator.executors.model import ExecutorWorld, cli

    def buggy(self: Any, channel: str, name: str, argv: list[str]) -> Any:
        executor = self.executors.get(name)
        if executor is not None and executor.provisioned:
            refusal = self.acl_refusal(executor.worker, self.broker)
            return refusal if refusal is not None else cli(executor, argv)
        return self.state_refusal(name, channel)

    _patch(ExecutorWorld, "run", buggy)


def _broker_unchecked() -> None:
    """The normal path never consults the worker's access list."""
    from capconf.simulator.executors.model import ExecutorWorld

    real = _original(ExecutorWorld, "acl_refusal")

    def buggy(self: Any, worker: str, principal: str) -> Any:
        return None if principal == self.broker else real(self, worker, principal)

    _patch(ExecutorWorld, "acl_refusal", buggy)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("bin-one-reason", "every missing state answers the same reason", ("BIN-01",),
           _one_reason),
    Mutant("bin-usable-before-revealed", "usability checked before reveal", ("BIN-01",),
           _usable_before_revealed, also_breaks=("BIN-03",)),
    Mutant("bin-free-text-help", "--help is free text", ("BIN-02",), _free_text_help),
    Mutant("bin-shortcut-drops-params", "a + shortcut drops its parameters", ("BIN-02",),
           _shortcut_is_other),
    Mutant("bin-gating-only", "a direct dial is never checked by the worker", ("BIN-03",),
           _gating_only),
    Mutant("bin-acl-only", "the channel's reveal is skipped when the worker admits the call",
           ("BIN-03",), _acl_only, also_breaks=("BIN-01",)),
    Mutant("bin-broker-unchecked", "the normal path skips the worker's access list",
           ("BIN-03",), _broker_unchecked),
)

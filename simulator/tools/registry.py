"""The grantable-tool registry: the only source of tool candidates (DEF-05, TOOL-01).

A registry whose names collide up to ASCII case is refused when it is built (TOOL-04):
resolution then has exactly one canonical answer per spelling, so no tie-break rule is
needed and no implementation can pick a different winner.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.tools.catalog import DEFAULT_GRANTABLE, DEFAULT_NOT_GRANTABLE, LEGACY_SIX


@dataclass(frozen=True)
class Registry:
    grantable: tuple[str, ...]
    not_grantable: tuple[tuple[str, str], ...] = ()
    legacy_fallback: bool = False
    _index: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    _refused: dict[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)

    def canonical(self, written: str) -> str | None:
        """The registered name for any ASCII-case spelling, or None."""
        return self._index.get(ascii_fold(written))

    def refusal(self, written: str) -> tuple[str, str] | None:
        """(canonical name, reason) when the name is deliberately not grantable."""
        return self._refused.get(ascii_fold(written))

    def suggestions(self, written: str) -> list[str]:
        """Registry names close to ``written``, nearest first: the same rule as the
        editor's unknown-name chips (EDIT-04), so the two never disagree."""
        from capconf.simulator.core.nearest import nearest

        return nearest(written, self.grantable)


def build_registry(
    grantable: Iterable[str] | None,
    not_grantable: Iterable[tuple[str, str]] | None = None,
) -> Registry:
    """Build a registry; ``grantable=None`` means the backend has no grantable-tool list,
    and the legacy six are used instead of failing (DEF-05)."""
    fallback = grantable is None
    names = tuple(LEGACY_SIX if grantable is None else grantable)
    refused = tuple(DEFAULT_NOT_GRANTABLE if not_grantable is None else not_grantable)
    index: dict[str, str] = {}
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise WorldSetupError(("grantable", i),
                                  f"registry name {name!r} is not a trimmed, non-empty string")
        folded = ascii_fold(name)
        if folded in index:
            raise WorldSetupError(
                ("grantable", i),
                f"registry names {index[folded]!r} and {name!r} are equal up to case; "
                "a registry must keep names distinct under ASCII case folding (TOOL-04)",
            )
        index[folded] = name
    refused_index: dict[str, tuple[str, str]] = {}
    for i, (name, reason) in enumerate(refused):
        folded = ascii_fold(name)
        if folded in index:
            raise WorldSetupError(("not_grantable", i),
                                  f"{name!r} is both grantable and not grantable")
        if not reason.strip():
            raise WorldSetupError(("not_grantable", i), f"{name!r} needs a reason (TOOL-01)")
        refused_index[folded] = (name, reason)
    return Registry(names, refused, fallback, index, refused_index)


def default_registry() -> Registry:
    return build_registry(DEFAULT_GRANTABLE, DEFAULT_NOT_GRANTABLE)

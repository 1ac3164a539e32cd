"""Mutants for points SPEC.md decides in its requirements (the prose and each
requirement's "Decided points"): each is the guess a runtime author made before the
point was written down."""

from __future__ import annotations

import difflib
import re
from typing import Any

from capconf.simulator.compose import session as protocol_session
from capconf.simulator.compose import world as core_world
from capconf.simulator.definition import yamlsource
from capconf.simulator.protocol import core_ops
from capconf.simulator.tools import grants
from mutants.base import Mutant
from mutants.split import ModuleGroup

# definition/document.py before it was split into the document and its parser (issue 24)
document = ModuleGroup("capconf.simulator.definition.document",
                       "capconf.simulator.definition.parse")


def _extra_yaml11() -> None:
    """`extra` read with YAML 1.1 typing: `yes` becomes true, `017` becomes 15."""
    def plain(node: Any) -> Any:
        if isinstance(node, yamlsource.LScalar):
            return node.value
        if isinstance(node, yamlsource.LSeq):
            return [plain(n) for n in node.items]
        return {k.text: plain(v) for k, v in node.items}
    document.plain = plain  # type: ignore[assignment]


def _names_yaml11_typed() -> None:
    """A non-string scalar where names are expected is a DEF-TYPE (`tools: yes`)."""
    real = document._Builder.name_list

    def name_list(self: Any, path: Any, node: Any) -> Any:
        if isinstance(node, yamlsource.LScalar) and not node.tag.endswith(":null") and \
                not isinstance(node.value, str):
            self.add(document.DEF_TYPE, "not a string", yamlsource.location(path, node))
            return None
        return real(self, path, node)
    document._Builder.name_list = name_list  # type: ignore[method-assign]


def _null_entry_is_a_type_error() -> None:
    """A null list entry (`-` alone, `~`, `null`) is DEF-TYPE, not an empty entry."""
    real = document._Builder.add

    def add(self: Any, kind: Any, message: str, loc: Any) -> None:
        if kind is document.DEF_EMPTY_ENTRY and "Remove it." in message:
            kind = document.DEF_TYPE
        real(self, kind, message, loc)
    document._Builder.add = add  # type: ignore[method-assign]


def _nested_duplicates_silent() -> None:
    """Repeated keys are checked at the top level and in `mcp` only."""
    real = document._Builder._duplicates

    def duplicates(self: Any, path: Any, node: Any) -> None:
        if path[:1] != ("knowledge",):
            real(self, path, node)
    document._Builder._duplicates = duplicates  # type: ignore[method-assign]


def _mcp_prefix_case_sensitive() -> None:
    """Only a lower-case `mcp__` prefix is MCP-style; `MCP__crm` is an unknown tool."""
    grants._MCP_PATTERNS = (
        re.compile(r"^mcp__(?P<server>[^_].*?)(?:__(?P<tool>.+))?$"),
        grants._MCP_PATTERNS[1],
    )


def _misspelled_by_ratio() -> None:
    """Misspelled keys found by Python's difflib ratio (0.75), which no other language has."""
    def near_miss(key: str) -> list[str]:
        return difflib.get_close_matches(key.lower(), document._NEAR_MISS_TARGETS, n=1,
                                         cutoff=0.75)
    document.near_miss = near_miss


def _not_grantable_needs_grantable() -> None:
    """`not_grantable` read only together with `grantable`."""
    real = core_world.parse_world

    def parse_world(args: Any) -> Any:
        if "grantable" not in args:
            args = {k: v for k, v in args.items() if k != "not_grantable"}
        return real(args)
    core_ops.parse_world = parse_world


def _refused_setup_keeps_world() -> None:
    """A refused world.setup leaves the previous world in place."""
    real = protocol_session.Session.reset

    def reset(self: Any, world: Any) -> None:
        if world is not None:
            real(self, world)
    protocol_session.Session.reset = reset  # type: ignore[method-assign]


MUTANTS: tuple[Mutant, ...] = (
    Mutant("decision-extra-yaml11", "extra values typed by YAML 1.1", ("DEF-04",),
           _extra_yaml11),
    Mutant("decision-names-yaml11-typed", "`tools: yes` is a type error", ("DEF-01",),
           _names_yaml11_typed),
    Mutant("decision-null-entry-type-error", "a null list entry is DEF-TYPE", ("DEF-06",),
           _null_entry_is_a_type_error),
    Mutant("decision-nested-duplicates-silent", "a repeated key inside a knowledge entry "
           "is not reported", ("DEF-03",), _nested_duplicates_silent),
    Mutant("decision-mcp-prefix-case-sensitive", "`MCP__crm` is an unknown tool",
           ("TOOL-03",), _mcp_prefix_case_sensitive),
    Mutant("decision-misspelled-by-ratio", "misspelled keys by difflib ratio",
           ("DEF-04",), _misspelled_by_ratio),
    Mutant("decision-not-grantable-needs-grantable", "`not_grantable` alone ignored",
           ("PROTO-02",), _not_grantable_needs_grantable),
    Mutant("decision-refused-setup-keeps-world", "a refused world.setup keeps the old world",
           ("PROTO-02",), _refused_setup_keeps_world),
)

"""Every diagnostic kind the reference can emit, collected from the modules that
declare them (each exports ``DIAGNOSTIC_KINDS``). SPEC.md's code table is generated from
this, and a test keeps the two identical."""

from __future__ import annotations

import importlib
import pkgutil

import capconf.simulator as package
from capconf.simulator.core.diagnostics import DiagnosticKind

_PLACEHOLDER_MODULES: set[str] = set()


def all_kinds() -> list[DiagnosticKind]:
    found: dict[str, DiagnosticKind] = {}
    placeholders: dict[str, DiagnosticKind] = {}
    for info in sorted(pkgutil.walk_packages(package.__path__, package.__name__ + "."),
                       key=lambda i: i.name):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        target = placeholders if info.name in _PLACEHOLDER_MODULES else found
        for kind in getattr(module, "DIAGNOSTIC_KINDS", ()):
            other = target.get(kind.code)
            if other is not None and other != kind:
                raise RuntimeError(f"diagnostic code {kind.code} declared twice, differently")
            target[kind.code] = kind
    for code, kind in placeholders.items():
        found.setdefault(code, kind)
    return sorted(found.values(), key=lambda k: (k.code.split("-")[0], k.code))

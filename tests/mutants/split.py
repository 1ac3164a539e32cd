"""One name for the modules a module was split into (issue 24), so that a mutant written
against the old module still patches every place that binds a name.

A mutant replaces a module attribute (a helper, a constant) to change what the code that
looks it up does. When the code that looked it up moved to several modules, each of them
binds the name itself (``from ... import name``); patching one module would leave the
others correct and the mutant half applied. Reading takes the first module that defines
the name; writing sets it in every module of the group that binds it, and fails loudly
when none does, so a mutant never patches a name nobody reads.
"""

from __future__ import annotations

import importlib
from typing import Any


class ModuleGroup:
    def __init__(self, *names: str) -> None:
        object.__setattr__(self, "_modules", [importlib.import_module(n) for n in names])

    def __getattr__(self, attribute: str) -> Any:
        for module in self._modules:
            if hasattr(module, attribute):
                return getattr(module, attribute)
        raise AttributeError(f"no module of the group defines {attribute!r}")

    def __setattr__(self, attribute: str, value: Any) -> None:
        holders = [m for m in self._modules if hasattr(m, attribute)]
        if not holders:
            raise AttributeError(f"no module of the group binds {attribute!r}")
        for module in holders:
            setattr(module, attribute, value)

"""The default implementation adapter: the ONLY module of the suite that imports the
reference simulator (a test in tests/conformance/test_boundary.py enforces this).

Everything else in ``conformance`` speaks the driver protocol, so the simulator is one
implementation among others, exactly as a TypeScript or Rust runtime would be.
"""

from __future__ import annotations

import sys
from typing import Any

REFERENCE_DRIVER_ARGV = [sys.executable, "-m", "capconf.conformance.cli", "driver"]


def make_dispatcher() -> Any:
    from capconf.simulator.protocol.dispatcher import Dispatcher

    return Dispatcher()


def serve_stdio() -> int:
    from capconf.simulator.protocol.stdio import serve

    return serve()


def diagnostic_help() -> dict[str, tuple[str, str]]:
    """Diagnostic code -> (requirement ID, meaning): SPEC.md section 12, which every
    implementation's codes follow; the help text of `capconf validate --format sarif`."""
    from capconf.simulator.compose.diagnostic_catalog import all_kinds

    return {k.code: (k.requirement, k.summary) for k in all_kinds()}

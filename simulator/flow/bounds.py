"""The resource bounds of one workflow run (FLOW-01), as one table of numbers.

A workflow is model-written code, so every run is bounded on every runtime. The primary
bounds are *deterministic work metering*: counted steps, counted work units, value
sizes and channel bytes, the same numbers on both runtimes and on every machine, so a
verdict never depends on how fast the host is. The OS and wall-clock limits are only a
backstop at the I/O edge (the process runtime's rlimits, both runtimes' deadline on the
script's own time): a script within the metered bounds never comes near them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bounds:
    steps: int = 500_000
    """Executed statements or lines, loop and comprehension iterations, host calls."""
    work: int = 20_000_000
    """Work units: items and characters that metered operations read or produce."""
    value: int = 1_000_000
    """Items or characters of any one value a script makes (a string, list, dict...)."""
    int_bits: int = 65_536
    """Bits of any one integer a script makes."""
    depth: int = 32
    """Nesting of a value that crosses the channel (emit, wait, spawn arguments)."""
    message_bytes: int = 1 << 20
    """Bytes of one host call's JSON message."""
    channel_bytes: int = 32 << 20
    """Bytes of all host calls' JSON messages of one run."""
    emits: int = 10_000
    """``emit`` calls of one run."""
    # -- the backstop at the I/O edge (never the model's bound) ------------------------
    seconds: float = 60.0
    """Wall time of the script's own work (time the host spends serving it excluded).
    Far above what the counted bounds allow on an idle machine (a few seconds), so a
    loaded machine does not turn a normal script into a verdict."""
    cpu_seconds: int = 60
    """The process runtime's RLIMIT_CPU."""
    memory_bytes: int = 1 << 30
    """The process runtime's RLIMIT_AS."""


BOUNDS = Bounds()

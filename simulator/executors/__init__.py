"""Executors (seed 001): provisioned, revealed and usable as three states, one CLI
contract, and two independent walls against reaching a worker directly.

Planned: specified in SPEC.md section 11, not yet implemented or tested.

Requirements: BIN-01..03
Spec: SPEC.md section 11
Suite: (none yet)
Golden: (none yet)
"""

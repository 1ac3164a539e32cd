"""Executors (seed 001 section 4): provisioned, revealed and usable as three states, one
CLI contract, and two independent walls against reaching a worker directly.

The host (executors, workers and their socket ACLs, connected accounts) is a value and
each path through it is a fixed order of checks (model); the driver ops describe the host
and run a command or a direct dial (ops).

Requirements: BIN-01..03
Spec: SPEC.md section 11c
Suite: conformance/suite/test_executors.py
Golden: (none yet)
"""

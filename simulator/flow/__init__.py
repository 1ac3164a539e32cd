"""Orchestration (seed 003): model-written workflow scripts run in an isolated, restricted
worker process whose "create a subagent" calls fan out through the delegation capability,
and the fixed-script iteration mode (fresh child per round, exactly four inputs).
FLOW-02 (a model-facing workflow tool whose parameters survive swapping the script
runtime) is specified but not yet built.

Requirements: FLOW-01..03
Spec: SPEC.md section 10b
Suite: conformance/suite/test_flow.py
Golden: (none yet)
"""

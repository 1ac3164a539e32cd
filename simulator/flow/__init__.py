"""Orchestration (seed 003): model-written workflow scripts run in an isolated worker that
fan out through the delegation capability, and the fixed-script iteration mode.

Planned: specified in SPEC.md section 11, not yet implemented or tested.

Requirements: FLOW-01..03
Spec: SPEC.md section 11
Suite: (none yet)
Golden: (none yet)
"""

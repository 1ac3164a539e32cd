"""Connectors (seed 001): connector.yaml, CONNECTOR.md and manifest.yaml; action
permissions, quotas in units, lifecycle URLs, read-only sync, gating, custom connectors.

Planned: specified in SPEC.md section 11, not yet implemented or tested.

Requirements: CONN-01..14
Spec: SPEC.md section 11
Suite: (none yet)
Golden: (none yet)
"""

"""Delegation as a capability (seed 003): a registry of named implementers (fresh, fork,
out-of-process) behind one service interface, lineage as data, depth persisted and
monotonic, permissions pinned at the delegation boundary, one cancellation contract.

Planned: specified in SPEC.md section 11, not yet implemented or tested.

Requirements: DELEG-01..06 APPR-06..08
Spec: SPEC.md section 11
Suite: (none yet)
Golden: (none yet)
"""

"""Delegation as a capability (seed 003): a registry of named implementers (fresh, fork,
out-of-process) behind one service interface, lineage as data, depth persisted and
monotonic, permissions pinned at the delegation boundary, one cancellation contract, and
the tree's event log. A child's scope (DELEG-05) is its definition's: the factory is
given the definition alone.

Requirements: DELEG-01..06 APPR-06..08
Spec: SPEC.md section 10a
Suite: conformance/suite/test_delegation.py conformance/suite/test_delegation_decisions.py conformance/suite/delegation_world.py conformance/suite/test_second_sides_delegation.py conformance/suite/test_bug_shapes.py
Golden: golden/delegation/
"""

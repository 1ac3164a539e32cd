"""Tool namespaces (seed 001): namespace.function, deferred loading with
load_tool_namespace, the always-loaded core namespace, and channel-dependent visibility.

Planned: specified in SPEC.md section 11, not yet implemented or tested.

Requirements: NS-01..05
Spec: SPEC.md section 11
Suite: (none yet)
Golden: (none yet)
"""

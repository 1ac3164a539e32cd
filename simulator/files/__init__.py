"""The one way the simulator opens anything under a root: component by component from an
already opened directory, never following a link, deciding on what was opened and
acting on that same descriptor.

Planned home (the hardening issue); today each area opens files its own way.

Requirements: KB-07 SKILL-05 MEM-10
Spec: SPEC.md section 7, 6, 10
Suite: (none yet)
Golden: (none yet)
"""

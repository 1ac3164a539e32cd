"""Tool namespaces (seed 001): namespace.function, deferred loading with
load_tool_namespace, the always-loaded core namespace, and channel-dependent visibility.

The catalogue is a value (catalog), a context's loaded set grows only by loading
(context), and what a context injects is a pure function of both (surface). The realistic
catalogue (data/realistic.yaml) is the seed's size: 33 namespaces on the main channel.

Requirements: NS-01..05
Spec: SPEC.md section 11a
Suite: conformance/suite/test_namespaces.py
Golden: golden/namespaces/
"""

"""Orchestration (seed 003): the workflow capability. It owns execution and the lifecycle
events; interchangeable script runtimes (a ``python -I`` worker process, an interpreter in
a worker thread) actually run a model-written script in a restricted environment; the
model-facing workflow tool has one parameter schema whichever runtime runs it; "create a
subagent" fans out through the delegation capability. Also the fixed-script iteration
mode (fresh child per round, exactly four inputs).

Requirements: FLOW-01..03
Spec: SPEC.md section 10b
Suite: conformance/suite/test_flow.py
Golden: golden/flow/
"""

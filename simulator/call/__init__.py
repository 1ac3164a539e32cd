"""The tool-call contract. The structured error envelope (CALL-03) that every area returns
lives in ``capconf.simulator.core.envelope``; request stamping (CALL-01), synchronous
results and asynchronous hand-offs (CALL-02) and UI as tool output (CALL-04) come here.

Requirements: CALL-01..04
Spec: SPEC.md section 11
Suite: conformance/suite/test_call.py
Golden: golden/memory/
"""

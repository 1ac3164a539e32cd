"""The tool-call contract. The structured error envelope (CALL-03) that every area returns
lives in ``capconf.simulator.core.envelope``; request stamping (CALL-01, stamps), synchronous
results and asynchronous hand-offs (CALL-02) and UI as tool output (CALL-04) over a
namespace context are in contract, driven by ops.

Requirements: CALL-01..04
Spec: SPEC.md section 11a
Suite: conformance/suite/test_call.py conformance/suite/test_namespaces.py
Golden: golden/memory/ golden/namespaces/
"""

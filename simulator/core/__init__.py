"""Core pieces every area shares: name rules, diagnostics, the result envelope, mounted
tools, the dimension protocol, the world, and compiling a definition against a world.

Nothing here knows a particular area; the composition root (``capconf.simulator.areas``)
lists the dimensions, and ``core.agent`` walks them in catalog order.

Requirements: PROTO-02 CALL-03
Spec: SPEC.md section 2, 11
Suite: conformance/suite/test_protocol.py conformance/suite/test_call.py
Golden: golden/protocol/
"""

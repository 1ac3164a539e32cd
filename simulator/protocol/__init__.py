"""The driver protocol, sans-IO: the dispatcher (one request value in, one response value
out), the core ops, and the stdio framing at the edge. The session the ops share is
``capconf.simulator.compose.session``; the wire rules are ``capconf.simulator.core.wire``.

The dispatcher only collects op tables: each area keeps its own ``ops.py`` and
``op_tables`` lists them with their feature groups, which ``hello`` reports. It is the
one place that knows every area, and no area imports this package (``tests/project/test_layout.py``).

Requirements: PROTO-01..03 TEXT-01..02
Spec: SPEC.md section 2
Suite: conformance/suite/test_protocol.py conformance/suite/test_decisions.py
Golden: golden/protocol/
"""

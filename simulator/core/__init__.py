"""Core pieces every area shares: name rules, diagnostics, the result envelope, mounted
tools, the dimension protocol, nearest-name suggestions, script checks, the wire rules
(what JSON may cross the driver protocol, which executors and flows hold text to too).

Nothing here knows a particular area, and ``tests/project/test_layout.py`` holds it to that: no
module of ``core`` imports an area package. The composition (which dimensions exist, the
world, compiling a definition) is ``capconf.simulator.areas`` and
``capconf.simulator.compose``.

Requirements: CALL-03 PROTO-03
Spec: SPEC.md section 2
Suite: conformance/suite/test_call.py
Golden: golden/protocol/
"""

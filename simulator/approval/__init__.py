"""One approval decision for every agent: the published truth table over tier, action,
target and attendance, approval cards shown in the parent session with their origin,
their lifecycle (settled exactly once), and the session's chain at run time.

Requirements: APPR-01..05
Spec: SPEC.md section 9
Suite: conformance/suite/test_approval.py conformance/suite/test_approval_egress.py conformance/suite/test_second_sides.py
Golden: golden/approval/
"""

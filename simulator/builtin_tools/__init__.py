"""The built-in tools that are not a dimension's own (read, write, edit, bash, glob, grep):
their effects on the workspace, each gated by the one approval decision.

Requirements: APPR-01 APPR-03
Spec: SPEC.md section 9
Suite: conformance/suite/test_approval.py conformance/suite/test_call.py conformance/suite/test_approval_egress.py
Golden: golden/approval/
"""

"""The skills dimension: skill packages on disk, layered discovery (first layer wins), the
catalog section, use_skill and skill_search, provenance and reviewed amendments.

Requirements: SKILL-01..10
Spec: SPEC.md section 6
Suite: conformance/suite/test_skills.py
Golden: golden/skills/
"""

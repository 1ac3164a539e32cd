"""The skills dimension: skill packages on disk, layered discovery (first layer wins), the
catalog section, use_skill and skill_search, provenance and reviewed amendments,
preferences per task type, VM-type gates and feature-flag sections.

Requirements: SKILL-01..10
Spec: SPEC.md section 6
Suite: conformance/suite/test_skills.py conformance/suite/test_skills_prefs.py
Golden: golden/skills/
"""

"""The composition: the world a harness describes (``world``), a definition compiled
against it (``agent``: grants, catalog, prompt and mounted tools), and every diagnostic
kind any area declares (``diagnostic_catalog``, for SPEC.md's code table).

This is where the areas meet. It sits above the areas it composes (definition, tools,
prompt, and the dimensions ``capconf.simulator.areas`` lists) and below the areas that
serve ops on a compiled agent (editor, delegation, protocol); ``core`` knows none of it.

Requirements: PROTO-02 PROMPT-02
Spec: SPEC.md section 2, 5
Suite: conformance/suite/test_protocol.py conformance/cases/prompt.yaml
Golden: golden/definition/
"""

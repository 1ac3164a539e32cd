"""The composition: the world a harness describes (``world``), a definition compiled
against it (``agent``: grants, catalog, prompt and mounted tools), the session an op runs
in (``session``: the world, the live agents, each area's state, the argument readers),
live agents in it (``live_agents``: compiled from a request, spawned, a mounted tool
called), and every diagnostic kind any area declares (``diagnostic_catalog``).

This is where the areas meet. It sits above the areas it composes (definition, tools,
prompt, the dimensions ``capconf.simulator.areas`` lists) and is the ground every area's
``ops.py`` and the protocol stand on, so no area imports the protocol package and only
``protocol.op_tables`` knows every area's ops; ``core`` knows none of it.

Requirements: PROTO-02 PROMPT-02
Spec: SPEC.md section 2, 5
Suite: conformance/suite/test_protocol.py conformance/cases/prompt.yaml
Golden: golden/definition/
"""

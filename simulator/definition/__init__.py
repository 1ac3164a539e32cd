"""The subagent definition document: YAML or Markdown front matter loaded into located
values (refusing aliases, depth, size and type bombs), the declarations of the five
dimensions, parse and save modes, and writing a definition back out.

Requirements: DEF-01..07
Spec: SPEC.md section 3
Suite: conformance/cases/definition.yaml conformance/suite/test_definition.py conformance/suite/test_definition_builtins.py conformance/suite/test_definition_fidelity.py conformance/suite/test_properties.py
Golden: golden/definition/
"""

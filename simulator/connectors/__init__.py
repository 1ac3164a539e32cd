"""Connectors (seed 001): connector.yaml, CONNECTOR.md and manifest.yaml; action
permissions, quotas in units, the response guard, provider stops, undocumented commands,
failure discipline, the connection registry, gates and read-only sync.

The three files parse into values (model); permissions are a table of rules (permissions);
the guard is one pure function (guard); custom connectors are a table of endpoint rules
(custom); gates are a table (gates); the fake provider's scripted failures are values
(outcomes); one call, one sync pass and the registry are fixed orders of checks over
that state (runtime).

Requirements: CONN-01..14
Spec: SPEC.md section 11b
Suite: conformance/suite/test_connectors.py conformance/suite/test_connectors_state.py
Golden: golden/connectors/
"""

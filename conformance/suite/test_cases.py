"""Runs every data case under conformance/cases/ against the implementation."""

from __future__ import annotations

from typing import Any

import pytest

from capconf.conformance.cases import Case, check_case, default_world, load_cases
from capconf.conformance.harness import Harness

CASES = load_cases()
LAYOUT_RULES = {"PROMPT-01", "PROMPT-02"}  # the cases whose prompts are checked for layout


def _param(case: Case) -> Any:
    return pytest.param(case, id=case.id,
                        marks=[pytest.mark.case(case.id), pytest.mark.req(*case.requirements),
                               pytest.mark.uses(*case.uses)])


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case(impl: Harness, case: Case) -> None:
    world = {**default_world(), **case.world}
    impl.setup(**world)
    layout = bool(LAYOUT_RULES & set(case.requirements))
    if case.op == "parse":
        result = impl.parse(case.definition, mode=case.mode, filename=case.filename)
    elif case.op == "save":
        result = impl.save(case.definition, filename=case.filename)
        if result.get("document") is not None:
            # a saved document is checked by what it means, not by its formatting
            result = {**result, "resaved": impl.parse(result["document"],
                                                      filename=case.filename)}
    elif case.op == "prompt":
        result = impl.prompt(case.definition, filename=case.filename, layout=layout)
    else:
        raise AssertionError(f"case {case.id}: unknown op {case.op}")
    if any(k in case.expect for k in ("prompt", "parts", "prompt_endswith", "part_contains")) \
            and case.op != "prompt":
        # the prompt's own fields only: diagnostics stay those of the op the case names
        assembled = impl.prompt(case.definition, filename=case.filename, layout=layout)
        result = {**result, "prompt": assembled["prompt"], "parts": assembled["parts"]}
    problems = check_case(case, result)
    assert not problems, "\n".join(problems) + f"\n(case {case.id}: {case.title})"

"""The thread runtime's evaluator against CPython itself (the process runtime's ``exec``),
on generated scripts of the restricted subset: the same emitted values, the same end,
the same error code and line. Both run here in-process over a fake channel; the channel
and the processes are covered by tests/flow/test_flow_runtimes.py."""

from __future__ import annotations

import json
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.flow import interpreter, worker


class _Channel:
    """Answers every call (emit collects its value), with JSON on the way as on the wire."""

    def __init__(self) -> None:
        self.emitted: list[Any] = []

    def send(self, message: dict[str, Any]) -> None:
        json.dumps(message, sort_keys=True)

    def ask(self, message: dict[str, Any]) -> Any:
        message = json.loads(json.dumps(message, sort_keys=True))
        if message["call"] == "emit":
            self.emitted.append(message["value"])
        return None


def _both(script: str) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    cpython, mine = _Channel(), _Channel()
    end_c = worker.run(cast(worker.Channel, cpython), script)
    end_m = interpreter.run(cast(interpreter.QueueChannel, mine), script)
    key = ("end", "code", "line")
    return ((tuple(end_c.get(k) for k in key), cpython.emitted),
            (tuple(end_m.get(k) for k in key), mine.emitted))


NAMES = ("a", "b", "c")
atoms = st.one_of(st.integers(-5, 9).map(str), st.sampled_from(NAMES),
                  st.sampled_from(["'x'", "'ab'", "True", "None", "[1, 2]", "(3, 4)"]))


def _compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binop = st.tuples(inner, st.sampled_from(["+", "-", "*", "//", "%", "<", "==", "in",
                                              "and", "or"]), inner)
    return st.one_of(
        binop.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        inner.map(lambda e: f"(not {e})"),
        inner.map(lambda e: f"[{e}, {e}]"),
        inner.map(lambda e: f"len([{e}])"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.tuples(inner, st.integers(0, 4)).map(
            lambda t: f"[{t[0]} for i in range({t[1]}) if i % 2]"),
        inner.map(lambda e: f"{{'k': {e}}}['k']"),
        inner.map(lambda e: f"str({e})[0:2]"),
    )


expressions = st.recursive(atoms, _compound, max_leaves=6)
numbers = st.recursive(
    st.one_of(st.integers(-2, 3).map(str), st.sampled_from(["a", "b"])),
    lambda inner: st.tuples(inner, st.sampled_from(
        ["+", "-", "*", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=", "and", "or", "&",
         "|", "^", "<<"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    max_leaves=4)
statement = st.one_of(
    st.tuples(st.sampled_from(NAMES), expressions).map(lambda t: f"{t[0]} = {t[1]}"),
    expressions.map(lambda e: f"emit({e})"),
    st.lists(numbers, min_size=1, max_size=4).map(lambda es: f"emit([{', '.join(es)}])"),
    st.tuples(st.integers(0, 3), expressions).map(
        lambda t: f"for i in range({t[0]}):\n    emit({t[1]})"),
    st.tuples(expressions, expressions, expressions).map(
        lambda t: f"if {t[0]}:\n    emit({t[1]})\nelse:\n    emit({t[2]})"),
    st.sampled_from(NAMES).map(lambda n: f"{n} += 1"),
)
scripts = st.lists(statement, min_size=1, max_size=6).map(
    lambda body: "a = 1\nb = 2\nc = 'c'\n" + "\n".join(body) + "\n")


@settings(max_examples=400, deadline=None)
@given(scripts)
def test_the_evaluator_agrees_with_cpython(script: str) -> None:
    cpython, mine = _both(script)
    assert mine == cpython, script

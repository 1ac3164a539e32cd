"""Property tests (hypothesis) over the driver protocol.

Profiles: `ci` (derandomized, so a gate never flakes; the default) and `explore`
(`capconf run -- --hypothesis-profile=explore`, many more examples for hunting).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness, expect

WORLD = default_world()
REGISTERED: list[str] = WORLD["grantable"]
DIMENSION_TOOLS = {"use_skill", "skill_search", "kb_search", "mcp_search", "mcp_describe",
                   "mcp_call", "memory_write", "memory_read", "memory_search"}
PLAIN_TOOLS = [n for n in REGISTERED if n not in DIMENSION_TOOLS]


def ascii_fold(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


@st.composite
def case_spellings(draw: st.DrawFn, name: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    pairs = zip(name, flips, strict=True)
    return "".join(c.swapcase() if f and c.isascii() else c for c, f in pairs)


def _yaml_list(names: list[str]) -> str:
    return "[" + ", ".join(json.dumps(n) for n in names) + "]"


@pytest.mark.case("tool.property.every-case-spelling")
@pytest.mark.req("TOOL-02")
@given(data=st.data())
def test_every_case_spelling_resolves_to_canonical(impl: Harness, data: st.DataObject) -> None:
    impl.setup(**WORLD)
    names = data.draw(st.lists(st.sampled_from(PLAIN_TOOLS), min_size=1, max_size=4, unique=True))
    spelled = [data.draw(case_spellings(n)) for n in names]
    result = impl.parse(f"name: p\ndescription: p\ntools: {_yaml_list(spelled)}\nprompt: P.\n")
    assert result["tools"] == names, (spelled, result["tools"], result["diagnostics"])
    assert not [d for d in result["diagnostics"] if d["path"][:1] == ["tools"]]


_identifier = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,15}", fullmatch=True)


@pytest.mark.case("tool.property.unknown-never-silent")
@pytest.mark.req("DEF-06", "TOOL-03")
@given(known=st.lists(st.sampled_from(PLAIN_TOOLS), max_size=3, unique=True),
       unknown=st.lists(_identifier, min_size=1, max_size=3, unique_by=ascii_fold),
       data=st.data())
def test_unknown_names_always_reported_never_dropped(
        impl: Harness, known: list[str], unknown: list[str], data: st.DataObject) -> None:
    folded_registry = {ascii_fold(n) for n in REGISTERED}
    assume(all(ascii_fold(u) not in folded_registry for u in unknown))
    assume(all(ascii_fold(u) != "approvecard" for u in unknown))
    impl.setup(**WORLD)
    order = data.draw(st.permutations(known + unknown))
    result = impl.parse(f"name: p\ndescription: p\ntools: {_yaml_list(order)}\nprompt: P.\n")
    assert result["tools"] == [n for n in order if n in known]
    for index, name in enumerate(order):
        if name in unknown:
            located = [d for d in result["diagnostics"] if d["path"] == ["tools", index]]
            assert located, f"unknown tool {name!r} at tools[{index}] was not reported"
            assert all(d["severity"] in ("warning", "error") for d in located)
            assert all(name in d["message"] for d in located), located


_body_line = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                     max_size=40).map(lambda s: s.replace("---", "- -"))


def _normalized(body: str) -> str:
    lines = body.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip()


_UNDECLARED_FORMS = {
    "skills": ["", "skills: []", "skills:", "skills: null"],
    "mcp": ["", "mcp: {servers: []}", "mcp:", "mcp:\n  servers: []"],
    "knowledge": ["", "knowledge: []", "knowledge:"],
    "memory": ["", "memory: none", "memory:", "memory: None"],
}


@pytest.mark.case("prompt.property.undeclared-is-legacy")
@pytest.mark.req("PROMPT-03", "PROMPT-01")
@given(body_lines=st.lists(_body_line, min_size=1, max_size=6),
       tools=st.lists(st.sampled_from(PLAIN_TOOLS), max_size=4, unique=True),
       forms=st.fixed_dictionaries({k: st.sampled_from(v) for k, v in _UNDECLARED_FORMS.items()}),
       lead=st.sampled_from(["", "\n", "\n\n  \n"]), trail=st.sampled_from(["", "\n", "  \n\n"]))
def test_undeclared_dimensions_leave_the_legacy_prompt(
        impl: Harness, body_lines: list[str], tools: list[str], forms: dict[str, str],
        lead: str, trail: str) -> None:
    body = lead + "\n".join(body_lines) + trail
    assume(_normalized(body))
    impl.setup(**WORLD)
    front = ["name: legacy", "description: legacy", f"tools: {_yaml_list(tools)}"]
    front += [f for f in forms.values() if f]
    source = "---\n" + "\n".join(front) + "\n---\n" + body
    result = impl.prompt(source, filename="legacy.md", layout=True)
    # PROMPT-03 is relative: the same runtime without the undeclared/empty keys
    bare = "---\n" + "\n".join(front[:3]) + "\n---\n" + body
    expect(result["prompt"], impl.prompt(bare, filename="legacy.md")["prompt"],
           "PROMPT-03: an undeclared or empty dimension changes no byte of the prompt "
           f"(keys: {[f for f in forms.values() if f]})")
    expect([p["kind"] for p in result["parts"]], ["frame", "body"],
           "PROMPT-03: no catalog part for an undeclared or empty dimension")
    expect(result["parts"][-1]["text"], _normalized(body),
           "PROMPT-01: the body part is the body without surrounding blank lines")


@pytest.mark.case("def.property.save-round-trip")
@pytest.mark.req("DEF-04")
@given(tools=st.lists(st.sampled_from([t for t in PLAIN_TOOLS if t != "read"]), max_size=4,
                     unique=True),
       skills=st.none() | st.lists(_identifier, max_size=3, unique=True),
       servers=st.none() | st.lists(_identifier, max_size=3, unique=True),
       memory=st.sampled_from([None, "none", "private", "shared"]),
       markdown=st.booleans())
def test_save_round_trip_preserves_every_key(
        impl: Harness, tools: list[str], skills: list[str] | None,
        servers: list[str] | None, memory: str | None, markdown: bool) -> None:
    impl.setup(**WORLD)
    keys = ["name: rt", "description: round trip", f"tools: {_yaml_list([*tools, 'read'])}"]
    if skills is not None:
        keys.append(f"skills: {_yaml_list(skills)}")
    if servers is not None:
        keys.append(f"mcp:\n  servers: {_yaml_list(servers)}")
    keys.append("knowledge:\n  - {name: docs, glob: ./docs/**/*.md}")
    if memory is not None:
        keys.append(f"memory: {memory}")
    if markdown:
        source, filename = "---\n" + "\n".join(keys) + "\n---\nRound trip.\n", "rt.md"
    else:
        source, filename = "\n".join(keys) + "\nprompt: Round trip.\n", "rt.yaml"
    first = impl.parse(source, filename=filename)
    saved = impl.save(source, filename=filename)
    assert saved["saved"], saved["diagnostics"]
    second = impl.parse(saved["document"], filename=filename)
    assert second["definition"] == first["definition"]
    assert second["tools"] == first["tools"]

"""Points an implementer would otherwise have to guess (SPEC.md decides each in the
requirement it belongs to): each is pinned here by
behaviour (codes, paths, statuses, values), never by message wording.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness

WORLD = default_world()


def case(prefix: str, rows: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
    return [pytest.param(*values, id=suffix, marks=pytest.mark.case(f"{prefix}.{suffix}"))
            for suffix, values in rows]


def doc(*lines: str, prompt: str = "x") -> str:
    return "name: a\ndescription: d\n" + "".join(f"{line}\n" for line in lines) + \
        f"prompt: {prompt}\n"


def located(result: dict[str, Any], code: str) -> list[tuple[Any, ...]]:
    return [(d["path"], d["line"], d["column"]) for d in result["diagnostics"]
            if d["code"] == code]


def paths(result: dict[str, Any], code: str) -> list[Any]:
    """The paths of one code's diagnostics, sorted (their order in the list is free, g7)."""
    return sorted((d["path"] for d in result["diagnostics"] if d["code"] == code), key=str)


def statuses(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["declared"], r["status"]) for r in result["tool_resolution"]]


# --- PROTO-02: world.setup ---------------------------------------------------------------

@pytest.mark.case("proto.world.refused-setup-leaves-no-world")
@pytest.mark.req("PROTO-02")
def test_a_refused_world_setup_leaves_no_world(impl: Harness) -> None:
    """Bug: a refused setup keeps the previous world, so a harness that missed the refusal
    runs the next case against the last case's registry and agents."""
    impl.setup(**WORLD)
    impl.driver.request("agent.spawn", {"source": doc("tools: [read]")})
    # refused by PROTO-02 itself (a non-string name), not by a registry rule such as
    # TOOL-04's case conflict, which a runtime with exact-case names need not share
    error = impl.setup_error(grantable=["read", 7])
    assert error["code"] == "world_invalid"
    assert impl.driver.request_error("registry.list")["code"] == "no_world"
    assert impl.driver.request_error("definition.parse", {"source": doc()})["code"] == "no_world"


@pytest.mark.case("proto.world.not-grantable-alone")
@pytest.mark.req("PROTO-02", "TOOL-01")
def test_not_grantable_without_grantable_is_honoured(impl: Harness) -> None:
    """Bug: `not_grantable` read only together with `grantable`, silently replaced by the
    implementation's own list when given alone."""
    impl.setup(not_grantable=[{"name": "Deploy", "reason": "production is human-only"}])
    listed = impl.driver.request("registry.list")
    assert listed["not_grantable"] == [{"name": "Deploy", "reason": "production is human-only"}]
    parsed = impl.parse(doc("tools: [deploy, read]"))
    assert statuses(parsed) == [("deploy", "not-grantable"), ("read", "granted")]


# --- TOOL-03 / TOOL-04 / DEF-06: statuses of special names and repeats --------------------

@pytest.mark.case("tool.dimension-tool.with-dimension")
@pytest.mark.req("TOOL-03", "MEM-02")
def test_a_dimension_tool_listed_with_its_dimension_is_granted_and_mounted_once(
        impl: Harness) -> None:
    """Bug: the tool mounted twice (once from `tools`, once from the dimension), or at its
    `tools` position, or reported as a problem although it is harmless."""
    impl.setup(**WORLD)
    source = doc("tools: [memory_read, read]", "memory: private")
    parsed = impl.parse(source)
    assert statuses(parsed) == [("memory_read", "granted"), ("read", "granted")]
    assert parsed["tools"] == ["memory_read", "read"]
    assert not [d for d in parsed["diagnostics"] if d["path"][:1] == ["tools"]]
    names = [t["name"] for t in impl.mounted(source)["tools"]]
    assert names == ["read", "memory_write", "memory_read", "memory_search"]


@pytest.mark.case("tool.repeats.each-reported")
@pytest.mark.req("TOOL-04", "DEF-06", "TOOL-03")
def test_repeats_of_names_that_do_not_resolve_are_each_reported(impl: Harness) -> None:
    """Bug: a repeated unknown name reported as TOOL-DUPLICATE (it never resolved, so it
    repeats nothing granted) or dropped from the save."""
    impl.setup(**{**WORLD, "not_grantable": [{"name": "Deploy", "reason": "human-only"}]})
    source = doc("tools: [bogus, Bogus, deploy, Deploy, mcp__crm, mcp__crm, read, READ]")
    parsed = impl.parse(source)
    assert statuses(parsed) == [
        ("bogus", "unknown"), ("Bogus", "unknown"), ("deploy", "not-grantable"),
        ("Deploy", "not-grantable"), ("mcp__crm", "mcp-style"), ("mcp__crm", "mcp-style"),
        ("read", "granted"), ("READ", "duplicate")]
    # the diagnostics' order is free (g7): each code's paths, sorted
    assert paths(parsed, "TOOL-UNKNOWN") == [["tools", 0], ["tools", 1]]
    assert paths(parsed, "TOOL-NOT-GRANTABLE") == [["tools", 2], ["tools", 3]]
    assert paths(parsed, "TOOL-MCP-STYLE") == [["tools", 4], ["tools", 5]]
    assert paths(parsed, "TOOL-DUPLICATE") == [["tools", 7]]
    saved = impl.save(source)
    assert impl.parse(saved["document"])["definition"]["tools"] == [
        "bogus", "Bogus", "Deploy", "Deploy", "mcp__crm", "mcp__crm", "read"]


@pytest.mark.req("TOOL-03")
@pytest.mark.parametrize(("name", "status"), case("tool.mcp-style.classes", [
    ("prefix-server", ("mcp__crm", "mcp-style")), ("prefix-tool", ("mcp__crm__find", "mcp-style")),
    ("prefix-upper", ("MCP__crm", "mcp-style")), ("colon", ("crm:find", "mcp-style")),
    ("no-server", ("mcp__", "unknown")), ("underscore-server", ("mcp___crm", "unknown")),
    ("no-separator", ("mcpcrm", "unknown")), ("two-colons", ("a:b:c", "unknown"))]))
def test_what_counts_as_mcp_style(impl: Harness, name: str, status: str) -> None:
    """Bug: only `mcp__server__tool` recognised, or every name containing `mcp`."""
    impl.setup(**WORLD)
    assert statuses(impl.parse(doc(f"tools: ['{name}']"))) == [(name, status)]


# --- DEF-01 / DEF-06: names are text; null entries; null and empty values ----------------

@pytest.mark.req("DEF-01", "DEF-03")
@pytest.mark.parametrize(("line", "declared"), case("def.names-are-text", [
    ("bool-word", ("tools: yes", ["yes"])), ("number", ("tools: 5", ["5"])),
    ("date-entry", ("tools: [2024-01-01]", ["2024-01-01"])),
    ("octal-entry", ("tools: [017]", ["017"]))]))
def test_a_scalar_where_names_are_expected_is_its_text(impl: Harness, line: str,
                                                       declared: list[str]) -> None:
    """Bug: YAML 1.1 typing decides (`tools: yes` a boolean, a type error), so a runtime
    using a YAML 1.2 parser and one using 1.1 disagree on the same file."""
    impl.setup(**WORLD)
    parsed = impl.parse(doc(line))
    assert parsed["definition"]["tools"] == declared
    assert not located(parsed, "DEF-TYPE")
    assert [p for p, _, _ in located(parsed, "TOOL-UNKNOWN")] == [["tools", 0]]


@pytest.mark.case("def.knowledge.name-is-text")
@pytest.mark.req("DEF-01", "KB-01")
def test_a_numeric_knowledge_name_is_its_text(impl: Harness) -> None:
    impl.setup(**WORLD)
    parsed = impl.parse(doc("tools: [read]", "knowledge: [{name: 2024, glob: 'docs/*.md'}]"))
    assert parsed["definition"]["knowledge"] == [{"name": "2024", "glob": "docs/*.md"}]


@pytest.mark.req("DEF-06")
@pytest.mark.parametrize("entry", case("def.null-entry", [
    ("bare-dash", ("  -",)), ("tilde", ("  - ~",)), ("null-word", ("  - null",))]))
def test_a_null_list_entry_is_an_empty_entry(impl: Harness, entry: str) -> None:
    """Bug: a null entry read as the tool `null` or `None`, or a type error that blocks a
    save although `Read,,Write` only warns."""
    impl.setup(**WORLD)
    parsed = impl.parse(doc("tools:", "  - read", entry))
    assert parsed["definition"]["tools"] == ["read"]
    assert [(p, line) for p, line, _ in located(parsed, "DEF-EMPTY-ENTRY")] == [
        (["tools", 1], 5)]
    assert impl.save(doc("tools:", "  - read", entry))["saved"] is True


@pytest.mark.case("def.normalised.null-and-empty")
@pytest.mark.req("DEF-01", "PROMPT-03")
def test_null_and_empty_values_normalise_as_specified(impl: Harness) -> None:
    impl.setup(**WORLD)
    nulls = impl.parse("name: a\ndescription:\ntools:\nskills:\nmcp:\nknowledge:\nmemory:\n"
                       "prompt: x\n")["definition"]
    assert (nulls["description"], nulls["tools"], nulls["skills"], nulls["mcp"],
            nulls["knowledge"], nulls["memory"]) == (None, [], [], {"servers": []}, [], None)
    empty = impl.parse("name: a\ndescription: ''\nprompt: x\n")["definition"]
    assert (empty["description"], empty["tools"]) == ("", None)


# --- DEF-03: locations ------------------------------------------------------------------

@pytest.mark.case("def.locations.decided")
@pytest.mark.req("DEF-03", "DEF-05", "KB-08")
def test_locations_of_document_level_diagnostics(impl: Harness) -> None:
    """Bug: a document-level diagnostic located at an arbitrary token, or a made-up
    position for one that has no token."""
    impl.setup(**WORLD)
    absent = impl.parse("description: d\nprompt: x\n")
    assert located(absent, "DEF-MISSING-KEY") == [(["name"], 1, 1)]
    markdown = impl.parse("---\ndescription: d\n---\nbody\n")
    assert located(markdown, "DEF-MISSING-KEY") == [(["name"], 2, 1)]
    empty_value = impl.parse("name: a\ndescription:\nprompt: x\n")
    assert located(empty_value, "DEF-MISSING-KEY") == [(["description"], 2, 1)]
    assert located(impl.parse("name: a\ndescription: d\nprompt: ''\n"),
                   "DEF-EMPTY-BODY") == [(["prompt"], 3, 1)]
    assert located(impl.parse("name: a\ndescription: d\n"),
                   "DEF-EMPTY-BODY") == [(["prompt"], 1, 1)]
    assert located(impl.parse("---\nname: a\ndescription: d\n---\n"),
                   "DEF-EMPTY-BODY") == [([], 2, 1)]
    kb = impl.parse("name: a\ndescription: d\nknowledge: [{name: h, glob: 'd/*.md'}]\n"
                    "prompt: x\n")
    assert located(kb, "KB-REQUIRES-READ") == [(["knowledge"], 3, 13)]  # the first entry
    impl.setup(**{**WORLD, "grantable": None})
    assert located(impl.parse(doc()), "TOOL-LEGACY-FALLBACK") == [([], None, None)]


@pytest.mark.case("def.nested-keys.duplicate-and-unknown")
@pytest.mark.req("DEF-03", "DEF-06")
def test_duplicate_and_unknown_keys_inside_nested_mappings(impl: Harness) -> None:
    """Bug: only top-level keys checked, so a repeated `name` inside a knowledge entry or
    a second `servers` silently changes the grant."""
    impl.setup(**WORLD)
    parsed = impl.parse(doc("tools: [read]", "mcp: {servers: [a], servers: [b], extra: 1}",
                            "knowledge: [{name: h, glob: 'd/*.md', name: g, note: x}]"))
    # the diagnostics' order is free (g7): compared sorted by line and column
    assert sorted(located(parsed, "DEF-DUPLICATE-KEY"), key=lambda d: d[1:]) == [
        (["mcp", "servers"], 4, 21), (["knowledge", 0, "name"], 5, 39)]
    assert sorted(paths(parsed, "DEF-UNKNOWN-KEY"), key=str) == sorted(
        [["mcp", "extra"], ["knowledge", 0, "note"]], key=str)
    definition = parsed["definition"]
    assert definition["mcp"] == {"servers": ["a"]}
    assert definition["knowledge"] == [{"name": "h", "glob": "d/*.md"}]


# --- DEF-04: misspelled keys, extra values, key order -----------------------------------

MISSPELLED, UNKNOWN, FOREIGN = "DEF-MISSPELLED-KEY", "DEF-UNKNOWN-KEY", "DEF-FOREIGN-KEY"


@pytest.mark.parametrize(("key", "code"), case("def.misspelled-key.distance", [
    ("transposed", ("memroy", MISSPELLED)), ("two-off", ("skil", MISSPELLED)),
    ("short-one-off", ("nam", MISSPELLED)), ("alias", ("mcpServers", MISSPELLED)),
    ("three-off", ("toolsets", UNKNOWN)), ("far", ("colour", UNKNOWN)),
    ("foreign-model", ("model", FOREIGN)), ("foreign-color", ("color", FOREIGN)),
    ("other-runtime", ("temperature", UNKNOWN))]))
@pytest.mark.req("DEF-04", "DEF-06")
def test_misspelled_unknown_and_foreign_keys(impl: Harness, key: str, code: str) -> None:
    """Bug: a similarity ratio no other language reproduces, or an open-ended foreign list
    that makes the same file warn in one runtime and not in another."""
    impl.setup(**WORLD)
    parsed = impl.parse(doc(f"{key}: x"))
    found = [d["code"] for d in parsed["diagnostics"] if d["path"] == [key]]
    assert found == [code]


@pytest.mark.case("def.extra.yaml-1-2-values")
@pytest.mark.req("DEF-04", "DEF-06")
def test_extra_values_are_yaml_1_2_and_saved_unambiguously(impl: Harness) -> None:
    """Bug: a YAML 1.1 reading (`yes` -> true, `017` -> 15) that a JavaScript or Rust
    runtime does not share, and a save that writes `yes` so that readers disagree."""
    impl.setup(**WORLD)
    source = doc("flag: yes", "switch: on", "octal: 017", "real: 1.5", "word: 'true'",
                 "nothing: ~", "when: 2024-01-01")
    extra = impl.parse(source)["definition"]["extra"]
    assert extra == {"flag": "yes", "switch": "on", "octal": 17, "real": 1.5, "word": "true",
                     "nothing": None, "when": "2024-01-01"}
    saved = impl.save(source)["document"]
    assert impl.parse(saved)["definition"]["extra"] == extra
    as_yaml_1_1 = yaml.safe_load(saved)
    assert {k: as_yaml_1_1[k] for k in ("flag", "switch", "octal", "word")} == {
        "flag": "yes", "switch": "on", "octal": 17, "word": "true"}


@pytest.mark.case("def.save.key-order")
@pytest.mark.req("DEF-04")
def test_save_orders_keys_by_the_table_then_extras_as_written(impl: Harness) -> None:
    """Bug: keys sorted alphabetically or kept in source order, so two runtimes save the
    same definition differently; the body is last, after the kept keys."""
    impl.setup(**WORLD)
    source = ("zeta: 1\nmemory: none\ntools: [read]\nalpha: 2\ndescription: d\nname: a\n"
              "model: m\nprompt: x\n")
    saved = yaml.safe_load(impl.save(source)["document"])
    assert list(saved) == ["name", "description", "tools", "memory", "zeta", "alpha",
                           "model", "prompt"]


# --- DEF-03 vs the protocol: unreadable definitions -------------------------------------

@pytest.mark.req("DEF-03", "PROTO-03")
@pytest.mark.parametrize("source", case("def.unreadable.compiling-ops", [
    ("not-a-mapping", ("- a\n",)), ("syntax", ("name: [\n",))]))
def test_an_unreadable_definition_is_definition_invalid_for_compiling_ops(
        impl: Harness, source: str) -> None:
    """Bug: a crash or `bad_request` for an unreadable document, or a made-up prompt."""
    impl.setup(**WORLD)
    parsed = impl.parse(source)
    assert parsed["loaded"] is False and [d for d in parsed["diagnostics"]
                                          if d["severity"] == "error"]
    assert impl.save(source)["saved"] is False
    for op in ("prompt.assemble", "tools.mounted", "agent.spawn"):
        assert impl.driver.request_error(op, {"source": source})["code"] == \
            "definition_invalid", op


@pytest.mark.case("def.bad-but-readable.never-an-error")
@pytest.mark.req("DEF-03")
def test_a_bad_but_readable_definition_is_never_a_protocol_error(impl: Harness) -> None:
    impl.setup(**WORLD)
    source = "name: 'a b'\ndescription:\ntools: 5\nmemroy: private\nknowledge: 3\nprompt: ''\n"
    assert impl.parse(source)["loaded"] is True
    impl.prompt(source)
    impl.mounted(source)
    assert impl.driver.request("agent.spawn", {"source": source})["agent"]


# --- PROMPT-01: empty frame and empty body -----------------------------------------------

@pytest.mark.req("PROMPT-01", "PROMPT-03")
@pytest.mark.parametrize(("frame", "body", "kinds", "prompt"), case("prompt.empty-parts", [
    ("empty-body", ("F.", "''", ["frame"], "F.\n")),
    ("empty-frame", ("", "B.", ["body"], "B.\n")),
    ("blank-frame", ("\n\n", "B.", ["body"], "B.\n")),
    ("both-empty", ("", "''", [], ""))]))
def test_an_empty_frame_or_body_is_left_out(impl: Harness, frame: str, body: str,
                                            kinds: list[str], prompt: str) -> None:
    """Bug: an empty part kept, so the prompt starts or ends with a stray blank line."""
    impl.setup(**{**WORLD, "frame": frame})
    result = impl.prompt(doc(prompt=body), layout=True)
    assert [p["kind"] for p in result["parts"]] == kinds
    assert result["prompt"] == prompt

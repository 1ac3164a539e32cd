"""Unit and property tests of SKILL-09 (preferences, the offer) and SKILL-10 (VM gates,
feature-flag sections): the pure functions, the world keys, and the ops in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.protocol.dispatcher import Dispatcher
from capconf.simulator.skills.flags import (
    FLAG_RULES,
    MARKER_RE,
    FlagProblemCode,
    SectionFate,
    select_sections,
)
from capconf.simulator.skills.gating import GateReason, VmType, gate_reason
from capconf.simulator.skills.preferences import (
    COMPLETED_TRANSACTIONS,
    EVENT_TABLE,
    OfferReason,
    Preference,
    PreferenceKind,
    PreferenceState,
    TaskEvent,
    decide_offer,
)
from capconf.simulator.skills.world import parse_skill_world

# --------------------------------------------------------------------------- flags


def test_no_markers_is_the_identity() -> None:
    for body in ("", "a", "a\n", "a\n\nb\n", "<!-- just a comment -->\nx\n", "\n\n"):
        sel = select_sections(body, {"x": "v1"})
        assert (sel.text, sel.sections, sel.problems) == (body, (), ())


def test_active_version_kept_other_dropped_and_lines_reported() -> None:
    body = ("a\n<!-- f-v1-only -->\none\n<!-- /f-v1-only -->\n"
            "<!--f-v2-only-->\ntwo\n<!-- /f-v2-only -->\nz\n")
    sel = select_sections(body, {"f": "v2"}, first_line=4)
    assert sel.text == "a\ntwo\nz\n"
    assert [(s.flag, s.open_line, s.close_line, s.fate) for s in sel.sections] == [
        ("f-v1-only", 5, 7, SectionFate.DROPPED_OTHER_VERSION),
        ("f-v2-only", 8, 10, SectionFate.KEPT)]


def test_marker_tolerates_spaces_tabs_and_crlf_but_not_text_around() -> None:
    assert MARKER_RE.match("  <!--\tx-v1-only  -->\t\r")
    assert MARKER_RE.match("<!-- / x-v1-only -->")
    assert not MARKER_RE.match("see <!-- x-v1-only -->")
    assert not MARKER_RE.match("<!-- x-v1-only --> and more")
    assert not MARKER_RE.match("<!-- x v1-only -->")


def test_a_close_of_an_outer_section_closes_the_inner_ones_as_unterminated() -> None:
    body = "<!-- a-v1-only -->\n<!-- b-v1-only -->\nin\n<!-- /a-v1-only -->\nout\n"
    sel = select_sections(body, {"a": "v1", "b": "v1"})
    assert sel.text == "in\nout\n"
    assert [(p.code, p.flag, p.line) for p in sel.problems] == [
        (FlagProblemCode.UNTERMINATED, "b-v1-only", 2)]
    assert [(s.flag, s.close_line) for s in sel.sections] == [("a-v1-only", 4),
                                                             ("b-v1-only", None)]


def test_an_inner_section_of_a_removed_one_is_removed_with_it() -> None:
    body = "<!-- a-v2-only -->\n<!-- b-v1-only -->\nin\n<!-- /b-v1-only -->\n<!-- /a-v2-only -->\n"
    sel = select_sections(body, {"a": "v1", "b": "v1"})
    assert sel.text == ""
    assert [s.fate for s in sel.sections] == [SectionFate.DROPPED_OTHER_VERSION,
                                              SectionFate.DROPPED_ENCLOSING]


def test_same_flag_nested_closes_the_innermost_first() -> None:
    body = ("<!-- a-v1-only -->\nx\n<!-- a-v1-only -->\ny\n<!-- /a-v1-only -->\nz\n"
            "<!-- /a-v1-only -->\n")
    sel = select_sections(body, {"a": "v1"})
    assert (sel.text, sel.problems) == ("x\ny\nz\n", ())
    assert [(s.open_line, s.close_line) for s in sel.sections] == [(1, 7), (3, 5)]


def test_flag_rules_table_has_a_row_per_fate_and_problem() -> None:
    text = " ".join(effect for _, effect in FLAG_RULES)
    for fate in SectionFate:
        assert fate is SectionFate.KEPT or f"`{fate}`" in text
    for code in FlagProblemCode:
        assert f"`{code}`" in text


LINE = st.one_of(
    st.sampled_from(["<!-- a-v1-only -->", "<!-- /a-v1-only -->", "<!-- b-v2-only -->",
                     "<!-- /b-v2-only -->", "<!-- beta-only -->", "<!-- /beta-only -->",
                     "<!-- a-v2-only -->", "<!-- /a-v2-only -->", ""]),
    st.text(alphabet="xyz <!->/\r", max_size=12))


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=25), st.booleans(),
       st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["v1", "v2"])))
def test_property_selection_never_fails_and_keeps_a_subsequence(
        lines: list[str], final_newline: bool, active: dict[str, str]) -> None:
    """Whatever the markup: no exception, no marker line in the output, the kept lines
    are a subsequence of the non-marker lines, every problem has a line in range."""
    body = "\n".join(lines) + ("\n" if final_newline else "")
    sel = select_sections(body, active, first_line=3)
    out = sel.text[:-1].split("\n") if sel.text.endswith("\n") else sel.text.split("\n")
    assert not any(MARKER_RE.match(ln) for ln in out if sel.text)
    source = body[:-1].split("\n") if body.endswith("\n") else body.split("\n")
    plain = iter([ln for ln in source if not MARKER_RE.match(ln)])
    assert all(any(ln == p for p in plain) for ln in out if sel.text)
    for problem in sel.problems:
        assert 3 <= problem.line < 3 + len(source)
    if not any(MARKER_RE.match(ln) for ln in lines):
        assert sel.text == body


# --------------------------------------------------------------------------- offer


def test_only_completed_orders_and_bookings_count() -> None:
    assert {TaskEvent.ORDER_COMPLETED, TaskEvent.BOOKING_COMPLETED} == COMPLETED_TRANSACTIONS
    assert {e for e, _, _ in EVENT_TABLE} == set(TaskEvent)


def test_offer_decision_order() -> None:
    state = PreferenceState()
    decision, state = decide_offer(state, "mail", TaskEvent.QUOTE)
    assert (decision.offer, decision.reason, state.offers_asked) == (
        False, OfferReason.NOT_A_COMPLETED_TRANSACTION, ())
    decision, state = decide_offer(state, "mail", TaskEvent.ORDER_COMPLETED)
    assert (decision.offer, state.offers_asked) == (True, ("mail",))
    decision, state = decide_offer(state, " MAIL ", TaskEvent.BOOKING_COMPLETED)
    assert decision.reason is OfferReason.ALREADY_ASKED
    state = state.with_preference(Preference("Mail", PreferenceKind.SKILL, "gmail"))
    decision, _ = decide_offer(state, "mail", TaskEvent.ORDER_COMPLETED)
    assert decision.reason is OfferReason.ALREADY_SET


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["mail", "MAIL", "travel", "food"]),
                          st.sampled_from(list(TaskEvent))), max_size=30))
def test_property_at_most_one_offer_per_task_type_and_only_after_an_order(
        events: list[tuple[str, TaskEvent]]) -> None:
    state = PreferenceState()
    offered: list[str] = []
    for task_type, event in events:
        decision, state = decide_offer(state, task_type, event)
        if decision.offer:
            assert event in COMPLETED_TRANSACTIONS
            offered.append(task_type.lower())
    assert len(offered) == len(set(offered))
    completed = {t.lower() for t, e in events if e in COMPLETED_TRANSACTIONS}
    assert set(offered) == completed


def test_one_preference_per_task_type_and_preferred_for() -> None:
    state = PreferenceState()
    state = state.with_preference(Preference("mail", PreferenceKind.SKILL, "gmail"))
    state = state.with_preference(Preference("chat", PreferenceKind.SKILL, "Gmail"))
    state = state.with_preference(Preference("MAIL", PreferenceKind.CONNECTOR, "gmail"))
    assert [p.task_type for p in state.preferences] == ["chat", "MAIL"]
    assert state.preferred_for(PreferenceKind.SKILL, "GMAIL") == ("chat",)
    assert state.preferred_for(PreferenceKind.CONNECTOR, "gmail") == ("MAIL",)


# --------------------------------------------------------------------------- gates


def test_gate_only_in_a_confidential_vm_and_only_when_false() -> None:
    assert gate_reason({"confidential_vm": False}, VmType.CONFIDENTIAL) is (
        GateReason.CONFIDENTIAL_VM)
    assert gate_reason({"confidential_vm": False}, VmType.STANDARD) is None
    assert gate_reason({"confidential_vm": True}, VmType.CONFIDENTIAL) is None
    assert gate_reason({}, VmType.CONFIDENTIAL) is None


# --------------------------------------------------------------------------- world keys


@pytest.mark.parametrize("args,path", [
    ({"vm_type": "cvm"}, ("skills", "vm_type")),
    ({"feature_versions": {"catalog-search": "2"}}, ("skills", "feature_versions",
                                                      "catalog-search")),
    ({"feature_versions": {"bad name": "v1"}}, ("skills", "feature_versions", "bad name")),
    ({"feature_versions": []}, ("skills", "feature_versions")),
    ({"preferences": {}}, ("skills", "preferences")),
    ({"preferences": [{"task_type": "a", "kind": "tool", "name": "x"}]},
     ("skills", "preferences", 0, "kind")),
    ({"preferences": [{"task_type": " ", "kind": "skill", "name": "x"}]},
     ("skills", "preferences", 0, "task_type")),
    ({"preferences": [{"task_type": "a", "kind": "skill", "name": "x", "why": 1}]},
     ("skills", "preferences", 0, "why")),
    ({"preferences": [{"task_type": "a", "kind": "skill", "name": "x"},
                      {"task_type": "A", "kind": "skill", "name": "y"}]},
     ("skills", "preferences", 1, "task_type")),
    ({"offers_asked": ["a", 3]}, ("skills", "offers_asked", 1)),
])
def test_bad_world_keys_are_refused_with_a_path(tmp_path: Path, args: dict[str, Any],
                                                path: tuple[Any, ...]) -> None:
    with pytest.raises(WorldSetupError) as err:
        parse_skill_world(args, tmp_path)
    assert err.value.path == path


def test_world_keys_parse(tmp_path: Path) -> None:
    world = parse_skill_world({"vm_type": "confidential",
                               "feature_versions": {"b": "v2", "a": "v10"},
                               "preferences": [{"task_type": " mail ", "kind": "connector",
                                                "name": "gmail"}],
                               "offers_asked": ["travel"]}, tmp_path)
    assert world.vm_type is VmType.CONFIDENTIAL
    assert world.feature_versions == (("a", "v10"), ("b", "v2"))
    assert world.preference_state.preferences == (
        Preference("mail", PreferenceKind.CONNECTOR, "gmail"),)
    assert world.preference_state.offers_asked == ("travel",)


# --------------------------------------------------------------------------- ops


def _request(d: Dispatcher, op: str, args: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = d.handle({"id": 1, "op": op, "args": args})
    return out


def test_ops_refuse_bad_arguments_with_a_path(tmp_path: Path) -> None:
    d = Dispatcher()
    assert _request(d, "world.setup", {"workspace": str(tmp_path)})["ok"]
    bad = _request(d, "skills.offer_preference", {"task_type": "mail", "event": "paid"})
    assert (bad["ok"], bad["error"]["code"], bad["error"]["path"]) == (
        False, "bad_request", ["args", "event"])
    bad = _request(d, "skills.set_preferred", {"task_type": "", "kind": "skill", "name": "x"})
    assert bad["error"]["path"] == ["args", "task_type"]
    ok = _request(d, "skills.offer_preference", {"task_type": "mail",
                                                 "event": "booking-completed"})
    assert ok["result"]["offer"] is True
    state = _request(d, "skills.preferences", {})["result"]
    assert state == {"preferences": [], "offers_asked": ["mail"]}
    # a new world starts from its own state
    assert _request(d, "world.setup", {"workspace": str(tmp_path)})["ok"]
    assert _request(d, "skills.preferences", {})["result"]["offers_asked"] == []


def test_preference_status_per_agent(tmp_path: Path) -> None:
    layer = tmp_path / "sys"
    for folder, meta in (("a", "name: alpha\ndescription: A\n"),
                         ("s", "name: shut\ndescription: S\navailability:\n"
                               "  confidential_vm: false\n")):
        (layer / folder).mkdir(parents=True)
        (layer / folder / "skill.yaml").write_text(meta, encoding="utf-8")
        (layer / folder / "SKILL.md").write_text("body\n", encoding="utf-8")
    d = Dispatcher()
    prefs = [{"task_type": t, "kind": "skill", "name": n} for t, n in
             (("t1", "alpha"), ("t2", "ghost"), ("t3", "shut"), ("t4", "other"))]
    prefs.append({"task_type": "t5", "kind": "connector", "name": "gmail"})
    assert _request(d, "world.setup", {"workspace": str(tmp_path), "skills": {
        "layers": {"system": str(layer)}, "vm_type": "confidential",
        "preferences": prefs}})["ok"]
    spawn = _request(d, "agent.spawn", {"source": "name: h\ndescription: d\n"
                                                  "skills: [alpha, ghost, shut]\nprompt: p\n"})
    agent = spawn["result"]["agent"]
    got = _request(d, "skills.preferences", {"agent": agent})["result"]["preferences"]
    assert [(p["name"], p["status"], p["reason"]) for p in got] == [
        ("alpha", "active", None), ("ghost", "not-found", None),
        ("shut", "unavailable", "confidential-vm"), ("other", "not-granted", None),
        ("gmail", "recorded", None)]

"""Skills (SKILL-09, SKILL-10): preferred skills per task type and the once-only offer;
VM-type gates and feature-flag sections inside SKILL.md.

Nothing here runs a model. The harness reports how a task ended
(`skills.offer_preference`) and the user's choice (`skills.set_preferred`); it sets the
session's VM type and the active feature versions in `world.setup`. Cases check
structure (flags, order, reasons, which lines reach the model), never the reference's
sentences: the marker of a preferred entry is checked as "the entry is marked", not as
text. Each test names the bug it is for.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.harness import (
    Harness,
    SpecMismatch,
    codes,
    expect,
    expect_catalog,
    expect_true,
)
from capconf.conformance.suite.test_skills import Skills, package, single


@pytest.fixture
def sk(impl: Harness, tmp_path: Path) -> Skills:
    return Skills(impl, tmp_path)


def row_of(sk: Skills, agent: str, name: str) -> dict[str, Any]:
    rows = [r for r in sk.resolved(agent) if r["name"] == name]
    expect_true(len(rows) == 1, f"skills.resolved must report skill {name!r} once", rows)
    return rows[0]


def offer(sk: Skills, task_type: str, event: str) -> dict[str, Any]:
    out: dict[str, Any] = sk.impl.driver.request(
        "skills.offer_preference", {"task_type": task_type, "event": event})
    return out


def set_preferred(sk: Skills, task_type: str, kind: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = sk.impl.driver.request(
        "skills.set_preferred", {"task_type": task_type, "kind": kind, "name": name})
    return out


def entry_segment(section: str, name: str, names: list[str]) -> str:
    """The text of one catalog entry: from its name to the next listed name."""
    start = section.index(name)
    ends = [section.index(n, start + len(name)) for n in names
            if n != name and n in section[start + len(name):]]
    return section[start:min(ends, default=len(section))]


def mail_world(sk: Skills) -> None:
    single(sk.layer("system"), "inbox", "inbox-helper", "Read and sort the inbox")
    package(sk.layer("system"), "gmail", "name: gmail-flow\ndescription: Gmail procedures\n"
            "include_in_prompt: true\n")
    package(sk.layer("system"), "outlook", "name: outlook-flow\n"
            "description: Outlook procedures\ninclude_in_prompt: false\n")


# --------------------------------------------------------------------------- SKILL-09


@pytest.mark.case("skill.preference.first-and-marked")
@pytest.mark.req("SKILL-09")
def test_a_preferred_skill_is_first_and_marked(sk: Skills) -> None:
    """Catches a preference that is recorded but not shown first, not marked, or not
    listed when its skill has include_in_prompt: false."""
    mail_world(sk)
    names = ["inbox-helper", "gmail-flow", "outlook-flow"]
    same_place = ["gmail-flow", "inbox-helper"]  # first in both catalogs: only a marker differs
    sk.setup()
    plain = sk.section(same_place)
    sk.setup(preferences=[{"task_type": "email", "kind": "skill", "name": "gmail-flow"},
                          {"task_type": "calendar", "kind": "skill", "name": "outlook-flow"}])
    agent = sk.spawn(names)
    gmail = row_of(sk, agent, "gmail-flow")
    expect((gmail["preferred"], gmail["preferred_for"], gmail["listed"]),
           (True, ["email"], True), "SKILL-09: the preferred skill is flagged for its task type")
    outlook = row_of(sk, agent, "outlook-flow")
    expect((outlook["preferred"], outlook["preferred_for"], outlook["listed"]),
           (True, ["calendar"], True),
           "SKILL-09: a preferred skill is always listed, even with include_in_prompt: false")
    inbox = row_of(sk, agent, "inbox-helper")
    expect((inbox["preferred"], inbox["preferred_for"]), (False, []),
           "SKILL-09: a skill nobody prefers is not flagged")
    section = sk.section(names)
    expect_catalog(section, [("gmail-flow", "Gmail procedures"),
                             ("outlook-flow", "Outlook procedures"),
                             ("inbox-helper", "Read and sort the inbox")],
                   "SKILL-09: preferred entries come first (declaration order among them)")
    marked = sk.section(same_place)
    assert marked is not None and plain is not None
    expect_true(entry_segment(marked, "gmail-flow", same_place)
                != entry_segment(plain, "gmail-flow", same_place),
                "SKILL-09: a preferred entry carries a marker (its catalog entry differs from "
                "the same skill's entry, at the same place, when nothing prefers it)",
                entry_segment(marked, "gmail-flow", same_place))
    hits = sk.call(agent, "skill_search", {"query": "gmail"})["content"]["results"]
    expect([(h["name"], h["preferred"]) for h in hits], [("gmail-flow", True)],
           "SKILL-09: search reports the preference too")


@pytest.mark.case("skill.preference.offer-once-per-task-type")
@pytest.mark.req("SKILL-09")
def test_the_offer_is_made_at_most_once_per_task_type(sk: Skills) -> None:
    """Catches an offer asked again after every order, or once per session for all task
    types together, or task types compared case-sensitively."""
    sk.setup()
    first = offer(sk, "email", "order-completed")
    expect((first["offer"], first["reason"]), (True, "offered"),
           "SKILL-09: the first completed order of a task type may be followed by the offer")
    again = offer(sk, "email", "order-completed")
    expect((again["offer"], again["reason"]), (False, "already-asked"),
           "SKILL-09: the offer is asked at most once per task type")
    expect(offer(sk, "EMAIL", "booking-completed")["offer"], False,
           "SKILL-09: task types compare ASCII case-insensitively")
    other = offer(sk, "travel", "booking-completed")
    expect((other["offer"], other["reason"]), (True, "offered"),
           "SKILL-09: another task type has its own one offer")
    state = sk.impl.driver.request("skills.preferences", {})
    expect(state["offers_asked"], ["email", "travel"],
           "SKILL-09: the task types asked are recorded in the order asked")


@pytest.mark.case("skill.preference.offer-only-after-real-order")
@pytest.mark.req("SKILL-09")
@pytest.mark.parametrize("event", ["search", "quote", "order-failed", "order-cancelled",
                                   "task-completed"])
def test_a_search_or_a_quote_does_not_earn_the_offer(sk: Skills, event: str) -> None:
    """Catches the offer after a mere search or quote, and a non-offer that still uses up
    the task type's one offer."""
    sk.setup()
    got = offer(sk, "shopping", event)
    expect((got["offer"], got["reason"]), (False, "not-a-completed-transaction"),
           f"SKILL-09: `{event}` is not a completed order or booking")
    expect(sk.impl.driver.request("skills.preferences", {})["offers_asked"], [],
           "SKILL-09: no offer was made, so none is recorded")
    expect(offer(sk, "shopping", "order-completed")["offer"], True,
           "SKILL-09: the later real order still earns the one offer")


@pytest.mark.case("skill.preference.offer-not-when-set-or-asked-before")
@pytest.mark.req("SKILL-09")
def test_no_offer_when_already_set_or_asked_in_an_earlier_session(sk: Skills) -> None:
    """Catches an offer for a task type that already has a preference, or one that forgets
    the offers recorded in the world (an earlier session)."""
    sk.setup(offers_asked=["travel"])
    expect(offer(sk, "Travel", "booking-completed")["reason"], "already-asked",
           "SKILL-09: offers made before (world `offers_asked`) count")
    got = set_preferred(sk, "email", "connector", "gmail")
    expect((got["preference"], got["replaced"]),
           ({"task_type": "email", "kind": "connector", "name": "gmail"}, None),
           "SKILL-09: set_preferred records the preference")
    expect(offer(sk, "email", "order-completed")["reason"], "already-set",
           "SKILL-09: no offer for a task type that already has a preference")
    again = set_preferred(sk, "EMAIL", "connector", "outlook")
    expect(again["replaced"], {"task_type": "email", "kind": "connector", "name": "gmail"},
           "SKILL-09: one preference per task type; setting another replaces it")
    expect(sk.impl.driver.request("skills.preferences", {})["preferences"],
           [{"task_type": "EMAIL", "kind": "connector", "name": "outlook"}],
           "SKILL-09: the replaced preference is gone")


@pytest.mark.case("skill.preference.set-shows-in-later-spawns")
@pytest.mark.req("SKILL-09")
def test_a_preference_set_in_the_session_pins_later_agents(sk: Skills) -> None:
    """Catches set_preferred that is recorded but never reaches the catalog."""
    mail_world(sk)
    sk.setup()
    names = ["gmail-flow", "outlook-flow"]
    before = sk.spawn(names)
    set_preferred(sk, "email", "skill", "outlook-flow")
    after = sk.spawn(names)
    expect(row_of(sk, after, "outlook-flow")["preferred_for"], ["email"],
           "SKILL-09: an agent spawned after set_preferred has the preference")
    expect(row_of(sk, before, "outlook-flow")["listed"], False,
           "SKILL-09: an agent's catalog is fixed when it is spawned")
    expect_catalog(sk.section(names), [("outlook-flow",), ("gmail-flow",)],
                   "SKILL-09: the preferred skill is listed first")


@pytest.mark.case("skill.preference.grants-nothing")
@pytest.mark.req("SKILL-09", "SKILL-07")
def test_a_preference_or_amendment_grants_nothing(sk: Skills) -> None:
    """Catches a preferred-but-undeclared skill that becomes listed, searchable or
    loadable, and a preference or amendment that mounts a tool."""
    mail_world(sk)
    gmail_md = sk.layer("system") / "gmail" / "SKILL.md"
    reviewed = "sha256:" + hashlib.sha256(gmail_md.read_bytes()).hexdigest()
    sk.setup()
    bare = sk.impl.mounted(sk.definition(["inbox-helper"]))["tools"]
    sk.setup(preferences=[{"task_type": "email", "kind": "skill", "name": "gmail-flow"},
                          {"task_type": "chat", "kind": "connector", "name": "slack"}],
             amendments=[{"skill": "gmail-flow", "reviewed_hash": reviewed,
                          "text": "You may send mail without approval.\n"}])
    expect([t["name"] for t in sk.impl.mounted(sk.definition(["inbox-helper"]))["tools"]],
           [t["name"] for t in bare],
           "SKILL-09: preferences and amendments mount no tool")
    agent = sk.spawn(["inbox-helper"])
    out = sk.call(agent, "use_skill", {"name": "gmail-flow"})
    expect((out["ok"], out.get("error_code")), (False, "SKILL-NOT-GRANTED"),
           "SKILL-09: a preferred skill that is not declared stays not granted")
    expect(sk.call(agent, "skill_search", {"query": "gmail"})["content"]["results"], [],
           "SKILL-09: a preferred, undeclared skill is not searchable")
    expect_catalog(sk.section(["inbox-helper"]), [("inbox-helper",)],
                   "SKILL-09: a preferred, undeclared skill is not listed",
                   absent=["gmail-flow"])
    expect([r["name"] for r in sk.resolved(agent)], ["inbox-helper"],
           "SKILL-09: the preference adds no resolved skill")
    statuses = {p["name"]: p["status"] for p in sk.impl.driver.request(
        "skills.preferences", {"agent": agent})["preferences"]}
    expect(statuses.get("gmail-flow"), "not-granted",
           "SKILL-09: the preference reports that its skill is not granted to this agent")
    assert "SKILL-PIN-NOT-GRANTED" in codes(sk.impl.parse(sk.definition(["inbox-helper"])))


@pytest.mark.case("skill.preference.does-not-lift-a-gate")
@pytest.mark.req("SKILL-09", "SKILL-10")
def test_a_preferred_skill_closed_in_this_vm_stays_closed(sk: Skills) -> None:
    """Catches a preference that re-lists or unlocks a skill a VM gate closed."""
    package(sk.layer("system"), "shop", "name: shopify-flow\ndescription: Shopify store\n"
            "availability:\n  confidential_vm: false\n")
    sk.setup(vm_type="confidential",
             preferences=[{"task_type": "store", "kind": "skill", "name": "shopify-flow"}])
    agent = sk.spawn(["shopify-flow"])
    row = row_of(sk, agent, "shopify-flow")
    expect((row["listed"], row["available"]), (False, False),
           "SKILL-09/10: a gate beats a preference")
    out = sk.call(agent, "use_skill", {"name": "shopify-flow"})
    expect((out["ok"], out.get("error_code")), (False, "SKILL-UNAVAILABLE"),
           "SKILL-10: a gated skill is not loadable, preferred or not")
    [pref] = sk.impl.driver.request("skills.preferences", {"agent": agent})["preferences"]
    expect((pref["status"], pref["reason"]), ("unavailable", "confidential-vm"),
           "SKILL-09: the preference reports why its skill cannot be used here")


# --------------------------------------------------------------------------- SKILL-10


def vm_world(sk: Skills) -> list[str]:
    package(sk.layer("system"), "shop", "name: shopify-flow\ndescription: Shopify store "
            "orders\navailability:\n  confidential_vm: false\n")
    package(sk.layer("system"), "safe", "name: ledger\ndescription: Ledger store totals\n"
            "availability:\n  confidential_vm: true\n")
    single(sk.layer("system"), "plain", "notes", "Store notes")
    return ["shopify-flow", "ledger", "notes"]


@pytest.mark.case("skill.gate.confidential-vm-closed")
@pytest.mark.req("SKILL-10")
def test_a_skill_not_for_confidential_vms_is_closed_there(sk: Skills) -> None:
    """Catches a gated skill that is listed, found by search, or loadable by name even
    though the catalog hides it; and a gate without a reason. Also a closed skill revealed
    elsewhere: in the `granted` list of a SKILL-NOT-GRANTED refusal, or in `unavailable`
    for a query that shares no token with its name and description."""
    names = vm_world(sk)
    sk.setup(vm_type="confidential")
    agent = sk.spawn(names)
    row = row_of(sk, agent, "shopify-flow")
    expect((row["listed"], row["available"], row["unavailable_reason"]),
           (False, False, "confidential-vm"), "SKILL-10: the gate and its reason are reported")
    expect_catalog(sk.section(names), [("ledger",), ("notes",)],
                   "SKILL-10: a gated skill is not listed", absent=["shopify-flow"])
    out = sk.call(agent, "use_skill", {"name": "shopify-flow"})
    expect((out["ok"], out.get("error_code"), (out.get("error_detail") or {}).get("reason")),
           (False, "SKILL-UNAVAILABLE", "confidential-vm"),
           "SKILL-10: loading a gated skill by name is refused with its reason")
    ref = sk.call(agent, "use_skill", {"name": "shopify-flow", "reference": "SKILL.md"})
    expect((ref["ok"], ref.get("error_code")), (False, "SKILL-UNAVAILABLE"),
           "SKILL-10: nor can its files be read as references")
    found = sk.call(agent, "skill_search", {"query": "store"})["content"]
    expect(sorted(h["name"] for h in found["results"]), ["ledger", "notes"],
           "SKILL-10: search does not find a gated skill")
    expect([(u["name"], u["reason"]) for u in found["unavailable"]],
           [("shopify-flow", "confidential-vm")],
           "SKILL-10: search says which matching skill is closed here, and why")
    unrelated = sk.call(agent, "skill_search", {"query": "ledger totals"})["content"]
    expect(unrelated["unavailable"], [],
           "SKILL-10: a closed skill is named in `unavailable` only when its name + "
           "description shares a token with the query")
    refused = sk.call(agent, "use_skill", {"name": "payroll"})
    expect((refused["ok"], refused.get("error_code")), (False, "SKILL-NOT-GRANTED"),
           "SKILL-01: an undeclared skill is not granted")
    expect(sorted((refused.get("error_detail") or {}).get("granted") or []),
           ["ledger", "notes"],
           "SKILL-10: the `granted` list of a SKILL-NOT-GRANTED refusal names only open "
           "skills")
    expect_true("SKILL-GATED" in codes(sk.impl.parse(sk.definition(names))),
                "SKILL-10: the gate is reported as a diagnostic")


@pytest.mark.case("skill.gate.standard-vm-open")
@pytest.mark.req("SKILL-10")
def test_the_same_skill_is_open_outside_a_confidential_vm(sk: Skills) -> None:
    """Catches a gate applied in every VM, or to skills whose availability allows it."""
    names = vm_world(sk)
    sk.setup()
    agent = sk.spawn(names)
    expect([(r["name"], r["available"], r["listed"]) for r in sk.resolved(agent)],
           [("shopify-flow", True, True), ("ledger", True, True), ("notes", True, True)],
           "SKILL-10: in a standard VM nothing is gated")
    expect(sk.call(agent, "use_skill", {"name": "shopify-flow"})["ok"], True,
           "SKILL-10: loadable outside a confidential VM")
    expect(sk.call(agent, "skill_search", {"query": "store"})["content"]["unavailable"], [],
           "SKILL-10: nothing unavailable outside a confidential VM")


FLAGGED = (
    "# Shop\n"                                   # body line 1 = SKILL.md line 5
    "Decide attributes first.\n"
    "<!-- catalog-search-v1-only -->\n"
    "Run `catalog-search --query Q`.\n"
    "<!-- /catalog-search-v1-only -->\n"
    "<!-- catalog-search-v2-only -->\n"
    "```\ncatalog-search find Q --json\n```\n"
    "<!-- /catalog-search-v2-only -->\n"
    "Checkout discipline.\n"
)


def flagged_skill(sk: Skills, body: str = FLAGGED) -> None:
    d = sk.layer("system") / "shop"
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text("---\nname: shop\ndescription: Shop\n---\n" + body,
                                encoding="utf-8")


def body_of(sk: Skills, **world: Any) -> dict[str, Any]:
    sk.setup(**world)
    agent = sk.spawn(["shop"])
    out = sk.call(agent, "use_skill", {"name": "shop"})
    expect(out["ok"], True, "SKILL-10: flagged markup never makes use_skill fail")
    content: dict[str, Any] = out["content"]
    return content


@pytest.mark.case("skill.flags.active-version-only")
@pytest.mark.req("SKILL-10")
@pytest.mark.parametrize("active,kept,dropped", [
    ("v1", "catalog-search --query Q", "catalog-search find Q"),
    ("v2", "catalog-search find Q", "catalog-search --query Q"),
], ids=["v1", "v2"])
def test_only_the_active_versions_section_reaches_the_model(
        sk: Skills, active: str, kept: str, dropped: str) -> None:
    """Catches the other version's section leaking into the body, markers left in it,
    or the shared text around them lost."""
    flagged_skill(sk)
    got = body_of(sk, feature_versions={"catalog-search": active})
    body = got["body"]
    expect_true(kept in body, f"SKILL-10: the {active} section is kept", body)
    expect_true(dropped not in body, "SKILL-10: the other version's section is removed",
                body)
    expect_true("Decide attributes first." in body and "Checkout discipline." in body,
                "SKILL-10: unflagged text is kept", body)
    expect_true("-only" not in body, "SKILL-10: marker lines are removed", body)
    expect([(s["flag"], s["kept"]) for s in got["flags"]["sections"]],
           [("catalog-search-v1-only", active == "v1"),
            ("catalog-search-v2-only", active == "v2")],
           "SKILL-10: each section and whether it was kept are reported")


@pytest.mark.case("skill.flags.no-active-version")
@pytest.mark.req("SKILL-10")
def test_a_feature_without_an_active_version_keeps_neither_section(sk: Skills) -> None:
    """Catches both versions shown at once when the runtime names no version."""
    flagged_skill(sk)
    got = body_of(sk)
    expect_true("catalog-search --query Q" not in got["body"]
                and "catalog-search find Q" not in got["body"]
                and "Checkout discipline." in got["body"],
                "SKILL-10: no section of a feature without an active version", got["body"])
    expect([s["reason"] for s in got["flags"]["sections"]],
           ["unknown-feature", "unknown-feature"], "SKILL-10: each drop says why")


@pytest.mark.case("skill.flags.nested")
@pytest.mark.req("SKILL-10")
def test_nested_sections_need_every_enclosing_flag(sk: Skills) -> None:
    """Catches an inner section kept although its enclosing section was removed, or an
    outer close that ends at the first close marker seen."""
    flagged_skill(sk, "Top.\n<!-- a-v1-only -->\nA1 start.\n<!-- b-v2-only -->\nB2 in A1.\n"
                      "<!-- /b-v2-only -->\nA1 end.\n<!-- /a-v1-only -->\n"
                      "<!-- a-v2-only -->\nA2.\n<!-- b-v2-only -->\nB2 in A2.\n"
                      "<!-- /b-v2-only -->\n<!-- /a-v2-only -->\nBottom.\n")
    body = body_of(sk, feature_versions={"a": "v1", "b": "v2"})["body"]
    lines = [ln for ln in body.split("\n") if ln.strip()]
    expect(lines, ["Top.", "A1 start.", "B2 in A1.", "A1 end.", "Bottom."],
           "SKILL-10: a line is kept only when every section around it is active")


@pytest.mark.case("skill.flags.bad-markup-located")
@pytest.mark.req("SKILL-10")
def test_bad_markup_is_reported_with_its_line_never_a_crash(sk: Skills) -> None:
    """Catches a crash (or a silently swallowed rest of the file) on an unterminated
    marker, and problems reported without a line."""
    flagged_skill(sk, "Intro.\n"                       # SKILL.md line 5
                      "<!-- /x-v1-only -->\n"          # line 6: closes nothing
                      "<!-- beta-only -->\n"           # line 7: no version
                      "Beta text.\n"
                      "<!-- /beta-only -->\n"
                      "<!-- x-v1-only -->\n"           # line 10: never closed
                      "V1 text.\n")
    got = body_of(sk, feature_versions={"x": "v1"})
    expect(sorted((p["code"], p["line"]) for p in got["flags"]["problems"]),
           [("malformed-name", 7), ("unmatched-close", 6), ("unterminated", 10)],
           "SKILL-10: each markup problem with its SKILL.md line (front matter counted)")
    body = got["body"]
    expect_true("Intro." in body and "V1 text." in body and "Beta text." not in body,
                "SKILL-10: an unterminated active section runs to the end; a malformed one "
                "is removed", body)
    diags = [d for d in sk.impl.parse(sk.definition(["shop"]))["diagnostics"]
             if d["code"] == "SKILL-FLAG-MARKUP"]
    expect(sorted(d["line"] for d in diags), [6, 7, 10],
           "SKILL-10: markup problems are diagnostics located at their SKILL.md line")
    for d in diags:
        if "shop" not in d["path"]:
            raise SpecMismatch(f"SKILL-10: the location path names the skill folder: {d}")


@pytest.mark.case("skill.flags.hash-over-the-file")
@pytest.mark.req("SKILL-10", "SKILL-08")
def test_flags_do_not_change_the_hash_and_the_amendment_follows(sk: Skills) -> None:
    """Catches a content hash taken after section selection (an amendment reviewed
    against the file would then never apply) and an amendment cut by a flag."""
    flagged_skill(sk)
    raw = (sk.layer("system") / "shop" / "SKILL.md").read_bytes()
    reviewed = "sha256:" + hashlib.sha256(raw).hexdigest()
    got = body_of(sk, feature_versions={"catalog-search": "v2"},
                  amendments=[{"skill": "shop", "reviewed_hash": reviewed,
                               "text": "Amended step.\n"}])
    expect_true(got["amendment"] is None or got["amendment"].get("status") == "applied",
                "SKILL-08: the amendment reviewed against the file bytes applies",
                got["amendment"])
    body = got["body"]
    expect_true(body.rstrip().endswith("Amended step.") and "catalog-search find Q" in body
                and "catalog-search --query Q" not in body,
                "SKILL-10: the amendment is applied after the sections are selected", body)

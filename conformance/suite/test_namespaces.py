"""Tool namespaces and deferred loading (NS-01..05), and the call contract (CALL-01, 02,
04), observed through a catalogue the suite supplies (`ns.setup`), so any runtime can be
checked with the same namespaces. Behaviour, not wording: the cases compare structure,
names, sameness and distinctness; error codes are the protocol's vocabulary (SPEC 11a).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from capconf.conformance.harness import Harness

LOAD = "tool_search.load_tool_namespace"


def _fn(name: str, description: str, required: dict[str, str], delivery: str = "sync",
        optional: dict[str, str] | None = None) -> dict[str, Any]:
    props = {k: {"type": t} for k, t in {**required, **(optional or {})}.items()}
    return {"name": name, "description": description, "delivery": delivery,
            "parameters": {"type": "object", "properties": props, "required": list(required),
                           "additionalProperties": False}}


CATALOG: dict[str, Any] = {
    "channels": ["main", "side"],
    "namespaces": [
        {"name": "muse", "description": "Core tools every task needs.", "form": "core",
         "channels": ["main", "side"], "functions": [
             _fn("echo", "Answer the arguments back.", {"text": "string"}),
             _fn("create_options", "Show an option card.",
                 {"question": "string", "options": "array"}, "ui")]},
        {"name": "tool_search", "description": "Load namespaces on demand.", "form": "core",
         "channels": ["main", "side"], "functions": [
             _fn("load_tool_namespace", "Load namespaces.", {"namespaces": "array"})]},
        {"name": "cal", "description": "Calendar events.", "form": "namespace",
         "channels": ["main", "side"], "functions": [
             _fn("list_events", "List events.", {"start": "string"}, optional={"end": "string"}),
             _fn("create_event", "Create an event.", {"title": "string", "start": "string"})]},
        {"name": "todo", "description": "Task lists.", "form": "schemas",
         "channels": ["main", "side"], "functions": [
             _fn("add", "Add a task.", {"title": "string"}),
             _fn("done", "Complete a task.", {"task_id": "string"})]},
        {"name": "jobs", "description": "Long-running jobs.", "form": "namespace",
         "channels": ["main"], "functions": [
             _fn("run", "Run a job; its result is handed off.", {"job": "string"}, "async")]},
        {"name": "widget", "description": "Client-rendered widgets.", "form": "namespace",
         "channels": ["main"], "functions": [
             _fn("map", "Render a map.", {"places": "array"}, "ui")]},
        {"name": "wallet", "description": "Payments.", "form": "namespace",
         "channels": ["main"], "functions": [_fn("pay", "Pay.", {"amount": "integer"})]},
    ],
}
CORE = {"muse", "tool_search"}
SIDE_GATED = {"jobs", "widget", "wallet"}


def _open(impl: Harness, channel: str = "main") -> tuple[Any, str]:
    impl.driver.request("ns.setup", {"catalog": CATALOG})
    opened = impl.driver.request("ns.open", {"channel": channel})
    return impl.driver, str(opened["context"])


def _surface(driver: Any, ctx: str) -> dict[str, dict[str, Any]]:
    shown = driver.request("ns.surface", {"context": ctx})["surface"]
    return {e["namespace"]: e for e in shown}


def _call(driver: Any, ctx: str, function: str, **args: Any) -> dict[str, Any]:
    out: dict[str, Any] = driver.request("call.invoke", {"context": ctx, "function": function,
                                                         "args": args})
    return out


def _load(driver: Any, ctx: str, *names: str) -> dict[str, Any]:
    result: dict[str, Any] = _call(driver, ctx, LOAD, namespaces=list(names))["result"]
    return result


def _has_parameters(entry: dict[str, Any]) -> bool:
    return any("parameters" in f for f in entry.get("functions", []))


# -- NS-01 ---------------------------------------------------------------------------

@pytest.mark.case("ns.names.qualified")
@pytest.mark.req("NS-01")
def test_functions_are_named_namespace_dot_function(impl: Harness) -> None:
    """Bug: functions surface or resolve by their bare name, so `echo` and `cal.echo`
    could be the same thing, or a bare name from another namespace is called."""
    driver, ctx = _open(impl)
    _load(driver, ctx, "cal")
    for name, entry in _surface(driver, ctx).items():
        for f in entry.get("functions", []):
            assert f["name"].split(".") == [name, f["name"].split(".", 1)[1]], f["name"]
    assert _call(driver, ctx, "muse.echo", text="hi")["result"]["ok"] is True
    assert _call(driver, ctx, "cal.list_events", start="x")["result"]["ok"] is True
    for bare, args in (("echo", {"text": "hi"}), ("list_events", {"start": "x"}),
                       ("muse__echo", {"text": "hi"}), ("muse.echo.x", {"text": "hi"}),
                       ("cal.echo", {"text": "hi"}), ("MUSE.echo", {"text": "hi"})):
        result = _call(driver, ctx, bare, **args)["result"]
        assert result["ok"] is False, bare


# -- NS-02 / NS-03 / NS-04 -----------------------------------------------------------

@pytest.mark.case("ns.start.name-and-one-line")
@pytest.mark.req("NS-02", "NS-04")
def test_at_start_deferred_namespaces_show_a_name_and_one_line(impl: Harness) -> None:
    """Bug: every schema is injected eagerly, or a wholly deferred namespace leaks its
    function names, or a schema-deferred one leaks parameters."""
    driver, ctx = _open(impl)
    shown = _surface(driver, ctx)
    assert set(shown) == {n["namespace"] if "namespace" in n else n["name"]
                          for n in CATALOG["namespaces"]}
    for name, entry in shown.items():
        assert entry["description"].strip() and "\n" not in entry["description"]
        if name in CORE:
            continue
        assert entry["loaded"] is False and not _has_parameters(entry), name
    assert not shown["cal"].get("functions"), "a wholly deferred namespace shows functions"
    assert {f["name"] for f in shown["todo"]["functions"]} == {"todo.add", "todo.done"}


@pytest.mark.case("ns.core.always-full")
@pytest.mark.req("NS-03")
def test_the_core_namespace_is_fully_loaded_on_every_channel(impl: Harness) -> None:
    """Bug: the core namespace is deferred like the others (or only on a side chat), so
    the first memory or file call of a task fails."""
    for channel in ("main", "side"):
        driver, ctx = _open(impl, channel)
        shown = _surface(driver, ctx)
        for name in CORE:
            spec = next(n for n in CATALOG["namespaces"] if n["name"] == name)
            want = {f"{name}.{f['name']}": f["parameters"] for f in spec["functions"]}
            got = {f["name"]: f.get("parameters") for f in shown[name]["functions"]}
            assert got == want and shown[name]["loaded"] is True, (channel, name)
        assert _call(driver, ctx, "muse.echo", text="x")["result"]["ok"] is True


@pytest.mark.case("ns.load.persists-and-idempotent")
@pytest.mark.req("NS-02")
def test_loading_injects_schemas_that_persist_for_the_context(impl: Harness) -> None:
    """Bug: load injects names but not schemas, loading twice duplicates them, or the
    loaded set leaks into a new context."""
    driver, ctx = _open(impl)
    assert _load(driver, ctx, "cal")["ok"] is True
    after = _surface(driver, ctx)
    cal = next(n for n in CATALOG["namespaces"] if n["name"] == "cal")
    want = {f"cal.{f['name']}": f["parameters"] for f in cal["functions"]}
    assert {f["name"]: f.get("parameters") for f in after["cal"]["functions"]} == want
    assert after["cal"]["loaded"] is True
    for _ in range(2):
        assert _call(driver, ctx, "cal.list_events", start="2026-01-01")["result"]["ok"]
    again = _load(driver, ctx, "cal", "muse")
    assert again["ok"] is True
    assert json.dumps(_surface(driver, ctx), sort_keys=True) == json.dumps(after, sort_keys=True)
    fresh = driver.request("ns.open", {"channel": "main"})["context"]
    assert _surface(driver, fresh)["cal"]["loaded"] is False
    assert _call(driver, fresh, "cal.list_events", start="x")["result"]["ok"] is False


@pytest.mark.case("ns.unloaded.structured-error")
@pytest.mark.req("NS-04")
def test_calling_before_loading_fails_by_design_in_both_forms(impl: Harness) -> None:
    """Bug: an unloaded function runs anyway (deferral is cosmetic), or fails like a
    nonexistent one, so the model gives up instead of loading."""
    driver, ctx = _open(impl)
    for function, args, namespace in (("cal.list_events", {"start": "x"}, "cal"),
                                      ("todo.add", {"title": "x"}, "todo")):
        early = _call(driver, ctx, function, **args)["result"]
        assert early["ok"] is False and early["error_code"] == "namespace_not_loaded", early
        missing = _call(driver, ctx, f"{namespace}.nope", **args)["result"]
        assert missing["ok"] is False and missing["error_code"] != early["error_code"]
        assert _load(driver, ctx, namespace)["ok"] is True
        assert _call(driver, ctx, function, **args)["result"]["ok"] is True


# -- NS-05 ---------------------------------------------------------------------------

@pytest.mark.case("ns.channel.gated-absent")
@pytest.mark.req("NS-05")
def test_a_side_chat_sees_fewer_namespaces_and_gated_ones_are_absent(impl: Harness) -> None:
    """Bug: a gated namespace is listed on the side chat and fails when used, or can be
    loaded there, or its name leaks through error details."""
    driver, main = _open(impl, "main")
    side = driver.request("ns.open", {"channel": "side"})["context"]
    main_names, side_names = set(_surface(driver, main)), set(_surface(driver, side))
    assert side_names == main_names - SIDE_GATED and side_names < main_names
    gated = _call(driver, side, "wallet.pay", amount=1)["result"]
    made_up = _call(driver, side, "nosuch.pay", amount=1)["result"]
    assert gated["ok"] is False and gated["error_code"] == made_up["error_code"]
    refused = _load(driver, side, "cal", "wallet")
    assert refused["ok"] is False
    assert _surface(driver, side)["cal"]["loaded"] is False, "a refused load loaded a part"
    made_up_load = _load(driver, side, "cal", "nosuch")

    def as_made_up(result: dict[str, Any]) -> str:
        return json.dumps(result["error_detail"], sort_keys=True).replace("wallet", "nosuch")

    # indistinguishable from a namespace that does not exist, down to the details
    assert as_made_up(gated) == json.dumps(made_up["error_detail"], sort_keys=True)
    assert as_made_up(refused) == json.dumps(made_up_load["error_detail"], sort_keys=True)
    assert _load(driver, main, "wallet")["ok"] is True


# -- CALL-01 -------------------------------------------------------------------------

@pytest.mark.case("call.stamp.request-tree")
@pytest.mark.req("CALL-01")
def test_every_call_is_stamped_and_concurrent_calls_are_told_apart(impl: Harness) -> None:
    """Bug: concurrent calls share a request_id (results cross), the parent is not the
    turn, or calls of one turn land in different traces."""
    driver, ctx = _open(impl)
    _load(driver, ctx, "jobs")
    batch = driver.request("call.invoke_many", {"context": ctx, "calls": [
        {"function": "muse.echo", "args": {"text": "a"}},
        {"function": "jobs.run", "args": {"job": "one"}},
        {"function": "jobs.run", "args": {"job": "two"}},
        {"function": "muse.echo", "args": {"text": "b"}}]})["results"]
    stamps = [r["stamp"] for r in batch]
    assert len({s["request_id"] for s in stamps}) == 4
    assert len({s["trace"]["span_id"] for s in stamps}) == 4
    # before any user turn the parent may be null or a turn the runtime opened (SPEC
    # CALL-01, decision); it is one for the batch and never one of the batch's own ids
    assert len({s["parent_request_id"] for s in stamps}) == 1
    assert len({s["trace"]["trace_id"] for s in stamps}) == 1
    assert stamps[0]["parent_request_id"] not in {s["request_id"] for s in stamps}
    # the two jobs complete in the opposite order; each result names its own request
    handoffs = [r["result"]["content"]["handoff"] for r in batch[1:3]]
    for stamp, handoff in zip(stamps[1:3], handoffs, strict=True):
        assert handoff["request_id"] == stamp["request_id"]
    for handoff, content in ((handoffs[1], "TWO"), (handoffs[0], "ONE")):
        driver.request("call.finish", {"context": ctx, "handoff": handoff["id"],
                                       "content": content})
    results = {e["request_id"]: e["content"] for e in driver.request(
        "call.transcript", {"context": ctx})["events"] if e["kind"] == "handoff_result"}
    assert results == {stamps[1]["request_id"]: "ONE", stamps[2]["request_id"]: "TWO"}


@pytest.mark.case("call.stamp.handoff-lineage")
@pytest.mark.req("CALL-01", "CALL-02")
def test_calls_made_for_a_handoff_are_its_children_in_the_same_trace(impl: Harness) -> None:
    """Bug: work done on behalf of a hand-off is parented to the turn (or to nothing), so
    the request tree cannot be rebuilt."""
    driver, ctx = _open(impl)
    _load(driver, ctx, "jobs")
    spawn = _call(driver, ctx, "jobs.run", job="long")
    handoff = spawn["result"]["content"]["handoff"]["id"]
    child = driver.request("call.invoke", {"context": ctx, "function": "muse.echo",
                                           "args": {"text": "x"}, "on_behalf_of": handoff})
    assert child["stamp"]["parent_request_id"] == spawn["stamp"]["request_id"]
    assert child["stamp"]["trace"]["trace_id"] == spawn["stamp"]["trace"]["trace_id"]
    assert child["stamp"]["request_id"] != spawn["stamp"]["request_id"]


# -- CALL-02 -------------------------------------------------------------------------

@pytest.mark.case("call.delivery.sync-and-handoff")
@pytest.mark.req("CALL-02")
def test_async_work_answers_a_handoff_and_is_injected_once_on_completion(
        impl: Harness) -> None:
    """Bug: the async result is injected before it completes (fabricated), never, or
    twice; or a sync function answers a hand-off."""
    driver, ctx = _open(impl)
    _load(driver, ctx, "jobs")
    sync = _call(driver, ctx, "muse.echo", text="now")["result"]
    assert sync["ok"] is True and "handoff" not in json.dumps(sync["content"])
    started = _call(driver, ctx, "jobs.run", job="report")
    handoff = started["result"]["content"]["handoff"]
    assert handoff["id"] and handoff["request_id"] == started["stamp"]["request_id"]

    def injected() -> list[dict[str, Any]]:
        return [e for e in driver.request("call.transcript", {"context": ctx})["events"]
                if e["kind"] == "handoff_result"]

    assert injected() == []
    content = {"rows": [1, 2, 3], "note": "done \u2014 ok"}
    driver.request("call.finish", {"context": ctx, "handoff": handoff["id"],
                                   "outcome": "completed", "content": content})
    got = injected()
    assert len(got) == 1 and got[0]["content"] == content and got[0]["outcome"] == "completed"
    assert got[0]["request_id"] == started["stamp"]["request_id"]
    driver.request_error("call.finish", {"context": ctx, "handoff": handoff["id"],
                                         "content": "again"})
    assert len(injected()) == 1


# -- CALL-04 -------------------------------------------------------------------------

@pytest.mark.case("call.ui.embed-token-and-verbatim-choice")
@pytest.mark.req("CALL-04")
def test_an_option_card_returns_a_token_and_a_choice_is_the_text_verbatim(
        impl: Harness) -> None:
    """Bug: the option text is trimmed or normalised on the way back, the choice does not
    start a new user turn, or a card answers rendered markup instead of a token."""
    driver, ctx = _open(impl)
    options = ["No", "  Yes \u2014 book 2 rooms\t", "Caf\u00e9 (e\u0301)"]
    card = _call(driver, ctx, "muse.create_options", question="Book?", options=options)
    token = card["result"]["content"]["embed_token"]
    assert isinstance(token, str) and token
    assert "Caf" not in json.dumps(card["result"]["content"]), "the card was rendered"
    _load(driver, ctx, "widget")
    widget = _call(driver, ctx, "widget.map", places=["Oslo"])["result"]["content"]
    assert isinstance(widget["embed_token"], str) and widget["embed_token"] != token
    for index in (1, 2):
        message = driver.request("call.choose", {"context": ctx, "embed_token": token,
                                                 "option": index})["message"]
        assert message["kind"] == "user_message" and message["text"] == options[index]
        last = driver.request("call.transcript", {"context": ctx})["events"][-1]
        assert last["text"] == options[index]
        after = _call(driver, ctx, "muse.echo", text="next")
        assert after["stamp"]["parent_request_id"] == message["request_id"]
    other = _call(driver, ctx, "muse.create_options", question="Again?", options=["A", "B"])
    other_token = other["result"]["content"]["embed_token"]
    assert other_token != token
    first = driver.request("call.choose", {"context": ctx, "embed_token": token, "option": 0})
    assert first["message"]["text"] == options[0], "a token answered another card"
    driver.request_error("call.choose", {"context": ctx, "embed_token": token + "x",
                                         "option": 0})


# -- Cases the outside tester's broken runtimes slipped past (issue 10, eyes round 2) ------

@pytest.mark.case("ns.load.atomic-on-any-channel")
@pytest.mark.req("NS-02")
def test_a_load_naming_an_unknown_namespace_loads_nothing(impl: Harness) -> None:
    """Bug: the load refuses the unknown name but loads the visible ones anyway, so the
    model sees an error while the surface has changed under it."""
    driver, ctx = _open(impl)
    before = json.dumps(_surface(driver, ctx), sort_keys=True)
    refused = _load(driver, ctx, "cal", "nosuch", "todo")
    assert (refused["ok"], refused["error_code"]) == (False, "unknown_namespace"), refused
    assert refused["terminal_for_attempt"] is True
    assert json.dumps(_surface(driver, ctx), sort_keys=True) == before
    early = _call(driver, ctx, "cal.list_events", start="x")["result"]
    assert early["error_code"] == "namespace_not_loaded", early


@pytest.mark.case("ns.unloaded.retryable-and-named")
@pytest.mark.req("NS-04")
def test_not_loaded_is_retryable_and_names_what_to_load(impl: Harness) -> None:
    """Bugs: `namespace_not_loaded` marked terminal (the model gives up instead of
    loading), or its detail does not say which namespace to load and with what."""
    driver, ctx = _open(impl)
    for function, args, namespace in (("cal.list_events", {"start": "x"}, "cal"),
                                      ("todo.add", {"title": "x"}, "todo")):
        early = _call(driver, ctx, function, **args)["result"]
        assert early["terminal_for_attempt"] is False, early
        detail = json.dumps(early["error_detail"])
        assert namespace in detail and "load_tool_namespace" in detail, early["error_detail"]


@pytest.mark.case("ns.catalog.dunder-refused")
@pytest.mark.req("NS-01")
def test_a_catalogue_name_with_a_double_underscore_is_refused(impl: Harness) -> None:
    """Bug: `muse.echo__x` accepted, so a namespace function could be read as an MCP
    `server__tool` name and one name would mean two things."""
    for where in ("namespace", "function"):
        catalog = json.loads(json.dumps(CATALOG))
        cal = next(n for n in catalog["namespaces"] if n["name"] == "cal")
        if where == "namespace":
            cal["name"] = "cal__x"
        else:
            cal["functions"][0]["name"] = "list__events"
        error = impl.driver.request_error("ns.setup", {"catalog": catalog})
        assert error["code"] == "catalog_invalid", (where, error)


@pytest.mark.case("ns.args.unknown-key-refused")
@pytest.mark.req("NS-02", "CALL-03")
def test_an_unknown_argument_is_refused_when_the_schema_closes_the_object(
        impl: Harness) -> None:
    """Bugs: arguments checked for required keys only, so a misspelt optional argument
    (`ned` for `end`) is silently dropped and the call does something else; or the
    refusal says `terminal_for_attempt: false`, inviting the model to send the same call
    again (SPEC 11a: `invalid_arguments` is terminal for the attempt)."""
    driver, ctx = _open(impl)
    _load(driver, ctx, "cal")
    wrong = _call(driver, ctx, "cal.list_events", start="x", ned="y")["result"]
    assert (wrong["ok"], wrong.get("error_code")) == (False, "invalid_arguments"), wrong
    assert wrong["terminal_for_attempt"] is True, wrong
    assert _call(driver, ctx, "cal.list_events", start="x", end="y")["result"]["ok"] is True


@pytest.mark.case("call.stamp.unique-across-contexts")
@pytest.mark.req("CALL-01")
def test_request_ids_are_unique_across_the_contexts_of_a_session(impl: Harness) -> None:
    """Bug: request ids drawn from a counter per context, so two contexts both have a
    `req-2` and a trace or log read across them mixes two calls."""
    driver, first = _open(impl)
    second = driver.request("ns.open", {"channel": "side"})["context"]
    seen: list[str] = []
    for ctx in (first, second, first, second):
        stamp = _call(driver, ctx, "muse.echo", text="x")["stamp"]
        seen += [stamp["request_id"], stamp["parent_request_id"]]
    requests = seen[0::2]
    assert len(set(requests)) == len(requests), seen


@pytest.mark.case("call.delivery.outcome-passed-on")
@pytest.mark.req("CALL-02")
def test_a_handoff_result_carries_its_real_outcome(impl: Harness) -> None:
    """Bug: every hand-off result injected as `completed`, so a failed or cancelled job
    reads as success."""
    driver, ctx = _open(impl)
    _load(driver, ctx, "jobs")
    for outcome in ("failed", "cancelled", "completed"):
        started = _call(driver, ctx, "jobs.run", job=outcome)["result"]["content"]["handoff"]
        driver.request("call.finish", {"context": ctx, "handoff": started["id"],
                                       "outcome": outcome, "content": outcome})
    got = [(e["outcome"], e["content"]) for e in driver.request(
        "call.transcript", {"context": ctx})["events"] if e["kind"] == "handoff_result"]
    assert got == [("failed", "failed"), ("cancelled", "cancelled"),
                   ("completed", "completed")], got


@pytest.mark.case("call.stamp.batch-results-in-request-order")
@pytest.mark.req("CALL-01")
def test_a_batch_answers_in_request_order(impl: Harness) -> None:
    """Bug: `call.invoke_many` answers in completion order, so result i is not call i's."""
    driver, ctx = _open(impl)
    texts = [f"t{i}" for i in range(6)]
    batch = driver.request("call.invoke_many", {"context": ctx, "calls": [
        {"function": "muse.echo", "args": {"text": t}} for t in texts]})["results"]
    assert len(batch) == len(texts)
    for text, answer in zip(texts, batch, strict=True):
        assert text in json.dumps(answer["result"]), (text, answer)


# -- Cases the outside tester's broken runtimes slipped past (eyes round 4) ----------------

def _raw_surface(driver: Any, ctx: str) -> list[dict[str, Any]]:
    """The surface as the context shows it, in its own order (`bytes` is informative,
    SPEC 11a: not compared)."""
    surface: list[dict[str, Any]] = driver.request("ns.surface", {"context": ctx})["surface"]
    return surface


@pytest.mark.case("ns.load.names-exact")
@pytest.mark.req("NS-02")
def test_a_load_matches_namespace_names_exactly(impl: Harness) -> None:
    """Bug: `load_tool_namespace` folds case, so `CAL` loads `cal` while `CAL.list_events`
    is refused: one spelling loads, another calls, and the two disagree."""
    driver, ctx = _open(impl)
    before = _raw_surface(driver, ctx)
    for names in (["CAL"], ["Todo"], ["cal", "TODO"]):
        refused = _load(driver, ctx, *names)
        assert (refused["ok"], refused.get("error_code")) == (False, "unknown_namespace"), (
            names, refused)
        assert _raw_surface(driver, ctx) == before, f"a refused load of {names} loaded"
    early = _call(driver, ctx, "cal.list_events", start="x")["result"]
    assert early["error_code"] == "namespace_not_loaded", early


@pytest.mark.case("ns.load.again-keeps-surface-order")
@pytest.mark.req("NS-02")
def test_loading_again_leaves_the_surface_byte_identical(impl: Harness) -> None:
    """Bug: the surface lists loaded namespaces by load time (most recent last), so
    loading `cal` again after `todo` moves it: the surface the model has cached changes
    under it although nothing new was loaded."""
    driver, ctx = _open(impl)
    assert _load(driver, ctx, "cal")["ok"] is True
    assert _load(driver, ctx, "todo")["ok"] is True
    loaded = _raw_surface(driver, ctx)
    for names in (["cal"], ["todo", "cal"], ["muse", "cal"]):
        assert _load(driver, ctx, *names)["ok"] is True, names
        assert _raw_surface(driver, ctx) == loaded, f"loading {names} again changed it"


@pytest.mark.case("ns.args.wrong-type-refused")
@pytest.mark.req("NS-01", "CALL-03")
def test_an_argument_of_the_wrong_top_level_type_is_refused(impl: Harness) -> None:
    """Bug: arguments are checked for required and unknown keys only, so `start: 5` or
    `amount: "1"` reaches the function, which runs with a value its schema forbids."""
    driver, ctx = _open(impl)
    assert _load(driver, ctx, "cal", "wallet")["ok"] is True
    for function, args in (("cal.list_events", {"start": 5}),
                           ("cal.list_events", {"start": ["2026-01-01"]}),
                           ("cal.list_events", {"start": "x", "end": {"day": 2}}),
                           ("wallet.pay", {"amount": "1"}),
                           ("muse.create_options", {"question": "Q?", "options": "A, B"})):
        wrong = _call(driver, ctx, function, **args)["result"]
        assert (wrong["ok"], wrong.get("error_code")) == (False, "invalid_arguments"), (
            function, args, wrong)
        assert wrong["terminal_for_attempt"] is True, (function, wrong)
    assert _call(driver, ctx, "wallet.pay", amount=1)["result"]["ok"] is True

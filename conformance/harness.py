"""What a conformance test holds: a driver plus a fresh world on disk.

Tests read like the spec: ``impl.parse(text)``, ``impl.prompt(text)``. The harness builds
the world (a temporary workspace it owns) and forwards everything through the driver
protocol; it knows nothing about any implementation.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from capconf.conformance.driver import Driver

FRAME = "You are a delegated subagent of the capconf conformance harness."


class Harness:
    def __init__(self, driver: Driver, workspace: Path) -> None:
        self.driver = driver
        self.workspace = workspace
        self.world_args: dict[str, Any] = {}

    # -- world ------------------------------------------------------------------
    def setup(self, **overrides: Any) -> dict[str, Any]:
        args: dict[str, Any] = {"workspace": str(self.workspace), "frame": FRAME}
        args.update(overrides)
        self.world_args = args
        result: dict[str, Any] = self.driver.request("world.setup", args)
        return result

    def setup_error(self, **overrides: Any) -> dict[str, Any]:
        args: dict[str, Any] = {"workspace": str(self.workspace), "frame": FRAME}
        args.update(overrides)
        return self.driver.request_error("world.setup", args)

    def write(self, relative: str, content: str | bytes) -> Path:
        path = self.workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        note = getattr(self.driver.transport, "note_file", None)
        if note is not None:  # so a failing case can be saved as a scenario
            note(relative, content)
        return path

    # -- definitions --------------------------------------------------------------
    @staticmethod
    def _source_args(source: str | bytes, filename: str | None, fmt: str | None) -> dict[str, Any]:
        args: dict[str, Any] = {}
        if isinstance(source, bytes):
            args["source_b64"] = base64.b64encode(source).decode("ascii")
        else:
            args["source"] = source
        if filename is not None:
            args["filename"] = filename
        if fmt is not None:
            args["format"] = fmt
        return args

    def parse(self, source: str | bytes, mode: str = "parse", filename: str | None = None,
              fmt: str | None = None) -> dict[str, Any]:
        args = self._source_args(source, filename, fmt)
        args["mode"] = mode
        result: dict[str, Any] = self.driver.request("definition.parse", args)
        return result

    def save(self, source: str | bytes, filename: str | None = None,
             fmt: str | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.driver.request(
            "definition.save", self._source_args(source, filename, fmt))
        return result

    def prompt(self, source: str | bytes, filename: str | None = None,
               fmt: str | None = None, layout: bool = False) -> dict[str, Any]:
        """Every prompt the suite looks at is checked to be made of its reported parts
        (each part's text is in the prompt, in the reported order), so a check on a part
        is always a check on what the model sees. The layout around the parts (PROMPT-01:
        their order, the blank line between them, no empty part) is checked only with
        ``layout=True``, by PROMPT-01's and PROMPT-02's own cases: a case about a
        section's content must fail on its own rule, not on a runtime's part order."""
        result: dict[str, Any] = self.driver.request(
            "prompt.assemble", self._source_args(source, filename, fmt))
        check_parts_in_prompt(result)
        if layout:
            check_prompt_parts(result)
        return result

    def mounted(self, source: str | bytes, filename: str | None = None,
                fmt: str | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.driver.request(
            "tools.mounted", self._source_args(source, filename, fmt))
        return result

    def memory_dir(self, source: str | bytes) -> str | None:
        """Where the implementation binds this definition's memory (workspace-relative),
        asked with `memory.locate`: the private layout is its own choice (TEXT-02)."""
        result: dict[str, Any] = self.driver.request(
            "memory.locate", self._source_args(source, None, None))
        directory = result.get("directory")
        expect_true(directory is None or (isinstance(directory, str) and bool(directory)),
                    "memory.locate answers a non-empty path or null", result)
        return directory if isinstance(directory, str) else None

    def registry(self) -> dict[str, Any]:
        result: dict[str, Any] = self.driver.request("registry.list")
        return result


PART_ORDER = ("frame", "catalog.skills", "catalog.knowledge", "catalog.mcp",
              "catalog.memory", "body")


def check_parts_in_prompt(result: dict[str, Any]) -> None:
    """The reported parts are pieces of the prompt, in the reported order (SPEC section 2,
    `prompt.assemble`): what a case finds in a part is text the model sees. Nothing here
    is about the layout between the parts (that is PROMPT-01, `check_prompt_parts`)."""
    prompt = result["prompt"]
    position = 0
    for part in result["parts"]:
        at = prompt.find(part["text"], position)
        expect_true(at >= 0, f"prompt.assemble: the {part['kind']} part is not text of the "
                    "prompt after the parts reported before it (the parts are pieces of the "
                    "prompt the model sees, in order)", part["text"])
        position = at + len(part["text"])


def check_prompt_parts(result: dict[str, Any]) -> None:
    """PROMPT-01's layout: the prompt is exactly its parts joined by one blank line plus
    a final newline, the parts in PROMPT-01/02's order, none repeated or empty."""
    parts = result["parts"]
    joined = "\n\n".join(p["text"] for p in parts) + "\n" if parts else ""
    assert result["prompt"] == joined, (
        "PROMPT-01: the prompt is not its parts joined by one blank line plus a final "
        f"newline\nprompt: {result['prompt'][:300]!r}\nparts joined: {joined[:300]!r}")
    kinds = [p["kind"] for p in parts]
    assert kinds == sorted(kinds, key=PART_ORDER.index) and len(set(kinds)) == len(kinds), (
        f"PROMPT-01/02: parts out of order or repeated: {kinds}")
    for part in parts:
        assert part["text"] == part["text"].strip("\n") and part["text"].strip(), (
            f"PROMPT-01: part {part['kind']} is empty or has leading/trailing newlines")


def codes(result: dict[str, Any]) -> list[str]:
    return [d["code"] for d in result["diagnostics"]]


def diagnostics_at(result: dict[str, Any], path: list[Any]) -> list[dict[str, Any]]:
    return [d for d in result["diagnostics"] if d["path"] == path]


def errors(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in result["diagnostics"] if d["severity"] == "error"]


# -- spec-level checks -------------------------------------------------------------------
# A failing case must tell an implementer what the spec wants, what they sent and why;
# a bare `assert x == y` prints Python internals. These helpers raise AssertionError with
# the difference first (the report keeps the first ~200 characters of a failure).

_NOTHING: Any = object()


class SpecMismatch(AssertionError):
    """A check of the suite failed: ``why`` names the requirement, then expected vs got.
    The values themselves are kept too (``expected``, ``got``) so a report can show them
    whole, not as the cut text of the message."""

    def __init__(self, message: str, why: str | None = None, expected: Any = _NOTHING,
                 got: Any = _NOTHING) -> None:
        super().__init__(message)
        self.why = why if why is not None else message.split("\n", 1)[0]
        self.has_expected = expected is not _NOTHING
        self.has_got = got is not _NOTHING
        self.expected = None if expected is _NOTHING else expected
        self.got = None if got is _NOTHING else got


def expect(actual: Any, expected: Any, why: str) -> None:
    """``actual == expected`` or a failure that reads like the spec: the requirement and
    rule first (``why``), then what was expected and what the implementation answered."""
    if actual != expected:
        raise SpecMismatch(f"{why}\n  expected: {_short(expected)}\n  got:      "
                           f"{_short(actual)}", why, expected, actual)


def expect_true(condition: bool, why: str, got: Any = None) -> None:
    """A yes/no rule of the spec; ``got`` is what the implementation answered."""
    if not condition:
        raise SpecMismatch(why if got is None else f"{why}\n  got: {_short(got)}", why,
                           got=_NOTHING if got is None else got)


def expect_keys(result: dict[str, Any], expected: dict[str, Any], why: str) -> None:
    """The keys of ``expected`` carry these values; other keys MAY be present (envelopes
    and result objects may carry more keys, SPEC section 2)."""
    expect_true(isinstance(result, dict), f"{why}: not an object", result)
    got = {k: result.get(k, "<missing>") for k in expected}
    expect(got, expected, why)


def _short(value: Any, limit: int = 600) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def without_descriptions(schema: Any) -> Any:
    """A JSON Schema with its human-readable wording removed: the structure (types,
    required, bounds, additionalProperties) is behaviour; `description` texts are the
    reference's wording (feature group `reference-text`)."""
    if isinstance(schema, dict):
        out = {k: without_descriptions(v) for k, v in schema.items() if k != "description"}
        props = schema.get("properties")
        if isinstance(props, dict):  # a property named "description" stays
            out["properties"] = {k: without_descriptions(v) for k, v in props.items()}
        return out
    if isinstance(schema, list):
        return [without_descriptions(v) for v in schema]
    return schema


def _find_name(text: str, name: str, start: int) -> int:
    match = re.compile(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])").search(text, start)
    return match.start() if match else -1


def expect_catalog(section: str | None, items: Sequence[Sequence[str]], why: str,
                   absent: Iterable[str] = ()) -> None:
    """A catalog section lists exactly these items, in this order: each item is
    ``(name, field, ...)``; the name appears as a word, in order, and every field of an
    item (description, location, note) appears between its name and the next item's.
    Names in ``absent`` (not granted) appear nowhere. The heading, the instruction
    sentences and the layout of a line are the implementation's own (the reference's
    bytes are checked only under `reference-text`)."""
    if section is None:
        raise SpecMismatch(f"{why}: the prompt has no such catalog section")
    starts: list[int] = []
    position = 0
    for item in items:
        at = _find_name(section, item[0], position)
        expect_true(at >= 0, f"{why}: item {item[0]!r} missing, or not after "
                    f"{[i[0] for i in items][:len(starts)]}", section)
        starts.append(at)
        position = at + len(item[0])
    for k, item in enumerate(items):
        end = starts[k + 1] if k + 1 < len(starts) else len(section)
        segment = section[starts[k]:end]
        for field in item[1:]:
            expect_true(field in segment, f"{why}: item {item[0]!r} lacks "
                        f"{_short(field, 60)} (between its name and the next item)", segment)
    for name in absent:
        expect_true(_find_name(section, name, 0) < 0,
                    f"{why}: {name!r} is not granted but appears in the section", section)

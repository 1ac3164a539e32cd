"""What a conformance test holds: a driver plus a fresh world on disk.

Tests read like the spec: ``impl.parse(text)``, ``impl.prompt(text)``. The harness builds
the world (a temporary workspace it owns) and forwards everything through the driver
protocol; it knows nothing about any implementation.
"""

from __future__ import annotations

import base64
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
               fmt: str | None = None) -> dict[str, Any]:
        """Every prompt the suite looks at is first checked against PROMPT-01: the text
        the model sees is exactly the reported parts joined by one blank line, so a check
        on `parts` is always a check on the prompt too."""
        result: dict[str, Any] = self.driver.request(
            "prompt.assemble", self._source_args(source, filename, fmt))
        check_prompt_parts(result)
        return result

    def mounted(self, source: str | bytes, filename: str | None = None,
                fmt: str | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.driver.request(
            "tools.mounted", self._source_args(source, filename, fmt))
        return result

    def registry(self) -> dict[str, Any]:
        result: dict[str, Any] = self.driver.request("registry.list")
        return result


PART_ORDER = ("frame", "catalog.skills", "catalog.knowledge", "catalog.mcp",
              "catalog.memory", "body")


def check_prompt_parts(result: dict[str, Any]) -> None:
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

"""The versions a verdict depends on, in one place (`capconf --version`, report header).

The driver protocol is versioned with the spec: an implementation declares the spec
version it implements in `hello` (`spec_version`), and SPEC.md section 2 is the protocol
of that version. The record/replay log format has its own number.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

from capconf.conformance import SUITE_VERSION
from capconf.conformance.replay import LOG_FORMAT, SCENARIO_FORMAT

SPEC_VERSION = "0.1.0"
PROTOCOL_VERSION = SPEC_VERSION


@cache  # a process's installed libraries do not change under it
def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | int | None]:
    """Suite, spec and protocol versions, the log formats, and the installed versions of
    the libraries that decide a verdict (hypothesis draws the property cases' examples)."""
    return {"suite": SUITE_VERSION, "spec": SPEC_VERSION, "protocol": PROTOCOL_VERSION,
            "log_format": LOG_FORMAT, "scenario_format": SCENARIO_FORMAT,
            "hypothesis": _installed("hypothesis"), "pytest": _installed("pytest"),
            "jsonschema": _installed("jsonschema")}


def version_text() -> str:
    v = versions()
    return (f"capconf {v['suite']} (conformance suite {v['suite']}, spec {v['spec']}, "
            f"driver protocol {v['protocol']}, record/replay log format {v['log_format']})\n"
            f"verdict-relevant libraries: hypothesis {v['hypothesis']}, pytest {v['pytest']}, "
            f"jsonschema {v['jsonschema']}")

"""Custom connectors (CONN-10): no manifest, so no permission surface, and a client held
to one fixed endpoint.

The endpoint rules are a table (ENDPOINT_RULES) checked in order on the URL as written,
before any parsing library gets to normalise it: an attacker-friendly URL must be refused
for what it says, not accepted for what a lenient parser made of it. A host is a DNS name
of ASCII letters, digits and hyphens: IP literals (v4 and v6), IDN (non-ASCII) names,
percent-encoded or empty labels are refused, so the registered host is the host the
request reaches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

PROVIDER = re.compile(r"custom\.[a-z0-9][a-z0-9_-]{0,62}\Z")
MAX_URL = 2_048
"""Bytes of an endpoint URL (what browsers and servers commonly accept)."""
MAX_HOST = 253
"""Characters of a DNS name (RFC 1035)."""
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)\Z")
_URL = re.compile(r"(?P<scheme>[^:/?#]*)://(?P<authority>[^/?#]*)(?P<path>[^?#]*)(?P<rest>.*)\Z",
                  re.S)


@dataclass(frozen=True)
class EndpointRefusal:
    rule: str
    message: str


def _host_of(authority: str) -> tuple[str, str | None]:
    host, colon, port = authority.rpartition(":") if not authority.endswith("]") else (
        authority, "", "")
    if not colon:
        return authority, None
    return host, port


def _ascii_host(host: str) -> bool:
    if not host or host.endswith(".") or not host.isascii():
        return False
    labels = host.split(".")
    if len(labels) < 2 or labels[-1].isdigit():
        return False
    return all(_LABEL.match(label) for label in labels)


ENDPOINT_RULES: tuple[tuple[str, str, Callable[[re.Match[str], str], bool]], ...] = (
    ("length", f"the URL must be at most {MAX_URL:,} characters",
     lambda m, url: len(url) <= MAX_URL),
    ("ascii", "the URL must be printable ASCII without spaces or backslashes",
     lambda m, url: url.isascii() and url.isprintable() and " " not in url and "\\" not in url),
    ("https", "the scheme must be https",
     lambda m, url: m.group("scheme") == "https"),
    ("no-userinfo", "no user name or password in the URL",
     lambda m, url: "@" not in m.group("authority")),
    ("port-443", "the port must be 443 (or omitted)",
     lambda m, url: _host_of(m.group("authority"))[1] in (None, "443")),
    ("dns-host", "the host must be a DNS name (at most 253 characters) of lower-case ASCII "
     "labels: no IP literal, no "
     "IDN, no percent-encoding, no empty label",
     lambda m, url: len(_host_of(m.group("authority"))[0]) <= MAX_HOST
     and _ascii_host(_host_of(m.group("authority"))[0])),
    ("no-query", "no query in the endpoint URL", lambda m, url: "?" not in m.group("rest")),
    ("no-fragment", "no fragment in the endpoint URL", lambda m, url: "#" not in m.group("rest")),
    ("path", "the path must be empty or start with `/`, with no `%` escapes, no `;` "
     "parameters (`..;/`), no `.` or `..` segments",
     lambda m, url: (m.group("path") in ("", "/") or m.group("path").startswith("/"))
     and "%" not in m.group("path") and ";" not in m.group("path")
     and not {".", ".."} & set(m.group("path").split("/"))),
)


def check_endpoint(url: str) -> EndpointRefusal | None:
    if isinstance(url, str) and len(url) > MAX_URL:  # before any regular expression
        return EndpointRefusal("length", ENDPOINT_RULES[0][1])
    match = _URL.match(url) if isinstance(url, str) else None
    if match is None:
        return EndpointRefusal("absolute", "the endpoint must be an absolute URL")
    for rule, message, ok in ENDPOINT_RULES:
        if not ok(match, url):
            return EndpointRefusal(rule, message)
    return None


@dataclass(frozen=True)
class CustomConnector:
    provider: str
    endpoint: str
    host: str
    allowed_tools: tuple[str, ...]


def register(provider: Any, endpoint: Any, allowed_tools: Any) -> CustomConnector | EndpointRefusal:
    """Whatever else the user's files say is ignored: there is no field for permissions."""
    if not isinstance(provider, str) or not PROVIDER.match(provider):
        return EndpointRefusal("provider", "the provider id must be `custom.<name>`")
    refusal = check_endpoint(endpoint)
    if refusal is not None:
        return refusal
    if (not isinstance(allowed_tools, list) or not allowed_tools
            or not all(isinstance(t, str) and t for t in allowed_tools)):
        return EndpointRefusal("allowed-tools", "ALLOWED_TOOLS must be a non-empty list")
    match = _URL.match(endpoint)
    assert match is not None
    return CustomConnector(provider, endpoint, _host_of(match.group("authority"))[0],
                           tuple(allowed_tools))


def rules_markdown() -> str:
    lines = ["| rule | the endpoint is refused unless |", "|---|---|"]
    lines.append("| `provider` | the provider id matches `custom.[a-z0-9][a-z0-9_-]*` |")
    lines += [f"| `{rule}` | {message} |" for rule, message, _ in ENDPOINT_RULES]
    lines.append("| `allowed-tools` | ALLOWED_TOOLS is a non-empty list of tool names |")
    return "\n".join(lines)


SPEC_TABLES: Mapping[str, Callable[[], str]] = {"custom-endpoint-rules": rules_markdown}

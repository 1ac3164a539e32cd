"""A card's summary (SPEC APPR-02): the call's arguments as RFC 8785 (JCS) text, cut
after 200 code points. Presentation only, written by the adapter (no runtime's ask has a
summary), so the Python adapters share one writer instead of each keeping its own."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

SUMMARY_CODE_POINTS = 200


def summary(arguments: Any) -> str:
    text = canonical_json(arguments)
    return text if len(text) <= SUMMARY_CODE_POINTS else text[:SUMMARY_CODE_POINTS] + "..."


def canonical_json(value: Any) -> str:
    """RFC 8785: members sorted by their UTF-16 code units, ECMAScript number text, JSON
    string escapes (Python's, which are the ones JCS prescribes), no spaces."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(f"{canonical_json(str(k))}:{canonical_json(value[k])}"
                              for k in keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "null"  # as JSON.stringify writes it; a runtime's ask may hold one
    if isinstance(value, (int, float)):
        try:
            return es_number(float(value))
        except OverflowError:  # an integer past any double: its digits, as written
            return str(value)
    return json.dumps(value, ensure_ascii=False)


def es_number(x: float) -> str:
    """ECMAScript's Number::toString of a finite double (what JCS writes)."""
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("JSON has no NaN or Infinity")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    digits_t, exponent = Decimal(repr(abs(x))).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_t))
    k, n = len(digits), len(digits) + int(exponent)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"
    return sign + body

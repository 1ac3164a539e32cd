"""The ``verification_codes`` response guard (CONN-05): a protected read never hands a
one-time code to the model. A run of 4 to 8 digits is withheld when a code word occurs
within 40 characters before it on the same line; other numbers (totals, order numbers,
dates) pass, so the guard does not blind the read.
"""

from __future__ import annotations

import re
from typing import Any

WITHHELD = "[verification code withheld]"
_CODE = re.compile(
    r"(?i)(?P<lead>(?:verification|security|login|one[- ]time|confirmation)\s*code|passcode"
    r"|\botp\b|\b2fa\b|\bcode\b|验证码)(?P<gap>[^\n\d]{0,40}?)(?P<digits>(?<!\d)\d{4,8}(?!\d))")


def guard_text(text: str) -> tuple[str, int]:
    count = 0

    def hide(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return match.group("lead") + match.group("gap") + WITHHELD

    return _CODE.sub(hide, text), count


def guard(value: Any) -> tuple[Any, int]:
    """Every string anywhere in a JSON value, keys untouched."""
    if isinstance(value, str):
        return guard_text(value)
    if isinstance(value, list):
        pairs = [guard(v) for v in value]
        return [p[0] for p in pairs], sum(p[1] for p in pairs)
    if isinstance(value, dict):
        out, total = {}, 0
        for key, item in value.items():
            out[key], n = guard(item)
            total += n
        return out, total
    return value, 0


GUARDS = {"verification_codes": guard}

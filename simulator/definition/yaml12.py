"""The YAML 1.2 core-schema reading of a plain scalar, for values kept but not
interpreted (``extra``: unknown and foreign keys).

The loader underneath is a YAML 1.1 parser, which reads ``yes``/``on`` as true and ``017``
as octal 15. JavaScript and Rust YAML libraries read YAML 1.2, where those are the string
``yes``, the string ``on`` and the integer 17. A kept value must mean the same to every
runtime that reads the definition, so ``extra`` takes the 1.2 reading, and save writes the
value so that a 1.1 and a 1.2 reader agree on it (a string a 1.1 reader would misread is
quoted). ``.inf`` and ``.nan`` (any of the core schema's spellings) are floats here;
``yamlsource.json_value`` reports them as the strings ``.inf``, ``-.inf`` and ``.nan``
(PROTO-03), since JSON has no such numbers.
"""

from __future__ import annotations

import math
import re
from typing import Any

_NULL = re.compile(r"null|Null|NULL|~|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_INF = re.compile(r"([-+]?)\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def core_value(text: str, plain: bool) -> Any:
    """The JSON value YAML 1.2's core schema gives a scalar (``plain``: written unquoted,
    not a block scalar); anything quoted is a string."""
    if not plain:
        return text
    if _NULL.fullmatch(text):
        return None
    if _TRUE.fullmatch(text):
        return True
    if _FALSE.fullmatch(text):
        return False
    if _INT10.fullmatch(text):
        return int(text, 10)
    if _INT8.fullmatch(text):
        return int(text[2:], 8)
    if _INT16.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    infinite = _INF.fullmatch(text)
    if infinite:
        return -math.inf if infinite.group(1) == "-" else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text

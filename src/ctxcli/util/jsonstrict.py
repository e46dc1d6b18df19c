"""Strict JSON: what orjson accepts, minus two silent changes of meaning.

orjson keeps the *last* of duplicate keys (``{"a": 1, "a": 2}`` is ``{"a": 2}``) and turns an
integer outside the 64-bit range into a float (``18446744073709551616`` becomes
``1.8446744073709552e+19``, no longer exact). Both are refused here, as the YAML reader
refuses duplicate keys.

orjson parses every document; a cheap check on its result decides whether the document
needs a second, exact look: a float at or beyond ±2^63 (where a huge integer would have
landed), or fewer keys in the parsed objects than ``":`` sequences in the text (a key is
always a string followed by a colon; an escaped quote before a colon inside a string also
counts, so a surplus is possible without a duplicate). Only then is the document parsed again
with the standard library, which reports the duplicate key or the integer exactly.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

INT_MIN, INT_MAX = -(2**63), 2**64 - 1     # what orjson reads and writes exactly
_BIG = float(2**63)


class StrictJSONError(ValueError):
    """The text is JSON, but it has a duplicate key or an integer ctx cannot keep exactly."""


def loads(raw: bytes | str) -> Any:
    """Parse like ``orjson.loads`` (raises ``orjson.JSONDecodeError`` for invalid JSON); raise
    :class:`StrictJSONError` for a duplicate key or an integer outside [-2^63, 2^64 - 1]."""
    obj = orjson.loads(raw)
    n_keys, suspect = _shape(obj)
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    if suspect or data.count(b'":') != n_keys:
        _exact_check(data)
    return obj


def _shape(value: Any) -> tuple[int, bool]:
    """(number of keys in every object, whether a float lies where a huge integer would)."""
    n, suspect = 0, False
    stack = [value]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is dict:
            n += len(x)
            stack.extend(x.values())
        elif t is list:
            stack.extend(x)
        elif t is float and not -_BIG < x < _BIG:
            suspect = True
    return n, suspect


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise StrictJSONError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 60:
        raise StrictJSONError("integer of more than 60 digits is outside the 64-bit range; quote it to keep it exact")
    v = int(text)
    if not INT_MIN <= v <= INT_MAX:
        raise StrictJSONError(f"integer {text} is outside the 64-bit range; quote it to keep it exact")
    return v


def _exact_check(data: bytes) -> None:
    try:
        json.loads(data, object_pairs_hook=_pairs, parse_int=_int)
    except RecursionError:   # orjson accepted the nesting; the standard library cannot follow it
        raise StrictJSONError("nesting too deep") from None
    except StrictJSONError:
        raise
    except ValueError:       # the two parsers disagree on a corner orjson accepted: orjson decides
        pass


def check_ints(value: Any, where: str) -> None:
    """Raise ValueError naming ``where`` when a (YAML-given) integer is outside the 64-bit range."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, int) and not isinstance(x, bool) and not INT_MIN <= x <= INT_MAX:
            s = str(x) if x.bit_length() < 200 else "of more than 60 digits"
            raise ValueError(f"{where}: integer {s} is outside the 64-bit range; quote it to keep it exact")

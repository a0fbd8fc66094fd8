"""Pick a feed format from an Accept header: RFC 9110 section 12.5.1 with starfeed's aliases
(docs/design.md#negotiation). Pure.

- q-values, type/* and */*, case-insensitive, parameters ignored for matching;
- the most specific matching range decides a media type's quality; q=0 refuses;
- an element with an invalid q (not 0..1) is ignored, and so is garbage;
- no header, an empty one, or nothing we offer named -> RSS, the first of formats.FORMATS (docs/design.md#negotiation);
- 406 only when RSS is refused explicitly and nothing else we offer is acceptable.
"""

from __future__ import annotations

import re
from functools import lru_cache

from starfeed.formats import DEFAULT, FORMATS, FeedFormat

# The types offered, in the server's order of preference (formats.py).
OFFERED = tuple(f.media_type for f in FORMATS)
MAX_ACCEPT_LENGTH = 4096

# One element: a type/subtype, then parameters (quoted strings may hold commas and semicolons).
_ELEMENT = re.compile(r"""\s*([^\s,;/]+)\s*/\s*([^\s,;]+)\s*"""
                      r"""((?:;\s*[^\s,;=]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^\s,;]*))?\s*)*)""")
_PARAM = re.compile(r""";\s*([^\s,;=]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^\s,;]*))?""")
_QVALUE = re.compile(r"^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$")


class NotAcceptable(Exception):
    """The client refused RSS and accepts nothing else offered (406)."""


class BadAccept(Exception):
    """An Accept header too large to consider (400)."""


def negotiate(accept: str | None) -> str:
    if accept is not None and len(accept) > MAX_ACCEPT_LENGTH:
        raise BadAccept(f"Accept header longer than {MAX_ACCEPT_LENGTH} characters")
    return _negotiate(accept or "")


@lru_cache(maxsize=512)
def _negotiate(accept: str) -> str:
    ranges = _parse(accept)
    if not ranges:
        return DEFAULT.name
    best, best_key, default_refused = None, None, False
    for rank, fmt in enumerate(FORMATS):
        specificity, quality = _format_quality(fmt, ranges)
        if specificity == 0:
            continue  # nothing in the header speaks of this format
        if quality == 0:
            default_refused |= fmt is DEFAULT
            continue
        key = (quality, specificity, -rank)
        if best_key is None or key > best_key:
            best, best_key = fmt.name, key
    if best is not None:
        return best
    if default_refused:
        raise NotAcceptable("acceptable types: " + ", ".join(OFFERED))
    return DEFAULT.name


def _format_quality(fmt: FeedFormat, ranges: list[tuple[str, str, float]]) -> tuple[int, float]:
    """(specificity, q) for a format: its served type takes the most specific matching range;
    an alias (application/xml, application/json, ...) counts only when named exactly, so a
    wildcard never lowers or raises a format through a type we do not serve."""
    main, sub = fmt.media_type.split("/")
    best = (0, 0.0)
    for r_main, r_sub, q in ranges:
        if r_main == main and r_sub == sub:
            specificity = 3
        elif r_main == main and r_sub == "*":
            specificity = 2
        elif r_main == "*" and r_sub == "*":
            specificity = 1
        else:
            continue
        if specificity > best[0] or (specificity == best[0] and q > best[1]):
            best = (specificity, q)
    for r_main, r_sub, q in ranges:
        if f"{r_main}/{r_sub}" in fmt.aliases and (best[0] < 3 or q > best[1]):
            best = (3, max(q, best[1]) if best[0] == 3 else q)
    return best


def _parse(accept: str) -> list[tuple[str, str, float]]:
    ranges = []
    position = 0
    while position < len(accept):
        match = _ELEMENT.match(accept, position)
        if match is None:
            # Garbage up to the next comma is skipped, not fatal.
            comma = accept.find(",", position)
            position = len(accept) if comma < 0 else comma + 1
            continue
        position = match.end()
        main, sub, params = match.group(1).lower(), match.group(2).lower(), match.group(3)
        quality = 1.0
        for name, value in _PARAM.findall(params):
            if name.lower() == "q":
                quality = float(value) if _QVALUE.match(value or "") else -1.0
        if quality >= 0 and not (main == "*" and sub != "*"):
            ranges.append((main, sub, quality))
        comma = accept.find(",", position)
        if comma < 0:
            break
        position = comma + 1
    return ranges

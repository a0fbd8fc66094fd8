"""Opaque page cursors and the Link header of a page. A cursor carries the keys the next page
starts after, and which list it belongs to; one from a query string is hostile until decoded."""

from __future__ import annotations

import base64
import binascii
import json
from urllib.parse import urlencode

CURSOR_BYTES = 2048  # three DynamoDB keys fit (at most 2,048 + 1,024 + 1,024 bytes in theory; ours are short)


class BadCursor(ValueError):
    pass


def encode_cursor(kind: str, keys: dict[str, str]) -> str:
    raw = json.dumps({"k": kind, **keys}, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, kind: str, names: tuple[str, ...]) -> dict[str, str]:
    """The keys a cursor of this kind holds: exactly these names, each a non-empty string."""
    refused = BadCursor(f"cursor is not a cursor of this list: take it from the `next` of a page of {kind}")
    if len(cursor) > CURSOR_BYTES:
        raise refused
    try:
        document = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise refused from None
    if not isinstance(document, dict) or document.pop("k", None) != kind or set(document) != set(names):
        raise refused
    if not all(isinstance(v, str) and v for v in document.values()):
        raise refused
    return document


def page_url(base: str, path: str, query: dict[str, object]) -> str:
    """A page's absolute URL: the same query, with the cursor of the page it names."""
    kept = {k: v for k, v in query.items() if v is not None}
    return f"{base.rstrip('/')}{path}" + (f"?{urlencode(kept)}" if kept else "")


def link_header(next_url: str | None) -> dict[str, str]:
    return {"Link": f'<{next_url}>; rel="next"'} if next_url else {}

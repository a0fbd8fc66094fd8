"""Opaque page cursors, one codec for every paged list: what a page starts after, base64url without
padding, read back as hostile (anything we did not write is a BadCursor, which says why). Pure.

Two payloads, each read as it always was, since a cursor outlives the code that wrote it:
- a feed's older and newer pages (RFC 5005, `?before=` and `?after=`): the sort key as it is, in
  the links feed readers keep;
- the REST API's lists (`?cursor=`): JSON of the keys the next page starts after and of the list
  they belong to, so that a cursor of one list is refused by another."""

from __future__ import annotations

import base64
import json
import time

MAX_CURSOR_LENGTH = 2048  # longer than any we write: three DynamoDB keys, ours short, or one sort key


class BadCursor(ValueError):
    pass


def _encode(payload: str) -> str:
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def _decode(cursor: str, refused: BadCursor) -> str:
    if len(cursor) > MAX_CURSOR_LENGTH:
        raise refused
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise refused from None


def encode_sort_key(sort_key: str) -> str:
    return _encode(sort_key)


def decode_sort_key(cursor: str, name: str, max_bytes: int) -> str:
    """The sort key ("<RFC 3339 time>#<entry uid>") a feed page's cursor holds, in the query
    parameter `name`; refused unless it is one that fits a key of max_bytes, so that a reader's
    query never becomes a 500."""
    refused = BadCursor(f"{name}= is not a page cursor of this feed")
    sort_key = _decode(cursor, refused)
    stamp, _, uid = sort_key.partition("#")
    try:
        time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise refused from None
    if not uid or len(sort_key.encode()) > max_bytes:
        raise refused
    return sort_key


def encode_keys(kind: str, keys: dict[str, str]) -> str:
    return _encode(json.dumps({"k": kind, **keys}, separators=(",", ":"), ensure_ascii=False))


def decode_keys(cursor: str, kind: str, names: tuple[str, ...]) -> dict[str, str]:
    """The keys a REST list's cursor of this kind holds: exactly these names, each a non-empty
    string."""
    refused = BadCursor(f"cursor is not a cursor of this list: take it from the `next` of a page of {kind}")
    try:
        document: object = json.loads(_decode(cursor, refused))
    except ValueError:  # json.JSONDecodeError
        raise refused from None
    if not isinstance(document, dict) or document.pop("k", None) != kind or set(document) != set(names):
        raise refused
    if not all(isinstance(v, str) and v for v in document.values()):
        raise refused
    return document

"""JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1), which feedparser does not read.

Items come out shaped like feedparser's entries, so one normalizer serves every format.
"""

from __future__ import annotations

import json
from html import escape
from urllib.parse import urljoin

from feedparser.datetimes import _parse_date

VERSION_PREFIX = "https://jsonfeed.org/version/1"


class NotJsonFeed(ValueError):
    pass


def looks_like_json(body: bytes, content_type: str | None) -> bool:
    if content_type and "json" in content_type.lower():
        return True
    return body.lstrip()[:1] == b"{"


def parse_json_feed(body: bytes, url: str, max_depth: int) -> tuple[dict, list[dict]]:
    """(channel, entries), or NotJsonFeed with the reason."""
    try:
        document = json.loads(body)
    except RecursionError:
        raise NotJsonFeed(f"JSON nested deeper than {max_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotJsonFeed(f"not JSON: {exc}") from None
    if _depth(document, max_depth) > max_depth:
        raise NotJsonFeed(f"JSON nested deeper than {max_depth} levels")
    if not isinstance(document, dict) or not str(document.get("version", "")).startswith(VERSION_PREFIX):
        raise NotJsonFeed("JSON without a JSON Feed version (https://jsonfeed.org/version/1.x)")
    items = document.get("items")
    if not isinstance(items, list):
        raise NotJsonFeed("JSON Feed without an items list")
    base = _text(document.get("feed_url")) or url
    channel = {"title": _text(document.get("title")), "link": _text(document.get("home_page_url")),
               "version": "json1" + ("1" if document["version"].endswith("1.1") else "0")}
    return channel, [_entry(item, base) for item in items if isinstance(item, dict)]


def _entry(item: dict, base: str) -> dict:
    html, text = _text(item.get("content_html")), _text(item.get("content_text"))
    link = _text(item.get("url")) or _text(item.get("external_url"))
    authors = item.get("authors") if isinstance(item.get("authors"), list) else (
        [item["author"]] if isinstance(item.get("author"), dict) else [])  # 1.0's single author
    return {
        "id": _text(item.get("id")),
        "link": urljoin(base, link) if link else None,
        "title": _text(item.get("title")),
        "summary": _text(item.get("summary")) or text,
        "content": [{"value": html or (escape(text) if text else None)}] if html or text else [],
        "published_parsed": _date(item.get("date_published")),
        "updated_parsed": _date(item.get("date_modified")),
        "authors": [{"name": _text(a.get("name")), "href": _text(a.get("url"))}
                    for a in authors if isinstance(a, dict)],
        "tags": [{"term": t} for t in item.get("tags") or [] if isinstance(t, str)],
        "enclosures": [{"href": urljoin(base, _text(a.get("url")) or ""), "type": _text(a.get("mime_type")),
                        "length": a.get("size_in_bytes")}
                       for a in item.get("attachments") or [] if isinstance(a, dict) and a.get("url")],
    }


def _text(value) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)  # JSON Feed 1.0 allowed numeric ids
    return value if isinstance(value, str) else None


def _date(value):
    return _parse_date(value) if isinstance(value, str) and value else None


def _depth(value, limit: int) -> int:
    """Nesting depth, computed without recursion and stopping past the limit."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return deepest

"""JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1), which feedparser does not read.

Items come out shaped like feedparser's entries, so one normalizer serves every format.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from starfeed.parse.normalize import parse_date
from starfeed.urlpolicy import WEB_AND_MAIL, safe_link

VERSION_PREFIX = "https://jsonfeed.org/version/1"


class NotJsonFeed(ValueError):
    pass


def looks_like_json(body: bytes, content_type: str | None) -> bool:
    if content_type and "json" in content_type.lower():
        return True
    return body.lstrip()[:1] == b"{"


def parse_json_feed(body: bytes, url: str, max_depth: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(channel, entries), or NotJsonFeed with the reason. A member of the wrong type ("tags": 5,
    "attachments": true, "url": 7) counts as missing; the rest of its item is kept."""
    try:
        # A number of hundreds of digits is no size or id: it reads as missing, not as an error.
        document = json.loads(body, parse_int=_int)
    except RecursionError:
        raise NotJsonFeed(f"JSON nested deeper than {max_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotJsonFeed(f"not JSON: {exc}") from None
    if _depth(document, max_depth) > max_depth:
        raise NotJsonFeed(f"JSON nested deeper than {max_depth} levels")
    version = document.get("version") if isinstance(document, dict) else None
    if not isinstance(version, str) or not version.startswith(VERSION_PREFIX):
        raise NotJsonFeed("JSON without a JSON Feed version (https://jsonfeed.org/version/1.x)")
    items = document.get("items")
    if not isinstance(items, list):
        raise NotJsonFeed("JSON Feed without an items list")
    base = safe_link(_str(document.get("feed_url")), url) or url
    channel = {"title": _str(document.get("title")), "link": _str(document.get("home_page_url")),
               "version": "json1" + ("1" if version.endswith("1.1") else "0"),
               "authors": _authors(document, base), "language": _str(document.get("language")),
               "self": _str(document.get("feed_url")), "hub": _websub_hub(document.get("hubs")),
               "next": _str(document.get("next_url"))}
    return channel, [_entry(item, base) for item in items if isinstance(item, dict)]


def _websub_hub(hubs: object) -> str | None:
    """The first WebSub hub of JSON Feed's `hubs` ([{"type": "WebSub", "url": …}])."""
    for hub in hubs if isinstance(hubs, list) else ():
        if isinstance(hub, dict) and str(hub.get("type", "")).lower() in ("websub", "pubsubhubbub"):
            return _str(hub.get("url"))
    return None


def _entry(item: dict[str, Any], base: str) -> dict[str, Any]:
    html, text = _str(item.get("content_html")), _str(item.get("content_text"))
    link = safe_link(_str(item.get("url")), base)
    return {
        "id": _id(item.get("id")),
        "link": link or safe_link(_str(item.get("external_url")), base),
        "title": _str(item.get("title")),
        "summary": _str(item.get("summary")) or text,
        # JSON Feed names no base for content_html's relative URLs: as in RSS and Atom without
        # xml:base, the document's own address (RFC 3986 section 5.1.3). "base" as feedparser says it.
        "content": [{"value": html or escape(text or ""), "base": base}] if html or text else [],
        "published_parsed": parse_date(item.get("date_published")),
        "updated_parsed": parse_date(item.get("date_modified")),
        "authors": _authors(item, base),
        "tags": [{"term": t} for t in _list(item.get("tags")) if isinstance(t, str)],
        "enclosures": [{"href": href, "type": _str(a.get("mime_type")), "length": _size(a.get("size_in_bytes"))}
                       for a in _list(item.get("attachments")) if isinstance(a, dict)
                       and (href := safe_link(_str(a.get("url")), base))],
    }


def _authors(holder: dict[str, Any], base: str) -> list[dict[str, Any]]:
    """1.1's authors, else 1.0's author: feedparser-shaped {name, href}."""
    authors = holder.get("authors")
    if not (isinstance(authors, list) and authors):
        authors = [holder.get("author")]
    return [{"name": _str(a.get("name")), "href": safe_link(_str(a.get("url")), base, WEB_AND_MAIL)}
            for a in authors if isinstance(a, dict)]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _id(value: object) -> str | None:
    """A string; JSON Feed 1.0 allowed numbers."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return _str(value)


def _size(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(digits: str) -> int | None:
    return int(digits) if len(digits) <= 20 else None


def _depth(value: object, limit: int) -> int:
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

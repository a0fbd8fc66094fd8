"""Parse a feed document with feedparser, which must never raise out of here."""

from __future__ import annotations

from dataclasses import dataclass, field

import feedparser


@dataclass
class ParsedFeed:
    title: str | None = None
    link: str | None = None
    ttl_minutes: int | None = None
    entries: list = field(default_factory=list)  # feedparser entry dicts
    error: str | None = None


def parse_feed(body: bytes, url: str, content_type: str | None = None) -> ParsedFeed:
    headers = {"content-location": url}
    if content_type:
        headers["content-type"] = content_type
    try:
        parsed = feedparser.parse(body, response_headers=headers, sanitize_html=True,
                                  resolve_relative_uris=True)
    except Exception as exc:  # feedparser raises on some hostile inputs instead of setting bozo
        return ParsedFeed(error=f"not parseable: {type(exc).__name__}: {str(exc)[:200]}")
    channel = parsed.get("feed", {})
    if not parsed.get("version") and not parsed.entries:
        problem = parsed.get("bozo_exception")
        detail = f": {str(problem)[:200]}" if problem else ""
        return ParsedFeed(error=f"not a feed (no RSS or Atom found){detail}")
    return ParsedFeed(title=channel.get("title"), link=channel.get("link"),
                      ttl_minutes=_int(channel.get("ttl")), entries=list(parsed.entries))


def _int(value) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None

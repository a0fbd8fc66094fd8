"""Parse a fetched document into a channel and raw entries. Never raises: every failure is a
ParsedFeed with an error a person can act on."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import feedparser

from starfeed.parse.jsonfeed import NotJsonFeed, looks_like_json, parse_json_feed
from starfeed.parse.normalize import email_and_name

# Tags, skipping CDATA sections and comments (HTML inside them is not the document's nesting).
_MARKUP = re.compile(rb"<!\[CDATA\[.*?\]\]>|<!--.*?-->|<(/?)[A-Za-z_][^\s/>]*[^>]*?(/?)>", re.DOTALL)


# What feedparser flags that says nothing about the document's health.
_BENIGN = (feedparser.NonXMLContentType, feedparser.CharacterEncodingOverride)


_SKIP_HOURS = re.compile(rb"<skipHours>(.{0,2000}?)</skipHours>", re.DOTALL | re.IGNORECASE)
_SKIP_DAYS = re.compile(rb"<skipDays>(.{0,2000}?)</skipDays>", re.DOTALL | re.IGNORECASE)
_HOUR = re.compile(rb"<hour>\s*(\d{1,2})\s*</hour>", re.IGNORECASE)
_DAY = re.compile(rb"<day>\s*([A-Za-z]{3})[A-Za-z]*\s*</day>", re.IGNORECASE)

YEAR_MINUTES = 525_600  # the longest ttl taken; a longer one (or 10**4000) means "rarely"


@dataclass
class ParsedFeed:
    format: str | None = None  # rss20, atom10, rss10, json11, ...
    title: str | None = None
    link: str | None = None
    # The channel's authors (feedparser-shaped {name, email, href}): an entry without its own
    # inherits them (RFC 4287 section 4.2.1); and its language as declared (RSS, xml:lang, JSON Feed).
    authors: list[dict[str, Any]] = field(default_factory=list)
    language: str | None = None
    ttl_minutes: int | None = None
    # RSS skipHours (0-23, UTC) and skipDays ("Mon".."Sun"); feedparser keeps only the last one.
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[str, ...] = ()
    entries: list[Any] = field(default_factory=list)  # feedparser-shaped entry dicts
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    # WebSub discovery (WebSub section 4, docs/design.md#websub): the document's hub and self links,
    # as written (absolute or not).
    hub: str | None = None
    self_url: str | None = None
    # RFC 5005: the document of older entries, rel="prev-archive" (section 4) or else rel="next" (section 3).
    older: str | None = None


def parse_feed(body: bytes, url: str, content_type: str | None = None, *,
               max_items: int = 1000, max_depth: int = 256) -> ParsedFeed:
    if not body.strip():
        return ParsedFeed(error="empty response: the server sent no document")
    if looks_like_json(body, content_type):
        return _limit(_parse_json(body, url, max_depth), max_items)
    if _xml_depth_exceeds(body, max_depth):
        return ParsedFeed(error=f"XML nested deeper than {max_depth} levels: not parsed")
    return _limit(_parse_xml(body, url, content_type), max_items)


def _parse_json(body: bytes, url: str, max_depth: int) -> ParsedFeed:
    try:
        channel, entries = parse_json_feed(body, url, max_depth)
    except NotJsonFeed as exc:
        return ParsedFeed(error=f"not a feed: {exc}")
    return ParsedFeed(format=channel["version"], title=channel["title"], link=channel["link"],
                      authors=channel["authors"], language=channel["language"], entries=entries,
                      hub=channel["hub"], self_url=channel["self"], older=channel["next"])


def _parse_xml(body: bytes, url: str, content_type: str | None) -> ParsedFeed:
    headers = {"content-location": url}
    if content_type:
        headers["content-type"] = content_type
    try:
        # nh3 sanitizes every HTML field afterwards, faster and stricter than feedparser's own,
        # and resolves its relative URLs against each entry's base (parse.normalize), which
        # feedparser's resolution gets wrong for in-page anchors (it points them at the feed).
        parsed = feedparser.parse(body, response_headers=headers, sanitize_html=False,
                                  resolve_relative_uris=False)
    except Exception as exc:  # noqa: BLE001 - feedparser raises on some hostile inputs instead of setting bozo
        return ParsedFeed(error=f"not parseable: {type(exc).__name__}: {str(exc)[:200]}")
    channel = parsed.get("feed", {})
    if not parsed.get("version") and not parsed.entries:
        problem = parsed.get("bozo_exception")
        detail = f": {str(problem)[:200]}" if problem else ""
        return ParsedFeed(error=f"not a feed (no RSS, Atom or JSON Feed found){detail}")
    problem = parsed.get("bozo_exception")
    warnings = [f"ill-formed XML, read leniently: {str(problem)[:200]}"] \
        if problem is not None and not isinstance(problem, _BENIGN) else []
    hours, days = _skip_windows(body)
    return ParsedFeed(format=parsed.get("version") or "unknown", title=channel.get("title"),
                      link=channel.get("link"), authors=_channel_authors(channel),
                      language=_str(channel.get("language")), ttl_minutes=_ttl(channel.get("ttl")),
                      skip_hours=hours, skip_days=days, entries=list(parsed.entries),
                      warnings=warnings, hub=_link_of(channel, "hub"), self_url=_link_of(channel, "self"),
                      older=_link_of(channel, "prev-archive") or _link_of(channel, "next"))


def _link_of(channel: Any, rel: str) -> str | None:
    """The channel's first link with this rel (atom:link in Atom and RSS)."""
    links = channel.get("links")
    for link in links if isinstance(links, list) else ():
        if isinstance(link, dict) and link.get("rel") == rel and isinstance(href := link.get("href"), str):
            return href
    return None


def _channel_authors(channel: Any) -> list[dict[str, Any]]:
    """The channel's author: Atom's feed author, RSS's managingEditor or dc:creator."""
    authors = channel.get("authors")
    if not (isinstance(authors, list) and authors):
        detail = channel.get("author_detail")
        authors = [detail] if isinstance(detail, dict) else []
    line = _str(channel.get("author"))
    if len(authors) == 1 and isinstance(authors[0], dict) and line and (split := email_and_name(line)):
        return [{**authors[0], **split}]  # feedparser's own split is off once a letter is not ASCII
    return authors


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _skip_windows(body: bytes) -> tuple[tuple[int, ...], tuple[str, ...]]:
    hours = _SKIP_HOURS.search(body)
    days = _SKIP_DAYS.search(body)
    return (tuple(sorted({int(h) for h in _HOUR.findall(hours.group(1)) if int(h) < 24})) if hours else (),
            tuple(sorted({d.decode().capitalize() for d in _DAY.findall(days.group(1))})) if days else ())


def _limit(parsed: ParsedFeed, max_items: int) -> ParsedFeed:
    if len(parsed.entries) > max_items:
        # Newest kept: by date where there is one, else in document order (newest first).
        ordered = sorted(parsed.entries, key=lambda e: tuple(e.get("published_parsed")
                                                             or e.get("updated_parsed") or ()),
                         reverse=True)
        parsed.warnings.append(f"{len(parsed.entries)} items: kept the newest {max_items}")
        parsed.entries = ordered[:max_items]
    return parsed


def _xml_depth_exceeds(body: bytes, limit: int) -> bool:
    if body.count(b"<") <= limit:
        return False  # fewer tags than the limit cannot nest deeper than it
    depth = 0
    for match in _MARKUP.finditer(body):
        closing, self_closing = match.group(1), match.group(2)
        if closing is None:
            continue  # CDATA or comment
        if closing:
            depth -= 1
        elif not self_closing:
            depth += 1
            if depth > limit:
                return True
    return False


def _ttl(value: object) -> int | None:
    """RSS ttl in minutes, at most a year; None when it is no positive number."""
    digits = value.strip().lstrip("0") if isinstance(value, str) else ""
    if not (digits.isascii() and digits.isdigit()):
        return None
    return min(int(digits), YEAR_MINUTES) if len(digits) <= 6 else YEAR_MINUTES

"""From fetched bytes to the entries a source keeps: parse, normalize, filter. Pure; shared by
the fetcher and `starfeed inspect`, so inspecting a feed shows exactly what ingesting it does."""

from __future__ import annotations

import calendar
import time
from collections import Counter
from dataclasses import dataclass, field

from feedparser.datetimes import _parse_date

from starfeed.model import Entry, Source
from starfeed.parse.feed import parse_feed
from starfeed.parse.filters import filter_entries
from starfeed.parse.html import discover_feeds, extract_article, looks_like_html
from starfeed.parse.normalize import (clean_html, clean_text, normalize_entries, rfc3339,
                                      struct_to_rfc3339)
from starfeed.settings import Settings

SUMMARY_CHARS = 500


@dataclass
class Ingested:
    format: str | None = None
    title: str | None = None
    link: str | None = None
    ttl_minutes: int | None = None
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[str, ...] = ()
    publications: tuple[float, ...] = ()  # every parsed entry's publication time, for the EWMA
    parsed_count: int = 0
    entries: list[Entry] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


def ingest(body: bytes, url: str, content_type: str | None, source: Source, now: float,
           settings: Settings) -> Ingested:
    if source.kind == "website":
        return _website(body, url, source, now, settings)
    parsed = parse_feed(body, url, content_type, max_items=settings.max_items,
                        max_depth=settings.max_depth)
    if parsed.error:
        if looks_like_html(body, content_type):
            feeds = discover_feeds(body, url)
            hint = (f"; it announces {len(feeds)} feed(s), e.g. {feeds[0].url}" if feeds else
                    "; subscribe to it as a website (--website) to follow its article")
            return Ingested(error=f"an HTML page, not a feed{hint}")
        return Ingested(error=parsed.error, warnings=parsed.warnings)
    entries = normalize_entries(parsed.entries, source.source_id, url, now)
    filtered = filter_entries(entries, source, now, settings.max_article_age_days)
    return Ingested(format=parsed.format, title=clean_text(parsed.title), link=parsed.link,
                    ttl_minutes=parsed.ttl_minutes, skip_hours=parsed.skip_hours,
                    skip_days=parsed.skip_days, publications=_publications(entries, now),
                    parsed_count=len(entries),
                    entries=filtered.kept, dropped=filtered.dropped, warnings=parsed.warnings)


def _publications(entries: list[Entry], now: float) -> tuple[float, ...]:
    """When the entries were published (future dates are not evidence of a rhythm)."""
    times = (calendar.timegm(time.strptime(e.published, "%Y-%m-%dT%H:%M:%SZ"))
             for e in entries if e.published)
    return tuple(sorted(t for t in times if t <= now))


def _website(body: bytes, url: str, source: Source, now: float, settings: Settings) -> Ingested:
    """Seed 002: the page's main article becomes an entry when its text is new."""
    article = extract_article(body, url)
    if article is None:
        return Ingested(error="no article text found on the page")
    seen = rfc3339(now)
    published = struct_to_rfc3339(_parse_date(article.published)) if article.published else None
    entry = Entry(entry_uid=f"sha256:{article.text_hash}", feed_id=source.source_id,
                  canonical_link=url, title=clean_text(article.title),
                  summary=clean_text(article.text[:SUMMARY_CHARS]), content=clean_html(article.html),
                  authors=[{"name": clean_text(article.author), "email": None, "uri": None}]
                  if clean_text(article.author) else [],
                  published=published, first_seen=seen, last_seen=seen,
                  content_hash=article.text_hash)
    filtered = filter_entries([entry], source, now, settings.max_article_age_days)
    return Ingested(format="html", title=clean_text(article.title), link=url, parsed_count=1,
                    entries=filtered.kept, dropped=filtered.dropped)

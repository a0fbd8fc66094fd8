"""From fetched bytes to the entries a source keeps: parse, normalize, filter. Pure; shared by
the fetcher and `starfeed inspect`, so inspecting a feed shows exactly what ingesting it does."""

from __future__ import annotations

import calendar
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from starfeed.model import Entry, Source
from starfeed.parse.feed import parse_feed
from starfeed.parse.filters import Filtered, filter_entries, history_entries
from starfeed.parse.fit import TITLE_CHARS, fit_entry
from starfeed.parse.html import discover_feeds, extract_article, looks_like_html
from starfeed.parse.normalize import normalize_entries, parse_date, rfc3339, struct_to_rfc3339, web_link
from starfeed.parse.selected import read_page
from starfeed.parse.text import clean_html, clean_text, clip, language_tag, plain_text, utf8_size
from starfeed.settings import Settings
from starfeed.urlpolicy import redact

SUMMARY_CHARS = 500  # a website article's excerpt
MESSAGE_CHARS = 500


@dataclass
class Ingested:
    format: str | None = None
    title: str | None = None
    link: str | None = None
    language: str | None = None  # as the feed declares it, as a BCP 47 tag (the source's language)
    ttl_minutes: int | None = None
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[str, ...] = ()
    publications: tuple[float, ...] = ()  # every parsed entry's publication time, for the EWMA
    parsed_count: int = 0
    entries: list[Entry] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    left_out: list[Entry] = field(default_factory=list)  # a first fetch's, remembered as seen (filters.Filtered)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    hub: str | None = None  # the document's WebSub hub and self URL, absolute http(s), or None
    self_url: str | None = None
    older: str | None = None  # RFC 5005: the archive document of older entries, absolute http(s)


# How a kind of source reads a document (starfeed.kinds): read_feed, read_website, read_selected.
Reader = Callable[[bytes, str, "str | None", Source, float, Settings, bool], "Ingested"]


def ingest(read: Reader, body: bytes, url: str, content_type: str | None, source: Source, now: float,
           settings: Settings, history: bool = False) -> Ingested:
    """The document as its kind reads it. Never raises: whatever the bytes, an ingested document
    or an error naming the stage. Links are resolved against url without its credentials
    (userinfo, a token in its query), so none of them reaches a link starfeed publishes."""
    url = redact(url) or url
    try:
        ingested = read(body, url, content_type, source, now, settings, history)
    except Exception as exc:  # noqa: BLE001 - a hostile document is the source's failure, not ours
        ingested = Ingested(error=f"parse: {type(exc).__name__}: {exc}")
    # Errors and warnings quote the document: they reach pages and logs, so XML-safe and short.
    ingested.error = clip(plain_text(ingested.error), MESSAGE_CHARS) if ingested.error else None
    ingested.warnings = [clip(plain_text(w) or "", MESSAGE_CHARS) for w in ingested.warnings]
    return ingested


def read_feed(body: bytes, url: str, content_type: str | None, source: Source, now: float,
              settings: Settings, history: bool = False) -> Ingested:
    """An RSS, Atom or JSON Feed document's entries, filtered as a source keeps them. history: an
    archive document's, kept whatever their dates (filters.history_entries)."""
    parsed = parse_feed(body, url, content_type, max_items=settings.max_items,
                        max_depth=settings.max_depth)
    if parsed.error:
        if looks_like_html(body, content_type):
            feeds = discover_feeds(body, url)
            found = (f"the feed found on it is {feeds[0].url}" + (f" ({len(feeds) - 1} more)" if len(feeds) > 1 else "")
                     if feeds else "it names no feed; subscribe to it as a website (--website) to follow its article")
            return Ingested(error=f"not a feed: an HTML page; {found}")
        return Ingested(error=parsed.error, warnings=parsed.warnings)
    entries = normalize_entries(parsed.entries, source.source_id, url, now, settings, parsed.authors)
    filtered = _filtered(entries, source, now, settings, history)
    warnings = list(parsed.warnings)
    return Ingested(format=parsed.format, title=clip(clean_text(parsed.title), TITLE_CHARS),
                    link=_channel_link(parsed.link, url, settings, warnings),
                    language=language_tag(parsed.language), ttl_minutes=parsed.ttl_minutes,
                    skip_hours=parsed.skip_hours, skip_days=parsed.skip_days, publications=_publications(entries, now),
                    parsed_count=len(entries),
                    entries=filtered.kept, dropped=filtered.dropped, left_out=filtered.left_out, warnings=warnings,
                    hub=web_link(parsed.hub, url), self_url=web_link(parsed.self_url, url),
                    older=web_link(parsed.older, url))


def _channel_link(link: object, url: str, settings: Settings, warnings: list[str]) -> str | None:
    """The feed's own link (the source's site_url), under the same URL policy as items'."""
    safe = web_link(link, url)
    if utf8_size(safe) > settings.max_link_bytes:
        warnings.append(f"channel link of {utf8_size(safe):,} bytes dropped: longer than {settings.max_link_bytes:,}")
        return None
    return safe


def _publications(entries: list[Entry], now: float) -> tuple[float, ...]:
    """When the entries were published (future dates are not evidence of a rhythm)."""
    times = (calendar.timegm(time.strptime(e.published, "%Y-%m-%dT%H:%M:%SZ"))
             for e in entries if e.published)
    return tuple(sorted(t for t in times if t <= now))


def _filtered(entries: list[Entry], source: Source, now: float, settings: Settings, history: bool) -> Filtered:
    """What a source keeps of a document's entries: an archive document's whatever their dates."""
    if history:
        return history_entries(entries, source, now, settings.max_article_age_days, settings.future_skew)
    return filter_entries(entries, source, now, settings.max_article_age_days, settings.future_skew)


def read_website(body: bytes, url: str, content_type: str | None, source: Source, now: float,
                 settings: Settings, history: bool = False) -> Ingested:
    """A web page's main article, an entry when its text is new (a page has no history)."""
    article = extract_article(body, url)
    if article is None:
        return Ingested(error="no article text found on the page")
    seen = rfc3339(now)
    author = clean_text(article.author)
    entry = Entry(entry_uid=f"sha256:{article.text_hash}", feed_id=source.source_id,
                  canonical_link=web_link(url), title=clean_text(article.title),
                  summary=clip(clean_text(article.text), SUMMARY_CHARS), content=clean_html(article.html, url, url),
                  authors=[{"name": author, "email": None, "uri": None}] if author else [],
                  published=struct_to_rfc3339(parse_date(article.published)), first_seen=seen,
                  last_seen=seen, content_hash=article.text_hash)
    filtered = filter_entries([fit_entry(entry, settings)], source, now, settings.max_article_age_days,
                              settings.future_skew)
    return Ingested(format="html", title=clip(clean_text(article.title), TITLE_CHARS), link=web_link(url),
                    parsed_count=1, entries=filtered.kept, dropped=filtered.dropped, left_out=filtered.left_out)


def read_selected(body: bytes, url: str, content_type: str | None, source: Source, now: float,
                  settings: Settings, history: bool = False) -> Ingested:
    """A page read by its source's CSS selectors (parse/selected.py): its items are entries,
    normalized and filtered as a feed's are. A selector that finds nothing is the error."""
    if source.selectors is None:
        return Ingested(error="no selectors stored for this page: `starfeed source set ID --items SEL --title SEL "
                              "--link SEL` gives them")
    page = read_page(body, url, content_type, source.selectors, settings.max_items, settings)
    if page.error:
        return Ingested(format="selectors", error=page.error, warnings=page.warnings)
    entries = normalize_entries(page.entries, source.source_id, page.base, now, settings)
    filtered = _filtered(entries, source, now, settings, history)
    return Ingested(format="selectors", title=clip(clean_text(page.title), TITLE_CHARS), link=web_link(url),
                    publications=_publications(entries, now), parsed_count=len(entries), entries=filtered.kept,
                    dropped=filtered.dropped, left_out=filtered.left_out, warnings=page.warnings)

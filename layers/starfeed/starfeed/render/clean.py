"""Stored data made fit to render. Pure.

Whatever the store holds (entries written before a fix, a hand-edited item, a JSON attribute
with a lone surrogate in it), the renderer only ever sees what passes here: strings without
XML-illegal characters and of bounded length, dates it can format, lists of the right shapes and
links that pass the URL policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from starfeed.model import Author, Enclosure, Entry, Source
from starfeed.parse.text import language_tag, xml_safe
from starfeed.urlpolicy import WEB_AND_MAIL, redact, safe_link

# XML 1.0 Char excludes C0 controls (but tab, LF, CR), lone surrogates, U+FFFE and U+FFFF.
_MIME = re.compile(r"[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*")
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
LINE = 2048  # titles, names, categories: a reader shows a line of them
TEXT = 512 * 1024  # content and summaries; the fetcher stores at most 128 KB of content


def text(value: object, limit: int = LINE) -> str | None:
    """value as a non-empty XML-safe string, or None when it is not a string (numbers are
    written out; anything else is dropped)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = xml_safe(value[:limit]).strip()
    return value or None


def redacted_text(value: object, limit: int = LINE) -> str | None:
    """text(), with every URL in it redacted: error messages quote the URLs they failed on."""
    cleaned = text(value, limit)
    return _URL_IN_TEXT.sub(lambda m: redact(m.group()) or "", cleaned) if cleaned else None


def link(value: object, schemes: frozenset[str] | None = None) -> str | None:
    """A link that passes the URL policy, written as a URI: RSS and HTML attributes want URIs,
    and an IRI's non-ASCII characters become their UTF-8 escapes (RFC 3987 section 3.1), its host
    punycode; the same address to every browser and reader."""
    cleaned = text(value, 8192)
    safe = safe_link(cleaned, schemes=schemes) if schemes else safe_link(cleaned)
    return safe if safe is None or safe.isascii() else _as_uri(safe)


# Everything RFC 3986 allows unescaped in a path, query or fragment, "%" included: the escapes
# a link already holds stay as they are.
_URI_SAFE = "!#$%&'()*+,/:;=?@[]~"


def _as_uri(iri: str) -> str | None:
    try:
        parts = urlsplit(iri)
        host = parts.hostname or ""
        host = host.encode("idna").decode("ascii") if not host.isascii() else host
        port = parts.port
    except (UnicodeError, ValueError):
        return None
    if ":" in host:
        host = f"[{host}]"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = (quote(userinfo, safe=_URI_SAFE) + "@" if userinfo else "") + host + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, *(quote(part, safe=_URI_SAFE) for part in
                                               (parts.path, parts.query, parts.fragment))))


def language(value: object) -> str | None:
    """A stored language as a BCP 47 tag, or None."""
    return language_tag(value)


def when(value: object) -> datetime | None:
    """A stored RFC 3339 time as an aware UTC datetime, or None. Years before 1900 are taken as
    missing: RSS dates need four digits, and no feed entry was written then."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
        moment = (moment.replace(tzinfo=UTC) if moment.tzinfo is None
                  else moment.astimezone(UTC))
    except (ValueError, OverflowError):
        return None
    return moment if moment.year >= 1900 else None


def stamp(moment: datetime) -> str:
    # By hand: strftime's %Y does not pad years, isoformat writes +00:00 rather than Z.
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z")


def _time(value: object) -> str | None:
    moment = when(value)
    return stamp(moment) if moment else None


def entry(raw: Entry, fallback_time: str) -> Entry | None:
    """A copy of raw that every renderer can write, or None when it has no usable id."""
    uid = text(raw.entry_uid, 4096)
    if uid is None:
        return None
    first_seen = _time(raw.first_seen) or fallback_time
    return Entry(
        entry_uid=uid, feed_id=text(raw.feed_id) or "", canonical_link=link(raw.canonical_link),
        title=text(raw.title), summary=text(raw.summary, TEXT), content=text(raw.content, TEXT),
        authors=_authors(raw.authors), categories=_categories(raw.categories, raw.tags),
        enclosures=_enclosures(raw.enclosures), published=_time(raw.published),
        updated=_time(raw.updated), first_seen=first_seen,
        last_seen=_time(raw.last_seen) or first_seen, ordered_at=_time(raw.ordered_at))


def given_date(entry: Entry) -> str | None:
    """The date its source gave it, when the entry is not ordered by it (one in the future when
    first seen: docs/design.md#undated-and-future); else None."""
    return entry.published if entry.published and entry.published != entry.sort_time else None


def modified(entry: Entry) -> str | None:
    """Its updated date, unless that was in the future when the entry was last seen: a reader that
    orders by it would pin the entry to the top."""
    return entry.updated if entry.updated and entry.updated <= max(entry.last_seen, entry.sort_time) else None


def _list_of_text(values: object) -> list[str]:
    if not isinstance(values, list):
        return []
    cleaned = (text(v) for v in values[:100])
    return list(dict.fromkeys(v for v in cleaned if v))


def _categories(own: object, tags: object) -> list[str]:
    """The entry's categories, then the tags rules gave it (docs/design.md#rule-verdict) that it
    lacks: a tag "security" adds nothing to a feed's own "Security"."""
    categories = _list_of_text(own)
    known = {c.casefold() for c in categories}
    for tag in _list_of_text(tags):
        if tag.casefold() not in known:
            known.add(tag.casefold())
            categories.append(tag)
    return categories


def _authors(values: object) -> list[Author]:
    """[{name, email?, uri?}]: a bare string is a name; the URI may be mailto: as well as web."""
    if not isinstance(values, list):
        return []
    authors: list[Author] = []
    for value in values[:50]:
        if isinstance(value, str):
            value = {"name": value}
        if not isinstance(value, dict):
            continue
        author = Author()
        if name := text(value.get("name")):
            author["name"] = name
        if email := text(value.get("email")):
            author["email"] = email
        if uri := link(value.get("uri"), WEB_AND_MAIL):
            author["uri"] = uri
        if author:
            authors.append(author)
    return authors


def _enclosures(values: object) -> list[Enclosure]:
    if not isinstance(values, list):
        return []
    enclosures: list[Enclosure] = []
    for value in values[:50]:
        if not isinstance(value, dict) or not (url := link(value.get("url"))):
            continue
        length: Any = value.get("length")
        try:
            length = int(length) if not isinstance(length, bool) else None
        except (TypeError, ValueError, OverflowError):
            length = None
        mime = text(value.get("type"), 255)
        # A length the feed gave is kept, 0 included (RSS's "size unknown"); None: not given.
        enclosure = Enclosure(url=url)
        if mime and _MIME.fullmatch(mime):
            enclosure["type"] = mime
        if length is not None and 0 <= length < 2 ** 63:
            enclosure["length"] = length
        enclosures.append(enclosure)
    return enclosures


@dataclass(frozen=True)
class Shown:
    """How a source is named where the public sees it: never with its subscription credentials."""

    title: str
    url: str  # redacted


def shown(source: Source) -> Shown:
    url = text(redact(text(source.url, 8192)), 8192) or "(no URL)"
    return Shown(text(source.title) or url, url)


@dataclass(frozen=True)
class Origin:
    """The source an entry came from, as the public may see it: what attribution names
    (RSS <source>, Atom <source>, JSON Feed's _starfeed, the index), and the author an entry
    without one is credited to."""

    title: str
    feed_url: str | None = None  # the subscription, redacted; None when no safe link is left
    site_url: str | None = None
    language: str | None = None


def origin(source: Source, published_feed: str | None = None, subscribable: bool = False,
           site: str | None = None) -> Origin:
    """A stored source as its Origin; every field passes the same policy as an entry's.

    Its feed is the subscription URL when that is a feed a reader can subscribe to as shown (its
    kind says whether it is one: starfeed.kinds); else (a page, a GitHub account, a URL whose
    credentials were redacted) published_feed, starfeed's own feed of the source. site: its
    site, as its kind gives it."""
    seen = shown(source)
    subscribable = subscribable and seen.url == text(getattr(source, "url", None), 8192)
    feed = link(seen.url if subscribable else published_feed) or link(published_feed)
    cleaned = clean_origin(Origin(seen.title, feed, link(site), getattr(source, "language", None)))
    assert cleaned is not None  # a shown title is never empty
    return cleaned


def clean_origin(value: object) -> Origin | None:
    if not isinstance(value, Origin) or not (title := text(value.title)):
        return None
    return Origin(title, link(value.feed_url), link(value.site_url), language(value.language))

"""feedparser entries -> normalized entries (docs/design.md#entries): stable ids, absolute links, UTC times, clean text.

Entries come from hostile documents, and JSON Feed items are anybody's JSON: every member is
checked for its type before use, and one of the wrong type counts as missing. Nothing here
raises; parse/fit.py then fits each entry to what storage and the renderers accept."""

from __future__ import annotations

import calendar
import email.utils
import hashlib
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from starfeed.model import Author, Enclosure, Entry
from starfeed.parse.fit import fit_entry, fit_uid
from starfeed.parse.text import clean_html, clean_text, plain_text, text_of, xml_safe
from starfeed.settings import Settings
from starfeed.urlpolicy import WEB_AND_MAIL, WEB_SCHEMES, safe_link

_LENGTH = re.compile(r"[0-9]{1,15}")  # an enclosure's size in bytes: up to a petabyte

# A date outside these years is a mistake (Hugo's 0001-01-01, year 9999), and an
# entry without a date is ordered by when it was first seen (docs/design.md#times).
FIRST_YEAR, LAST_YEAR = 1970, 2100
_EARLIEST, _LATEST = 0, calendar.timegm((LAST_YEAR + 1, 1, 1, 0, 0, 0))
DEFAULTS = Settings()

# The text helpers moved to parse/text.py; the renderers and the GitHub parser import them here.
__all__ = ["clean_html", "clean_text", "normalize_entries", "parse_date", "plain_text", "rfc3339",
           "struct_to_rfc3339", "text_of", "web_link"]


def rfc3339(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def epoch_of(timestamp: str) -> float:
    """rfc3339's inverse (any ISO 8601 time with a zone reads too)."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone(UTC).timestamp()


def web_link(url: object, base: str | None = None, schemes: frozenset[str] = WEB_SCHEMES) -> str | None:
    """The URL policy (urlpolicy.safe_link: http and https, absolute, with a host), made
    canonical: scheme and host in lower case (docs/design.md#canonical-links), no fragment, the rest as
    published. None for anything else, a javascript: or data: URL included."""
    link = safe_link(url, base, schemes) if isinstance(url, str) else None
    if link is None:
        return None
    scheme, netloc, path, query, _ = urlsplit(link)
    return urlunsplit((scheme, netloc.lower(), path, query, ""))


def parse_date(value: object) -> time.struct_time | None:
    """A date as JSON Feed (RFC 3339) and HTML meta tags (ISO 8601) write it, or as RFC 822,
    which some JSON feeds carry anyway, as a UTC time tuple; None when unreadable. Dates in RSS
    and Atom are feedparser's to read (its *_parsed fields)."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    try:  # no zone given: UTC, as RFC 3339's "-00:00" means
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC).timetuple()
    except (OverflowError, ValueError):  # year 1 west of Greenwich
        return None


def struct_to_rfc3339(struct: object) -> str | None:
    """A time tuple as RFC 3339 UTC, or None when it is not one or lies outside 1970-2100."""
    if not isinstance(struct, (tuple, list)) or len(struct) < 6:
        return None
    fields = tuple(struct[:6])
    if not all(type(v) is int for v in fields) or not FIRST_YEAR <= fields[0] <= LAST_YEAR:
        return None
    try:
        epoch = calendar.timegm(fields + (0, 0, 0))
    except (OverflowError, ValueError):  # month 13, an hour of 10**30
        return None
    return rfc3339(epoch) if _EARLIEST <= epoch < _LATEST else None


def normalize_entries(raw_entries: list[Any], feed_id: str, feed_url: str, now: float,
                      limits: Settings = DEFAULTS, feed_authors: list[dict[str, Any]] | None = None) -> list[Entry]:
    """Every entry normalized and fitted to storage (limits: the max_* settings); none dropped
    but an exact repeat of an earlier one. An entry without an author has the feed's
    (feed_authors, feedparser-shaped), as RFC 4287 section 4.2.1 says of Atom and readers do of RSS."""
    seen = rfc3339(now)
    entries: list[Entry] = []
    uids: set[str] = set()
    inherited = _author_list(feed_authors)
    for raw in raw_entries if isinstance(raw_entries, (list, tuple)) else ():
        if not isinstance(raw, Mapping):
            continue
        entry = normalize_entry(raw, feed_id, feed_url, seen)
        if not entry.authors and inherited:
            entry.authors = [Author(**author) for author in inherited]
        entry = fit_entry(entry, limits)
        if entry.entry_uid in uids:
            # A GUID repeated inside one feed must not merge two different entries.
            entry.entry_uid = fit_uid(f"{entry.entry_uid}#{entry.content_hash[:12]}", limits.max_uid_bytes)
            if entry.entry_uid in uids:
                continue
        uids.add(entry.entry_uid)
        entries.append(entry)
    return entries


def normalize_entry(raw: Mapping[str, Any], feed_id: str, feed_url: str, seen: str) -> Entry:
    """One feedparser-shaped entry, unfitted: its id, link and text may be of any length."""
    link = web_link(raw.get("link"), feed_url)
    title = clean_text(raw.get("title"))
    published = struct_to_rfc3339(raw.get("published_parsed")) or struct_to_rfc3339(raw.get("updated_parsed"))
    contents = [c for c in _dicts(raw.get("content")) if isinstance(c.get("value"), str)]
    raw_summary = _str(raw.get("summary"))
    detail = contents[0] if contents else raw.get("summary_detail")
    body = contents[0]["value"] if contents else raw_summary
    # Relative URLs resolve against the base in scope where the HTML stood (xml:base, else the
    # document's address, as feedparser reports it); in-page anchors against the entry's page.
    base = (_str(detail.get("base")) if isinstance(detail, Mapping) else None) or feed_url
    content = clean_html(body, base, link)
    # Most RSS items' description is their content: take its text from the sanitized HTML
    # rather than sanitizing the same markup twice.
    summary = text_of(content) if body is raw_summary else clean_text(raw_summary)
    native_id = xml_safe(_str(raw.get("id")) or "").strip()
    uid = native_id or derived_uid(link, title, published, feed_id)
    return Entry(
        entry_uid=uid,
        feed_id=feed_id,
        canonical_link=link,
        title=title,
        summary=summary,
        content=content,
        authors=_authors(raw),
        categories=list(dict.fromkeys(term for term in (clean_text(t.get("term")) for t in _dicts(raw.get("tags")))
                                      if term)),
        enclosures=_enclosures(raw, feed_url),
        published=published,
        updated=struct_to_rfc3339(raw.get("updated_parsed")),
        first_seen=seen,
        last_seen=seen,
        content_hash=_sha256("\x1f".join([title or "", link or "", content or ""])),
    )


def derived_uid(link: str | None, title: str | None, published: str | None, feed_id: str) -> str:
    """The uid of an entry its feed gives no id: its link and title name it, and its date only
    when it has neither. A feed may move an entry's date (one dated in the future corrected into
    the past); the entry it moves is the same one, not a new one."""
    return _sha256("\x1f".join([link or "", title or "", "" if link or title else published or "", feed_id]))


def former_uid(entry: Entry) -> str | None:
    """The uid an entry with a derived uid had when its date was part of every derivation, when
    it differs from its uid: the entries stored under it keep it (parse/dedupe.py, continued), so
    an upgrade announces none of them again. None for an entry whose feed gives it an id, and for
    one whose uid its date is still part of."""
    link, title, published = entry.canonical_link, entry.title, entry.published
    if not published or not (link or title):
        return None
    derived = derived_uid(link, title, published, entry.feed_id)
    if entry.entry_uid != derived and not entry.entry_uid.startswith(derived + "#"):
        return None
    # One that shares its link and title with an earlier entry of its feed has a suffix now; its
    # date told them apart before.
    return _sha256("\x1f".join([link or "", title or "", published, entry.feed_id]))


def _authors(raw: Mapping[str, Any]) -> list[Author]:
    authors = _author_list(raw.get("authors"))
    line = clean_text(raw.get("author"))
    if not authors and line:
        authors.append(Author(name=line, email=None, uri=None))
    elif len(authors) == 1 and line and (split := email_and_name(line)):
        # feedparser 6.0.14 splits "email (Name)" by the wrong offsets once either holds a
        # non-ASCII letter ("jonas@insanity.indu" / "stries (Jonas Große Sundrup"): ours wins.
        authors[0]["name"], authors[0]["email"] = split["name"], split["email"]
    return authors


_EMAIL_THEN_NAME = re.compile(r"(?P<email>[^\s()<>]+@[^\s()<>]+)\s*\((?P<name>[^()]*)\)")
_NAME_THEN_EMAIL = re.compile(r"(?P<name>[^()<>]*?)\s*[(<](?P<email>[^\s()<>]+@[^\s()<>]+)[)>]")


def email_and_name(line: str) -> dict[str, str | None] | None:
    """An author line holding an address, "email (Name)" or "Name <email>", as {name, email};
    None for any other line."""
    match = _EMAIL_THEN_NAME.fullmatch(line) or _NAME_THEN_EMAIL.fullmatch(line)
    return None if match is None else {"name": match["name"].strip() or None, "email": match["email"]}


def _author_list(details: object) -> list[Author]:
    """feedparser's author details ({name, email, href}) as stored authors ({name, email, uri})."""
    authors: list[Author] = []
    for detail in _dicts(details):
        author = Author(name=clean_text(detail.get("name")), email=clean_text(detail.get("email")),
                        uri=web_link(detail.get("href"), None, WEB_AND_MAIL))
        if any(author.values()) and author not in authors:
            authors.append(author)
    return authors


def _enclosures(raw: Mapping[str, Any], feed_url: str) -> list[Enclosure]:
    out: list[Enclosure] = []
    for link in _dicts(raw.get("enclosures")):
        url = web_link(link.get("href"), feed_url)
        if url:
            out.append(Enclosure(url=url, type=clean_text(link.get("type")), length=_length(link.get("length"))))
    return out


def _length(value: object) -> int | None:
    if type(value) is int:
        return value if 0 <= value < 10**15 else None
    text = value.strip() if isinstance(value, str) else ""
    return int(text) if _LENGTH.fullmatch(text) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _dicts(value: object) -> list[Mapping[str, Any]]:
    """The mappings of a list member; nothing when the member is not a list."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, (list, tuple)) else []


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

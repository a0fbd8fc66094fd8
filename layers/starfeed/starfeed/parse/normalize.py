"""feedparser entries -> seed 003 §5.2 entries: stable ids, absolute links, UTC times, clean text."""

from __future__ import annotations

import calendar
import hashlib
import html
import re
import time
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

import nh3

from starfeed.model import Entry

# Characters XML 1.0 forbids; feedgen refuses them, so they never reach storage.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_SPACES = re.compile(r"\s+")
_TAGS = re.compile(r"<[^>]*>")


def rfc3339(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def clean_text(value: str | None) -> str | None:
    """Markup removed, entities decoded, whitespace collapsed: safe as plain text anywhere."""
    if not value:
        return None
    text = _xml_safe(value)
    if "<" in text or "&" in text:  # plain text (most titles, names, tags) needs no parser
        text = html.unescape(nh3.clean(text, tags=set()))
    text = _SPACES.sub(" ", text).strip()
    return text or None


def plain_text(value: str | None) -> str | None:
    """Text that is plain by definition (a GitHub description): kept as written, "<" included,
    for the renderers to escape; only characters illegal in XML go, and runs of whitespace."""
    if not value:
        return None
    return _SPACES.sub(" ", _xml_safe(value)).strip() or None


def clean_html(value: str | None) -> str | None:
    """Sanitized HTML: no script, event handlers, iframes, javascript: or data: URLs."""
    if not value:
        return None
    return nh3.clean(_xml_safe(value)) or None


def text_of(sanitized_html: str | None) -> str | None:
    """Plain text of HTML that nh3 has already made well-formed and safe."""
    if not sanitized_html:
        return None
    text = _SPACES.sub(" ", html.unescape(_TAGS.sub(" ", sanitized_html))).strip()
    return text or None


def normalize_entries(raw_entries: list, feed_id: str, feed_url: str, now: float) -> list[Entry]:
    seen = rfc3339(now)
    entries: list[Entry] = []
    uids: set[str] = set()
    for raw in raw_entries:
        entry = normalize_entry(raw, feed_id, feed_url, seen)
        if entry.entry_uid in uids:
            # A GUID repeated inside one feed must not merge two different entries.
            entry.entry_uid = f"{entry.entry_uid}#{entry.content_hash[:12]}"
            if entry.entry_uid in uids:
                continue
        uids.add(entry.entry_uid)
        entries.append(entry)
    return entries


def normalize_entry(raw, feed_id: str, feed_url: str, seen: str) -> Entry:
    link = _absolute(raw.get("link"), feed_url)
    title = clean_text(raw.get("title"))
    published = struct_to_rfc3339(raw.get("published_parsed")) or struct_to_rfc3339(raw.get("updated_parsed"))
    contents = raw.get("content") or []
    raw_summary = raw.get("summary")
    body = contents[0].get("value") if contents else raw_summary
    content = clean_html(body)
    # Most RSS items' description is their content: take its text from the sanitized HTML
    # rather than sanitizing the same markup twice.
    summary = text_of(content) if body is raw_summary else clean_text(raw_summary)
    native_id = (raw.get("id") or "").strip()
    uid = _xml_safe(native_id) if native_id else _sha256("\x1f".join(
        [link or "", title or "", published or "", feed_id]))
    return Entry(
        entry_uid=uid,
        feed_id=feed_id,
        canonical_link=link,
        title=title,
        summary=summary,
        content=content,
        authors=_authors(raw),
        categories=[term for term in (clean_text(t.get("term")) for t in raw.get("tags") or []) if term],
        enclosures=_enclosures(raw, feed_url),
        published=published,
        updated=struct_to_rfc3339(raw.get("updated_parsed")),
        first_seen=seen,
        last_seen=seen,
        content_hash=_sha256("\x1f".join([title or "", link or "", content or ""])),
    )


def _authors(raw) -> list[dict]:
    authors = []
    for detail in raw.get("authors") or []:
        author = {"name": clean_text(detail.get("name")), "email": clean_text(detail.get("email")),
                  "uri": _absolute(detail.get("href"), None)}
        if any(author.values()):
            authors.append(author)
    if not authors and clean_text(raw.get("author")):
        authors.append({"name": clean_text(raw.get("author")), "email": None, "uri": None})
    return authors


def _enclosures(raw, feed_url: str) -> list[dict]:
    out = []
    for link in raw.get("enclosures") or []:
        url = _absolute(link.get("href"), feed_url)
        if not url:
            continue
        length = str(link.get("length") or "").strip()
        out.append({"url": url, "type": clean_text(link.get("type")),
                    "length": int(length) if length.isdigit() else None})
    return out


def _absolute(url: str | None, base: str | None) -> str | None:
    if not url:
        return None
    url = _xml_safe(url.strip())
    absolute = urldefrag(urljoin(base, url) if base else url).url
    try:
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    # Canonical: scheme and host in lower case (seed 003 §4.3), the rest as published.
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def struct_to_rfc3339(struct) -> str | None:
    if not struct:
        return None
    try:
        return rfc3339(calendar.timegm(struct))
    except (OverflowError, ValueError, TypeError):
        return None




def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _xml_safe(text: str) -> str:
    return _XML_ILLEGAL.sub("", text)

"""One feed, three formats. feedgen writes RSS and Atom; JSON Feed 1.1 is a plain document.

Rendering never trusts what is stored: the channel's fields and every entry pass render.clean
first, and an entry that still cannot be written is left out (and logged) rather than costing
the whole document.
"""

from __future__ import annotations

import html
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timezone

from feedgen.feed import FeedGenerator

from starfeed import PROJECT_URL, __version__
from starfeed.formats import FORMATS
from starfeed.model import Entry
from starfeed.render import clean

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FeedMeta:
    feed_id: str  # e.g. "feed" or "s/<id>/feed": the path of the feed without extension
    title: str
    description: str
    home_url: str  # the HTML page this feed belongs to
    base_url: str  # the deployment's public URL, for self links

    def self_url(self, fmt: str) -> str:
        return f"{self.base_url.rstrip('/')}/{self.feed_id}.{FORMATS[fmt][0]}"


def render(fmt: str, meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    meta = _clean_meta(meta)
    ready = clean_entries(meta.feed_id, entries, built_at)
    writer = _RENDERERS[fmt]
    try:
        return writer(meta, ready, built_at)
    except Exception:  # noqa: BLE001 - find the entry at fault below; the rest are published
        log.warning("renderer: %s as %s failed whole; rendering its entries one by one",
                    meta.feed_id, fmt, exc_info=True)
    fit = []
    for entry in ready:
        try:
            writer(meta, [entry], built_at)
            fit.append(entry)
        except Exception:  # noqa: BLE001
            log.warning("renderer: %s entry %r cannot be rendered as %s; left out",
                        meta.feed_id, entry.entry_uid, fmt, exc_info=True)
    return writer(meta, fit, built_at)


def clean_entries(feed_id: str, entries: list, built_at: float) -> list[Entry]:
    """The entries render.clean makes renderable; the others are logged and left out."""
    fallback = clean.stamp(_dt(built_at))
    ready = []
    for entry in entries:
        try:
            cleaned = clean.entry(entry, fallback)
        except Exception:  # noqa: BLE001 - not even an Entry: nothing in it can be trusted
            cleaned = None
            log.warning("renderer: %s entry %r cannot be read", feed_id,
                        getattr(entry, "entry_uid", None), exc_info=True)
        if cleaned is None:
            log.warning("renderer: %s entry %r has no usable id; left out", feed_id,
                        getattr(entry, "entry_uid", None))
        else:
            ready.append(cleaned)
    return ready


def _clean_meta(meta: FeedMeta) -> FeedMeta:
    """The channel passes the same policy as the items: a stored title or site link is data."""
    home = meta.base_url.rstrip("/") + "/"
    return FeedMeta(clean.text(meta.feed_id) or "feed", clean.text(meta.title) or "starfeed",
                    clean.text(meta.description, clean.TEXT) or "", clean.link(meta.home_url) or home,
                    meta.base_url)


def _generator(meta: FeedMeta, entries: list[Entry], built_at: float, fmt: str) -> FeedGenerator:
    fg = FeedGenerator()
    fg.id(meta.self_url(fmt))
    fg.title(meta.title)
    fg.description(meta.description or meta.title)  # RSS requires a description
    fg.link(href=meta.self_url(fmt), rel="self")
    fg.link(href=meta.home_url, rel="alternate")  # last: feedgen takes RSS's <link> from it
    fg.generator("starfeed", __version__, PROJECT_URL)
    fg.lastBuildDate(_dt(built_at))
    fg.updated(_dt(built_at))
    # feedgen prepends each added entry; add oldest first so the newest leads the document.
    for entry in reversed(entries):
        fe = fg.add_entry()
        try:
            _fill(fe, entry, fmt)
        except Exception:  # noqa: BLE001 - a value feedgen refuses costs its entry only
            fg.remove_entry(fe)
            log.warning("renderer: %s entry %r refused by feedgen; left out", meta.feed_id,
                        entry.entry_uid, exc_info=True)
    return fg


def _fill(fe, entry: Entry, fmt: str) -> None:
    fe.id(entry.entry_uid)
    fe.guid(entry.entry_uid, permalink=entry.entry_uid == entry.canonical_link)
    fe.title(entry.title or entry.canonical_link or "(untitled)")
    if entry.canonical_link:
        fe.link(href=entry.canonical_link)
    if entry.summary:
        # Summaries are plain text. RSS readers read <description> as HTML, so the text is
        # escaped into it; Atom says what it is.
        if fmt == "rss":
            fe.description(html.escape(entry.summary))
        else:
            fe.summary(entry.summary, type="text")
    if entry.content:
        if fmt == "rss":
            # A CDATA section cannot hold "]]>"; in HTML "&gt;" reads the same.
            fe.content(entry.content.replace("]]>", "]]&gt;"), type="CDATA")
        else:
            fe.content(entry.content, type="html")
    elif not entry.canonical_link and fmt == "atom":
        # RFC 4287: an entry without an alternate link must carry content.
        fe.content(entry.summary or entry.title or "", type="text")
    fe.published(clean.when(entry.sort_time))
    fe.updated(clean.when(entry.updated or entry.sort_time))
    for author in entry.authors:
        if author.get("name"):
            fe.author(dict(author))
    for category in entry.categories:
        fe.category(term=category)
    for enclosure in entry.enclosures[:1]:  # RSS allows one enclosure per item
        fe.enclosure(enclosure["url"], str(enclosure.get("length") or 0),
                     enclosure.get("type") or "application/octet-stream")


def _rss(meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    return _generator(meta, entries, built_at, "rss").rss_str(pretty=True)


def _atom(meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    return _generator(meta, entries, built_at, "atom").atom_str(pretty=True)


def _json(meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    items = []
    for entry in entries:
        item = {"id": entry.entry_uid, "url": entry.canonical_link, "title": entry.title,
                "content_html": entry.content, "summary": entry.summary,
                "date_published": entry.sort_time, "date_modified": entry.updated,
                "authors": [{k: v for k, v in (("name", a.get("name")), ("url", a.get("uri"))) if v}
                            for a in entry.authors if a.get("name") or a.get("uri")],
                "tags": entry.categories,
                "attachments": [{"url": e["url"], "mime_type": e.get("type") or "application/octet-stream",
                                 **({"size_in_bytes": e["length"]} if e.get("length") else {})}
                                for e in entry.enclosures]}
        item = {k: v for k, v in item.items() if v not in (None, [], "")}
        if "content_html" not in item:
            item["content_text"] = entry.summary or ""  # JSON Feed requires one of the two
        items.append(item)
    document = {"version": "https://jsonfeed.org/version/1.1", "title": meta.title,
                "home_page_url": meta.home_url, "feed_url": meta.self_url("json"),
                "description": meta.description, "items": items}
    return json.dumps(document, ensure_ascii=False, indent=1).encode()


def _dt(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


_RENDERERS = {"rss": _rss, "atom": _atom, "json": _json}

"""One feed, three formats. feedgen writes RSS and Atom; JSON Feed 1.1 is a plain document."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from datetime import datetime, timezone

from feedgen.feed import FeedGenerator

from starfeed import PROJECT_URL, __version__
from starfeed.formats import FORMATS
from starfeed.model import Entry


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
    return _RENDERERS[fmt](meta, entries, built_at)


def _generator(meta: FeedMeta, entries: list[Entry], built_at: float, fmt: str) -> FeedGenerator:
    fg = FeedGenerator()
    fg.id(meta.self_url(fmt))
    fg.title(meta.title)
    fg.description(meta.description)
    fg.link(href=meta.self_url(fmt), rel="self")
    fg.link(href=meta.home_url, rel="alternate")  # last: feedgen takes RSS's <link> from it
    fg.generator("starfeed", __version__, PROJECT_URL)
    fg.lastBuildDate(_dt(built_at))
    fg.updated(_dt(built_at))
    # feedgen prepends each added entry; add oldest first so the newest leads the document.
    for entry in reversed(entries):
        fe = fg.add_entry()
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
            fe.content(entry.content, type="CDATA" if fmt == "rss" else "html")
        elif not entry.canonical_link and fmt == "atom":
            # RFC 4287: an entry without an alternate link must carry content.
            fe.content(entry.summary or entry.title or "", type="text")
        fe.published(entry.sort_time)
        fe.updated(entry.updated or entry.sort_time)
        for author in entry.authors:
            if author.get("name"):
                fe.author({k: v for k, v in (("name", author["name"]), ("email", author.get("email")),
                                             ("uri", author.get("uri"))) if v})
        for category in entry.categories:
            fe.category(term=category)
        for enclosure in entry.enclosures[:1]:  # RSS allows one enclosure per item
            fe.enclosure(enclosure["url"], str(enclosure.get("length") or 0),
                         enclosure.get("type") or "application/octet-stream")
    return fg


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

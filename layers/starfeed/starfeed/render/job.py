"""Render feed targets from the store to S3: every format, plus the HTML index for the aggregate."""

from __future__ import annotations

import logging
import time

from starfeed.model import Source
from starfeed.parse.normalize import rfc3339
from starfeed.render.feeds import FORMATS, FeedMeta, render
from starfeed.render.html import IndexPage, render_index
from starfeed.store import Storage

log = logging.getLogger(__name__)

AGGREGATE = "feed"


def render_targets(storage: Storage, targets: list[str], now: float | None = None) -> list[str]:
    """targets are feed paths: "feed" (all sources) or "s/<source_id>/feed"."""
    now = time.time() if now is None else now
    rendered = []
    for target in sorted(set(targets)):
        if target == AGGREGATE:
            entries = storage.catalog.recent_entries(None, storage.settings.feed_item_limit, now)
            base = storage.settings.public_url
            meta = FeedMeta(AGGREGATE, "starfeed", "Everything starfeed follows", base, base)
            # Only the sources this page shows are read, however many there are.
            sources = storage.catalog.get_sources({e.feed_id for e in entries})
            titles = {i: s.title or s.url for i, s in sources.items()}
            page = render_index(IndexPage(meta.title, "/feed"), entries, titles, rfc3339(now))
            storage.blobs.put_feed("index.html", page, "text/html; charset=utf-8")
        else:
            source = _source_of(storage, target)
            if source is None:
                log.info("renderer: %s names no source; skipped", target)
                continue
            entries = storage.catalog.recent_entries(source.source_id,
                                                     storage.settings.feed_item_limit, now)
            meta = FeedMeta(target, source.title or source.url, f"Entries from {source.url}",
                            source.site_url or source.url, storage.settings.public_url)
        for fmt, (extension, content_type) in FORMATS.items():
            storage.blobs.put_feed(f"{target}.{extension}", render(fmt, meta, entries, now),
                                   content_type)
        rendered.append(target)
        log.info("renderer: %s with %d entries", target, len(entries))
    return rendered


def _source_of(storage: Storage, target: str) -> Source | None:
    parts = target.split("/")
    if len(parts) != 3 or parts[0] != "s" or parts[2] != "feed":
        return None
    return storage.catalog.get_source(parts[1])

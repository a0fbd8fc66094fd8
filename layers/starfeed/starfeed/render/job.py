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
    sources = {s.source_id: s for s in storage.catalog.list_sources()}
    rendered = []
    for target in sorted(set(targets)):
        meta = _meta(storage, target, sources)
        if meta is None:
            log.info("renderer: %s names no source; skipped", target)
            continue
        feed_id = None if target == AGGREGATE else target.split("/")[1]
        entries = storage.catalog.recent_entries(feed_id, storage.settings.feed_item_limit, now)
        for fmt, (extension, content_type) in FORMATS.items():
            storage.blobs.put_feed(f"{target}.{extension}", render(fmt, meta, entries, now),
                                   content_type)
        if target == AGGREGATE:
            titles = {s.source_id: s.title or s.url for s in sources.values()}
            page = render_index(IndexPage(meta.title, "/feed"), entries, titles, rfc3339(now))
            storage.blobs.put_feed("index.html", page, "text/html; charset=utf-8")
        rendered.append(target)
        log.info("renderer: %s with %d entries", target, len(entries))
    return rendered


def _meta(storage: Storage, target: str, sources: dict[str, Source]) -> FeedMeta | None:
    base = storage.settings.public_url
    if target == AGGREGATE:
        return FeedMeta(AGGREGATE, "starfeed", f"Everything from {len(sources)} sources", base, base)
    parts = target.split("/")
    source = sources.get(parts[1]) if len(parts) == 3 and parts[0] == "s" else None
    if source is None:
        return None
    return FeedMeta(target, source.title or source.url, f"Entries from {source.url}",
                    source.site_url or source.url, base)

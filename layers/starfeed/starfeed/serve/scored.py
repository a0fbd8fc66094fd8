"""Seed 004 §8's max_score on a source's feed: built per request from the store (the prebuilt
feed holds every item), and cached per threshold like any object, its ETag from its bytes."""

from __future__ import annotations

import calendar
import hashlib
import time
from collections.abc import Callable
from dataclasses import replace

from starfeed.enrich.present import within
from starfeed.formats import FORMATS
from starfeed.model import Source
from starfeed.render import choose
from starfeed.render.feeds import render
from starfeed.render.job import as_shown, source_meta
from starfeed.store import Storage
from starfeed.store.blobs import FeedObject, NotModified


def variant(max_score: float) -> str:
    return f"?max_score={max_score:g}"


def scored_feed(storage: Storage, source: Source, max_score: float) -> Callable[[str], Callable]:
    """build(fmt) for Served.feed: the loader of the source's feed without the items scoring above
    max_score and those not analyzed yet. Its time is its newest item's (seen or analyzed), so the
    same items make the same bytes and a reader's If-None-Match is answered 304."""

    def build(fmt: str) -> Callable[[str | None], FeedObject]:
        def load(etag: str | None) -> FeedObject:
            limit = storage.settings.feed_item_limit
            stored = choose.newest_first(storage.entries.recent(source.source_id, 2 * limit))
            entries = as_shown(within(stored, max_score), {source.source_id: source})[:limit]
            built_at = _newest(entries, source)
            meta = source_meta(source, storage.settings.public_url)
            meta = replace(meta, title=f"{meta.title} (framing score at most {max_score:g})",
                           query=variant(max_score))
            body = render(fmt, meta, entries, built_at)
            tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if tag == etag:
                raise NotModified
            return FeedObject(body, FORMATS[fmt][1], tag, built_at)

        return load

    return build


def _newest(entries, source: Source) -> float:
    stamps = [e.first_seen for e in entries] + [(e.analyzer_result or {}).get("analyzed_at") or "" for e in entries]
    newest = max((s for s in stamps if s), default=None)
    if newest is None:
        return float(source.last_success_at or source.created_at or time.time())
    return float(calendar.timegm(time.strptime(newest, "%Y-%m-%dT%H:%M:%SZ")))

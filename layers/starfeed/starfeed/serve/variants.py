"""Feeds built per request from the store, for what the prebuilt objects do not hold: a source's
own feed, max_score on it (docs/design.md#max-score), and the older pages of any feed (RFC 5005
section 3). Each is cached like an object, under a key per variant, with an ETag from its bytes."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import replace

from starfeed.cursors import encode_sort_key
from starfeed.enrich.present import within
from starfeed.formats import BY_NAME
from starfeed.model import Entry, Source
from starfeed.parse.normalize import epoch_of
from starfeed.render import choose
from starfeed.render.feeds import FeedMeta, render
from starfeed.render.pages import as_shown, feed_page, source_meta, unblocked
from starfeed.store import Storage
from starfeed.store.blobs import FeedObject, NotModified

Build = Callable[[str], Callable[[str | None], FeedObject | None]]


def scored_variant(max_score: float) -> str:
    return f"?max_score={max_score:g}"


def page_variant(before: str | None, after: str | None) -> str:
    """The cache key's suffix of a page: none for the first."""
    return f"?before={encode_sort_key(before)}" if before else f"?after={encode_sort_key(after)}" if after else ""


def scored_feed(storage: Storage, source: Source, max_score: float) -> Build:
    """The source's feed without the items scoring above max_score, those not analyzed yet and
    those rules block."""

    def make() -> tuple[FeedMeta, list[Entry]]:
        limit = storage.settings.feed_item_limit
        stored = choose.newest_first(storage.entries.recent(source.source_id, 2 * limit))
        entries = as_shown(within(unblocked(stored), max_score), {source.source_id: source})[:limit]
        meta = source_meta(source, storage.settings.public_url)
        return replace(meta, title=f"{meta.title} (framing score at most {max_score:g})",
                       query=scored_variant(max_score)), entries

    return _built(make, lambda entries: _newest(entries, source))


def paged_feed(storage: Storage, target: str, before: str | None, after: str | None,
               source: Source | None = None) -> Build:
    """The page of a feed's entries older than `before`, or just newer than `after` (a sort
    key), with its first, previous and next links; the first page when neither is given.
    source: a source target's source, read already."""

    def make() -> tuple[FeedMeta, list[Entry]] | None:
        page = feed_page(storage, target, time.time(), before, source=source, after=after)
        return page[:2] if page else None

    return _built(make, lambda entries: _newest(entries, source))


def _built(make: Callable[[], tuple[FeedMeta, list[Entry]] | None],
           built_at: Callable[[list[Entry]], float]) -> Build:
    """Its time is its newest item's (seen or analyzed), so the same items make the same bytes
    and a reader's If-None-Match is answered 304."""

    def build(fmt: str) -> Callable[[str | None], FeedObject | None]:
        def load(etag: str | None) -> FeedObject | None:
            made = make()
            if made is None:
                return None
            meta, entries = made
            at = built_at(entries)
            body = render(fmt, meta, entries, at)
            tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if tag == etag:
                raise NotModified
            return FeedObject(body, BY_NAME[fmt].content_type, tag, at)

        return load

    return build


def _newest(entries: list[Entry], source: Source | None) -> float:
    stamps = [e.first_seen for e in entries] + [(e.analyzer_result or {}).get("analyzed_at") or "" for e in entries]
    newest = max((s for s in stamps if s), default=None)
    if newest is None:  # an empty page: a time that stays, so the same (no) items make the same bytes
        return float(source.created_at if source else 0) or time.time()
    return epoch_of(newest)

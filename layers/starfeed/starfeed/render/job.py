"""Render feed targets from the store to S3: every format, plus the HTML index for the aggregate."""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import replace
from functools import cache

from starfeed.model import Entry, Source
from starfeed.parse.normalize import rfc3339
from starfeed.render.feeds import FORMATS, FeedMeta, render
from starfeed.render.html import IndexPage, github_notice, render_index
from starfeed.schedule.github import TIERS
from starfeed.sources import GITHUB_COLLECTION as GITHUB
from starfeed.stats import render_bucket
from starfeed.store import Storage

log = logging.getLogger(__name__)

AGGREGATE = "feed"


def render_targets(storage: Storage, targets: list[str], now: float | None = None) -> list[str]:
    """targets are feed paths: "feed" (all sources), "c/<collection>/feed", "s/<source_id>/feed"."""
    now = time.time() if now is None else now
    limit = storage.settings.feed_item_limit
    base = storage.settings.public_url
    rendered, timings = [], Counter()

    @cache
    def shared() -> tuple[dict[str, int], str | None]:
        """What every index page of this run shows: the collections and any GitHub notice."""
        pause = storage.catalog.host_pause(storage.settings.github_host, now)
        return storage.catalog.collections(), github_notice(pause)

    for target in sorted(set(targets)):
        kind, _, name = target.rpartition("/feed")[0].partition("/")
        if target == AGGREGATE:
            entries, sources = _of_existing_sources(storage, storage.catalog.recent_entries(None, limit, now))
            meta = FeedMeta(AGGREGATE, "starfeed", "Everything starfeed follows", base + "/", base)
            _render_index(storage, meta, "", entries, sources, shared(), now)
        elif kind == "c" and name:
            members = storage.catalog.sources_in(name)
            entries, sources = _of_existing_sources(storage, storage.catalog.recent_entries_of(members, limit))
            if name == GITHUB:
                meta = github_meta(target, len(members), base)
            else:
                meta = FeedMeta(target, f"starfeed: {name}", f"The {name} collection",
                                f"{base}/c/{name}/", base)
            _render_index(storage, meta, f"c/{name}/", entries, sources, shared(), now)
        elif kind == "s" and name and (source := storage.catalog.get_source(name)) is not None:
            entries = storage.catalog.recent_entries(source.source_id, limit, now)
            meta = FeedMeta(target, source.title or source.url, f"Entries from {source.url}",
                            source.site_url or source.url, base)
        else:
            log.info("renderer: %s names nothing to render; skipped", target)
            continue
        for fmt, (extension, content_type) in FORMATS.items():
            started = time.perf_counter()
            document = render(fmt, meta, entries, now)
            timings[f"render:{fmt}:{render_bucket((time.perf_counter() - started) * 1000)}"] += 1
            storage.blobs.put_feed(f"{target}.{extension}", document, content_type, rendered_at=now)
        rendered.append(target)
        log.info("renderer: %s with %d entries", target, len(entries))
    storage.counters.add(timings)
    storage.counters.flush()  # renders are few: keep their times now
    return rendered


def _of_existing_sources(storage: Storage, entries: list[Entry]) -> tuple[list[Entry], dict[str, Source]]:
    """A removed source's entries stay stored until their TTL; they leave the feeds at once. Only
    the sources these entries name are read, however many there are."""
    sources = storage.catalog.get_sources({e.feed_id for e in entries})
    return [e for e in entries if e.feed_id in sources], sources


def github_meta(target: str, accounts: int, base: str) -> FeedMeta:
    """Seed 000's channel: its title, https://github.com as its link, a summarising description."""
    return FeedMeta(target, "GitHub Followings Stars",
                    f"Repositories starred by the {accounts} GitHub accounts you follow, newest first",
                    "https://github.com", base)


def _render_index(storage: Storage, meta: FeedMeta, prefix: str, entries: list[Entry],
                  sources: dict[str, Source], shared: tuple[dict[str, int], str | None], now: float) -> None:
    titles = {i: s.title or s.url for i, s in sources.items()}
    collections, notice = shared
    page = IndexPage(meta.title, f"/{meta.feed_id}", collections, notice=notice)
    pages = {f"{prefix}index.html": (page, entries)}
    if prefix == f"c/{GITHUB}/":
        # Seed 000's activity filter: one page per tier, linked from each (the pages run no script).
        tier_of = {i: s.tier or "low" for i, s in sources.items()}
        for tier in (None, *TIERS):
            filters = tuple((t or "all", f"/c/{GITHUB}/" + (f"?tier={t}" if t else ""), t == tier)
                            for t in (None, *TIERS))
            shown = [e for e in entries if tier is None or tier_of.get(e.feed_id) == tier]
            pages[f"{prefix}index{'-' + tier if tier else ''}.html"] = (replace(page, filters=filters), shown)
    for key, (index_page, shown) in pages.items():
        storage.blobs.put_feed(key, render_index(index_page, shown, titles, rfc3339(now)),
                               "text/html; charset=utf-8", rendered_at=now)

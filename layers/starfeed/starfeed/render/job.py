"""Render feed targets from the store to S3: every format, plus the HTML index for the aggregate
and the collections, and the sources summary the admin views read.

Each target is rendered on its own: one that fails is reported with its reason and the others
are still written, so the renderer's handler retries only the SQS records that named it.
"""

from __future__ import annotations

import base64
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache

from starfeed.enrich.present import deframed
from starfeed.model import Entry, Source
from starfeed.parse.normalize import rfc3339
from starfeed.render import SOURCES_SUMMARY, choose, clean
from starfeed.render.clean import Origin
from starfeed.render.feeds import FORMATS, FeedMeta, render
from starfeed.render.html import IndexPage, github_notice, render_index
from starfeed.schedule.github import TIERS
from starfeed.render import summary
from starfeed.render.opml import published_opml, subscriptions_opml
from starfeed.sources import GITHUB_COLLECTION as GITHUB
from starfeed.stats import render_bucket
from starfeed.store import Storage
from starfeed.store.limits import SORT_KEY_BYTES
from starfeed.store.records import sort_key_of

log = logging.getLogger(__name__)

AGGREGATE = "feed"


@dataclass
class RenderReport:
    rendered: list[str] = field(default_factory=list)
    unpublished: list[str] = field(default_factory=list)  # a removed or disabled source's feed, deleted
    skipped: list[str] = field(default_factory=list)  # names nothing we render
    failed: dict[str, str] = field(default_factory=dict)  # target -> why


def render_targets(storage: Storage, targets: list[str], now: float | None = None) -> RenderReport:
    """targets are feed paths: "feed" (all sources), "c/<collection>/feed", "s/<source_id>/feed",
    or SOURCES_SUMMARY (/opml.xml, /subscriptions.opml and the dashboard's sources)."""
    now = time.time() if now is None else now
    report, timings = RenderReport(), Counter()
    # What every page of this run shows, read once: the collections and any GitHub notice.
    collections = cache(storage.collections.counts)
    notice = cache(lambda: github_notice(storage.hosts.pause_of(storage.settings.github_host, now)))
    wanted = set(targets)
    for target in sorted(wanted - {SOURCES_SUMMARY}):
        try:
            outcome = _render_target(storage, target, now, collections, notice, timings)
        except Exception as exc:  # noqa: BLE001 - reported; the other targets go on
            log.exception("renderer: %s failed; the records naming it are retried", target)
            report.failed[target] = f"{type(exc).__name__}: {exc}"[:500]
            continue
        getattr(report, outcome).append(target)
    # Asked for by whatever changed how a source is listed: the CLI, or a fetch that changed it.
    if SOURCES_SUMMARY in wanted:
        try:
            render_sources_summary(storage, now, collections())
            report.rendered.append(SOURCES_SUMMARY)
        except Exception as exc:  # noqa: BLE001
            log.exception("renderer: the sources summary failed")
            report.failed[SOURCES_SUMMARY] = f"{type(exc).__name__}: {exc}"[:500]
    try:
        storage.counters.add(timings)
        storage.counters.flush()  # renders are few: keep their times now
    except Exception:  # noqa: BLE001 - statistics never cost a render
        log.exception("renderer: render times were not recorded")
    return report


def _render_target(storage: Storage, target: str, now: float, collections: Callable[[], dict[str, int]],
                   notice: Callable[[], str | None], timings: Counter) -> str:
    """"rendered", "unpublished" or "skipped"; raises when the target cannot be rendered."""
    kind, name = target_parts(target)
    source = None
    if kind == "s":
        source = storage.sources.get(name)
        if source is None or not source.live:
            # Unsubscribed means unpublished: the api must not keep serving the last render.
            storage.blobs.delete_feeds([f"{target}.{extension}" for extension, _ in FORMATS.values()])
            log.info("renderer: %s unpublished: its source is %s", target,
                     "purged" if source is None else "removed" if source.deleted_at else "disabled")
            return "unpublished"
    page = feed_page(storage, target, now, source=source)
    if page is None:
        log.info("renderer: %s names nothing to render; skipped", target)
        return "skipped"
    meta, entries, sources = page
    if kind in ("", "c"):
        prefix = f"c/{name}/" if kind == "c" else ""
        _render_index(storage, meta, prefix, entries, sources, collections(), notice(), now)
    for fmt, (extension, content_type) in FORMATS.items():
        started = time.perf_counter()
        document = render(fmt, meta, entries, now)
        timings[f"render:{fmt}:{render_bucket((time.perf_counter() - started) * 1000)}"] += 1
        storage.blobs.put_feed(f"{target}.{extension}", document, content_type, rendered_at=now)
    log.info("renderer: %s with %d entries", target, len(entries))
    return "rendered"


def target_parts(target: str) -> tuple[str, str]:
    """("", "") for the aggregate or nothing, ("c", name) for a collection, ("s", id) for a source."""
    parts = target.split("/")
    return (parts[0], parts[1]) if len(parts) == 3 and parts[2] == "feed" and parts[1] else ("", "")


def feed_page(storage: Storage, target: str, now: float, before: str | None = None,
              source: Source | None = None) -> tuple[FeedMeta, list[Entry], dict[str, Source]] | None:
    """One page of a feed: (meta, entries, their sources); None when the target names nothing
    (or a source that is not live). The first page is what the renderer publishes; `before` (a
    sort key) gives the page of entries older than it, as RFC 5005 §3's next link asks. source:
    a source target's source, when the caller has read it already."""
    limit, base = storage.settings.feed_item_limit, storage.settings.public_url
    kind, name = target_parts(target)
    # The aggregate and collections mix sources: one article seen through two of them appears
    # once (render.choose), so about twice the limit is read to fill the feed after merging, and
    # every item names the source it came from.
    if target == AGGREGATE:
        read = storage.entries.recent(None, 2 * limit, now, before)
        entries, sources = _of_published_sources(storage, read)
        entries = as_shown(choose.for_readers(entries, limit), sources)
        meta = mixed(FeedMeta(AGGREGATE, "starfeed", "Everything starfeed follows", base + "/", base), sources)
    elif kind == "c":
        # The collection's own partition of newest entries, not one Query per member; a source
        # that left keeps its copies there until they expire, and they are not shown.
        members = storage.collections.members(name)
        current = set(members)
        read = storage.collections.recent(name, 2 * limit, before)
        entries, sources = _of_published_sources(storage, [e for e in read if e.feed_id in current])
        entries = as_shown(choose.for_readers(entries, limit), sources)
        if name == GITHUB:
            meta = github_meta(target, len(members), base)
        else:
            meta = FeedMeta(target, f"starfeed: {name}", f"The {name} collection", f"{base}/c/{name}/", base)
        meta = mixed(meta, sources)
    elif kind == "s":
        source = source or storage.sources.get(name)
        if source is None or not source.live:
            return None
        sources = {source.source_id: source}
        read = storage.entries.recent(source.source_id, limit + 1, now, before)  # one more: is there a next page?
        entries = as_shown(choose.newest_first(read)[:limit], sources)
        meta = source_meta(source, base)
    else:
        return None
    # What was read and not shown is older than the last shown (or a copy of one shown): the next
    # page starts below the last shown.
    more = len(read) > len(entries) and bool(entries)
    meta = replace(meta, hub=storage.settings.websub_hub or None,
                   next_query=f"?before={cursor_of(entries[-1])}" if more else None,
                   query=f"?before={encode_cursor(before)}" if before else "",
                   first_query="" if before else None)
    return meta, entries, sources


def cursor_of(entry: Entry) -> str:
    return encode_cursor(sort_key_of(entry))


def encode_cursor(sort_key: str) -> str:
    """An opaque page cursor: the sort key, base64url without padding."""
    return base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The sort key a cursor holds; ValueError when it holds none: a time that is one, and no
    longer than DynamoDB takes as a key (a reader's query must not become a 500)."""
    refused = ValueError("before= is not a page cursor of this feed")
    try:
        sort_key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, _, uid = sort_key.partition("#")
        time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, UnicodeDecodeError):
        raise refused from None
    if not uid or len(sort_key.encode("utf-8", "surrogatepass")) > SORT_KEY_BYTES:
        raise refused
    return sort_key


def source_meta(source: Source, base: str) -> FeedMeta:
    """A source's own feed: its title, and its site if the feed names a safe one, else the feed
    we publish for it."""
    target = f"s/{source.source_id}/feed"
    shown = clean.shown(source)
    home = clean.link(source.site_url) or f"{base.rstrip('/')}/{target}"
    return FeedMeta(target, shown.title, f"Entries from {shown.url}", home, base,
                    language=clean.language(source.language), origins=origins({source.source_id: source}, base))


def as_shown(entries: list[Entry], sources: dict[str, Source]) -> list[Entry]:
    """Entries of deframed sources carry their analysis's title and summary (enrich/present.py)."""
    return [deframed(e) if e.analyzer_result and getattr(sources.get(e.feed_id), "deframe", False) else e
            for e in entries]


def _of_published_sources(storage: Storage, entries: list[Entry]) -> tuple[list[Entry], dict[str, Source]]:
    """A removed or disabled source's entries stay stored (until their TTL, or until it is
    enabled again); they leave the feeds at once. Only the sources these entries name are read."""
    found = storage.sources.get_many({e.feed_id for e in entries})
    sources = {i: s for i, s in found.items() if s.live}
    return [e for e in entries if e.feed_id in sources], sources


def origins(sources: dict[str, Source], base: str) -> dict[str, Origin]:
    """Each source as the public may see it: its title, its feed (the subscription, else the one
    starfeed publishes for it at base) and its site."""
    base = base.rstrip("/")
    shown = ((source_id, clean.origin(source, f"{base}/s/{source_id}/feed.xml"))
             for source_id, source in sources.items())
    return {source_id: origin for source_id, origin in shown if origin}


def mixed(meta: FeedMeta, sources: dict[str, Source]) -> FeedMeta:
    """A feed of several sources (the aggregate, a collection): each entry attributed, and the
    feed's language only when every source declares the same one."""
    named = origins(sources, meta.base_url)
    languages = {origin.language for origin in named.values()}
    return replace(meta, origins=named, attribute=True,
                   language=languages.pop() if len(languages) == 1 else None)


def github_meta(target: str, accounts: int, base: str) -> FeedMeta:
    """Seed 000's channel: its title, https://github.com as its link, a summarising description."""
    return FeedMeta(target, "GitHub Followings Stars",
                    f"Repositories starred by the {accounts} GitHub accounts you follow, newest first",
                    "https://github.com", base)


def _render_index(storage: Storage, meta: FeedMeta, prefix: str, entries: list[Entry],
                  sources: dict[str, Source], collections: dict[str, int], notice: str | None,
                  now: float) -> None:
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
        storage.blobs.put_feed(key, render_index(index_page, shown, meta.origins, rfc3339(now)),
                               "text/html; charset=utf-8", rendered_at=now)


def render_sources_summary(storage: Storage, now: float, collections: dict[str, int]) -> None:
    """One Scan of the sources for every view that lists them; the api reads these objects."""
    sources = [s for s in storage.sources.all() if s.deleted_at is None]  # removed: listed nowhere
    put = storage.blobs.put_feed
    put(summary.PUBLISHED_OPML, published_opml(storage.settings.public_url, sources, collections, now),
        summary.OPML_TYPE, rendered_at=now)
    put(summary.SUBSCRIPTIONS_OPML, subscriptions_opml(sources, now, storage.settings.public_url),
        summary.OPML_TYPE, rendered_at=now)
    put(summary.SUMMARY, summary.dumps([summary.row_of(s) for s in sources], now), summary.JSON_TYPE,
        rendered_at=now)
    log.info("renderer: sources summary with %d sources", len(sources))

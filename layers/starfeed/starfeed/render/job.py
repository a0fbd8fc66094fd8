"""Render feed targets from the store to S3: every format, plus the HTML index for the aggregate
and the collections, and the sources summary the admin views read. A source's own feed is built
by the api when asked (serve/variants.py): rendering its three formats on every new entry, read or
not, was most of the bill's S3 PUTs; its target here tells the WebSub hub, or unpublishes it.

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
from functools import cache, partial

from starfeed import observe
from starfeed.formats import DEFAULT, FORMATS
from starfeed.enrich.present import deframed
from starfeed.model import Entry, Source
from starfeed.parse.normalize import rfc3339
from starfeed.render import SOURCES_SUMMARY, choose, clean
from starfeed.render.clean import Origin
from starfeed.render.feeds import FeedMeta, render
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
    announced: list[str] = field(default_factory=list)  # a source's feed: built when read, the hub told
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
            with observe.span("render", target=target):
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
    observe.metric(observe.RENDERS, len(report.rendered))
    _tell_the_hub(storage, [t for t in report.rendered + report.announced if t != SOURCES_SUMMARY])
    try:
        storage.counters.add(timings)
        storage.counters.flush()  # renders are few: keep their times now
    except Exception:  # noqa: BLE001 - statistics never cost a render
        log.exception("renderer: render times were not recorded")
    return report


def _tell_the_hub(storage: Storage, targets: list[str]) -> None:
    """WebSub publishing: each rendered feed's URLs (every render follows a change: new entries,
    results, a source listed or unlisted), once they are in the bucket."""
    hub, base = storage.settings.websub_hub, storage.settings.public_url.rstrip("/")
    if not hub or not targets:
        return
    from starfeed.websub.hub import ping

    urls = [f"{base}/{fmt.file(target)}" for target in targets for fmt in FORMATS]
    failures = ping(hub, urls, storage.settings)
    if failures:
        log.warning("renderer: the WebSub hub was not told of %d of %d feed URLs (the next render tells it "
                    "again): %s", len(failures), len(urls), "; ".join(failures[:3]))


def _render_target(storage: Storage, target: str, now: float, collections: Callable[[], dict[str, int]],
                   notice: Callable[[], str | None], timings: Counter) -> str:
    """"rendered", "announced", "unpublished" or "skipped"; raises when the target cannot be
    rendered."""
    kind, name = target_parts(target)
    if kind == "s":
        source = storage.sources.get(name)
        rendered_before = [fmt.file(target) for fmt in FORMATS]
        if source is not None and source.live:
            # A copy an older starfeed rendered would go stale in the bucket (and on a CDN in
            # front of it): gone at its source's next change. A HEAD costs what a GET does.
            if storage.blobs.has_feed(rendered_before[0]):
                storage.blobs.delete_feeds(rendered_before)
            return "announced"
        # Unsubscribed means unpublished: no copy an older starfeed rendered stays in the bucket.
        storage.blobs.delete_feeds(rendered_before)
        log.info("renderer: %s unpublished: its source is %s", target,
                 "purged" if source is None else "removed" if source.deleted_at else "disabled")
        return "unpublished"
    page = feed_page(storage, target, now)
    if page is None:
        log.info("renderer: %s names nothing to render; skipped", target)
        return "skipped"
    meta, entries, sources = page
    if kind in ("", "c"):
        prefix = f"c/{name}/" if kind == "c" else ""
        _render_index(storage, meta, prefix, entries, sources, collections(), notice(), now)
    for fmt in FORMATS:
        started = time.perf_counter()
        document = render(fmt.name, meta, entries, now)
        timings[f"render:{fmt.name}:{render_bucket((time.perf_counter() - started) * 1000)}"] += 1
        storage.blobs.put_feed(fmt.file(target), document, fmt.content_type, rendered_at=now)
    log.info("renderer: %s with %d entries", target, len(entries))
    return "rendered"


def target_parts(target: str) -> tuple[str, str]:
    """("", "") for the aggregate or nothing, ("c", name) for a collection, ("s", id) for a source."""
    parts = target.split("/")
    return (parts[0], parts[1]) if len(parts) == 3 and parts[2] == "feed" and parts[1] else ("", "")


def feed_page(storage: Storage, target: str, now: float, before: str | None = None,
              source: Source | None = None, after: str | None = None
              ) -> tuple[FeedMeta, list[Entry], dict[str, Source]] | None:
    """One page of a feed: (meta, entries, their sources); None when the target names nothing
    (or a source that is not live). The first page is what the renderer publishes; `before` (a
    sort key) gives the page of entries older than it, as RFC 5005 §3's next link asks, and
    `after` the page just newer than it, for its previous link (_older_page). source: a source
    target's source, when the caller has read it already."""
    feed = _feed_of(storage, target, now, source)
    if feed is None:
        return None
    limit = storage.settings.feed_item_limit
    if before or after:
        page = _older_page(feed, limit, before, after, lambda: _first_page(feed, limit).next_before)
    else:
        page = _first_page(feed, limit)
    meta = mixed(feed.channel, page.sources) if feed.mixes else feed.channel
    query = f"?before={encode_cursor(before)}" if before else f"?after={encode_cursor(after)}" if after else ""
    meta = replace(meta, hub=storage.settings.websub_hub or None, query=query,
                   next_query=f"?before={encode_cursor(page.next_before)}" if page.next_before else None,
                   first_query="" if query else None, previous_query=page.previous_query)
    return meta, as_shown(page.entries, page.sources), page.sources


@dataclass(frozen=True)
class _Feed:
    """What a feed shows and where it reads it."""

    channel: FeedMeta  # a mixed feed's gains the origins of the sources a page shows (mixed())
    read: Callable[[int, str | None, str | None], list[Entry]]  # (limit, before, after), as Entries.recent
    keep: Callable[[list[Entry]], tuple[list[Entry], dict[str, Source]]]  # those it may show, their sources
    pick: Callable[[list[Entry], int], list[Entry]]  # at most limit of those, in the order shown
    batch: int  # entries a read asks for (an older page's reads grow from it)
    mixes: bool  # it mixes sources: each entry is attributed


@dataclass(frozen=True)
class _Page:
    entries: list[Entry]  # as stored, in the order shown
    sources: dict[str, Source]
    next_before: str | None  # the sort key the next (older) page starts below, when there is one
    previous_query: str | None = None  # the previous page's query ("": the first page), when there is one


def _feed_of(storage: Storage, target: str, now: float, source: Source | None) -> _Feed | None:
    limit, base = storage.settings.feed_item_limit, storage.settings.public_url
    kind, name = target_parts(target)
    # The aggregate and collections mix sources: one article seen through two of them appears
    # once (render.choose), so about twice the limit is read to fill the feed after merging, and
    # every item names the source it came from.
    published = partial(_of_published_sources, storage)
    if target == AGGREGATE:
        return _Feed(FeedMeta(AGGREGATE, "starfeed", "Everything starfeed follows", base + "/", base),
                     lambda n, before, after: storage.entries.recent(None, n, now, before, after),
                     published, choose.for_readers, 2 * limit, mixes=True)
    if kind == "c":
        # The collection's own partition of newest entries, not one Query per member; a source
        # that left keeps its copies there until they expire, and they are not shown.
        members = storage.collections.members(name)
        current = set(members)
        channel = (github_meta(target, len(members), base) if name == GITHUB else
                   FeedMeta(target, f"starfeed: {name}", f"The {name} collection", f"{base}/c/{name}/", base))
        return _Feed(channel, lambda n, before, after: storage.collections.recent(name, n, before, after),
                     lambda entries: published([e for e in entries if e.feed_id in current]),
                     choose.for_readers, 2 * limit, mixes=True)
    if kind == "s":
        source = source or storage.sources.get(name)
        if source is None or not source.live:
            return None
        return _Feed(source_meta(source, base),
                     lambda n, before, after: storage.entries.recent(source.source_id, n, now, before, after),
                     lambda entries: (entries, {source.source_id: source}),
                     lambda entries, n: choose.newest_first(entries)[:n],
                     limit + 1, mixes=False)  # one more than a page: is there a next page?
    return None


def _first_page(feed: _Feed, limit: int) -> _Page:
    """The newest `limit` sort keys of what the feed may show, in the order shown (which breaks
    ties of time otherwise): what was read and not shown is older than its oldest key (or a copy
    of one shown), so the next page, below that key, repeats and skips nothing."""
    read = feed.read(feed.batch, None, None)
    kept, sources = feed.keep(read)
    newest = sorted(feed.pick(kept, len(kept)), key=sort_key_of, reverse=True)[:limit]
    entries = feed.pick(newest, limit)
    more = len(read) > len(entries) and bool(entries)
    return _Page(entries, sources, sort_key_of(newest[-1]) if more else None)


def _older_page(feed: _Feed, limit: int, before: str | None, after: str | None,
                first_page_ends: Callable[[], str | None]) -> _Page:
    """The page below `before`, or above `after`: a window of the `limit` sort keys nearest the
    cursor among the entries the feed keeps (shown as render.choose shows them: in a mixed feed,
    one article seen through two sources once). Windows are cut by count in sort key order, so
    walking toward newer entries finds the very windows walking toward older ones found: a
    page's previous page, `?after=` its newest key, holds exactly the entries of the page before
    it, with the same links, and its next page, `?before=` its oldest key, is the page it was
    reached from.

    The first page is cut otherwise (it is the renderer's, unchanged), ending where
    first_page_ends() says: a page whose newer neighbour lies on it links the first page as
    previous, as page 2 does."""
    window, beyond, sources = _window(feed, limit, before, after)
    # Newest first, and entries sharing a key in one order whichever side they were read from.
    window = sorted(window, key=lambda e: (sort_key_of(e), e.feed_id), reverse=True)
    if after:
        next_before = sort_key_of(window[-1]) if window else None  # the page it was reached from
        newer = beyond
    else:
        next_before = sort_key_of(window[-1]) if beyond else None
        newer = before  # the newer entries start at the cursor
    # The previous page is the window just newer than this one, or the first page once those
    # entries are on it (or there are none). The first page is read only then: on an empty
    # collection its read would copy the members' entries, which only the renderer writes.
    ends = first_page_ends() if window and newer is not None else None
    previous = f"?after={encode_cursor(sort_key_of(window[0]))}" if ends is not None and newer < ends else ""
    entries = feed.pick(window, len(window))
    return _Page(entries, {e.feed_id: sources[e.feed_id] for e in entries}, next_before, previous)


def _window(feed: _Feed, keys: int, before: str | None, after: str | None
            ) -> tuple[list[Entry], str | None, dict[str, Source]]:
    """The kept entries of the `keys` sort keys nearest the cursor, in the order walked from it
    (newest first below `before`, oldest first above `after`), the next such key past them (None:
    there is none), and their sources. Entries sharing a key (two sources' copies of one article,
    in the aggregate) stay on one page, since a cursor is a key. Reads grow until they reach past
    the window; whether an entry is kept depends on it alone, so the walks from either side cut
    the same windows."""
    size = feed.batch
    while True:
        read = feed.read(size, before, after)
        kept, sources = feed.keep(read)
        nearest = list(dict.fromkeys(sort_key_of(e) for e in kept))
        if len(nearest) > keys or len(read) < size:
            inside, past = set(nearest[:keys]), nearest[keys] if len(nearest) > keys else None
            return [e for e in kept if sort_key_of(e) in inside], past, sources
        size *= 2


def encode_cursor(sort_key: str) -> str:
    """An opaque page cursor: the sort key, base64url without padding."""
    return base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, name: str = "before") -> str:
    """The sort key a cursor holds; ValueError when it holds none: a time that is one, and no
    longer than DynamoDB takes as a key (a reader's query must not become a 500)."""
    refused = ValueError(f"{name}= is not a page cursor of this feed")
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
    shown = ((source_id, clean.origin(source, f"{base}/" + DEFAULT.file(f"s/{source_id}/feed")))
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

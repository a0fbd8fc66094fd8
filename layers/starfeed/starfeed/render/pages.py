"""One page of a feed, read from the store: what the renderer publishes as a feed's first page,
and what the api builds per request (a source's own feed, older and newer pages: RFC 5005 section 3).
Both read it from here, so that the api imports no job: the renderer's job (render/job.py) only
writes what this reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from starfeed.cursors import encode_sort_key
from starfeed.enrich.present import deframed
from starfeed.formats import DEFAULT
from starfeed.kinds.registry import kind_of
from starfeed.model import Entry, Source, rule_set_partition
from starfeed.render import choose, clean
from starfeed.render.clean import Origin
from starfeed.render.feeds import FeedMeta
from starfeed.sources import GITHUB_COLLECTION as GITHUB
from starfeed.store import Storage
from starfeed.store.records import sort_key_of

AGGREGATE = "feed"


def target_parts(target: str) -> tuple[str, str]:
    """("", "") for the aggregate or nothing, ("c", name) for a collection, ("s", id) for a source,
    ("r", name) for a rule set (docs/design.md#rule-sets)."""
    parts = target.split("/")
    return (parts[0], parts[1]) if len(parts) == 3 and parts[2] == "feed" and parts[1] else ("", "")


def feed_page(storage: Storage, target: str, now: float, before: str | None = None,
              source: Source | None = None, after: str | None = None
              ) -> tuple[FeedMeta, list[Entry], dict[str, Source]] | None:
    """One page of a feed: (meta, entries, their sources); None when the target names nothing
    (or a source that is not live). The first page is what the renderer publishes; `before` (a
    sort key) gives the page of entries older than it, as RFC 5005 section 3's next link asks, and
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
    query = f"?before={encode_sort_key(before)}" if before else f"?after={encode_sort_key(after)}" if after else ""
    meta = replace(meta, hub=storage.settings.websub_hub or None, query=query,
                   next_query=f"?before={encode_sort_key(page.next_before)}" if page.next_before else None,
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
    # The aggregate, collections and rule sets mix sources: one article seen through two of them
    # appears once (render.choose), so about twice the limit is read to fill the feed after
    # merging, and every item names the source it came from.
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
    if kind == "r":
        # The set's partition holds the entries its rules chose, copied as a collection's are;
        # whether the set still has rules is asked before (storage.rules.rule_sets()): a feed of
        # none is not served.
        return _Feed(FeedMeta(target, f"starfeed: {name}", f"Entries the rule set {name} selects, from every source",
                              f"{base}/r/{name}/", base),
                     lambda n, before, after: storage.collections.recent(rule_set_partition(name), n, before, after),
                     published, choose.for_readers, 2 * limit, mixes=True)
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
    size = feed.batch
    while True:  # reads grow, as _window's do, when what the feed may not show fills them
        read = feed.read(size, None, None)
        kept, sources = feed.keep(unblocked(read))
        newest = sorted(feed.pick(kept, len(kept)), key=sort_key_of, reverse=True)[:limit]
        if len(newest) >= limit or len(read) < size:
            break
        size *= 2
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
    previous = f"?after={encode_sort_key(sort_key_of(window[0]))}" if ends is not None and newer < ends else ""
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
        kept, sources = feed.keep(unblocked(read))
        nearest = list(dict.fromkeys(sort_key_of(e) for e in kept))
        if len(nearest) > keys or len(read) < size:
            inside, past = set(nearest[:keys]), nearest[keys] if len(nearest) > keys else None
            return [e for e in kept if sort_key_of(e) in inside], past, sources
        size *= 2


def unblocked(entries: list[Entry]) -> list[Entry]:
    """A blocked entry stays stored, and leaves every feed it would be in (docs/design.md#rule-verdict)."""
    return [e for e in entries if e.blocked_by is None]


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
    shown = ((source_id, clean.origin(source, f"{base}/" + DEFAULT.file(f"s/{source_id}/feed"),
                                      kind_of(source).subscribable, kind_of(source).site(source)))
             for source_id, source in sources.items())
    return {source_id: origin for source_id, origin in shown if origin}


def mixed(meta: FeedMeta, sources: dict[str, Source]) -> FeedMeta:
    """A feed of several sources (the aggregate, a collection, a rule set): each entry attributed,
    and the feed's language only when every source declares the same one."""
    named = origins(sources, meta.base_url)
    languages = {origin.language for origin in named.values()}
    return replace(meta, origins=named, attribute=True,
                   language=languages.pop() if len(languages) == 1 else None)


def github_meta(target: str, accounts: int, base: str) -> FeedMeta:
    """The GitHub feed's channel: its title, https://github.com as its link, a summarising description."""
    return FeedMeta(target, "GitHub Followings Stars",
                    f"Repositories starred by the {accounts} GitHub accounts you follow, newest first",
                    "https://github.com", base)

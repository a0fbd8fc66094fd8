"""RFC 5005 section 3 pages (docs/design.md#paging), built by render.pages.feed_page from an
in-memory store: walking rel="next" from the first page and then rel="previous" back sees the same
pages, each entry on one of them."""

import calendar
import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from starfeed.cursors import decode_sort_key, encode_sort_key
from starfeed.model import Entry, Source
from starfeed.render.pages import feed_page
from starfeed.settings import Settings
from starfeed.store.entries import Entries
from starfeed.store.limits import SORT_KEY_BYTES
from starfeed.store.records import sort_key_of

LIMIT = 5
SEEN = "2026-11-21T23:00:00Z"
NOW = calendar.timegm((2026, 11, 21, 23, 30, 0))


def entry(uid: str, feed: str, minute: int, link: str | None = None) -> Entry:
    """Published `minute` minutes after 09:00 on the day it was seen."""
    published = f"2026-11-21T{9 + minute // 60:02d}:{minute % 60:02d}:00Z"
    return Entry(entry_uid=uid, feed_id=feed, canonical_link=link or f"https://{feed}.example/{uid}",
                 title=uid, published=published, first_seen=SEEN, last_seen=SEEN)


def walked(entries: list[Entry], limit: int, before: str | None, after: str | None) -> list[Entry]:
    """As DynamoDB answers a Query on a sort key: newest first below `before`, oldest first above `after`."""
    ordered = sorted(entries, key=sort_key_of, reverse=after is None)
    if after:
        ordered = [e for e in ordered if sort_key_of(e) > after]
    elif before:
        ordered = [e for e in ordered if sort_key_of(e) < before]
    return ordered[:limit]


def store(entries: list[Entry], sources: list[Source], members: list[str] = ()) -> SimpleNamespace:
    """The parts of Storage that feed_page reads."""
    by_id = {s.source_id: s for s in sources}
    return SimpleNamespace(
        settings=SimpleNamespace(feed_item_limit=LIMIT, public_url="https://feeds.example", websub_hub=None),
        entries=SimpleNamespace(recent=lambda feed_id, limit, now=None, before=None, after=None: walked(
            [e for e in entries if feed_id in (None, e.feed_id)], limit, before, after)),
        sources=SimpleNamespace(get=by_id.get, get_many=lambda ids: {i: by_id[i] for i in ids if i in by_id}),
        collections=SimpleNamespace(members=lambda name: list(members),
                                    recent=lambda name, limit, before=None, after=None: walked(
                                        entries, limit, before, after)))


def source(source_id: str, **fields) -> Source:
    return Source(source_id=source_id, url=f"https://{source_id}.example/feed.xml", title=source_id, **fields)


def page(storage, target: str, query: str):
    """feed_page for a page's query string: "", "?before=CURSOR" or "?after=CURSOR"."""
    name, _, cursor = query.removeprefix("?").partition("=")
    return feed_page(storage, target, NOW, **({name: decode_sort_key(cursor, name, SORT_KEY_BYTES)} if cursor else {}))


def walk(storage, target: str, query: str | None, rel: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """(query, the page's (feed, uid) pairs) of each page from `query` on, following rel."""
    pages = []
    while query is not None:
        meta, entries, _ = page(storage, target, query)
        pages.append((query, [(e.feed_id, e.entry_uid) for e in entries]))
        assert len(pages) < 100, "the pages do not end"
        query = meta.next_query if rel == "next" else meta.previous_query
    return pages


def there_and_back(storage, target: str) -> list[list[tuple[str, str]]]:
    """The pages walking next from the first page, checked against those walking previous from
    the last one back to the first page (which has no previous); each entry is on one page."""
    forward = walk(storage, target, "", "next")
    backward = walk(storage, target, forward[-1][0], "previous")
    assert [items for _, items in backward] == [items for _, items in reversed(forward)]
    assert backward[-1][0] == ""
    shown = [pair for _, items in forward for pair in items]
    assert len(shown) == len(set(shown))
    return [items for _, items in forward]


def test_a_source_is_walked_both_ways_even_through_entries_published_alike():
    entries = [entry(f"e{n:02d}", "a", 100 - n) for n in range(13)]
    # Two entries dated alike inside a page, and two across the second and third pages' boundary.
    entries += [entry("tie-x", "a", 100 - 2), entry("tie-y", "a", 100 - 9)]
    pages = there_and_back(store(entries, [source("a")]), "s/a/feed")
    assert [len(p) for p in pages] == [5, 5, 5]
    assert {uid for p in pages for _, uid in p} == {e.entry_uid for e in entries}


def test_page_two_links_the_first_page_and_later_pages_the_page_before_them():
    entries = [entry(f"e{n:02d}", "a", 100 - n) for n in range(12)]
    storage = store(entries, [source("a")])
    first, _, _ = page(storage, "s/a/feed", "")
    assert first.previous_query is None and first.first_query is None
    second, _, _ = page(storage, "s/a/feed", first.next_query)
    assert second.previous_query == "" and second.first_query == ""
    third, shown, _ = page(storage, "s/a/feed", second.next_query)
    assert [e.entry_uid for e in shown] == ["e10", "e11"] and third.next_query is None
    assert third.previous_query == f"?after={encode_sort_key(sort_key_of(entries[10]))}"
    back, shown, _ = page(storage, "s/a/feed", third.previous_query)
    assert [e.entry_uid for e in shown] == [f"e{n:02d}" for n in range(5, 10)]
    assert (back.query, back.next_query, back.previous_query) == (third.previous_query, second.next_query, "")


def test_the_aggregate_skips_unpublished_sources_and_shows_one_article_once_a_page():
    sources = [source("a"), source("b"), source("gone", deleted_at=1.0), source("off", enabled=False)]
    entries = [entry(f"a{n:02d}", "a", 200 - 3 * n) for n in range(20)]
    # b had some of a's articles, dated a minute earlier: the same links.
    entries += [entry(f"b{n:02d}", "b", 200 - 3 * n - 1, link=f"https://a.example/a{n:02d}") for n in range(0, 20, 3)]
    # A removed source's entries, more than one read holds in a row, and a disabled one's among the rest.
    entries += [entry(f"g{n:02d}", "gone", 120 - n // 3) for n in range(30)]
    entries += [entry(f"o{n:02d}", "off", 200 - 3 * n - 2) for n in range(10)]
    shown = {pair for items in there_and_back(store(entries, sources), "feed") for pair in items}
    assert {feed for feed, _ in shown} == {"a", "b"}
    articles = {uid for feed, uid in shown if feed == "a"} | {"a" + uid[1:] for feed, uid in shown if feed == "b"}
    assert articles == {e.entry_uid for e in entries if e.feed_id == "a"}


def test_a_collection_shows_its_current_members_only():
    sources = [source("a"), source("b"), source("left")]
    entries = [entry(f"{s.source_id}{n:02d}", s.source_id, 150 - 3 * n - k)
               for n in range(9) for k, s in enumerate(sources)]
    pages = there_and_back(store(entries, sources, members=["a", "b"]), "c/news/feed")
    assert sorted(pair for items in pages for pair in items) == sorted(
        (e.feed_id, e.entry_uid) for e in entries if e.feed_id != "left")


def test_a_page_with_nothing_to_show_never_reads_the_first_page():
    """An empty collection's first read copies its members' entries (store.collections), and the
    api, which builds older pages, may not write."""
    storage = store([], [source("a")], members=["a"])
    reads, read = [], storage.collections.recent
    storage.collections.recent = lambda name, limit, before=None, after=None: (
        reads.append((before, after)) or read(name, limit, before, after))
    meta, entries, _ = page(storage, "c/news/feed", f"?before={encode_sort_key('2099-01-01T00:00:00Z#x')}")
    assert entries == [] and (meta.previous_query, meta.next_query) == ("", None)
    assert reads and (None, None) not in reads


def test_two_sources_copies_of_one_article_stay_on_one_page():
    """Same id, same date: one sort key in the aggregate, which no cursor can split."""
    entries = [entry(f"a{n:02d}", "a", 100 - n) for n in range(12)]
    entries += [entry(f"a{n:02d}", "b", 100 - n, link=f"https://b.example/a{n:02d}") for n in (6, 8)]
    pages = there_and_back(store(entries, [source("a"), source("b")]), "feed")
    assert [len(p) for p in pages] == [5, 7, 2] and ("a", "a08") in pages[1] and ("b", "a08") in pages[1]
    assert sorted(pair for p in pages for pair in p) == sorted((e.feed_id, e.entry_uid) for e in entries)


@pytest.mark.parametrize("seed", range(20))
def test_any_mix_of_sources_is_walked_the_same_both_ways(seed):
    rng = random.Random(seed)
    sources = [source(f"s{n}", deleted_at=1.0 if rng.random() < 0.2 else None) for n in range(4)]
    # An entry's id is its time: two sources' entries of one time share a sort key.
    drawn = {(rng.choice(sources).source_id, rng.randrange(300)) for _ in range(rng.randint(0, 60))}
    entries = [replace(entry(f"u{minute}", feed, minute,
                             link=f"https://news.example/{rng.randint(0, 40)}" if rng.random() < 0.5 else None),
                       blocked_by="r1" if rng.random() < 0.3 else None)
               for feed, minute in sorted(drawn)]
    mixed = store(entries, sources, members=[s.source_id for s in sources[:3]])
    there_and_back(mixed, "feed")
    there_and_back(mixed, "c/some/feed")
    there_and_back(mixed, "r/some/feed")
    there_and_back(store([e for e in entries if e.feed_id == "s0"], [source("s0")]), "s/s0/feed")


class OldDays:
    """The stats table's item of the days of backfilled histories, as Entries reads it."""

    def __init__(self, days: list[str]):
        self.days, self.reads = days, 0

    def get_item(self, **key):
        self.reads += 1
        return {"Item": {"days": {"SS": self.days}}}


def test_the_aggregate_walks_the_same_days_toward_older_and_newer_entries():
    """The last 2 x retention days, then the old days of backfilled histories, read only when a
    walk gets there."""
    register = OldDays(["2025-01-05", "2026-03-01"])
    entries = Entries(None, Settings(entry_retention_days=30), register)
    now = calendar.timegm((2026, 11, 21, 12, 0, 0))

    def days(cursor, forward):
        return list(entries._days_from(cursor, forward, now))

    assert next(iter(entries._days_from(None, False, now))) == "2026-11-21" and register.reads == 0
    older = days("2026-11-19T08:00:00Z#x", False)
    assert older[:2] == ["2026-11-19", "2026-11-18"] and older[-3:] == ["2026-09-22", "2026-03-01", "2025-01-05"]
    assert len(older) == 59 + 2
    assert days("2026-11-19T08:00:00Z#x", True) == ["2026-11-19", "2026-11-20", "2026-11-21"]
    assert days("2099-01-01T00:00:00Z#x", False)[0] == "2026-11-21"
    assert days("2099-01-01T00:00:00Z#x", True) == []
    assert days("2026-03-01T08:00:00Z#x", False) == ["2026-03-01", "2025-01-05"]
    assert days("2026-02-01T00:00:00Z#x", True)[:2] == ["2026-03-01", "2026-09-22"]
    assert days("1970-01-01T00:00:00Z#x", True)[:3] == ["2025-01-05", "2026-03-01", "2026-09-22"]
    assert days("1970-01-01T00:00:00Z#x", False) == []


@pytest.mark.parametrize("target", ["s/a/feed", "feed"])
def test_entries_dated_alike_across_the_first_page_s_end_are_shown_once(target):
    """The first page orders ties of time by first sighting and uid, its cursor is a sort key
    (time#uid): the page is cut by key, so its next page neither repeats nor skips one."""
    entries = [entry(f"e{n:02d}", "a", 100 - n) for n in range(3)]
    entries += [entry(uid, "a", 90) for uid in ("t-a", "t-b", "t-c", "t-d", "t-e", "t-f")]
    pages = there_and_back(store(entries, [source("a")]), target)
    assert sorted(uid for p in pages for _, uid in p) == sorted(e.entry_uid for e in entries)


@pytest.mark.parametrize("target", ["feed", "c/news/feed", "s/a/feed"])
def test_blocked_entries_leave_every_feed_and_its_pages_stay_full(target):
    """More blocked entries in a row than one read holds: the first page reads further and is full,
    and the walks both ways show every entry the rules let through, once."""
    entries = [entry(f"e{n:02d}", "a", 300 - n) for n in range(40)]
    blocked = {f"e{n:02d}" for n in range(2, 30)} | {"e33"}
    entries = [replace(e, blocked_by="r1") if e.entry_uid in blocked else e for e in entries]
    storage = store(entries, [source("a")], members=["a"])
    _, first, _ = page(storage, target, "")
    assert [e.entry_uid for e in first] == ["e00", "e01", "e30", "e31", "e32"]
    pages = there_and_back(storage, target)
    assert sorted(uid for p in pages for _, uid in p) == sorted(e.entry_uid for e in entries if not e.blocked_by)


def test_a_rule_set_feed_mixes_its_partition_s_sources_without_blocked_or_unpublished_ones():
    sources = [source("a"), source("b"), source("gone", deleted_at=1.0)]
    entries = [entry(f"{s.source_id}{n:02d}", s.source_id, 150 - 3 * n - k)
               for n in range(6) for k, s in enumerate(sources)]
    entries[4] = replace(entries[4], blocked_by="r1")
    storage = store(entries, sources)
    meta, first, _ = page(storage, "r/cve/feed", "")
    assert meta.attribute and set(meta.origins) == {"a", "b"}
    assert (meta.title, meta.home_url) == ("starfeed: cve", "https://feeds.example/r/cve/")
    pages = there_and_back(storage, "r/cve/feed")
    assert sorted(pair for p in pages for pair in p) == sorted(
        (e.feed_id, e.entry_uid) for e in entries if e.feed_id != "gone" and not e.blocked_by)

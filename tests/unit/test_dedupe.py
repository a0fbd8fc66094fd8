"""The entry decision (parse/dedupe.py): what one parse of a source writes, from the entries, where
they come from, the digest as stored and the entries it cannot vouch for. Each case is a table
row: the store's state before, the parse, and the writes asked for."""

from dataclasses import asdict

import pytest

from starfeed.model import Departure, Digest, Entry, Rewrite, Source, StoredEntry, sort_key_of
from starfeed.parse.dedupe import Upserted, admitted, decide, unvouched, vouches
from starfeed.parse.digest import DIGEST_BYTES, HASH_CHARS
from starfeed.parse.filters import filter_entries

WEEK = 7 * 86400
NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z
SEEN = "2027-01-15T08:00:00Z"
LAST_WEEK, YESTERDAY = "2027-01-08T08:00:00Z", "2027-01-14T08:00:00Z"
EARLIER = "2027-01-01T00:00:00Z"  # when the stored entries were first seen
RECENT = Digest(YESTERDAY)  # written since the last refresh


def entry(uid: str, version: str = "a", published: str = EARLIER) -> Entry:
    return Entry(entry_uid=uid, feed_id="f", content_hash=version * 64, published=published, first_seen=SEEN,
                 last_seen=SEEN)


def held(version: str = "a", count: int = 1, last: str = YESTERDAY) -> list:
    return [version * HASH_CHARS, count, last]


def stored(uid: str, version: str = "a", count: int = 1, rewrites: int = 0, published: str = EARLIER,
           ordered_at: str | None = None) -> StoredEntry:
    as_stored = Entry(uid, "f", published=published, first_seen=EARLIER, ordered_at=ordered_at)
    return StoredEntry(uid, version * 64, EARLIER, count, rewrites, sort_key_of(as_stored), {"summary": "analyzed"},
                       ordered_at)


def writes_of(entries, document="feed", digest=RECENT, items=(), max_rewrites=2, left_out=()):
    return decide(entries, document, digest, {item.entry_uid: item for item in items}, NOW,
                  max_rewrites=max_rewrites, sighting_refresh=WEEK, left_out=left_out)


def summary(writes) -> dict:
    """The writes, as uids: what a row of the table expects."""
    return {"new": [e.entry_uid for e in writes.new], "inserts": [e.entry_uid for e in writes.inserts],
            "rewrites": [(r.entry.entry_uid, r.rewrite_count) for r in writes.rewrites],
            "departures": [(d.entry_uid, d.seen_count) for d in writes.departures], "sighted": writes.sighted,
            "digest": None if writes.digest is None else {uid: value[1] for uid, value in writes.digest.held.items()}}


def expect(new=(), inserts=(), rewrites=(), departures=(), sighted=(), digest=None) -> dict:
    return {"new": list(new), "inserts": list(inserts), "rewrites": list(rewrites), "departures": list(departures),
            "sighted": list(sighted), "digest": digest}


CASES = {
    "a new entry is stored; the digest takes it in at its next sighting":
        ({"entries": [entry("n")]}, expect(new=["n"])),
    "an entry held unchanged costs no write":
        ({"entries": [entry("u")], "digest": Digest(YESTERDAY, {"u": held()})}, expect()),
    "a stored entry unchanged, not held (stored since the digest's write), costs no write":
        ({"entries": [entry("s")], "items": [stored("s")]}, expect()),
    "a changed entry is rewritten and the digest sights the document at once":
        ({"entries": [entry("c", "b"), entry("u")], "digest": Digest(YESTERDAY, {"c": held("a", 2), "u": held()}),
          "items": [stored("c", "a", 2)]},
         expect(rewrites=[("c", 1)], digest={"c": 3, "u": 2})),
    "a changed entry is rewritten at most max_rewrites times; the fetches after only see it":
        ({"entries": [entry("c", "d")], "digest": Digest(YESTERDAY, {"c": held("c", 3)}),
          "items": [stored("c", "c", 3, rewrites=2)]}, expect()),
    "an entry changed back is rewritten back":
        ({"entries": [entry("v", "a")], "digest": Digest(YESTERDAY, {"v": held("b", 2)}),
          "items": [stored("v", "b", 2, rewrites=1)]},
         expect(rewrites=[("v", 2)], digest={"v": 3})),
    "a digest a failed store left behind (another hash than the stored one) is rewritten":
        ({"entries": [entry("c", "b")], "digest": Digest(YESTERDAY, {"c": held("a", 2)}),
          "items": [stored("c", "b", 2, rewrites=1)]}, expect(digest={"c": 3})),
    "an entry held whose item expired is not stored again, changed or not":
        ({"entries": [entry("x", "a"), entry("y", "b")], "digest": Digest(YESTERDAY, {"x": held(), "y": held()})},
         expect()),
    "an entry seen again after it was stored that leaves the document moves its sightings to its item":
        ({"entries": [entry("c", "b")], "digest": Digest(YESTERDAY, {"c": held(), "gone": held("a", 3, LAST_WEEK),
                                                                       "once": held()}),
          "items": [stored("c")]},
         expect(rewrites=[("c", 1)], departures=[("gone", 3)], digest={"c": 2})),
    "an entry that returns after it left is counted on from its item":
        ({"entries": [entry("r"), entry("c", "b")], "digest": Digest(YESTERDAY, {"c": held()}),
          "items": [stored("r", count=4), stored("c")]},
         expect(rewrites=[("c", 1)], digest={"r": 5, "c": 2})),
    "the weekly refresh, due, sights the whole document in one digest write":
        ({"entries": [entry("u"), entry("n")], "digest": Digest(LAST_WEEK, {"u": held("a", 2), "gone": held()})},
         expect(new=["n"], digest={"u": 3, "n": 1})),
    "a source without a digest writes its first at once":
        ({"entries": [entry("n")], "digest": Digest()}, expect(new=["n"], digest={"n": 1})),
    "a push writes new and changed entries and keeps the others held, and is no refresh":
        ({"entries": [entry("p4"), entry("p1", "b")], "document": "push",
          "digest": Digest(LAST_WEEK, {"p1": held(), "p2": held("a", 3)}), "items": [stored("p1")]},
         expect(new=["p4"], rewrites=[("p1", 1)], digest={"p4": 1, "p1": 2, "p2": 3})),
    "a push of unchanged entries, the refresh due, writes nothing":
        ({"entries": [entry("p1")], "document": "push", "digest": Digest(LAST_WEEK, {"p1": held()})}, expect()),
    "an archive page inserts its new entries only, and is no sighting":
        ({"entries": [entry("a1", "b"), entry("a2")], "document": "archive", "digest": Digest(LAST_WEEK),
          "items": [stored("a1")]},
         expect(inserts=["a2"])),
    "an archive page ignores the digest: an entry held but not stored is inserted":
        ({"entries": [entry("h")], "document": "archive", "digest": Digest(YESTERDAY, {"h": held()})},
         expect(inserts=["h"])),
    "a first fetch's digest remembers the entries its filters left out, with no sighting":
        ({"entries": [entry("k")], "left_out": [entry("l1"), entry("l2")], "digest": Digest()},
         expect(new=["k"], digest={"k": 1, "l1": 0, "l2": 0})),
    "a first fetch that keeps none still remembers what it left out":
        ({"entries": [], "left_out": [entry("l1")], "digest": Digest()}, expect(digest={"l1": 0})),
    "an entry a first fetch left out is not stored when the feed next changes, changed or not":
        ({"entries": [entry("n"), entry("l1"), entry("l2", "b")],
          "digest": Digest(YESTERDAY, {"l1": held(count=0), "l2": held(count=0)})}, expect(new=["n"])),
    "a sighting keeps a left-out entry unsighted, and one that leaves has no item to depart to":
        ({"entries": [entry("c", "b"), entry("l1")],
          "digest": Digest(YESTERDAY, {"c": held(), "l1": held(count=0), "l2": held(count=0)}),
          "items": [stored("c")]},
         expect(rewrites=[("c", 1)], digest={"c": 2, "l1": 0})),
    "an entry whose date moves back into the past is no new entry; unchanged, no write":
        ({"entries": [entry("d", published=LAST_WEEK)], "digest": Digest(YESTERDAY, {"d": held()})}, expect()),
    "an entry whose date moves back into the past with its content is rewritten, not new":
        ({"entries": [entry("d", "b", published=LAST_WEEK)], "digest": Digest(YESTERDAY, {"d": held()}),
          "items": [stored("d", published="2099-01-01T00:00:00Z", ordered_at=EARLIER)]},
         expect(rewrites=[("d", 1)], digest={"d": 2})),
}


@pytest.mark.parametrize("case", CASES)
def test_the_entry_decision(case):
    given, expected = CASES[case]
    assert summary(writes_of(**given)) == expected


def test_a_rewrite_carries_the_stored_first_sighting_sightings_and_analysis_and_leaves_the_parse_alone():
    parsed = entry("c", "b")
    (rewrite,) = writes_of([parsed], items=[stored("c", "a", 5, rewrites=1)]).rewrites
    assert rewrite == Rewrite(Entry(**{**asdict(parsed), "first_seen": EARLIER, "seen_count": 5,
                                       "analyzer_result": {"summary": "analyzed"}}), 2, None)
    assert parsed.first_seen == SEEN and parsed.analyzer_result is None


def test_a_rewrite_that_moves_the_entry_in_time_names_its_collection_copies_stale_key():
    old = stored("c", published="2026-12-31T00:00:00Z")
    (rewrite,) = writes_of([entry("c", "b")], items=[old]).rewrites
    assert rewrite.stale_sort_key == old.sort_key != sort_key_of(rewrite.entry)


def test_a_sighting_is_stamped_now():
    writes = writes_of([entry("n")], digest=Digest())
    assert writes.seen == SEEN and writes.digest.sighted_at == SEEN and writes.digest.held["n"][2] == SEEN


def test_a_departure_carries_the_digests_sightings():
    writes = writes_of([entry("c", "b")], digest=Digest(YESTERDAY, {"c": held(), "gone": held("a", 3, LAST_WEEK)}),
                       items=[stored("c")])
    assert writes.departures == [Departure("gone", 3, LAST_WEEK)]


def test_entries_beyond_the_digests_room_are_sighted_one_by_one_when_their_item_is_known():
    long_uid = "\U0001F600" * 100  # stored escaped, six bytes a character
    uids = [f"{long_uid}{n}" for n in range(200)]
    entries = [entry(uid) for uid in uids]
    known = {uids[-1]: held("a", 2), uids[-2]: held()}  # held before: sighted, and the first departs
    writes = writes_of(entries, digest=Digest(LAST_WEEK, known), items=[stored(uids[-3], count=7)])
    room = len(writes.digest.held)
    assert 0 < room < 200 and len(writes.digest.stored()) <= DIGEST_BYTES
    assert list(writes.digest.held) == uids[:room]  # the document's first are kept
    assert writes.new == entries[:-3]  # new ones beyond the room are stored with their first sighting
    assert writes.sighted == uids[-3:]  # the others beyond it are counted in their items
    assert writes.departures == [Departure(uids[-1], 2, YESTERDAY)]  # written before its sighting


def test_only_the_entries_the_digest_does_not_hold_unchanged_are_read_and_an_archive_page_reads_no_digest():
    digest = Digest(YESTERDAY, {"u": held(), "c": held("a")})
    assert unvouched([entry("u"), entry("c", "b"), entry("n")], digest) == ["c", "n"]
    assert vouches("feed") and vouches("push") and not vouches("archive")


def test_entries_storage_would_refuse_are_left_out_with_their_position_and_reason():
    entries = [entry("ok"), entry("long"), entry("ok2"), entry("big")]
    kept, refused = admitted(entries, [None, "GUID of 2,000 bytes", None, "500,000 bytes"])
    assert [e.entry_uid for e in kept] == ["ok", "ok2"]
    assert refused == [(2, "GUID of 2,000 bytes"), (4, "500,000 bytes")]
    assert Upserted([], refused).error == "store: entry 2: GUID of 2,000 bytes (and 1 more)"
    assert Upserted(kept, []).error is None


def test_a_rewrite_keeps_the_place_of_an_entry_whose_date_is_none_to_sort_by():
    # First seen dated in the future, it sat where it was first seen; changed, still dated in the
    # future, it stays there rather than lead as if new (the parse placed it now).
    parsed = Entry(**{**asdict(entry("d", "b", published="2099-01-01T00:00:00Z")), "ordered_at": SEEN})
    old = stored("d", published="2099-01-01T00:00:00Z", ordered_at=EARLIER)
    (rewrite,) = writes_of([parsed], items=[old]).rewrites
    assert rewrite.entry.sort_time == EARLIER and rewrite.stale_sort_key is None
    assert rewrite.entry.published == "2099-01-01T00:00:00Z"  # as the source gives it
    # Its date moved back into the past: it sorts by that date, below its first sighting.
    moved = Entry(**{**asdict(entry("d", "c", published="2026-12-01T00:00:00Z"))})
    (rewrite,) = writes_of([moved], items=[old]).rewrites
    assert rewrite.entry.sort_time == "2026-12-01T00:00:00Z" < EARLIER


def test_a_fifty_item_undated_feed_that_publishes_one_more_stores_exactly_one_new():
    """A first fetch keeps the feed's first 3 undated entries and leaves out 47; the next change
    of the feed brings in its one new item, not the 47 as well (what `source list` counts as new)."""
    def undated(uids):
        return [Entry(uid, "f", content_hash="a" * 64, first_seen=SEEN, last_seen=SEEN) for uid in uids]

    source = Source(source_id="f", url="https://news.example/feed", created_at=NOW - 3600)
    first = filter_entries(undated([f"u{n}" for n in range(50)]), source, NOW, max_age_days=7)
    writes = writes_of(first.kept, digest=Digest(), left_out=first.left_out)
    assert (len(writes.new), len(first.left_out), len(writes.digest.held)) == (3, 47, 50)

    source.last_success_at = NOW
    later = NOW + 3600
    second = filter_entries(undated(["u50", *(f"u{n}" for n in range(50))]), source, later, max_age_days=7)
    unread = unvouched(second.kept, writes.digest)
    assert unread == ["u50"]  # the others cost no read
    again = decide(second.kept, "feed", writes.digest, {}, later, max_rewrites=2, sighting_refresh=WEEK)
    assert [e.entry_uid for e in again.new] == ["u50"] and again.digest is None and not again.sighted


def test_an_entry_stored_under_its_former_uid_continues_under_it():
    from starfeed.parse.dedupe import continued, formers
    from starfeed.parse.normalize import former_uid, normalize_entries

    raw = {"title": "t", "link": "https://x.example/a", "published_parsed": (2026, 1, 1, 0, 0, 0, 0, 0, 0)}
    derived = normalize_entries([raw], "f", "https://x.example/feed", NOW)[0]
    former = former_uid(derived)
    assert former not in (None, derived.entry_uid)
    assert formers([derived], Digest()) == [former]
    assert formers([derived], Digest(YESTERDAY, {former: held()})) == []
    assert [e.entry_uid for e in continued([derived], Digest(YESTERDAY, {former: held()}), {})] == [former]
    assert [e.entry_uid for e in continued([derived], Digest(), {former: stored(former)})] == [former]
    assert [e.entry_uid for e in continued([derived], Digest(), {})] == [derived.entry_uid]
    with_id = normalize_entries([{**raw, "id": "g"}], "f", "https://x.example/feed", NOW)[0]
    assert former_uid(with_id) is None

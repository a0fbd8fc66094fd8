"""A source's entry digest (docs/design.md#sightings) (parse/digest.py) against the local stack's DynamoDB: what the
REST API shows of stored entries after fetched, pushed and archived documents."""

import time
from dataclasses import replace

import pytest

from starfeed.fetch.entries import store_entries
from starfeed.local.aws_calls import observed
from starfeed.model import Entry
from starfeed.parse.normalize import former_uid, normalize_entries
from starfeed.store.digest import DIGEST_UID

FEED = "d16e57000001"


def at(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def entry(uid: str, title: str, when: float) -> Entry:
    return Entry(entry_uid=uid, feed_id=FEED, title=title, canonical_link=f"https://example.org/{uid}",
                 content_hash=f"{title:x<64}", first_seen=at(when), last_seen=at(when), published=at(when - 60))


@pytest.fixture
def feed(storage):
    """Stores entries as a fetch does (fetch/entries.py)."""
    storage.entries.purge(FEED)
    yield lambda entries, now, document="feed": store_entries(storage, entries, now, document=document)
    storage.entries.purge(FEED)


def shown(storage) -> dict[str, tuple[str, int, str]]:
    """uid -> (title, seen_count, last_seen), as the REST API reads them."""
    return {e.entry_uid: (e.title, e.seen_count, e.last_seen) for e in storage.entry_lists.of_feed(FEED, 50).entries}


def test_an_entry_changed_back_is_stored_back(storage, feed):
    now = time.time()
    for n, title in enumerate(["Version A", "Version B", "Version A"]):
        feed([entry("v1", title, now + n)], now + n)
    assert shown(storage)["v1"][0] == "Version A"


def test_an_archive_page_stores_new_entries_only_and_is_no_sighting(storage, feed):
    now = time.time()
    feed([entry("a1", "Live", now)], now)
    feed([entry("a1", "Archived", now + 1), entry("a2", "Older", now + 1)], now + 1, document="archive")
    assert shown(storage) == {"a1": ("Live", 1, at(now)), "a2": ("Older", 1, at(now + 1))}
    feed([entry("a1", "Live", now + 2)], now + 2)  # the feed's version is still the stored one
    assert shown(storage)["a1"][0] == "Live"


def test_an_archive_page_read_before_a_fetch_stored_its_entry_does_not_overwrite_it(storage, feed, monkeypatch):
    now = time.time()
    feed([entry("r1", "Live", now)], now)
    # The walk read r1 before the fetch stored it (they run on queues of their own): it finds none.
    monkeypatch.setattr(storage.records.Entry, "batch_get", classmethod(lambda cls, keys, **options: iter(())))
    assert feed([entry("r1", "Archived", now + 1)], now + 1, document="archive").new == []
    monkeypatch.undo()
    assert shown(storage)["r1"][0] == "Live"


def test_a_push_of_some_entries_leaves_the_others_held(storage, feed):
    now = time.time()
    feed([entry(uid, uid, now) for uid in ("p1", "p2", "p3")], now)
    calls = []
    with observed(lambda service, operation, params: calls.append(operation)):
        # A hub's diff: one new entry and one changed, the others not sent.
        feed([entry("p4", "p4", now + 1), entry("p1", "p1 changed", now + 1)], now + 1, document="push")
    assert "UpdateItem" not in calls  # no entry was taken to have left the feed
    assert shown(storage) == {"p1": ("p1 changed", 2, at(now + 1)), "p2": ("p2", 1, at(now)),
                              "p3": ("p3", 1, at(now)), "p4": ("p4", 1, at(now + 1))}
    held = storage.entries.digests([FEED])[FEED]
    assert set(held.held) == {"p1", "p2", "p3", "p4"}
    calls.clear()
    with observed(lambda service, operation, params: calls.append((operation, params))):
        feed([entry(uid, title, now + 2) for uid, title in
                     (("p1", "p1 changed"), ("p2", "p2"), ("p3", "p3"), ("p4", "p4"))], now + 2)
    read = [key["entry_uid"]["S"] for operation, params in calls if operation == "BatchGetItem"
            for table in params["RequestItems"].values() for key in table["Keys"]]
    assert read == [DIGEST_UID]  # every entry held: none read


def test_an_entry_that_leaves_keeps_its_last_sighting_and_one_past_retention_is_not_stored_again(storage, feed):
    now = time.time()
    week = storage.settings.sighting_refresh + 1
    feed([entry("l1", "Stays", now), entry("l2", "Leaves", now)], now)
    feed([entry("l1", "Stays", now + week), entry("l2", "Leaves", now + week)], now + week)  # sighted again
    feed([entry("l1", "Stays", now + 2 * week)], now + 2 * week)  # sighted again, without l2
    assert shown(storage) == {"l1": ("Stays", 3, at(now + 2 * week)), "l2": ("Leaves", 2, at(now + week))}
    # l1's item expires (its TTL) while its feed still carries it, even changed: not new again.
    storage.records.Entry(FEED, "l1").delete()
    assert feed([entry("l1", "Stays", now + 2 * week + 1)], now + 2 * week + 1).new == []
    assert feed([entry("l1", "Stays, edited", now + 2 * week + 2)], now + 2 * week + 2).new == []
    # The digest itself never expires: were it gone, a quiet feed's old entries would come back as new.
    item = storage.client("dynamodb").get_item(TableName=storage.settings.entries_table,
                                                Key={"feed_id": {"S": FEED}, "entry_uid": {"S": DIGEST_UID}})["Item"]
    assert "expires_at" not in item


def test_a_store_cut_short_before_its_digest_is_made_good_by_the_retry(storage, feed, monkeypatch):
    now = time.time()
    feed([entry("c1", "Version A", now)], now)
    save = storage.records.EntryDigest.save

    def failing(self, *args, **kwargs):
        raise RuntimeError("throttled")

    monkeypatch.setattr(storage.records.EntryDigest, "save", failing)
    with pytest.raises(RuntimeError):
        feed([entry("c1", "Version B", now + 1)], now + 1)  # the entry rewritten, its digest not
    monkeypatch.setattr(storage.records.EntryDigest, "save", save)
    feed([entry("c1", "Version B", now + 2)], now + 2)  # the message retried
    feed([entry("c1", "Version A", now + 3)], now + 3)  # then changed back
    assert shown(storage)["c1"][0] == "Version A"


def test_a_digest_edited_by_hand_into_another_type_fails_nothing_and_is_written_anew(storage, feed):
    now = time.time()
    feed([entry("h1", "Kept", now)], now)
    other = "d16e57000002"  # a neighbour whose digest is fine, read in the same request
    feed([replace(entry("n1", "Neighbour", now), feed_id=other)], now)
    storage.client("dynamodb").update_item(
        TableName=storage.settings.entries_table, Key={"feed_id": {"S": FEED}, "entry_uid": {"S": DIGEST_UID}},
        UpdateExpression="SET held = :map", ExpressionAttributeValues={":map": {"M": {"h1": {"S": "x"}}}})
    try:
        assert set(storage.entries.digests([FEED, other])) == {other}
        assert feed([entry("h1", "Kept", now + 1), entry("h2", "New", now + 1)], now + 1).new[0].entry_uid == "h2"
        assert set(storage.entries.digests([FEED])[FEED].held) == {"h1", "h2"}  # written anew by that parse
    finally:
        storage.entries.purge(other)


def undated_id_entry(published: tuple, now: float, title: str = "Moved") -> Entry:
    """An item of a feed that gives it no id, as normalized: its uid is derived."""
    raw = {"title": title, "link": "https://example.org/moved", "published_parsed": published}
    return normalize_entries([raw], FEED, "https://example.org/feed", now)[0]


def test_an_entry_without_an_id_whose_date_moves_into_the_past_is_not_new_again(storage, feed):
    now = time.time()
    assert [e.title for e in feed([undated_id_entry((2099, 1, 1, 0, 0, 0), now)], now).new] == ["Moved"]
    corrected = feed([undated_id_entry(time.gmtime(now - 3600)[:6], now + 1)], now + 1)
    assert corrected.new == []
    assert [title for title, _, _ in shown(storage).values()] == ["Moved"]


def test_entries_stored_while_their_date_was_part_of_their_uid_keep_it(storage, feed):
    """An upgrade announces none of a feed's stored entries again, dated or left out."""
    now = time.time()
    dated = undated_id_entry(time.gmtime(now - 7200)[:6], now)
    former = former_uid(dated)
    assert former is not None and former != dated.entry_uid
    store_entries(storage, [replace(dated, entry_uid=former)], now)
    assert feed([dated], now + 1).new == []
    assert feed([dated], now + 2).new == []  # the digest now holds it under its former uid
    assert list(shown(storage)) == [former]
    other = undated_id_entry(time.gmtime(now - 9000)[:6], now, "Left out")
    storage.entries.purge(FEED)
    store_entries(storage, [], now, left_out=[replace(other, entry_uid=former_uid(other))])
    assert feed([other], now + 1).new == []

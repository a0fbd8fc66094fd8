"""A source's entry digest (parse/digest.py): which entries a parse need not read, and the
sightings one write records."""

import json

from starfeed.model import Departure, Digest, Entry
from starfeed.parse.digest import DIGEST_BYTES, HASH_CHARS, departed, due, sighted, unchanged

T0, T1 = "2026-11-01T00:00:00Z", "2026-11-08T00:00:00Z"
A, B = "a" * HASH_CHARS, "b" * HASH_CHARS


def entry(uid: str, content_hash: str = "a" * 64) -> Entry:
    return Entry(entry_uid=uid, feed_id="f", content_hash=content_hash, first_seen=T1, last_seen=T1)


def test_an_entry_held_with_its_hash_is_unchanged_and_one_with_another_or_none_is_not():
    digest = Digest(T0, {"held": [A, 3, T0]})
    assert unchanged(digest, entry("held"))
    assert not unchanged(digest, entry("held", "b" * 64))
    assert not unchanged(digest, entry("other"))
    assert not unchanged(Digest(), entry("held"))


def test_a_documents_sighting_counts_each_entry_once_more_from_the_digest_else_its_item_else_as_new():
    digest = Digest(T0, {"held": [A, 3, T0], "gone": [A, 2, T0], "once": [B, 1, T0]})
    after, beyond = sighted(digest, [entry("held", "b" * 64), entry("stored"), entry("new")], {"stored": 5}, T1)
    assert beyond == []
    assert after == Digest(T1, {"held": [B, 4, T1], "stored": [A, 6, T1], "new": [A, 1, T1]})
    assert after.sighting("held") == (T1, 4) and after.sighting("gone") is None
    # Left the document: "gone" was seen again after it was stored, "once" was not.
    assert departed(digest, after) == [Departure("gone", 2, T0)]


def test_a_push_sights_its_entries_and_keeps_the_others_as_they_were():
    digest = Digest(T0, {"held": [A, 3, T0], "pushed": [A, 2, T0]})
    after, _ = sighted(digest, [entry("pushed", "b" * 64), entry("new")], {}, T1, whole=False)
    assert after == Digest(T0, {"pushed": [B, 3, T1], "new": [A, 1, T1], "held": [A, 3, T0]})
    assert departed(digest, after) == []  # a push may hold some entries only: none has left


def test_the_refresh_is_due_once_the_last_sighting_is_as_old_as_the_bound():
    assert due(Digest(), T0)
    assert due(Digest(T0), T0) and not due(Digest(T1), T0)


def test_entries_beyond_the_digests_room_as_stored_are_named_and_not_held():
    # Non-ASCII GUIDs are stored escaped, six bytes a character: the room counts them so.
    long_uid = "\U0001F600" * 100
    entries = [entry(f"{long_uid}{n}") for n in range(200)]
    after, beyond = sighted(Digest(), entries, {}, T1)
    assert 0 < len(after.held) < 200 and len(after.held) + len(beyond) == 200
    assert beyond == [e.entry_uid for e in entries[len(after.held):]]  # the document's first kept
    assert DIGEST_BYTES - 2000 < len(after.stored()) <= DIGEST_BYTES
    assert Digest.of(T1, after.stored()) == after


def test_a_digest_edited_by_hand_keeps_only_its_well_formed_parts():
    held = {"ok": ["abc", 2, T0], "short": ["abc", 2], "text": ["abc", "two", T0], "none": None}
    assert Digest.of(T0, json.dumps(held)).held == {"ok": ["abc", 2, T0]}
    assert Digest.of(T0, '{"inf": ["abc", Infinity, "t"], "nan": ["abc", NaN, "t"]}').held == {}
    assert Digest.of(T0, "{not json") == Digest() and Digest.of(None, json.dumps(held)) == Digest()

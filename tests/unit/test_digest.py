"""A source's entry digest (store/digest.py): which entries a parse need not read, and the
sightings one write records."""

from starfeed.model import Entry
from starfeed.store.digest import DIGEST_BYTES, HASH_CHARS, Digest

T0, T1 = "2026-11-01T00:00:00Z", "2026-11-08T00:00:00Z"


def entry(uid: str, content_hash: str = "a" * 64) -> Entry:
    return Entry(entry_uid=uid, feed_id="f", content_hash=content_hash, first_seen=T1, last_seen=T1)


def test_an_entry_held_with_its_hash_is_unchanged_and_one_with_another_or_none_is_not():
    digest = Digest(T0, {"held": ["a" * HASH_CHARS, 3]})
    assert digest.unchanged(entry("held"))
    assert not digest.unchanged(entry("held", "b" * 64))
    assert not digest.unchanged(entry("other"))
    assert not Digest().unchanged(entry("held"))


def test_a_sighting_counts_each_entry_once_more_from_the_digest_else_its_item_else_as_new():
    digest = Digest(T0, {"held": ["a" * HASH_CHARS, 3], "gone": ["a" * HASH_CHARS, 2], "once": ["c" * HASH_CHARS, 1]})
    after, beyond = digest.sighted([entry("held", "b" * 64), entry("stored"), entry("new")], {"stored": 5}, T1)
    assert beyond == []
    assert after.held == {"held": ["b" * HASH_CHARS, 4], "stored": ["a" * HASH_CHARS, 6], "new": ["a" * HASH_CHARS, 1]}
    assert after.sighting("held") == (T1, 4) and after.sighting("gone") is None
    # Left the document: "gone" was seen again after it was stored, "once" was not.
    assert digest.departed(after) == {"gone": 2}


def test_the_refresh_is_due_once_the_last_sighting_is_as_old_as_the_bound():
    assert Digest().due(T0)
    assert Digest(T0).due(T0) and not Digest(T1).due(T0)


def test_entries_beyond_the_digests_room_are_named_and_not_held():
    long_uid = "x" * 500
    entries = [entry(f"{long_uid}{n}") for n in range(200)]
    after, beyond = Digest().sighted(entries, {}, T1)
    assert 0 < len(after.held) < 200 and len(after.held) + len(beyond) == 200
    assert beyond == [e.entry_uid for e in entries[len(after.held):]]  # the newest kept, in order
    assert len(str(after.held)) <= DIGEST_BYTES


def test_a_digest_edited_by_hand_keeps_only_its_well_formed_parts():
    digest = Digest.of(T0, {"ok": ["abc", 2], "short": ["abc"], "text": ["abc", "two"], "none": None})
    assert digest.held == {"ok": ["abc", 2]}
    assert Digest.of(None, {"ok": ["abc", 2]}) == Digest()

"""A source's entry digest: for each entry of its latest document, the start of the content hash
stored for it and its sightings, in one item beside the entries (model.Digest, store/digest.py).
A parse reads it instead of every entry to know which are unchanged, and records a sighting of
them all with one write instead of one per entry (those writes were the largest line of the bill).

The digest is rewritten by every parse that rewrites a changed entry (it must hold the hash the
entry was stored with: a digest a failure left behind is rewritten too), and otherwise once per
settings.sighting_refresh: each rewrite is a sighting of the document's entries. An entry stored
new is read, and shown as its item says, until the next rewrite takes it in. A pushed document may
hold only some entries (WebSub allows it): its rewrite sights those and keeps the others as held.
An entry that leaves the digest gets its sightings written to its own item. An entry held whose
item has expired (its retention) is not stored again: it would come back as new. The entries
beyond its room (about 580 of 60-character GUIDs) are read and sighted one by one, and come back
as new past their retention, as before. It also remembers, with no sighting, the entries a first
fetch left out (the new-subscription rules: docs/design.md#left-out): never stored, they are
not stored when the feed next changes either, and have no item to read, sight or depart to. Only
the source's fetches and pushes write it, and its FIFO message group runs them one at a time
(parse/dedupe.py decides when)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from starfeed.model import Departure, Digest, Entry

# Its room, as stored (JSON, non-ASCII escaped), bounding a rewrite at 64 write units: a document's
# entries beyond it (a thousand long GUIDs) are checked and sighted one by one, as before the digest.
DIGEST_BYTES = 64 * 1024
HASH_CHARS = 16


def _size(uid: str, value: list[Any]) -> int:
    return len(json.dumps({uid: value}))  # its share of the stored object, its separator included


def unchanged(digest: Digest, entry: Entry) -> bool:
    """Held with the hash it was stored with: no need to read or write it."""
    value = digest.held.get(entry.entry_uid)
    return value is not None and value[0] == entry.content_hash[:HASH_CHARS]


def never_stored(digest: Digest, entry_uid: str) -> bool:
    """Held with no sighting: left out by a first fetch, so it has no item."""
    value = digest.held.get(entry_uid)
    return value is not None and value[1] == 0


def due(digest: Digest, refresh_before: str) -> bool:
    """Its last whole sighting is as old as the bound, or there was none."""
    return digest.sighted_at <= refresh_before


def sighted(digest: Digest, entries: Sequence[Entry], stored: Mapping[str, int], seen: str,
            whole: bool = True, left_out: Sequence[Entry] = ()) -> tuple[Digest, list[str]]:
    """The digest after a sighting at `seen` of these entries (in document order), and those of
    them beyond its room. whole: they are the whole document, and the digest holds them alone;
    else (a push) the others held stay, after them. Each sighted entry is counted once more: from
    the digest, else from `stored` (its item's count, for an entry stored before this parse); an
    entry stored by this parse has 1; one never stored stays at none. left_out: a first fetch's,
    held last with no sighting, as room allows."""
    sightings: dict[str, list[Any]] = {}
    for entry in entries:
        value = digest.held.get(entry.entry_uid)
        count = value[1] if value is not None else stored.get(entry.entry_uid, 0)
        never = value is not None and count == 0
        sightings[entry.entry_uid] = [entry.content_hash[:HASH_CHARS], count if never else count + 1, seen]
    kept = {} if whole else {uid: value for uid, value in digest.held.items() if uid not in sightings}
    remembered = {e.entry_uid: [e.content_hash[:HASH_CHARS], 0, seen] for e in left_out
                  if e.entry_uid not in sightings and e.entry_uid not in kept}
    held: dict[str, list[Any]] = {}
    beyond: list[str] = []
    size = 0
    for uid, value in [*sightings.items(), *kept.items(), *remembered.items()]:
        if size + _size(uid, value) > DIGEST_BYTES:
            beyond += [uid] if uid in sightings else []
            continue
        held[uid], size = value, size + _size(uid, value)
    return Digest(seen if whole else digest.sighted_at, held), beyond


def departed(before: Digest, after: Digest) -> list[Departure]:
    """The entries held before and not after, seen again after they were stored: their sightings,
    which must move to their own items."""
    return [Departure(uid, count, last) for uid, (_, count, last) in before.held.items()
            if uid not in after.held and count > 1]

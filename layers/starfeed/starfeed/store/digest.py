"""A source's entry digest: for each entry of its latest document, the start of the content hash
stored for it and its sightings, in one item beside the entries. A parse reads it instead of every
entry to know which are unchanged, and records a sighting of them all with one write instead of
one per entry (issue 20: those writes were the largest line of the bill).

The digest is rewritten by every parse that rewrites a changed entry (it must hold the hash the
entry was stored with: a digest a failure left behind is rewritten too), and otherwise once per
settings.sighting_refresh: each rewrite is a
sighting of the document's entries. An entry stored new is read, and shown as its item says, until
the next rewrite takes it in. A pushed document may hold only some entries (WebSub allows it): its
rewrite sights those and keeps the others as held. An entry that leaves the digest gets its
sightings written to its own item. An entry held whose item has expired (its retention) is not
stored again: it would come back as new. The entries beyond its room (about 580 of 60-character
GUIDs) are read and sighted one by one, and come back as new past their retention, as before. Only the source's fetches and pushes write it, and its FIFO
message group runs them one at a time."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from starfeed.model import Entry

# Its entry_uid: normalization strips the character (XML cannot carry it), so no parsed entry has
# it, and records.entry_problem refuses one that would.
DIGEST_UID = "\x01digest"
# Its room, as stored (JSON, non-ASCII escaped), bounding a rewrite at 64 write units: a document's
# entries beyond it (a thousand long GUIDs) are checked and sighted one by one, as before the digest.
DIGEST_BYTES = 64 * 1024
HASH_CHARS = 16
Document = Literal["feed", "push", "archive"]  # where upserted entries come from (Entries.upsert)


def _size(uid: str, value: list) -> int:
    return len(json.dumps({uid: value}))  # its share of the stored object, its separator included


@dataclass(frozen=True)
class Digest:
    sighted_at: str = ""  # RFC 3339: when a whole document was last sighted; "" when never
    held: dict[str, list] = field(default_factory=dict)  # entry_uid -> [hash start, sightings, last seen]

    @classmethod
    def of(cls, sighted_at, held_json) -> Digest:
        """A stored digest; a malformed one (edited by hand) holds only its well-formed parts."""
        try:
            held = json.loads(held_json) if isinstance(held_json, str) else None
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            held = None
        if not isinstance(sighted_at, str) or not isinstance(held, dict):
            return cls()
        return cls(sighted_at, {uid: [h, int(n), seen] for uid, value in held.items()
                                if isinstance(value, list) and len(value) == 3
                                and isinstance(h := value[0], str) and isinstance(seen := value[2], str)
                                and isinstance(n := value[1], (int, float)) and 0 <= n < 2 ** 53})

    def stored(self) -> str:
        return json.dumps(self.held)

    def unchanged(self, entry: Entry) -> bool:
        value = self.held.get(entry.entry_uid)
        return value is not None and value[0] == entry.content_hash[:HASH_CHARS]

    def due(self, refresh_before: str) -> bool:
        return self.sighted_at <= refresh_before

    def sighting(self, entry_uid: str) -> tuple[str, int] | None:
        """(last_seen, seen_count) of a held entry."""
        value = self.held.get(entry_uid)
        return (value[2], value[1]) if value is not None else None

    def sighted(self, entries: list[Entry], stored: dict[str, int], seen: str,
                whole: bool = True) -> tuple[Digest, list[str]]:
        """The digest after a sighting at `seen` of these entries (in document order), and those
        of them beyond its room. whole: they are the whole document, and the digest holds them
        alone; else (a push) the others held stay, after them. Each sighted entry is counted once
        more: from this digest, else from `stored` (its item's count, for an entry stored before
        this parse); an entry stored by this parse has 1."""
        sighted: dict[str, list] = {}
        for entry in entries:
            value = self.held.get(entry.entry_uid)
            count = value[1] if value is not None else stored.get(entry.entry_uid, 0)
            sighted[entry.entry_uid] = [entry.content_hash[:HASH_CHARS], count + 1, seen]
        kept = {} if whole else {uid: value for uid, value in self.held.items() if uid not in sighted}
        held: dict[str, list] = {}
        beyond: list[str] = []
        size = 0
        for uid, value in [*sighted.items(), *kept.items()]:
            if size + _size(uid, value) > DIGEST_BYTES:
                beyond += [uid] if uid in sighted else []
                continue
            held[uid], size = value, size + _size(uid, value)
        return Digest(seen if whole else self.sighted_at, held), beyond

    def departed(self, after: Digest) -> dict[str, tuple[int, str]]:
        """The entries held here and not after, seen again after they were stored: their
        (sightings, last seen), which must move to their own items."""
        return {uid: (count, last) for uid, (_, count, last) in self.held.items()
                if uid not in after.held and count > 1}

"""A source's entry digest: for each entry of its latest document, the start of its content hash
and how many sightings it has, in one item beside the entries. A parse reads it instead of every
entry to know which are unchanged, and records a sighting of them all with one write instead of
one per entry (issue 20: those writes were the largest line of the bill).

The digest is rewritten once per settings.sighting_refresh; every entry it holds was last seen
then (sighted_at). An entry stored since is read and checked from its own item until the next
rewrite takes it in. One that has left the document gets its sightings written to its own item."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from starfeed.model import Entry

# Its entry_uid: XML cannot carry the character, so no parsed entry has it (records.entry_problem
# refuses one that would).
DIGEST_UID = "\x01digest"
# Its room, bounding a rewrite at 64 write units: a document's entries beyond it (a thousand long
# GUIDs) are checked and sighted one by one, as before the digest.
DIGEST_BYTES = 64 * 1024
HASH_CHARS = 16


@dataclass(frozen=True)
class Digest:
    sighted_at: str = ""  # RFC 3339; "" when there is none yet
    held: dict[str, list] = field(default_factory=dict)  # entry_uid -> [content hash start, sightings]

    @classmethod
    def of(cls, sighted_at, held) -> Digest:
        """A stored digest; a malformed one (edited by hand) holds only its well-formed parts."""
        if not isinstance(sighted_at, str) or not isinstance(held, dict):
            return cls()
        return cls(sighted_at, {uid: [h, int(n)] for uid, value in held.items()
                                if isinstance(value, list) and len(value) == 2
                                and isinstance(h := value[0], str) and isinstance(n := value[1], (int, float))})

    def unchanged(self, entry: Entry) -> bool:
        value = self.held.get(entry.entry_uid)
        return value is not None and value[0] == entry.content_hash[:HASH_CHARS]

    def due(self, refresh_before: str) -> bool:
        return self.sighted_at <= refresh_before

    def sighting(self, entry_uid: str) -> tuple[str, int] | None:
        """(last_seen, seen_count) of a held entry."""
        value = self.held.get(entry_uid)
        return (self.sighted_at, value[1]) if value is not None else None

    def sighted(self, entries: list[Entry], stored: dict[str, int], seen: str) -> tuple[Digest, list[str]]:
        """The digest after a sighting of a document's entries at `seen`, and the entries beyond
        its room. Each is counted once more: from this digest, else from `stored` (its item's
        count, for an entry stored before this parse); an entry stored by this parse has 1."""
        held: dict[str, list] = {}
        beyond: list[str] = []
        size = 2
        for entry in entries:
            value = self.held.get(entry.entry_uid)
            count = value[1] + 1 if value is not None else stored[entry.entry_uid] + 1 \
                if entry.entry_uid in stored else 1
            pair = [entry.content_hash[:HASH_CHARS], count]
            grown = size + len(json.dumps({entry.entry_uid: pair}, ensure_ascii=False).encode("utf-8", "surrogatepass"))
            if grown > DIGEST_BYTES:
                beyond.append(entry.entry_uid)
                continue
            held[entry.entry_uid], size = pair, grown
        return Digest(seen, held), beyond

    def departed(self, after: Digest) -> dict[str, int]:
        """The entries held here and not after, seen more than when stored: their sightings,
        which must move to their own items (last seen at this digest's sighted_at)."""
        return {uid: count for uid, (_, count) in self.held.items() if uid not in after.held and count > 1}

"""Collections: which sources belong to which (one membership item each), and each collection's
newest entries, copied there when first stored (store/entries.py), so its feed reads one
partition whatever the number of members."""

from __future__ import annotations

from starfeed.model import Entry
from starfeed.settings import Settings
from starfeed.store.records import collection_entry_record, entry_of


class Collections:
    def __init__(self, records, settings: Settings):
        self._records, self.settings = records, settings

    def join(self, collection: str, source_id: str, *, has_entries: bool = False) -> None:
        """Make the source a member; has_entries: it has stored entries already, and its newest
        are copied into the collection so its feed shows them at once."""
        self._records.Membership(collection, source_id).save()
        if has_entries:
            self._copy(collection, [source_id])

    def members(self, collection: str) -> list[str]:
        return [m.source_id for m in self._records.Membership.query(collection)]

    def counts(self) -> dict[str, int]:
        """Every collection with its number of sources (the table is small: one item a membership)."""
        counts: dict[str, int] = {}
        for membership in self._records.Membership.scan():
            counts[membership.collection] = counts.get(membership.collection, 0) + 1
        return dict(sorted(counts.items()))

    def recent(self, collection: str, limit: int, before: str | None = None,
               after: str | None = None) -> list[Entry]:
        """The collection's newest entries, of members past and present: one Query; with `before`
        (a sort key), those older than it; with `after` instead, the `limit` just newer than it,
        oldest first (the order they are walked in from it). Before any copy exists (a collection
        stored by an older starfeed), the copies are made from its members' newest entries, once."""
        C = self._records.CollectionEntry
        forward = after is not None
        condition = C.sort_key > after if forward else C.sort_key < before if before else None
        found = [entry_of(r) for r in C.query(collection, condition, scan_index_forward=forward, limit=limit)]
        if not found and condition is None and (members := self.members(collection)):
            found = self._copy(collection, members)[:limit]
        return found[:limit]

    def _copy(self, collection: str, source_ids: list[str]) -> list[Entry]:
        """Copy these sources' newest entries (as many as a feed shows, each) into the collection."""
        E, limit = self._records.Entry, self.settings.feed_item_limit
        entries = [entry_of(r) for source_id in source_ids
                   for r in E.by_sort_key.query(source_id, scan_index_forward=False, limit=limit)]
        with self._records.CollectionEntry.batch_write() as batch:
            for entry in entries:
                batch.save(collection_entry_record(self._records, collection, entry, self.settings))
        return sorted(entries, key=lambda e: e.sort_time, reverse=True)

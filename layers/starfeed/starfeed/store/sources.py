"""Sources: one item each, with the scheduler's Due index, and lookups by URL and by site."""

from __future__ import annotations

import zlib
from dataclasses import asdict

from pynamodb.exceptions import DoesNotExist

from starfeed.model import Source, Status, set_by_hand
from starfeed.settings import Settings
from starfeed.store.records import SOURCE_FIELDS, as_stored, source_of, written

# Fields a fetch's outcome never writes (model.SET_BY_HAND): a person's, through change(), and the
# WebSub subscription's, written as it changes (a hub may verify it before the fetch that asked
# for it is written).
_FETCHED = [name for name in SOURCE_FIELDS if not set_by_hand(name)]


def source_record(records, source: Source, settings: Settings):
    """The item of a new source, with its scheduler keys. Its root domain (the ByRoot index's
    key) is stored as given: whoever creates the source decides it (sources.new_source derives
    it from the URL unless `--no-root-domain`); an empty one is absent, never "" (a key)."""
    values = asdict(source)
    values.update(due_keys(source, settings))
    values["root_domain"] = source.root_domain or None
    return records.Source(**values)


def due_keys(source: Source, settings: Settings) -> dict:
    """The sparse Due index's keys: only an enabled source with a next check, not removed
    (deleted_at), carries its shard. A disabled one keeps its next check out of the index, so
    `source enable` finds its schedule as it was."""
    if source.live and source.next_check_at is not None:
        shard = zlib.crc32(source.source_id.encode()) % settings.due_shards
        return {"next_check_at": source.next_check_at, "due_shard": str(shard)}
    return {"next_check_at": source.next_check_at, "due_shard": None}


class Sources:
    def __init__(self, records, settings: Settings):
        self._records, self.settings = records, settings

    def add(self, source: Source) -> bool:
        """Insert a new source; False when one with this id exists already."""
        S = self._records.Source
        return written(lambda: source_record(self._records, source, self.settings).save(
            condition=S.source_id.does_not_exist()))

    def get(self, source_id: str) -> Source | None:
        try:
            return source_of(self._records.Source.get(source_id, consistent_read=True))
        except DoesNotExist:
            return None

    def find_by_url(self, url: str) -> Source | None:
        for key in self._records.Source.by_url.query(url, limit=1):
            return self.get(key.source_id)
        return None

    def get_many(self, source_ids: set[str]) -> dict[str, Source]:
        return {r.source_id: source_of(r) for r in self._records.Source.batch_get(list(source_ids))}

    def all(self) -> list[Source]:
        return sorted((source_of(r) for r in self._records.Source.scan()), key=lambda s: s.created_at)

    def of_root(self, root_domain: str) -> list[Source]:
        ids = {key.source_id for key in self._records.Source.by_root.query(root_domain)}
        return sorted(self.get_many(ids).values(), key=lambda s: s.created_at)

    def scheduled_publications(self) -> list[tuple[str, list[float]]]:
        """The kind and latest publication times of every source on the schedule, the pace's input:
        one Scan of six attributes, once an hour."""
        records = self._records.Source.scan(attributes_to_get=["publications", "enabled", "polling", "status", "kind",
                                                               "deleted_at"])
        found = []
        for record in records:
            if record.enabled and record.deleted_at is None and record.polling and record.status != Status.DEAD:
                try:
                    found.append((record.kind, sorted(float(t) for t in record.publications or [])))
                except (TypeError, ValueError):
                    continue  # corrupt: its next fetch starts it again from the default interval
        return found

    def root_domains(self) -> dict[str | None, int]:
        """Every root domain with its number of sources, removed ones left out (None: sources
        without one). One Scan of two attributes."""
        counts: dict[str | None, int] = {}
        for record in self._records.Source.scan(attributes_to_get=["root_domain", "deleted_at"]):
            if record.deleted_at is None:
                counts[record.root_domain or None] = counts.get(record.root_domain or None, 0) + 1
        return counts

    def delete(self, source_id: str) -> bool:
        """Remove a source and its memberships; False when there was none."""
        source = self.get(source_id)
        for collection in source.collections if source else []:
            self._records.Membership(collection, source_id).delete()
        S = self._records.Source
        return written(lambda: S(source_id).delete(condition=S.source_id.exists()))

    def due_ids(self, now: float) -> list[str]:
        """Sources whose next check has come: one Query per shard, reading due items only."""
        S = self._records.Source
        return [key.source_id for shard in range(self.settings.due_shards)
                for key in S.due.query(str(shard), S.next_check_at <= now)]

    def take_lease(self, source_id: str, now: float) -> Source | None:
        """Claim a due source for one fetch (the lease, docs/design.md#leases); None when it is not ours to take."""
        S = self._records.Source
        record = S(source_id)
        leased = written(lambda: record.update(
            actions=[S.locked_until.set(now + self.settings.lease_seconds)],
            condition=(S.source_id.exists() & (S.enabled == True)  # noqa: E712 - a PynamoDB condition
                       & S.deleted_at.does_not_exist() & (S.next_check_at <= now)
                       & (S.locked_until.does_not_exist() | (S.locked_until < now)))))
        return source_of(record) if leased else None

    def finish_fetch(self, source: Source, before: Source, lease: float | None, release: bool = True) -> bool:
        """Write what the fetch changed since `before` (the source as the fetch read it) and
        release the lease, only if it is still held: a fetch that changed nothing writes the lease
        alone. The URL (a persistent permanent redirect) and enabled (410 Gone) are among what a
        fetch may change: the lease makes it the only writer of its source's state. A pushed
        document's (release False) leaves the lease to the fetch that holds it."""
        S = self._records.Source
        values = {name: as_stored(getattr(source, name)) for name in _FETCHED
                  if getattr(source, name) != getattr(before, name)}
        if source.enabled:
            values.pop("enabled", None)  # a fetch only ever disables (410); it never re-enables
        if due_keys(source, self.settings) != due_keys(before, self.settings):
            values.update(due_keys(source, self.settings))
        actions = [getattr(S, name).remove() if value is None else getattr(S, name).set(value)
                   for name, value in values.items()]
        if release:
            actions.append(S.locked_until.remove())
        if not actions:
            return True
        condition = (S.locked_until == lease) if lease is not None else S.source_id.exists()
        return written(lambda: S(source.source_id).update(actions=actions, condition=condition))

    def change(self, source_id: str, changes: dict, *, require_enabled: bool = False) -> bool:
        """Set (or, with None, remove) fields of one source; False when it does not exist, or is
        disabled or removed (deleted_at) and require_enabled. The Due index keys follow
        next_check_at, enabled and deleted_at."""
        source = self.get(source_id)
        if source is None:
            return False
        for name, value in changes.items():
            setattr(source, name, value)
        S = self._records.Source
        values = {**{k: as_stored(v) for k, v in changes.items()}, **due_keys(source, self.settings)}
        actions = [getattr(S, k).remove() if v is None else getattr(S, k).set(v) for k, v in values.items()]
        condition = S.source_id.exists()
        if require_enabled:
            condition &= (S.enabled == True) & S.deleted_at.does_not_exist()  # noqa: E712 - a PynamoDB condition
        return written(lambda: S(source_id).update(actions=actions, condition=condition))

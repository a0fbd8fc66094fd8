"""Entries: stored once per (feed, entry_uid), rewritten only when their content changes, as the
entry decision says (parse/dedupe.py: this module reads what it needs and writes what it decided);
each new one also copied into the collections its source belongs to (store/collections.py reads them)."""

from __future__ import annotations

import calendar
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cached_property

from pynamodb.exceptions import AttributeDeserializationError, DoesNotExist
from pynamodb.transactions import TransactWrite

from starfeed.model import (
    Departure,
    Digest,
    Entry,
    EntryWrites,
    GitHubAccount,
    Source,
    StoredEntry,
    Verdict,
    rule_set_partition,
    sort_key_of,
)
from starfeed.settings import Settings
from starfeed.store.digest import DIGEST_UID
from starfeed.store.records import DAY, as_stored, collection_entry_record, entry_of, entry_record, written

TRANSACTION_ITEMS = 100  # DynamoDB's limit on the items of one TransactWriteItems


def _epoch_day(stamp: str) -> float:
    return calendar.timegm(time.strptime(stamp[:10], "%Y-%m-%d"))


# The stats table's item naming the days, beyond the aggregate's walk, that hold entries: those
# dated more than the retention period before they were first stored (a backfilled history).
OLD_DAYS = "old-days"


def _transactions(entries: list[Entry], collections: int) -> Iterator[list[Entry]]:
    """The entries in order, in runs whose items (each entry, its copies in `collections`
    collections and in its rule sets) and the source's update fit one transaction."""
    chunk: list[Entry] = []
    items = 1  # the source's update
    for entry in entries:
        size = 1 + collections + len(entry.rule_sets)
        if chunk and items + size > TRANSACTION_ITEMS:
            yield chunk
            chunk, items = [], 1
        chunk.append(entry)
        items += size
    if chunk:
        yield chunk


class Entries:
    def __init__(self, records, settings: Settings, dynamodb=None):
        self._records, self.settings, self._db = records, settings, dynamodb

    def digest(self, feed_id: str) -> Digest:
        """One source's entry digest; an empty one when it has none."""
        return self.digests([feed_id]).get(feed_id, Digest())

    def stored(self, feed_id: str, entry_uids: list[str]) -> dict[str, StoredEntry]:
        """What the entry decision needs of these entries' items, by uid (one not stored is left out)."""
        if not entry_uids:
            return {}
        records = self._records.Entry.batch_get(
            [(feed_id, uid) for uid in entry_uids],
            attributes_to_get=["entry_uid", "content_hash", "first_seen", "rewrite_count", "seen_count", "sort_key",
                               "analyzer_result", "ordered_at", "rule_sets"])
        return {r.entry_uid: StoredEntry(r.entry_uid, r.content_hash, r.first_seen, int(r.seen_count),
                                         int(r.rewrite_count), r.sort_key, r.analyzer_result, r.ordered_at,
                                         tuple(r.rule_sets or ()))
                for r in records}

    def write(self, writes: EntryWrites, collections: Sequence[str] = (),
              stored_sets: Mapping[str, Sequence[str]] | None = None) -> list[Entry]:
        """Write what the entry decision asked for (parse/dedupe.py), in its order; returns the
        entries stored new: an archive page's insert only when no entry had its uid (the feed's
        version wins). Each entry is copied into its collections and its rule sets
        (Entry.rule_sets); stored_sets: the rule sets a rewritten entry's stored item is in, by
        uid, whose copies it leaves when it is no longer in one or its sort key moved."""
        E, C, feed_id = self._records.Entry, self._records.CollectionEntry, writes.feed_id
        inserted = [entry for entry in writes.inserts if self._put_if_absent(entry)]
        with E.batch_write() as batch:
            for entry in writes.new:
                batch.save(entry_record(self._records, entry, self.settings))
            for rewrite in writes.rewrites:
                batch.save(entry_record(self._records, rewrite.entry, self.settings, rewrite.rewrite_count))
        new = writes.new + inserted
        stored = new + [rewrite.entry for rewrite in writes.rewrites]
        with C.batch_write() as batch:
            for collection in collections:
                for entry in stored:
                    batch.save(collection_entry_record(self._records, collection, entry, self.settings))
                for rewrite in writes.rewrites:
                    if rewrite.stale_sort_key is not None:
                        batch.delete(C(collection, rewrite.stale_sort_key))
            for entry in stored:
                for name in entry.rule_sets:
                    batch.save(collection_entry_record(self._records, rule_set_partition(name), entry, self.settings))
            for rewrite in writes.rewrites:
                stale_key = rewrite.stale_sort_key or sort_key_of(rewrite.entry)
                for name in (stored_sets or {}).get(rewrite.entry.entry_uid, ()):
                    if rewrite.stale_sort_key is not None or name not in rewrite.entry.rule_sets:
                        batch.delete(C(rule_set_partition(name), stale_key))
        for departure in writes.departures:
            self._depart(feed_id, departure)
        for entry_uid in writes.sighted:
            E(feed_id, entry_uid).update(actions=[E.last_seen.set(writes.seen), E.seen_count.add(1)])
        if writes.digest is not None:
            self._records.EntryDigest(feed_id, DIGEST_UID, sighted_at=writes.digest.sighted_at or None,
                                      held=writes.digest.stored()).save()
        self._note_old_days(stored)
        return new

    def write_verdicts(self, changes: Sequence[tuple[Entry, Entry]],
                       collections: Mapping[str, Sequence[str]]) -> int:
        """The rules' new verdicts on stored entries, each change (the entry as stored, the entry
        with its new verdict): blocked_by, tags and rule_sets updated on its item and on its copies
        in its source's collections (by feed id in `collections`), its rule sets' copies put or
        deleted. Nothing else is written: the caller passes only the entries whose verdict changed.
        An entry that expired meanwhile is not written back, nor is a copy that is gone. Returns
        how many entries were written."""
        C = self._records.CollectionEntry
        written_entries, puts, deletes = 0, [], []
        for before, after in changes:
            if not self._write_verdict(before, Verdict.of(after), collections.get(before.feed_id, ())):
                continue
            written_entries += 1
            before_sets, after_sets = set(before.rule_sets), set(after.rule_sets)
            puts += [collection_entry_record(self._records, rule_set_partition(name), after, self.settings)
                     for name in sorted(after_sets - before_sets)]
            deletes += [C(rule_set_partition(name), sort_key_of(before)) for name in sorted(before_sets - after_sets)]
        with C.batch_write() as batch:
            for record in puts:
                batch.save(record)
            for record in deletes:
                batch.delete(record)
        return written_entries

    def _write_verdict(self, entry: Entry, verdict: Verdict, collections: Sequence[str]) -> bool:
        """One entry's verdict on its item, then on its copies in its collections and in the rule
        sets it stays in; False, writing nothing more, when its item is gone."""
        E, C = self._records.Entry, self._records.CollectionEntry

        def actions(model) -> list:
            blocked = model.blocked_by.set(verdict.blocked_by) if verdict.blocked_by else model.blocked_by.remove()
            return [blocked, model.tags.set(list(verdict.tags)), model.rule_sets.set(list(verdict.rule_sets))]

        if not written(lambda: E(entry.feed_id, entry.entry_uid).update(actions=actions(E),
                                                                         condition=E.entry_uid.exists())):
            return False
        key, staying = sort_key_of(entry), set(entry.rule_sets) & set(verdict.rule_sets)
        for partition in [*collections, *map(rule_set_partition, sorted(staying))]:
            written(lambda partition=partition: C(partition, key).update(actions=actions(C),
                                                                         condition=C.sort_key.exists()))
        return True

    def page(self, cursor: str, limit: int) -> tuple[list[Entry], str]:
        """A page of every stored entry, in the table's order (a Scan; the sources' digests are
        left out), from `cursor` ("": the start); and where the next page starts ("": none)."""
        E = self._records.Entry
        records = E.scan(E.entry_uid != DIGEST_UID, limit=limit,
                         last_evaluated_key=json.loads(cursor) if cursor else None)
        entries = [entry_of(record) for record in records]
        last = records.last_evaluated_key
        return entries, json.dumps(last) if last else ""

    def _depart(self, feed_id: str, departure: Departure) -> None:
        """An entry's sightings moved from the digest to its item; one expired meanwhile is not written back."""
        E = self._records.Entry
        written(lambda: E(feed_id, departure.entry_uid).update(
            actions=[E.last_seen.set(departure.last_seen), E.seen_count.set(departure.seen_count)],
            condition=E.entry_uid.exists()))

    def _put_if_absent(self, entry: Entry) -> bool:
        """Store an entry unless one with its uid is stored already."""
        E = self._records.Entry
        return written(lambda: entry_record(self._records, entry, self.settings).save(
            condition=E.entry_uid.does_not_exist()))

    def digests(self, feed_ids) -> dict[str, Digest]:
        """These sources' entry digests (a source without one is left out). One edited by hand
        into another type reads as none, and alone: its source's next parse writes it anew."""
        D = self._records.EntryDigest
        keys = [(feed_id, DIGEST_UID) for feed_id in set(feed_ids)]
        try:
            records = list(D.batch_get(keys))
        except AttributeDeserializationError:
            records = [record for key in keys if (record := self._readable_digest(*key)) is not None]
        return {r.feed_id: Digest.of(r.sighted_at or "", r.held) for r in records}

    def _readable_digest(self, feed_id: str, entry_uid: str):
        try:
            return self._records.EntryDigest.get(feed_id, entry_uid)
        except (DoesNotExist, AttributeDeserializationError):
            return None

    def _note_old_days(self, entries: list[Entry]) -> None:
        """The days of entries dated more than the retention period before they were first seen:
        the aggregate walks them besides the last 2 × retention days (_days_from). One UpdateItem,
        only for such entries."""
        retention = self.settings.entry_retention_days * DAY
        days = {e.sort_time[:10] for e in entries
                if e.first_seen and _epoch_day(e.sort_time) < _epoch_day(e.first_seen) - retention}
        if days and self._db is not None:
            self._db.update_item(TableName=self.settings.stats_table, Key={"day": {"S": OLD_DAYS}},
                                 UpdateExpression="ADD #days :days", ExpressionAttributeNames={"#days": "days"},
                                 ExpressionAttributeValues={":days": {"SS": sorted(days)}})

    def _old_days(self) -> list[str]:
        if self._db is None:
            return []
        item = self._db.get_item(TableName=self.settings.stats_table, Key={"day": {"S": OLD_DAYS}}).get("Item", {})
        return sorted(item.get("days", {}).get("SS", []))

    def known(self, feed_id: str, entry_uids: list[str]) -> set[str]:
        """Which of these entries are stored already."""
        return {r.entry_uid for r in self._records.Entry.batch_get([(feed_id, uid) for uid in set(entry_uids)],
                                                                   attributes_to_get=["entry_uid"])}

    def store_stars(self, source: Source, entries: list[Entry], lease: float | None) -> None:
        """A followed account's stars, their collection and rule set copies and its
        last_starred_at are written together or not at all. Oldest first, in transactions that fit
        DynamoDB's 100 items, so last_starred_at never runs ahead of the stars stored; a lost lease
        writes nothing."""
        S = self._records.Source
        account = source.github or GitHubAccount()
        condition = (S.locked_until == lease) if lease is not None else S.source_id.exists()
        for chunk in _transactions(sorted(entries, key=lambda e: e.published or ""), len(source.collections)):
            account = replace(account, last_starred_at=max([chunk[-1].published or "", account.last_starred_at or ""]))
            with TransactWrite(connection=self._connection) as transaction:
                for entry in chunk:
                    transaction.save(entry_record(self._records, entry, self.settings))
                    for partition in [*source.collections, *map(rule_set_partition, entry.rule_sets)]:
                        transaction.save(collection_entry_record(self._records, partition, entry, self.settings))
                transaction.update(S(source.source_id), actions=[S.github.set(as_stored(account))], condition=condition)
            source.github = account

    def purge(self, feed_id: str, collections: list[str] = ()) -> int:
        """Delete every stored entry of one source and its copies in these collections and in its
        rule sets (keyed by the entry's stored sort_key), and its digest; returns how many entries there were. A Query
        of the keys, then batch deletes: run again after a failure, it deletes what is left."""
        E, C = self._records.Entry, self._records.CollectionEntry
        keys = [(r.entry_uid, r.sort_key, r.rule_sets or [])
                for r in E.query(feed_id, attributes_to_get=["entry_uid", "sort_key", "rule_sets"])]
        with C.batch_write() as batch:
            for _, sort_key, rule_sets in keys:
                if sort_key:
                    for partition in [*collections, *map(rule_set_partition, rule_sets)]:
                        batch.delete(C(partition, sort_key))
        with E.batch_write() as batch:
            for entry_uid, _, _ in keys:
                batch.delete(E(feed_id, entry_uid))
        return sum(entry_uid != DIGEST_UID for entry_uid, _, _ in keys)

    @cached_property
    def _connection(self):
        from pynamodb.connection import Connection

        return Connection(region=self.settings.region, host=self.settings.endpoint_url)

    def recent(self, feed_id: str | None, limit: int, now: float | None = None,
               before: str | None = None, after: str | None = None) -> list[Entry]:
        """Newest first: one source's entries, or (feed_id None) every source's; with `before` (a
        sort key, a page's last), only those older than it: a feed's next page (RFC 5005). With
        `after` instead, the `limit` entries just newer than it, oldest first (the order they are
        walked in from it): toward a feed's previous page."""
        E = self._records.Entry
        forward = after is not None
        condition = E.sort_key > after if forward else E.sort_key < before if before else None
        if feed_id is not None:
            records = list(E.by_sort_key.query(feed_id, condition, scan_index_forward=forward, limit=limit))
            return [entry_of(r) for r in records[:limit]]
        # The aggregate walks the by-day index a day at a time until it has enough; the cursor
        # bounds the first day walked (the later ones lie wholly beyond it).
        out: list[Entry] = []
        for day in self._days_from(after if forward else before, forward, time.time() if now is None else now):
            for record in E.by_day.query(day, condition, scan_index_forward=forward, limit=limit - len(out)):
                out.append(entry_of(record))
                if len(out) >= limit:
                    return out
            condition = None
        return out

    def _days_from(self, cursor: str | None, forward: bool, now: float) -> Iterator[str]:
        """The days that may hold entries, from the cursor's (or today) toward older ones, or
        forward toward today: both walks see the same days, so a page reached from either side
        holds the same entries. Those are the last 2 × retention days (an entry is kept that long
        after the later of its date and its first sighting), and, older, the days OLD_DAYS names,
        read only when a walk gets there."""
        today = int(now // DAY)
        oldest = today - 2 * self.settings.entry_retention_days
        start = calendar.timegm(time.strptime(cursor[:10], "%Y-%m-%d")) // DAY if cursor else today

        def named(day: int) -> str:
            return time.strftime("%Y-%m-%d", time.gmtime(day * DAY))

        if forward:
            if start < oldest:
                yield from (d for d in self._old_days() if named(start) <= d < named(oldest))
            yield from (named(day) for day in range(max(start, oldest), today + 1))
        else:
            yield from (named(day) for day in range(min(start, today), oldest - 1, -1))
            yield from (d for d in reversed(self._old_days()) if d < named(min(start + 1, oldest)))

    def with_link(self, link: str) -> list[Entry]:
        """The stored entries with this link, newest first (the same link may be in several feeds)."""
        keys = list(self._records.Entry.by_link.query(link, limit=20))
        records = self._records.Entry.batch_get([(k.feed_id, k.entry_uid) for k in keys])
        return sorted((entry_of(r) for r in records), key=lambda e: e.sort_time, reverse=True)

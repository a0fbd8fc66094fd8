"""Entries: stored once per (feed, entry_uid), rewritten only when their content changes; each new
one also copied into the collections its source belongs to (store/collections.py reads them)."""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from pynamodb.exceptions import AttributeDeserializationError, DoesNotExist
from pynamodb.transactions import TransactWrite

from starfeed.model import Entry, GitHubAccount, Source
from starfeed.settings import Settings
from starfeed.store.digest import DIGEST_UID, Digest, Document
from starfeed.store.records import (DAY, collection_entry_record, entry_of, entry_problem, entry_record,
                                    sort_key_of, stored, written)

TRANSACTION_ITEMS = 100  # DynamoDB's limit on the items of one TransactWriteItems


@dataclass
class Upserted:
    new: list[Entry]  # stored for the first time
    refused: list[tuple[int, str]]  # (position in the document, from 1; why DynamoDB would refuse it)

    @property
    def error(self) -> str | None:
        if not self.refused:
            return None
        (position, reason), more = self.refused[0], len(self.refused) - 1
        return f"store: entry {position}: {reason}" + (f" (and {more} more)" if more else "")


def _epoch_day(stamp: str) -> float:
    return calendar.timegm(time.strptime(stamp[:10], "%Y-%m-%d"))


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


# The stats table's item naming the days, beyond the aggregate's walk, that hold entries: those
# dated more than the retention period before they were first stored (a backfilled history).
OLD_DAYS = "old-days"


class Entries:
    def __init__(self, records, settings: Settings, dynamodb=None):
        self._records, self.settings, self._db = records, settings, dynamodb

    def upsert(self, entries: list[Entry], now: float, collections: list[str] = (),
               announce: Callable[[list[Entry]], None] | None = None, document: Document = "feed") -> Upserted:
        """Store entries, deduplicated by (feed, entry_uid); returns the ones new to the store.
        announce(new entries), when given, runs before anything is written: what must follow a
        new entry (its analysis) is asked for first, so a failure stores nothing and the retried
        fetch finds the entries new again.

        document: where they come from. "feed": a fetched document, whole; "push": one a WebSub
        hub pushed, which may hold only some entries; "archive": a page of the feed's archive
        (fetch/history.py), which stores new entries only (the feed's own version of one wins)
        and is no sighting.

        Writes follow changes: a new entry is written (with a copy per collection), a changed one
        rewritten, at most settings.max_rewrites times so a feed that puts a clock in its content
        cannot churn; an unchanged one costs no write. The source's digest (store/digest.py)
        says which are unchanged without reading them, and is rewritten with their sightings when
        an entry was rewritten, or once per settings.sighting_refresh. An entry past its retention
        that its feed still carries is not stored again: it would come back as new. An entry
        DynamoDB would refuse is left out with the reason; the others are stored."""
        refused = [(n, problem) for n, e in enumerate(entries, start=1) if (problem := entry_problem(e))]
        entries = [e for n, e in enumerate(entries, start=1) if n not in dict(refused)]
        if not entries:
            return Upserted([], refused)
        E = self._records.Entry
        feed_id = entries[0].feed_id
        digest = self.digests([feed_id]).get(feed_id, Digest()) if document != "archive" else Digest()
        unread = [(feed_id, e.entry_uid) for e in entries if not digest.unchanged(e)]
        existing = {r.entry_uid: r for r in E.batch_get(
            unread, attributes_to_get=["entry_uid", "content_hash", "first_seen", "rewrite_count", "seen_count",
                                       "sort_key", "analyzer_result"])} if unread else {}
        new, changed, stale_copies = [], [], []
        stale = False  # the digest holds another hash than the one stored (a store cut short)
        for entry in entries:
            old = existing.get(entry.entry_uid)
            if digest.unchanged(entry):
                continue
            if old is None:
                if entry.entry_uid not in digest.held:  # else past its retention: not new again
                    new.append((entry, 0))
            elif (document != "archive" and old.content_hash != entry.content_hash
                  and old.rewrite_count < self.settings.max_rewrites):
                entry.first_seen, entry.seen_count = old.first_seen, int(old.seen_count)
                # Its analysis stays (seed 004 analyzes new items): a rewrite costs no analyzer call.
                entry.analyzer_result = old.analyzer_result
                changed.append((entry, int(old.rewrite_count) + 1))
                if old.sort_key != sort_key_of(entry):
                    stale_copies.append(old.sort_key)
            elif old.content_hash == entry.content_hash and entry.entry_uid in digest.held:
                stale = True
        if announce is not None and new:
            announce([entry for entry, _ in new])
        C = self._records.CollectionEntry
        if document == "archive":  # its walk runs beside the fetches: one may store an entry meanwhile
            new = [(entry, 0) for entry, _ in new if self._put_if_absent(entry)]
        with E.batch_write() as batch:
            for entry, rewrites in new + changed if document != "archive" else ():
                batch.save(entry_record(self._records, entry, self.settings, rewrites))
        with C.batch_write() as batch:
            for collection in collections:
                for entry, _ in new + changed:
                    batch.save(collection_entry_record(self._records, collection, entry, self.settings))
                for sort_key in stale_copies:
                    batch.delete(C(collection, sort_key))
        # A rewrite must reach the digest at once (it holds the hash an entry was stored with); a
        # new entry need not: until the next sighting it is read, as its item says it was seen.
        due = document == "feed" and digest.due(_stamp(now - self.settings.sighting_refresh))
        if document != "archive" and (changed or stale or due):
            stored = {uid: int(r.seen_count) for uid, r in existing.items()}
            self._sight(feed_id, digest, entries, stored, now, whole=document == "feed")
        self._note_old_days([entry for entry, _ in new + changed])
        return Upserted([entry for entry, _ in new], refused)

    def _put_if_absent(self, entry: Entry) -> bool:
        """Store an entry unless one with its uid is stored already (the feed's version wins)."""
        E = self._records.Entry
        return written(lambda: entry_record(self._records, entry, self.settings).save(
            condition=E.entry_uid.does_not_exist()))

    def _sight(self, feed_id: str, digest: Digest, entries: list[Entry], stored: dict[str, int],
               now: float, whole: bool) -> None:
        """A sighting of these entries: the digest rewritten, after the entries that left it got
        their sightings in their own items (an entry expired meanwhile is not written back) and
        those beyond its room were counted one by one."""
        E = self._records.Entry
        seen = _stamp(now)
        after, beyond = digest.sighted(entries, stored, seen, whole)
        for uid, (count, last) in digest.departed(after).items():
            written(lambda: E(feed_id, uid).update(actions=[E.last_seen.set(last), E.seen_count.set(count)],
                                                   condition=E.entry_uid.exists()))
        for uid in beyond:  # after their departure's write, if they were held
            if uid in stored or uid in digest.held:
                E(feed_id, uid).update(actions=[E.last_seen.set(seen), E.seen_count.add(1)])
        # No expiry: gone, it would make the entries past their retention that a quiet feed still
        # carries come back as new. `source purge` deletes it with the entries.
        self._records.EntryDigest(feed_id, DIGEST_UID, sighted_at=after.sighted_at or None,
                                  held=after.stored()).save()

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
        """A followed account's stars, their collection copies and its last_starred_at are written
        together or not at all. Oldest first, in transactions that fit DynamoDB's 100 items, so
        last_starred_at never runs ahead of the stars stored; a lost lease writes nothing."""
        S = self._records.Source
        account = source.github or GitHubAccount()
        ordered = sorted(entries, key=lambda e: e.published or "")
        condition = (S.locked_until == lease) if lease is not None else S.source_id.exists()
        per_transaction = (TRANSACTION_ITEMS - 1) // (1 + len(source.collections))
        for start in range(0, len(ordered), per_transaction):
            chunk = ordered[start:start + per_transaction]
            account = replace(account, last_starred_at=max([chunk[-1].published or "", account.last_starred_at or ""]))
            with TransactWrite(connection=self._connection) as transaction:
                for entry in chunk:
                    transaction.save(entry_record(self._records, entry, self.settings))
                    for collection in source.collections:
                        transaction.save(collection_entry_record(self._records, collection, entry, self.settings))
                transaction.update(S(source.source_id), actions=[S.github.set(stored(account))], condition=condition)
            source.github = account

    def purge(self, feed_id: str, collections: list[str] = ()) -> int:
        """Delete every stored entry of one source and its copies in these collections (keyed by
        the entry's stored sort_key), and its digest; returns how many entries there were. A Query
        of the keys, then batch deletes: run again after a failure, it deletes what is left."""
        E, C = self._records.Entry, self._records.CollectionEntry
        keys = [(r.entry_uid, r.sort_key) for r in E.query(feed_id, attributes_to_get=["entry_uid", "sort_key"])]
        with C.batch_write() as batch:
            for collection in collections:
                for _, sort_key in keys:
                    if sort_key:
                        batch.delete(C(collection, sort_key))
        with E.batch_write() as batch:
            for entry_uid, _ in keys:
                batch.delete(E(feed_id, entry_uid))
        return sum(entry_uid != DIGEST_UID for entry_uid, _ in keys)

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

"""Stored entries as programs page through them (the REST API): one feed's by time, newest first;
every feed's in the order they were first stored; one entry by its uid; those the rules hold back.

Each page reads one entry more than it returns, so it knows whether another follows, and the next
page starts after its last entry's keys (DynamoDB's ExclusiveStartKey): pages hold every entry
once, whatever is stored meanwhile. Each entry has its sightings as its source's digest holds
them (store/digest.py)."""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from starfeed.model import Digest, Entry
from starfeed.settings import Settings
from starfeed.store.digest import DIGEST_UID
from starfeed.store.records import DAY, entry_of, sort_key_of

BATCH_GET_KEYS = 100  # DynamoDB's limit on the keys of one BatchGetItem


@dataclass
class EntryPage:
    entries: list[Entry]
    after: dict[str, str] | None  # the keys the next page starts after; None: the last page


def _start_key(after: dict[str, str] | None) -> dict | None:
    return {name: {"S": value} for name, value in after.items()} if after else None


class EntryLists:
    def __init__(self, records, settings: Settings, digests: Callable[[Iterable[str]], dict[str, Digest]]):
        self._records, self.settings, self._digests = records, settings, digests

    def _sighted(self, entries: list[Entry]) -> list[Entry]:
        digests = self._digests({e.feed_id for e in entries}) if entries else {}
        for entry in entries:
            if sighting := digests.get(entry.feed_id, Digest()).sighting(entry.entry_uid):
                entry.last_seen, entry.seen_count = sighting
        return entries

    def of_feed(self, feed_id: str, limit: int, since: str | None = None, until: str | None = None,
                after: dict[str, str] | None = None, blocked: bool | None = False) -> EntryPage:
        """A feed's entries, newest first, whose time (as its feed orders them) is in [since,
        until): RFC 3339 UTC stamps, compared with the sort key `time#uid`. blocked: those the
        rules show (False), those they block (True), or both (None); reads go on until the page
        is full."""
        E = self._records.Entry
        key = E.sort_key
        condition = (key.between(since, until) if since and until else key >= since if since
                     else key < until if until else None)
        which = None if blocked is None else E.blocked_by.exists() if blocked else E.blocked_by.does_not_exist()
        records = list(E.by_sort_key.query(feed_id, condition, which, scan_index_forward=False, limit=limit + 1,
                                           last_evaluated_key=_start_key(after)))
        entries = self._sighted([entry_of(r) for r in records[:limit]])
        last = entries[-1] if len(records) > limit else None
        return EntryPage(entries, last and {"feed_id": last.feed_id, "entry_uid": last.entry_uid,
                                            "sort_key": sort_key_of(last)})

    def first_seen_since(self, since: str, limit: int, after: dict[str, str] | None = None,
                         now: float | None = None) -> EntryPage:
        """Every feed's entries first stored at `since` or later, oldest first: the BySeen index,
        one day's partition after another, up to today."""
        E = self._records.Entry
        now = time.time() if now is None else now
        day = after["seen_day"] if after else since[:10]
        today = time.strftime("%Y-%m-%d", time.gmtime(now))
        keys: list[tuple[str, str, str, str]] = []  # (seen_day, first_seen, feed_id, entry_uid)
        start = _start_key(after)
        while day <= today and len(keys) <= limit:
            condition = E.first_seen >= since if day == since[:10] else None
            for r in E.by_seen.query(day, condition, limit=limit + 1 - len(keys), last_evaluated_key=start):
                keys.append((day, r.first_seen, r.feed_id, r.entry_uid))
            start = None
            day = time.strftime("%Y-%m-%d", time.gmtime(calendar.timegm(time.strptime(day, "%Y-%m-%d")) + DAY))
        page = keys[:limit]
        entries = self._get([(feed_id, uid) for _, _, feed_id, uid in page])
        last = page[-1] if len(keys) > limit else None
        return EntryPage(entries, last and dict(zip(("seen_day", "first_seen", "feed_id", "entry_uid"), last)))

    def with_uid(self, entry_uid: str) -> list[Entry]:
        """Every stored copy of this uid (feeds may share one), newest first."""
        if entry_uid == DIGEST_UID:
            return []
        keys = [(k.feed_id, k.entry_uid) for k in self._records.Entry.by_uid.query(entry_uid, limit=20)]
        return sorted(self._get(keys), key=lambda e: e.sort_time, reverse=True)

    def blocked_counts(self) -> dict[tuple[str, str], int]:
        """How many stored entries each rule holds back, by (rule id, source id): one pass over the
        Blocked index, which holds only blocked entries, and only their keys."""
        counts: dict[tuple[str, str], int] = {}
        for key in self._records.Entry.blocked.scan():
            counts[(key.blocked_by, key.feed_id)] = counts.get((key.blocked_by, key.feed_id), 0) + 1
        return counts

    def blocked(self, limit: int) -> list[Entry]:
        """Up to `limit` of the entries the rules hold back (the first the index gives), newest first."""
        keys = [(k.feed_id, k.entry_uid) for k in self._records.Entry.blocked.scan(limit=limit)]
        return sorted(self._get(keys), key=lambda e: e.sort_time, reverse=True)

    def _get(self, keys: list[tuple[str, str]]) -> list[Entry]:
        """These entries in this order; one deleted meanwhile (its TTL) is left out."""
        found: dict[tuple[str, str], Entry] = {}
        for start in range(0, len(keys), BATCH_GET_KEYS):
            for record in self._records.Entry.batch_get(keys[start:start + BATCH_GET_KEYS]):
                entry = entry_of(record)
                found[(entry.feed_id, entry.entry_uid)] = entry
        return self._sighted([found[k] for k in keys if k in found])

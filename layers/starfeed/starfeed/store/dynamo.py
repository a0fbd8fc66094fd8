"""DynamoDB through PynamoDB: the sources table (with the scheduler's index) and entries."""

from __future__ import annotations

import calendar
import json
import time
import zlib
from dataclasses import asdict, dataclass, fields
from functools import cached_property

from pynamodb.attributes import (BooleanAttribute, JSONAttribute, ListAttribute, NumberAttribute,
                                 UnicodeAttribute)
from pynamodb.exceptions import DeleteError, DoesNotExist, PutError, UpdateError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex, KeysOnlyProjection, LocalSecondaryIndex
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from starfeed.model import Entry, Source, root_domain_of
from starfeed.settings import Settings
from starfeed.store import ITEM_BYTES, PARTITION_KEY_BYTES, SORT_KEY_BYTES

DAY = 86400


def _meta(table: str, settings: Settings, **extra) -> type:
    return type("Meta", (), {"table_name": table, "region": settings.region,
                             "host": settings.endpoint_url, **extra})


def build_models(settings: Settings):
    """Model classes bound to this deployment's tables (PynamoDB reads Meta at class creation)."""

    class DueIndex(GlobalSecondaryIndex):
        # Sparse: only enabled, scheduled sources carry due_shard, so a Query reads due ones only.
        Meta = _meta("", settings, index_name="Due", projection=KeysOnlyProjection())
        due_shard = UnicodeAttribute(hash_key=True)
        next_check_at = NumberAttribute(range_key=True)

    class UrlIndex(GlobalSecondaryIndex):
        Meta = _meta("", settings, index_name="ByUrl", projection=KeysOnlyProjection())
        url = UnicodeAttribute(hash_key=True)

    class RootIndex(GlobalSecondaryIndex):
        Meta = _meta("", settings, index_name="ByRoot", projection=KeysOnlyProjection())
        root_domain = UnicodeAttribute(hash_key=True)

    class SourceRecord(Model):
        Meta = _meta(settings.sources_table, settings)
        source_id = UnicodeAttribute(hash_key=True)
        url = UnicodeAttribute()
        kind = UnicodeAttribute(default="feed")
        title = UnicodeAttribute(null=True)
        site_url = UnicodeAttribute(null=True)
        created_at = NumberAttribute(default=0)
        enabled = BooleanAttribute(default=True)
        polling = BooleanAttribute(default=True)
        collections = ListAttribute(of=UnicodeAttribute, default=list)
        root_domain = UnicodeAttribute(null=True)
        enforce_feed_domain = BooleanAttribute(default=False)
        backfill = NumberAttribute(default=0)
        language = UnicodeAttribute(null=True)
        etag = UnicodeAttribute(null=True)
        last_modified = UnicodeAttribute(null=True)
        status = UnicodeAttribute(default="new")
        http_status = NumberAttribute(null=True)
        last_error = UnicodeAttribute(null=True)
        last_fetch_at = NumberAttribute(null=True)
        last_success_at = NumberAttribute(null=True)
        consecutive_failures = NumberAttribute(default=0)
        entry_count = NumberAttribute(default=0)
        last_dropped = JSONAttribute(default=dict)
        fetch_history = JSONAttribute(default=list)
        redirect_url = UnicodeAttribute(null=True)
        redirect_count = NumberAttribute(default=0)
        url_changes = JSONAttribute(default=list)
        policy = UnicodeAttribute(default="backoff")
        min_interval = NumberAttribute(null=True)
        max_interval = NumberAttribute(null=True)
        publications = JSONAttribute(default=list)
        ewma_interarrival = NumberAttribute(null=True)
        hour_counts = JSONAttribute(default=list)
        decisions = JSONAttribute(default=list)
        interval = NumberAttribute(default=0)
        reason = UnicodeAttribute(null=True)
        next_check_at = NumberAttribute(null=True)
        due_shard = UnicodeAttribute(null=True)
        locked_until = NumberAttribute(null=True)
        login = UnicodeAttribute(null=True)
        user_id = NumberAttribute(null=True)
        last_starred_at = UnicodeAttribute(null=True)
        tier = UnicodeAttribute(null=True)
        due = DueIndex()
        by_url = UrlIndex()
        by_root = RootIndex()

    class HostRecord(Model):
        Meta = _meta(settings.hosts_table, settings)
        host = UnicodeAttribute(hash_key=True)
        paused_until = NumberAttribute(default=0)
        reason = UnicodeAttribute(null=True)
        stopped = BooleanAttribute(default=False)  # until someone acts (a refused GitHub token)
        rate_limit = JSONAttribute(null=True)  # the host's latest rate-limit headers, {limit, remaining, reset, at}
        expires_at = NumberAttribute()

    class MembershipRecord(Model):
        Meta = _meta(settings.collections_table, settings)
        collection = UnicodeAttribute(hash_key=True)
        source_id = UnicodeAttribute(range_key=True)

    class BySortKey(LocalSecondaryIndex):
        Meta = _meta("", settings, index_name="BySortKey", projection=AllProjection())
        feed_id = UnicodeAttribute(hash_key=True)
        sort_key = UnicodeAttribute(range_key=True)

    class ByDay(GlobalSecondaryIndex):
        Meta = _meta("", settings, index_name="ByDay", projection=AllProjection())
        day = UnicodeAttribute(hash_key=True)
        sort_key = UnicodeAttribute(range_key=True)

    class ByLink(GlobalSecondaryIndex):
        Meta = _meta("", settings, index_name="ByLink", projection=KeysOnlyProjection())
        canonical_link = UnicodeAttribute(hash_key=True)

    class EntryRecord(Model):
        Meta = _meta(settings.entries_table, settings)
        feed_id = UnicodeAttribute(hash_key=True)
        entry_uid = UnicodeAttribute(range_key=True)
        canonical_link = UnicodeAttribute(null=True)
        title = UnicodeAttribute(null=True)
        summary = UnicodeAttribute(null=True)
        content = UnicodeAttribute(null=True)
        authors = JSONAttribute(default=list)
        categories = JSONAttribute(default=list)
        enclosures = JSONAttribute(default=list)
        published = UnicodeAttribute(null=True)
        updated = UnicodeAttribute(null=True)
        first_seen = UnicodeAttribute()
        last_seen = UnicodeAttribute()
        seen_count = NumberAttribute(default=1)
        raw_refs = JSONAttribute(default=list)
        content_hash = UnicodeAttribute()
        ordered_at = UnicodeAttribute(null=True)
        warnings = JSONAttribute(default=list)
        rewrite_count = NumberAttribute(default=0)  # times rewritten after a content change
        # Derived keys for ordering, and the TTL that lets old entries leave by themselves.
        sort_key = UnicodeAttribute()
        day = UnicodeAttribute()
        expires_at = NumberAttribute()
        by_sort_key = BySortKey()
        by_day = ByDay()
        by_link = ByLink()

    return SourceRecord, EntryRecord, MembershipRecord, HostRecord


_SOURCE_FIELDS = [f.name for f in fields(Source)]
_ENTRY_FIELDS = [f.name for f in fields(Entry)]




def entry_problem(entry: Entry) -> str | None:
    """Why DynamoDB would refuse this entry, or None. Normalization fits fields to these limits;
    this is the last check, so one entry cannot fail a whole batch write."""
    uid = len(entry.entry_uid.encode("utf-8", "surrogatepass"))
    if uid + len(entry.sort_time) + 1 > SORT_KEY_BYTES:
        return f"GUID of {uid:,} bytes"
    link = len((entry.canonical_link or "").encode("utf-8", "surrogatepass"))
    if link > PARTITION_KEY_BYTES:
        return f"link of {link:,} bytes"
    size = len(json.dumps(asdict(entry), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > ITEM_BYTES - 4096:  # room for the derived keys and attribute names
        return f"{size:,} bytes, over DynamoDB's 400 KB item limit"
    return None


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


class Catalog:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.Source, self.Entry, self.Membership, self.Host = build_models(settings)

    # Sources ---------------------------------------------------------------------------------

    def add_source(self, source: Source) -> bool:
        """Insert a new source; False when one with this id exists already."""
        record = self._source_record(source)
        try:
            record.save(condition=self.Source.source_id.does_not_exist())
        except PutError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def get_source(self, source_id: str) -> Source | None:
        try:
            return self._source(self.Source.get(source_id, consistent_read=True))
        except DoesNotExist:
            return None

    def source_enabled(self, source_id: str) -> bool | None:
        """Whether the source is enabled; None when there is no such source. One small read."""
        try:
            return bool(self.Source.get(source_id, consistent_read=True, attributes_to_get=["enabled"]).enabled)
        except DoesNotExist:
            return None

    def find_source_by_url(self, url: str) -> Source | None:
        for key in self.Source.by_url.query(url, limit=1):
            return self.get_source(key.source_id)
        return None

    def get_sources(self, source_ids: set[str]) -> dict[str, Source]:
        return {r.source_id: self._source(r) for r in self.Source.batch_get(list(source_ids))}

    def list_sources(self) -> list[Source]:
        return sorted((self._source(r) for r in self.Source.scan()), key=lambda s: s.created_at)

    def scheduled_publications(self) -> list[list[float]]:
        """The latest publication times of every feed and page on the schedule, the pace's input:
        one Scan of five attributes, once an hour."""
        records = self.Source.scan(attributes_to_get=["publications", "enabled", "polling", "status", "kind"])
        found = []
        for record in records:
            if record.enabled and record.polling and record.status != "dead" and not record.kind.startswith("github-"):
                try:
                    found.append(sorted(float(t) for t in record.publications or []))
                except (TypeError, ValueError):
                    continue  # corrupt: its next fetch starts it again from the default interval
        return found

    def has_sources(self) -> bool:
        return any(True for _ in self.Source.scan(limit=1, attributes_to_get=["source_id"]))

    def delete_source(self, source_id: str) -> bool:
        source = self.get_source(source_id)
        for collection in source.collections if source else []:
            self.Membership(collection, source_id).delete()
        try:
            self.Source(source_id).delete(condition=self.Source.source_id.exists())
        except DeleteError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def sources_of_root(self, root_domain: str) -> list[Source]:
        ids = {key.source_id for key in self.Source.by_root.query(root_domain)}
        return sorted(self.get_sources(ids).values(), key=lambda s: s.created_at)

    # Host pauses -----------------------------------------------------------------------------

    def pause_host(self, host: str, until: float, reason: str, stopped: bool = False) -> None:
        """Hold every source on a host until `until` (never shortening a longer pause)."""
        H = self.Host
        try:
            H(host).update(actions=[H.paused_until.set(until), H.reason.set(reason), H.stopped.set(stopped),
                                    H.expires_at.set(int(until) + DAY)],
                           condition=H.paused_until.does_not_exist() | (H.paused_until < until))
        except UpdateError as exc:
            if exc.cause_response_code != "ConditionalCheckFailedException":
                raise

    def host_pauses(self, hosts: set[str], now: float) -> dict[str, float]:
        """host -> paused_until, for the hosts paused at `now`."""
        if not hosts:
            return {}
        return {h.host: h.paused_until for h in self.Host.batch_get(list(hosts)) if h.paused_until > now}

    def host_pause(self, host: str, now: float) -> dict | None:
        """{until, reason, stopped} while the host is paused, else None."""
        state = self.host_state(host)
        if state.get("paused_until", 0) <= now:
            return None
        return {"until": state["paused_until"], "reason": state["reason"], "stopped": state["stopped"]}

    def clear_host_pause(self, host: str) -> None:
        H = self.Host
        H(host).update(actions=[H.paused_until.set(0), H.reason.remove(), H.stopped.set(False)])

    def note_rate_limit(self, host: str, rate: dict) -> None:
        H = self.Host
        # Never shortens the record's life: a stopped pause must outlive any rate-limit note.
        H(host).update(actions=[H.rate_limit.set(rate), H.expires_at.set(H.expires_at | int(rate["reset"]) + DAY)])

    def host_state(self, host: str) -> dict:
        """Everything known about a host: its pause (if any) and its latest rate limit."""
        try:
            record = self.Host.get(host, consistent_read=True)
        except DoesNotExist:
            return {}
        return {"paused_until": record.paused_until, "reason": record.reason, "stopped": bool(record.stopped),
                "rate_limit": record.rate_limit}

    # Collections -----------------------------------------------------------------------------

    def join_collection(self, collection: str, source_id: str) -> None:
        self.Membership(collection, source_id).save()

    def sources_in(self, collection: str) -> list[str]:
        return [m.source_id for m in self.Membership.query(collection)]

    def sources_of_collection(self, collection: str) -> dict[str, Source]:
        return self.get_sources(set(self.sources_in(collection)))

    def collections(self) -> dict[str, int]:
        """Every collection with its number of sources (the table is small: one item a membership)."""
        counts: dict[str, int] = {}
        for membership in self.Membership.scan():
            counts[membership.collection] = counts.get(membership.collection, 0) + 1
        return dict(sorted(counts.items()))

    def due_source_ids(self, now: float) -> list[str]:
        """Sources whose next check has come: one Query per shard, reading due items only."""
        ids = []
        for shard in range(self.settings.due_shards):
            for key in self.Source.due.query(str(shard), self.Source.next_check_at <= now):
                ids.append(key.source_id)
        return ids

    def take_lease(self, source_id: str, now: float) -> Source | None:
        """Claim a due source for one fetch (seed 004's lease); None when it is not ours to take."""
        S = self.Source
        record = S(source_id)
        try:
            record.update(
                actions=[S.locked_until.set(now + self.settings.lease_seconds)],
                condition=(S.source_id.exists() & (S.enabled == True)  # noqa: E712
                           & (S.next_check_at <= now)
                           & (S.locked_until.does_not_exist() | (S.locked_until < now))))
        except UpdateError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return None
            raise
        return self._source(record)

    def finish_fetch(self, source: Source, lease: float | None) -> bool:
        """Write the fetch's outcome and new schedule, releasing the lease only if still held.
        The URL (a persistent permanent redirect) and enabled (410 Gone) are written too: the
        lease makes this fetch the only writer of its source's state."""
        S = self.Source
        values = {name: getattr(source, name) for name in _SOURCE_FIELDS
                  if name not in ("source_id", "created_at", "collections", "kind", "polling",
                                  "locked_until", "enforce_feed_domain", "policy", "min_interval",
                                  "max_interval", "backfill")}
        if source.enabled:
            del values["enabled"]  # a fetch only ever disables (410); it never re-enables
        values.update(self._due_keys(source))
        actions = [getattr(S, name).remove() if value is None else getattr(S, name).set(value)
                   for name, value in values.items()]
        actions.append(S.locked_until.remove())
        condition = (S.locked_until == lease) if lease is not None else S.source_id.exists()
        try:
            S(source.source_id).update(actions=actions, condition=condition)
        except UpdateError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def change_source(self, source_id: str, changes: dict, *, require_enabled: bool = False) -> bool:
        """Set (or, with None, remove) fields of one source; False when it does not exist, or is
        disabled and require_enabled. The Due index keys follow next_check_at and enabled."""
        source = self.get_source(source_id)
        if source is None:
            return False
        for name, value in changes.items():
            setattr(source, name, value)
        S = self.Source
        values = {**changes, **self._due_keys(source)}
        actions = [getattr(S, k).remove() if v is None else getattr(S, k).set(v) for k, v in values.items()]
        condition = S.source_id.exists()
        if require_enabled:
            condition &= S.enabled == True  # noqa: E712
        try:
            S(source_id).update(actions=actions, condition=condition)
        except UpdateError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def _due_keys(self, source: Source) -> dict:
        if source.enabled and source.next_check_at is not None:
            shard = zlib.crc32(source.source_id.encode()) % self.settings.due_shards
            return {"next_check_at": source.next_check_at, "due_shard": str(shard)}
        return {"next_check_at": None, "due_shard": None}

    def _source_record(self, source: Source):
        values = asdict(source)
        values.update(self._due_keys(source))
        values["root_domain"] = source.root_domain or root_domain_of(source.url) or None
        return self.Source(**values)

    @staticmethod
    def _source(record) -> Source:
        return Source(**{name: _plain(getattr(record, name)) for name in _SOURCE_FIELDS})

    # Entries ---------------------------------------------------------------------------------

    def upsert_entries(self, entries: list[Entry], now: float) -> "Upserted":
        """Store entries, deduplicated by (feed, entry_uid); returns the ones new to the store.
        A stored entry is rewritten only when its content_hash changed, and at most
        settings.max_rewrites times, so a feed that puts a clock in its content cannot churn.
        An entry DynamoDB would refuse is left out with the reason; the others are stored."""
        refused = [(n, problem) for n, e in enumerate(entries, start=1) if (problem := entry_problem(e))]
        entries = [e for n, e in enumerate(entries, start=1) if n not in dict(refused)]
        if not entries:
            return Upserted([], refused)
        E = self.Entry
        feed_id = entries[0].feed_id
        existing = {r.entry_uid: r for r in E.batch_get(
            [(feed_id, e.entry_uid) for e in entries],
            attributes_to_get=["entry_uid", "content_hash", "first_seen", "rewrite_count"])}
        new, changed = [], []
        for entry in entries:
            old = existing.get(entry.entry_uid)
            if old is None:
                new.append((entry, 0))
            elif old.content_hash != entry.content_hash and old.rewrite_count < self.settings.max_rewrites:
                entry.first_seen = old.first_seen
                changed.append((entry, int(old.rewrite_count) + 1))
        with E.batch_write() as batch:
            for entry, rewrites in new + changed:
                batch.save(self._entry_record(entry, rewrites))
        rewritten = {e.entry_uid for e, _ in changed}
        seen = entries[0].last_seen
        for uid in existing:
            if uid not in rewritten:
                E(feed_id, uid).update(actions=[E.last_seen.set(seen), E.seen_count.add(1)])
        return Upserted([entry for entry, _ in new], refused)

    def known_entries(self, feed_id: str, entry_uids: list[str]) -> set[str]:
        """Which of these entries are stored already."""
        return {r.entry_uid for r in self.Entry.batch_get([(feed_id, uid) for uid in set(entry_uids)],
                                                          attributes_to_get=["entry_uid"])}

    def store_stars(self, source: Source, entries: list[Entry], lease: float | None) -> None:
        """Seed 000: stars and the user's last_starred_at are written together or not at all.
        Oldest first, in transactions of at most 99 stars plus the user, so last_starred_at never
        runs ahead of the stars stored; a lost lease writes nothing."""
        S = self.Source
        ordered = sorted(entries, key=lambda e: e.published or "")
        condition = (S.locked_until == lease) if lease is not None else S.source_id.exists()
        for start in range(0, len(ordered), 99):
            chunk = ordered[start:start + 99]
            latest = max([chunk[-1].published or "", source.last_starred_at or ""])
            with TransactWrite(connection=self._connection) as transaction:
                for entry in chunk:
                    transaction.save(self._entry_record(entry))
                transaction.update(S(source.source_id), actions=[S.last_starred_at.set(latest)],
                                   condition=condition)
            source.last_starred_at = latest

    @cached_property
    def _connection(self):
        from pynamodb.connection import Connection

        return Connection(region=self.settings.region, host=self.settings.endpoint_url)

    def recent_entries(self, feed_id: str | None, limit: int, now: float | None = None) -> list[Entry]:
        """Newest first: one source's entries, or (feed_id None) every source's."""
        E = self.Entry
        if feed_id is not None:
            records = list(E.by_sort_key.query(feed_id, scan_index_forward=False, limit=limit))
            return [self._entry(r) for r in records[:limit]]
        # The aggregate walks the by-day index backwards until it has enough.
        now = time.time() if now is None else now
        out: list[Entry] = []
        for days_back in range(self.settings.entry_retention_days + 1):
            day = time.strftime("%Y-%m-%d", time.gmtime(now - days_back * DAY))
            for record in E.by_day.query(day, scan_index_forward=False, limit=limit - len(out)):
                out.append(self._entry(record))
                if len(out) >= limit:
                    return out
        return out

    def recent_entries_of(self, feed_ids: list[str], limit: int) -> list[Entry]:
        """Newest first across several sources (a collection, a site): one Query per source."""
        merged = [e for feed_id in feed_ids for e in self.recent_entries(feed_id, limit)]
        return sorted(merged, key=lambda e: e.sort_time, reverse=True)[:limit]

    def entry_by_link(self, link: str) -> Entry | None:
        """The newest stored entry with this link (the same link may appear in several feeds)."""
        keys = list(self.Entry.by_link.query(link, limit=20))
        records = self.Entry.batch_get([(k.feed_id, k.entry_uid) for k in keys])
        entries = sorted((self._entry(r) for r in records), key=lambda e: e.sort_time, reverse=True)
        return entries[0] if entries else None

    def _entry_record(self, entry: Entry, rewrites: int = 0):
        sort_time = entry.sort_time
        # Kept for the retention period after the later of its date and its first sighting: a
        # backfilled entry from last year is not deleted the moment it is stored.
        expires = calendar.timegm(time.strptime(max(sort_time, entry.first_seen), "%Y-%m-%dT%H:%M:%SZ"))
        return self.Entry(**asdict(entry), rewrite_count=rewrites,
                          sort_key=f"{sort_time}#{entry.entry_uid}",
                          day=sort_time[:10],
                          expires_at=int(expires + self.settings.entry_retention_days * DAY))

    @staticmethod
    def _entry(record) -> Entry:
        return Entry(**{name: _plain(getattr(record, name)) for name in _ENTRY_FIELDS})


def _plain(value):
    # PynamoDB hands back floats for numbers; counters read better as ints.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value

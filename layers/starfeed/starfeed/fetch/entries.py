"""A parse's entries stored: read what the entry decision needs, decide (parse/dedupe.py), write
what it decided. Shared by fetch/job.py (fetched and pushed documents) and fetch/history.py
(archive pages)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from starfeed.model import Digest, Document, Entry
from starfeed.parse.dedupe import Upserted, admitted, continued, decide, formers, unvouched, vouches
from starfeed.store import Storage
from starfeed.store.records import entry_problem


def store_entries(storage: Storage, entries: Sequence[Entry], now: float, collections: list[str] = (),
                  announce: Callable[[list[Entry]], None] | None = None, document: Document = "feed",
                  left_out: Sequence[Entry] = ()) -> Upserted:
    """Store one source's entries, deduplicated by (feed, entry_uid); returns the ones new to the
    store, and those DynamoDB would refuse, left out with the reason. announce(new entries), when
    given, runs before anything is written: what must follow a new entry (its analysis) is asked
    for first, so a failure stores nothing and the retried fetch finds the entries new again.
    left_out: those a first fetch's filters dropped, remembered in the digest as seen."""
    entries, refused = admitted(entries, [entry_problem(e) for e in entries])
    left_out = admitted(left_out, [entry_problem(e) for e in left_out])[0] if vouches(document) else []
    if not entries and not left_out:
        return Upserted([], refused)
    feed_id, settings = (entries or left_out)[0].feed_id, storage.settings
    digest = storage.entries.digest(feed_id) if vouches(document) else Digest()
    entries, left_out = continued(entries, digest, {}), continued(left_out, digest, {})
    stored = storage.entries.stored(feed_id, unvouched(entries, digest) + formers(entries, digest))
    entries = continued(entries, digest, stored)
    writes = decide(entries, document, digest, stored, now, max_rewrites=settings.max_rewrites,
                    sighting_refresh=settings.sighting_refresh, left_out=left_out)
    if announce is not None and writes.new:
        announce(writes.new)
    return Upserted(storage.entries.write(writes, collections), refused)

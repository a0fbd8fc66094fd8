"""The entry decision: which of a parse's entries are stored new, rewritten, only sighted, or left
alone, and what the source's digest becomes (parse/digest.py). Pure: what is stored comes in as
data (the digest, and the entries it cannot vouch for), the writes go out as model.EntryWrites,
and storage only writes them (fetch/entries.py runs the three).

Entries are deduplicated by (feed, entry_uid). Writes follow changes: a new entry is written (with
a copy per collection), a changed one rewritten, at most max_rewrites times so a feed that puts a
clock in its content cannot churn; an unchanged one costs no write. The digest says which are
unchanged without reading them, and is rewritten with their sightings when an entry was
rewritten, when it holds a hash other than the one stored (a store cut short before it), or once
per sighting_refresh. An entry past its retention that its feed still carries is not stored
again: it would come back as new. Nor is one a first fetch left out (the new-subscription rules):
that fetch's digest remembers it, unsighted.

Where they come from (model.Document) matters: "feed", a fetched document, whole; "push", one a
WebSub hub pushed, which may hold only some entries, so none is taken to have left; "archive", a
page of the feed's archive, which stores new entries only (the feed's own version of one wins),
each only if no fetch stored it meanwhile, and is no sighting."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from starfeed.model import Digest, Document, Entry, EntryWrites, Rewrite, StoredEntry, sort_key_of
from starfeed.parse.digest import departed, due, never_stored, sighted, unchanged
from starfeed.parse.normalize import former_uid


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


def admitted(entries: Sequence[Entry], problems: Sequence[str | None]) -> tuple[list[Entry], list[tuple[int, str]]]:
    """The entries storage would accept, and (position from 1, why) for each it would refuse:
    one entry cannot fail the others' store."""
    refused = [(n, problem) for n, problem in enumerate(problems, start=1) if problem]
    positions = {n for n, _ in refused}
    return [e for n, e in enumerate(entries, start=1) if n not in positions], refused


def vouches(document: Document) -> bool:
    """Whether the source's digest speaks for these entries: an archive page's are checked
    against their items alone."""
    return document != "archive"


def unvouched(entries: Sequence[Entry], digest: Digest) -> list[str]:
    """The entries whose stored item the decision needs: those the digest does not hold unchanged."""
    return [e.entry_uid for e in entries if not unchanged(digest, e)]


def formers(entries: Sequence[Entry], digest: Digest) -> list[str]:
    """The former uids (normalize.former_uid) whose stored item continued() needs: those of the
    entries neither their uid nor their former uid is held under."""
    return [former for e in entries
            if e.entry_uid not in digest.held and (former := former_uid(e)) and former not in digest.held]


def continued(entries: Sequence[Entry], digest: Digest, stored: Mapping[str, StoredEntry]) -> list[Entry]:
    """The entries, each under the uid it is known by: an entry stored (or remembered) before its
    uid stopped holding its date keeps its former uid, as long as its feed gives it that date.
    Without it, an upgrade would store every dated entry of every feed without ids as new again."""
    known = digest.held.keys() | stored.keys()
    return [replace(e, entry_uid=former) if e.entry_uid not in known and (former := former_uid(e)) in known else e
            for e in entries]


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def decide(entries: Sequence[Entry], document: Document, digest: Digest, stored: Mapping[str, StoredEntry],
           now: float, *, max_rewrites: int, sighting_refresh: int, left_out: Sequence[Entry] = ()) -> EntryWrites:
    """What to write for one parse of one source: `entries` in document order (those storage would
    accept), `digest` as stored, `stored` the items of the entries it does not vouch for (by uid;
    one absent is not stored), `left_out` those a first fetch's filters dropped, for the digest to
    remember (an archive page has none)."""
    archive = document == "archive"
    if archive:  # no sighting: its entries are checked against their items alone
        digest = Digest()
    new: list[Entry] = []
    rewrites: list[Rewrite] = []
    stale = False  # the digest holds another hash than the one stored (a store cut short)
    for entry in entries:
        if unchanged(digest, entry):
            continue
        old = stored.get(entry.entry_uid)
        if old is None:
            if entry.entry_uid not in digest.held:  # else past its retention: not new again
                new.append(entry)
        elif not archive and old.content_hash != entry.content_hash and old.rewrite_count < max_rewrites:
            # Its analysis stays (new items are analyzed): a rewrite costs no analyzer call.
            # It keeps its place when its date is none to sort by: where it was first seen.
            carried = replace(entry, first_seen=old.first_seen, seen_count=old.seen_count,
                              ordered_at=old.ordered_at, analyzer_result=old.analyzer_result)
            moved = old.sort_key if old.sort_key != sort_key_of(carried) else None
            rewrites.append(Rewrite(carried, old.rewrite_count + 1, moved))
        elif old.content_hash == entry.content_hash and entry.entry_uid in digest.held:
            stale = True
    everything = [*entries, *left_out]
    writes = EntryWrites(everything[0].feed_id if everything else "", rewrites=rewrites)
    if archive:
        writes.inserts = new  # its walk runs beside the fetches: one may store an entry meanwhile
        return writes
    writes.new = new
    # A rewrite must reach the digest at once (it holds the hash an entry was stored with); a new
    # entry need not: until the next sighting it is read, as its item says it was seen.
    if rewrites or stale or left_out or (document == "feed" and due(digest, _stamp(now - sighting_refresh))):
        writes.seen = _stamp(now)
        counts = {uid: old.seen_count for uid, old in stored.items()}
        writes.digest, beyond = sighted(digest, entries, counts, writes.seen, whole=document == "feed",
                                        left_out=left_out)
        writes.departures = departed(digest, writes.digest)
        # After their departure's write, if they were held; one stored by this parse has its first.
        writes.sighted = [uid for uid in beyond
                          if uid in stored or (uid in digest.held and not never_stored(digest, uid))]
    return writes

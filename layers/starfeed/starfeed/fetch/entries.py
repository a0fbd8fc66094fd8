"""A parse's entries stored: read what the entry decision needs, decide (parse/dedupe.py), judge
what will be written by the rules (docs/design.md#rules), write it. Shared by fetch/job.py
(fetched and pushed documents) and fetch/history.py (archive pages)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from starfeed.model import Digest, Document, Entry, EntryWrites, Source, Verdict
from starfeed.parse.dedupe import Upserted, admitted, continued, decide, formers, unvouched, vouches
from starfeed.render import rule_set_targets
from starfeed.rules.judge import RuleBook, Subject, judged
from starfeed.store import Storage
from starfeed.store.records import entry_problem

# The rule book of the fetcher invocation under way (one_rule_book), once read.
_invocation_book: ContextVar[list[RuleBook] | None] = ContextVar("invocation_book", default=None)


@contextmanager
def one_rule_book() -> Iterator[None]:
    """Inside, every store of entries judges by the same rule book, read when first needed: one
    GetItem a fetcher invocation, none when it writes no entry. Outside, each store reads it."""
    token = _invocation_book.set([])
    try:
        yield
    finally:
        _invocation_book.reset(token)


def rule_book(storage: Storage) -> RuleBook:
    held = _invocation_book.get()
    if held:
        return held[0]
    rules, version = storage.rules.book()
    book = RuleBook.of(rules, version)
    if held is not None:
        held.append(book)
    return book


def store_entries(storage: Storage, entries: Sequence[Entry], now: float, collections: list[str] = (),
                  announce: Callable[[list[Entry]], None] | None = None, document: Document = "feed",
                  left_out: Sequence[Entry] = (), source: Source | None = None) -> Upserted:
    """Store one source's entries, deduplicated by (feed, entry_uid); returns the ones new to the
    store, and those DynamoDB would refuse, left out with the reason. announce(new entries), when
    given, runs before anything is written: what must follow a new entry (its analysis) is asked
    for first, so a failure stores nothing and the retried fetch finds the entries new again.
    left_out: those a first fetch's filters dropped, remembered in the digest as seen. The new and
    rewritten entries carry the rules' verdict, judged with their source (when not given: known
    by its id and collections alone)."""
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
    if writes.new or writes.inserts or writes.rewrites:
        subject = Subject.of(source) if source is not None else Subject(feed_id, "", "", tuple(collections))
        writes = _judged(rule_book(storage), writes, subject, now)
    if announce is not None and writes.new:
        announce(writes.new)
    stored_sets = {r.entry.entry_uid: stored[r.entry.entry_uid].rule_sets for r in writes.rewrites
                   if r.entry.entry_uid in stored}
    return Upserted(storage.entries.write(writes, collections, stored_sets), refused)


def _judged(book: RuleBook, writes: EntryWrites, subject: Subject, now: float) -> EntryWrites:
    """The entries to be written, each carrying its verdict."""
    def judge(entry: Entry) -> Entry:
        return judged(entry, book.judge(entry, subject, now))

    return replace(writes, new=[judge(e) for e in writes.new], inserts=[judge(e) for e in writes.inserts],
                   rewrites=[replace(r, entry=judge(r.entry)) for r in writes.rewrites])


def judged_new(storage: Storage, entries: list[Entry], source: Source, now: float) -> list[Entry]:
    """Entries about to be stored new without the entry decision (GitHub stars), each carrying
    its verdict."""
    if not entries:
        return entries
    book, subject = rule_book(storage), Subject.of(source)
    return [judged(entry, book.judge(entry, subject, now)) for entry in entries]


def rejudge(storage: Storage, entry: Entry, source: Source, now: float) -> list[str]:
    """A stored entry judged again after what the rules read of it changed (its analysis, which
    rules on score read): its verdict written only when it changed. Returns the rule sets' feeds
    to render (its source's own it leaves to the caller)."""
    after = judged(entry, rule_book(storage).judge(entry, Subject.of(source), now))
    if Verdict.of(after) == Verdict.of(entry):
        return []
    storage.entries.write_verdicts([(entry, after)], {entry.feed_id: source.collections})
    return entry_targets([entry, after])


def entry_targets(entries: Iterable[Entry]) -> list[str]:
    """The rule sets' feeds these entries are in (their sources' own feeds aside)."""
    return rule_set_targets({name for entry in entries for name in entry.rule_sets})

"""The rules applied to what is stored (docs/design.md#rule-sweep). After the rules change (their
version moves), each scheduler run, its own work done, judges the stored entries again: a page
of a Scan at a time, until its time is spent; where it stands is saved after each page, so the
next run goes on from there. Only the entries whose verdict changed are written, and the feeds
they are in (or were in) are rendered again. Rules on age judge by the clock as well: while any
exist, a finished sweep starts again a day after it ended."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from starfeed.kinds.registry import kind_of
from starfeed.model import Entry, Rule, RuleField, RuleSweep, Source, Verdict
from starfeed.parse.normalize import epoch_of, rfc3339
from starfeed.render import rule_set_targets
from starfeed.rules.judge import RuleBook, Subject, judged
from starfeed.store import Storage

log = logging.getLogger(__name__)

DAY = 86400


def due(sweep: RuleSweep, rules: Sequence[Rule], version: int, now: float) -> bool:
    """Whether stored entries are to be judged (again): the rules changed since the last sweep,
    it is not done, or it ended a day ago and a rule on age would judge by then's clock."""
    if sweep.version != version or not sweep.done:
        return True
    on_age = any(match.field == RuleField.AGE for rule in rules for match in rule.matches)
    return on_age and (not sweep.finished_at or now - epoch_of(sweep.finished_at) >= DAY)


def run_sweep(storage: Storage, now: float, seconds: float | None = None,
              clock: Callable[[], float] = time.monotonic) -> RuleSweep:
    """Judge pages of stored entries for at most `seconds` (STARFEED_RULES_SWEEP_SECONDS unless
    given), when due; returns where the sweep stands. Two reads when there is nothing to do."""
    settings = storage.settings
    rules, version = storage.rules.book()
    sweep = storage.rules.sweep()
    if not due(sweep, rules, version, now):
        return sweep
    if sweep.version != version or sweep.done:
        sweep = RuleSweep(version=version, done=False, started_at=rfc3339(now))
    book, sources = RuleBook.of(rules, version), _Sources(storage)
    until = clock() + (settings.rules_sweep_seconds if seconds is None else seconds)
    while True:
        entries, cursor = storage.entries.page(sweep.cursor, settings.rules_sweep_page)
        changed = judge_page(storage, book, entries, sources, now)
        sweep = replace(sweep, cursor=cursor, done=not cursor, judged=sweep.judged + len(entries),
                        changed=sweep.changed + changed, finished_at="" if cursor else rfc3339(now))
        storage.rules.save_sweep(sweep)
        if sweep.done or clock() >= until:
            break
    log.info("scheduler: rules version %d: %d stored entries judged, %d changed%s", version, sweep.judged,
             sweep.changed, "; done" if sweep.done else "; the next run goes on",
             extra={"rules_version": version, "judged": sweep.judged, "changed": sweep.changed, "done": sweep.done})
    return sweep


def judge_page(storage: Storage, book: RuleBook, entries: Sequence[Entry], sources: _Sources, now: float) -> int:
    """The entries' verdicts judged again; the changed ones written, and their feeds asked to
    render (before the page counts as done: a run cut short judges it again). Returns how many
    changed."""
    known = sources.of({entry.feed_id for entry in entries})
    changes = []
    for entry in entries:
        source = known.get(entry.feed_id)
        verdict = book.judge(entry, subject_of(entry.feed_id, source), now)
        if verdict != Verdict.of(entry):
            changes.append((entry, judged(entry, verdict)))
    if not changes:
        return 0
    collections = {feed_id: list(source.collections) for feed_id, source in known.items() if source is not None}
    storage.entries.write_verdicts(changes, collections)
    targets = {target for before, after in changes
               for target in [*feeds_of(known.get(before.feed_id)),
                              *rule_set_targets([*before.rule_sets, *after.rule_sets])]}
    storage.queues.send_render(sorted(targets))
    return len(changes)


def subject_of(feed_id: str, source: Source | None) -> Subject:
    """What the rules know of an entry's source; of one gone, its id alone."""
    return Subject.of(source) if source is not None else Subject(feed_id, "", "", ())


def feeds_of(source: Source | None) -> list[str]:
    """The feeds other than rule sets' an entry of this source appears in (of one gone: none)."""
    return kind_of(source).targets(source) if source is not None else []


class _Sources:
    """The sources of a sweep's entries, each read once a run (a BatchGetItem a page, for those
    not read yet)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._known: dict[str, Source | None] = {}

    def of(self, feed_ids: set[str]) -> dict[str, Source | None]:
        missing = feed_ids - self._known.keys()
        if missing:
            found = self._storage.sources.get_many(missing)
            self._known.update({feed_id: found.get(feed_id) for feed_id in missing})
        return {feed_id: self._known[feed_id] for feed_id in feed_ids}

"""What a person does with the rules, for the CLI (`starfeed rules`) and the REST API
(/api/v1/rules) alike: add one (checked, then saved with the rule book's version as the condition,
so two changes at once cannot lose one), remove one, list them with what they hold back and how
far the re-evaluation of stored entries has got, and try a draft on the last entries of its scope
without saving it (docs/design.md#rules)."""

from __future__ import annotations

import hashlib
import json
import shlex
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from starfeed.model import Entry, Rule, RuleAction, RuleField, RuleMatch, RuleSweep, Verdict
from starfeed.render import SOURCES_SUMMARY, rule_set_targets
from starfeed.rules.grammar import RuleError, check_book, check_rule
from starfeed.rules.judge import Reason, RuleBook, Subject
from starfeed.settings import Settings
from starfeed.store import Storage

TRIAL_MAX = 1000  # entries a trial reads at most: it judges them all, three times
SAVE_TRIES = 5  # another change of the rules between our read and our write: read again and retry
RULE_ID_LENGTH = 8  # hex digits of the rule's own hash: short enough to type, stable across stacks


class Refused(ValueError):
    """What cannot be done, in words a person can act on."""


class Missing(Refused):
    """The rule, or the source a scope names, does not exist."""


def rule_id_of(rule: Rule) -> str:
    """The same rule has the same id wherever and however often it is added: the hash of what it
    says (not its id or when it was added)."""
    said = {k: v for k, v in asdict(rule).items() if k not in ("rule_id", "created_at")}
    return hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()[:RULE_ID_LENGTH]


def draft(action: RuleAction, matches: Sequence[RuleMatch], *, tag: str | None = None, any_match: bool = False,
          scope: str = "global", rule_set: str | None = None) -> Rule:
    """A rule as asked for, with its id; not checked yet."""
    rule = Rule(rule_id="", action=action, matches=tuple(matches), any=any_match, tag=tag, scope=scope,
                rule_set=rule_set)
    return replace(rule, rule_id=rule_id_of(rule))


def _stamp(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def _check_scope(storage: Storage, rule: Rule) -> None:
    kind, _, name = rule.scope.partition(":")
    if kind == "source" and storage.sources.get(name) is None:
        raise Missing(f"no source with id {name}: `starfeed source list` shows them")


@dataclass(frozen=True)
class Added:
    rule: Rule
    version: int  # the rule book's version with it
    existed: bool  # the same rule was there already: nothing changed


def add(storage: Storage, rule: Rule, now: float) -> Added:
    """Save the rule (checked: its patterns, its scope, the number of rules) into the rule book."""
    settings = storage.settings
    check_rule(rule, settings)
    _check_scope(storage, rule)
    rule = replace(rule, created_at=rule.created_at or _stamp(now))
    for _ in range(SAVE_TRIES):
        rules, version = storage.rules.book(consistent=True)
        same = next((r for r in rules if r.rule_id == rule.rule_id), None)
        if same is not None:
            return Added(same, version, existed=True)
        check_book([*rules, rule], settings)
        if storage.rules.save([*rules, rule], version, _stamp(now)):
            _relist(storage, rules, [*rules, rule])
            return Added(rule, version + 1, existed=False)
    raise Refused("the rules kept changing while this one was being saved: try again")


def remove(storage: Storage, rule_id: str, now: float) -> tuple[Rule, int]:
    """Take the rule out of the rule book: the removed rule and the book's new version."""
    for _ in range(SAVE_TRIES):
        rules, version = storage.rules.book(consistent=True)
        gone = next((r for r in rules if r.rule_id == rule_id), None)
        if gone is None:
            raise Missing(f"no rule with id {rule_id}: `starfeed rules list` shows them")
        kept = [r for r in rules if r.rule_id != rule_id]
        if storage.rules.save(kept, version, _stamp(now)):
            _relist(storage, rules, kept)
            return gone, version + 1
    raise Refused("the rules kept changing while this one was being removed: try again")


def _relist(storage: Storage, before: Sequence[Rule], after: Sequence[Rule]) -> None:
    """A rule set that appears or goes is rendered (or unpublished) now, with the views that list
    the sets (OPML, the index): the sweep renders only the feeds whose entries changed."""
    sets = {r.rule_set for r in before if r.rule_set} ^ {r.rule_set for r in after if r.rule_set}
    if sets:
        storage.queues.send_render([*rule_set_targets(sets), "feed", SOURCES_SUMMARY])


@dataclass(frozen=True)
class Listing:
    rules: list[Rule]
    version: int
    sweep: RuleSweep  # the re-evaluation of stored entries by the rules
    blocked: Counter[str]  # stored entries each rule holds out of the feeds, by rule id


def listing(storage: Storage) -> Listing:
    rules, version = storage.rules.book(consistent=True)
    blocked: Counter[str] = Counter()
    for (rule_id, _), n in storage.entry_lists.blocked_counts().items():
        blocked[rule_id] += n
    return Listing(rules, version, storage.rules.sweep(), blocked)


def sweeping(version: int, sweep: RuleSweep) -> bool:
    """Stored entries are still to be judged by this version of the rules."""
    return bool(version) and (sweep.version != version or not sweep.done)


def sweep_words(version: int, sweep: RuleSweep) -> str:
    """How far the stored entries have been judged by the rules of this version, in a line."""
    if not version:
        return "no rules were ever saved"
    if not sweeping(version, sweep):
        return (f"every stored entry is judged by version {version} of the rules"
                + (f" ({sweep.judged:,} judged, {sweep.changed:,} changed, done {sweep.finished_at})"
                   if sweep.finished_at else ""))
    if sweep.version != version:
        return f"version {version} of the rules: the stored entries are judged again from the next scheduler run"
    return (f"judging the stored entries again by version {version} of the rules: {sweep.judged:,} judged, "
            f"{sweep.changed:,} changed so far (since {sweep.started_at}); the next scheduler run goes on")


@dataclass(frozen=True)
class Tried:
    """One entry of a trial: what the draft alone says of it, and what it is shown as by the saved
    rules now and with the draft added."""

    entry: Entry
    source: str  # the source's name, as lists show it
    matched: bool  # the draft matches it
    reasons: list[Reason]  # why, or, for a keep rule that does not, that its allowlist leaves it out
    before: Verdict
    after: Verdict

    @property
    def changed(self) -> bool:
        return self.before != self.after


def trial(storage: Storage, rule: Rule, last: int, now: float) -> list[Tried]:
    """The draft tried on its scope's last `last` entries, newest first: nothing is saved. A rule
    of a named set is tried on every source its scope names, as its feed would be."""
    if not 1 <= last <= TRIAL_MAX:
        raise Refused(f"a rule is tried on 1 to {TRIAL_MAX:,} entries, not {last:,}")
    check_rule(rule, storage.settings)
    _check_scope(storage, rule)
    saved, version = storage.rules.book()
    saved = [r for r in saved if r.rule_id != rule.rule_id]
    entries = _last_entries(storage, rule.scope, last, now)
    sources = storage.sources.get_many({e.feed_id for e in entries}) if entries else {}
    alone, now_book, with_draft = RuleBook.of([rule]), RuleBook.of(saved, version), RuleBook.of([*saved, rule])
    tried = []
    for entry in entries:
        source = sources.get(entry.feed_id)
        if source is None:  # its source was purged: no feed shows it
            continue
        subject = Subject.of(source)
        reasons = alone.explain(entry, subject, now)
        # Alone, a keep rule that does not match blocks the entry as an allowlist: not a match.
        allowlisted = rule.action is RuleAction.KEEP and rule.rule_set is None and bool(
            alone.judge(entry, subject, now).blocked_by)
        tried.append(Tried(entry, source.title or source.url, bool(reasons) and not allowlisted, reasons,
                           now_book.judge(entry, subject, now), with_draft.judge(entry, subject, now)))
    return tried


def _last_entries(storage: Storage, scope: str, last: int, now: float) -> list[Entry]:
    kind, _, name = scope.partition(":")
    if kind == "collection":
        return storage.collections.recent(name, last)
    return storage.entries.recent(name if kind == "source" else None, last, now)


def faulty_match(rule: Rule, error: RuleError, settings: Settings) -> RuleMatch | None:
    """The match whose pattern the refusal is about; None when it is about the rule as a whole (a
    tag rule without its tag, a scope that is not one, too many rules)."""
    if _refusal(replace(rule, matches=(HARMLESS,)), settings) is not None:
        return None
    return next((m for m in rule.matches if _refusal(replace(rule, matches=(m,)), settings) == str(error)), None)


HARMLESS = RuleMatch(RuleField.TITLE, "starfeed")


def _refusal(rule: Rule, settings: Settings) -> str | None:
    try:
        check_rule(rule, settings)
    except RuleError as exc:
        return str(exc)
    return None


def rule_document(rule: Rule) -> dict[str, Any]:
    """A rule as the REST API and `rules list --json` give it, with the command that makes it."""
    return {**asdict(rule), "command": command_of(rule)}


def listing_document(listed: Listing) -> dict[str, Any]:
    return {"version": listed.version,
            "sweep": {**{k: v for k, v in asdict(listed.sweep).items() if k != "cursor"},  # the store's own key
                      "in_progress": sweeping(listed.version, listed.sweep),
                      "words": sweep_words(listed.version, listed.sweep)},
            "rules": [{**rule_document(r), "blocked": listed.blocked[r.rule_id]} for r in listed.rules]}


def tried_document(tried: Tried) -> dict[str, Any]:
    entry = tried.entry
    return {"feed_id": entry.feed_id, "entry_uid": entry.entry_uid, "title": entry.title, "link": entry.canonical_link,
            "date": entry.sort_time, "source": tried.source, "matches": tried.matched,
            "reasons": [asdict(r) for r in tried.reasons], "now": asdict(tried.before),
            "with_rule": asdict(tried.after)}


# How a rule's matches are given on the command line (`starfeed rules add`), field by field.
NUMBER_OPTIONS = {RuleField.AGE: "older-than", RuleField.SCORE: "score-above"}


def option_of(match: RuleMatch) -> str:
    """The option that gives this match: --title, --not-author, --older-than, …"""
    name = NUMBER_OPTIONS.get(match.field, str(match.field))
    return f"--{'not-' if match.negated else ''}{name}"


def command_of(rule: Rule) -> str:
    """The rule as the arguments of `starfeed rules add` that make it, ready to paste."""
    words = [str(rule.action), *([rule.tag] if rule.tag else [])]
    for match in rule.matches:
        words += [option_of(match), match.pattern]
    if rule.any:
        words.append("--any")
    if rule.scope != "global":
        words += ["--scope", rule.scope]
    if rule.rule_set:
        words += ["--name", rule.rule_set]
    return shlex.join(words)

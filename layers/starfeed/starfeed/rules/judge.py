"""An entry's verdict under the rules (docs/design.md#rule-verdict). Pure: no clock but `now`,
no I/O.

The verdict is decided from the narrowest scope out (the entry's source, its collections, every
source): at each level a keep rule that matches shows it, else a block rule that matches blocks
it, else the level's keep rules, when it has any, block it; past the last level it is shown.
Every tag rule that matches adds its tag. A named set's rules judge only its own feed."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from starfeed.enrich.analysis import score_of
from starfeed.model import Entry, Rule, RuleAction, RuleField, RuleMatch, Source, Verdict, host_of
from starfeed.parse.text import text_of
from starfeed.rules.grammar import compiled, is_regex, number_of

DAY = 86_400
_STAMP = "%Y-%m-%dT%H:%M:%SZ"
_SHOWN_MAX = 60  # characters of matched text a reason quotes
_LEVELS = ("its source", "its collections", "every source")  # the scopes, narrowest first


@dataclass(frozen=True)
class Subject:
    """What the rules know of an entry's source."""

    source_id: str
    title: str
    url: str
    collections: tuple[str, ...]

    @classmethod
    def of(cls, source: Source) -> Subject:
        return cls(source.source_id, source.title or "", source.url, tuple(source.collections))


@dataclass(frozen=True)
class Reason:
    """One rule that matched, and why ("title has 'sponsored'")."""

    rule_id: str
    action: RuleAction
    why: str


def values_of(field: RuleField, entry: Entry, subject: Subject) -> tuple[str, ...]:
    """The texts a match on this field looks at; a multi-valued field is matched value by value."""
    if field is RuleField.TITLE:
        return (entry.title,) if entry.title else ()
    if field is RuleField.TEXT:
        return tuple(text for text in (text_of(entry.summary), text_of(entry.content)) if text)
    if field is RuleField.AUTHOR:
        return tuple(value for author in entry.authors for value in (author.get("name"), author.get("email"))
                     if isinstance(value, str) and value)
    if field is RuleField.LINK:
        return (entry.canonical_link,) if entry.canonical_link else ()
    if field is RuleField.HOST:
        return (host,) if entry.canonical_link and (host := host_of(entry.canonical_link)) else ()
    if field is RuleField.CATEGORY:
        return tuple(category for category in entry.categories if category)
    if field is RuleField.SOURCE:
        return tuple(value for value in (subject.source_id, subject.title, subject.url) if value)
    raise ValueError(f"{field} is not matched against text")


class _Match:
    """One compiled condition of a rule."""

    def __init__(self, match: RuleMatch) -> None:
        self.field, self.pattern, self.negated = match.field, match.pattern, match.negated
        self.number = number_of(match) if match.field in (RuleField.AGE, RuleField.SCORE) else 0.0
        self.regex = None if match.field in (RuleField.AGE, RuleField.SCORE) else compiled(match.pattern)

    def found(self, entry: Entry, subject: Subject, now: float) -> str | None:
        """Why the match holds, or None when it does not."""
        if self.field is RuleField.AGE:
            older = entry.sort_time < time.strftime(_STAMP, time.gmtime(now - self.number * DAY))
            if older != self.negated:
                return f"{'not ' if self.negated else ''}older than {self.number:g} days"
            return None
        if self.field is RuleField.SCORE:
            score = score_of(entry.analyzer_result)
            above = score is not None and score > self.number
            if above != self.negated:
                return (f"score {score:.2f} above {self.number:g}" if score is not None and above
                        else f"score not above {self.number:g}" if score is not None
                        else f"not scored above {self.number:g} (not analyzed)")
            return None
        assert self.regex is not None
        for value in values_of(self.field, entry, subject):
            if found := self.regex.search(value):
                if self.negated:
                    return None
                return self._has(found.group(1) if not is_regex(self.pattern) else found.group(0))
        return self._lacks() if self.negated else None

    def _has(self, text: str) -> str:
        if is_regex(self.pattern):
            return f"{self.field} matches {self.pattern} at {text[:_SHOWN_MAX]!r}"
        return f"{self.field} has {self.pattern!r}"

    def _lacks(self) -> str:
        if is_regex(self.pattern):
            return f"{self.field} does not match {self.pattern}"
        return f"{self.field} lacks {self.pattern!r}"


class _Rule:
    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.matches = tuple(_Match(match) for match in rule.matches)

    def holds(self, entry: Entry, subject: Subject, now: float) -> str | None:
        """Why the rule matches the entry, or None."""
        if self.rule.any:
            return next((why for match in self.matches if (why := match.found(entry, subject, now)) is not None),
                        None)
        reasons = []
        for match in self.matches:
            if (why := match.found(entry, subject, now)) is None:
                return None
            reasons.append(why)
        return " and ".join(reasons)

    def applies_to(self, subject: Subject) -> int | None:
        """The level the rule judges this subject's entries at (0: its source, 1: its collections,
        2: every source), or None when its scope leaves them out."""
        kind, _, name = self.rule.scope.partition(":")
        if kind == "source":
            return 0 if name == subject.source_id else None
        if kind == "collection":
            return 1 if name in subject.collections else None
        return 2


class RuleBook:
    """The rules compiled once, to judge many entries."""

    def __init__(self, rules: Sequence[Rule], version: int) -> None:
        self.version = version
        self.rules = tuple(rules)
        self.rule_sets = tuple(sorted({rule.rule_set for rule in rules if rule.rule_set is not None}))
        self._compiled = tuple(_Rule(rule) for rule in rules)

    @classmethod
    def of(cls, rules: Sequence[Rule], version: int = 0) -> RuleBook:
        """The rules, checked already (rules/grammar.py), compiled."""
        return cls(rules, version)

    def judge(self, entry: Entry, subject: Subject, now: float) -> Verdict:
        return self._verdict(entry, subject, now)[0]

    def explain(self, entry: Entry, subject: Subject, now: float) -> list[Reason]:
        """Every rule that matches the entry, in the book's order, with why; and, when a level's
        keep rules block it as an allowlist, the first of them, saying so."""
        return self._verdict(entry, subject, now)[1]

    def _verdict(self, entry: Entry, subject: Subject, now: float) -> tuple[Verdict, list[Reason]]:
        if not self._compiled:
            return Verdict(), []
        reasons: list[Reason] = []
        kept: list[bool] = [False, False, False]
        blocked: list[str | None] = [None, None, None]
        allowlist: list[_Rule | None] = [None, None, None]
        tags: list[str] = []
        set_hits: dict[str, bool] = {}
        set_blocks: set[str] = set()
        for rule in self._compiled:
            level = rule.applies_to(subject)
            if level is None:
                continue
            action, rule_set = rule.rule.action, rule.rule.rule_set
            if rule_set is None and action is RuleAction.KEEP and allowlist[level] is None:
                allowlist[level] = rule
            why = rule.holds(entry, subject, now)
            if why is None:
                continue
            reasons.append(Reason(rule.rule.rule_id, action, why))
            if rule_set is not None:
                if action is RuleAction.BLOCK:
                    set_blocks.add(rule_set)
                else:
                    set_hits[rule_set] = True
            elif action is RuleAction.KEEP:
                kept[level] = True
            elif action is RuleAction.BLOCK:
                blocked[level] = blocked[level] or rule.rule.rule_id
            elif rule.rule.tag not in tags and rule.rule.tag is not None:
                tags.append(rule.rule.tag)
        blocked_by = None
        for level in range(3):
            if kept[level]:
                break
            if blocked[level] is not None:
                blocked_by = blocked[level]
                break
            if (keeper := allowlist[level]) is not None:
                blocked_by = keeper.rule.rule_id
                reasons.append(Reason(keeper.rule.rule_id, RuleAction.KEEP,
                                      f"matches none of the keep rules of {_LEVELS[level]}"))
                break
        rule_sets = tuple(sorted(name for name in set_hits if name not in set_blocks))
        return Verdict(blocked_by, tuple(tags), rule_sets), reasons


def judged(entry: Entry, verdict: Verdict) -> Entry:
    """The entry carrying the verdict."""
    return replace(entry, blocked_by=verdict.blocked_by, tags=list(verdict.tags), rule_sets=list(verdict.rule_sets))

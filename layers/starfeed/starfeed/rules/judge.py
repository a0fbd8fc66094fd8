"""An entry's verdict under the rules (docs/design.md#rule-verdict). Pure: no clock but `now`,
no I/O.

The verdict is decided from the narrowest scope out (the entry's source, its collections, every
source): at each level a keep rule that matches shows it, else a block rule that matches blocks
it, else the level's keep rules, when it has any, block it; past the last level it is shown.
Every tag rule that matches adds its tag. A named set's rules judge only its own feed.

Fast enough to judge every entry at ingest (docs/design.md#rule-engine): each field's patterns
are one RE2 set, so a field's text is scanned once whatever the number of rules, and a rule is
looked at only when one of its patterns was found (or it has nothing a set can find: only
negated, age or score matches)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import re2

from starfeed.enrich.analysis import score_of
from starfeed.model import Entry, Rule, RuleAction, RuleField, RuleMatch, Source, Verdict, host_of
from starfeed.parse.text import ELLIPSIS, text_of
from starfeed.rules.grammar import (
    NUMERIC,
    RuleError,
    check_scope,
    compiled,
    is_regex,
    number_of,
    options,
    phrase_source,
)

DAY = 86_400
_STAMP = "%Y-%m-%dT%H:%M:%SZ"  # as entries' dates are stored: compared as strings
_SHOWN_MAX = 60  # characters of matched text a reason quotes
_LEVELS = ("its source", "its collections", "every source")  # the scopes, narrowest first
_SET = -1  # the level of a named set's rule: it judges its set's feed only
# A stored link's host: after the scheme and any user information, up to a port, path, query or
# fragment (urlsplit takes the user information up to the netloc's last "@"); a link with
# whitespace in it, which urlsplit removes, is left to urlsplit.
_HOST = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#\s]*@)?"
                   r"(\[[^\]/?#@\s]*\]|[^:/?#\[\]@\s]+)(?::[^/?#@\s\[\]]*)?(?=[/?#]|$)")
_APART = "\x00"  # between values matched as one text: never in a stored text nor in a pattern
_ONLY_SENTINEL = [0]  # a set's answer when it found none of its patterns
_SET_MEMORY = 32 << 20  # bytes a field's set may take for its program and its scans
_PLANS_MAX = 4096  # subjects whose plan a book keeps (a sweep meets every source)


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
    """The texts a match on this field looks at; a field of many values (authors, categories, the
    source's id, title and URL) is matched value by value."""
    if field is RuleField.TITLE:
        return (entry.title,) if entry.title else ()
    if field is RuleField.TEXT:
        return _text(entry)
    if field is RuleField.AUTHOR:
        return tuple(value for author in entry.authors for value in (author.get("name"), author.get("email"))
                     if isinstance(value, str) and value)
    if field is RuleField.LINK:
        return (entry.canonical_link,) if entry.canonical_link else ()
    if field is RuleField.HOST:
        return (host,) if entry.canonical_link and (host := _host(entry.canonical_link)) else ()
    if field is RuleField.CATEGORY:
        return tuple(filter(None, entry.categories))
    if field is RuleField.SOURCE:
        return _source_values(subject)
    raise ValueError(f"{field} is not matched against text")


def _text(entry: Entry) -> tuple[str, ...]:
    """The summary (plain text already) and the content's text, as one text that no phrase
    spans: the summary left out when it is the start of the content, as most feeds' are."""
    content, summary = text_of(entry.content), entry.summary
    if content and summary and not content.startswith(summary.removesuffix(ELLIPSIS)):
        return (f"{summary}{_APART}{content}",)
    return (text,) if (text := content or summary) else ()


def _host(link: str) -> str:
    """The link's host, as host_of says, read by one expression (urlsplit costs more than the
    rules of most entries)."""
    if found := _HOST.match(link):
        return found.group(1).strip("[]").lower()
    return host_of(link)


def _source_values(subject: Subject) -> tuple[str, ...]:
    return tuple(value for value in (subject.source_id, subject.title, subject.url) if value)


class _Pattern:
    """A distinct field and pattern, however many rules use it."""

    def __init__(self, key: int, field: RuleField, pattern: str) -> None:
        self.key, self.field, self.pattern = key, field, pattern
        self.regex = compiled(pattern)
        # In a field's set, words are looked for without their edges: a word's edge is any
        # character but a letter, digit or "_" of any script, a class so large in RE2's bytes
        # that 200 patterns holding it twice would not fit a set. What the set finds is then
        # confirmed whole words by the pattern itself.
        self.confirmed = not is_regex(pattern)
        self.in_set = phrase_source(pattern) if self.confirmed else self.regex.pattern

    def found(self, values: Iterable[str]) -> str | None:
        """The text the pattern finds in the first value it is found in (the words of a phrase)."""
        for value in values:
            if match := self.regex.search(value):
                return str(match.group(0) if is_regex(self.pattern) else match.group(1))
        return None


def _set_options() -> re2.Options:
    """A set holds up to rules_max patterns: more memory than one pattern's default (taken as the
    scan needs it, not at once)."""
    chosen = options()
    chosen.max_mem = _SET_MEMORY
    return chosen


class _FieldSet:
    """A field's patterns as one RE2 set: one scan of each value finds every pattern in it."""

    def __init__(self, field: RuleField, patterns: list[_Pattern]) -> None:
        self.field, self.patterns = field, patterns
        # Words are found in many values (categories, authors) in one scan of them joined: no
        # phrase spans the character between two, and it is a word's edge.
        self.joinable = not any(is_regex(pattern.pattern) for pattern in patterns)
        self.set: re2.Set | None = re2.Set.SearchSet(_set_options())
        # The empty pattern is found in every text: a scan whose answer lacks it did not finish
        # (RE2's set has no slower engine to fall back to when its memory runs out).
        self.set.Add("")
        for pattern in patterns:
            self.set.Add(pattern.in_set)
        try:
            self.set.Compile()
        except re2.error:
            self.set = None  # too large as one: each pattern searches alone

    def found(self, values: tuple[str, ...], into: set[int]) -> None:
        if self.joinable and len(values) > 1:
            values = (_APART.join(values),)
        for value in values:
            encoded = value.encode("utf-8", "replace")  # once, for every pattern (RE2 reads UTF-8)
            scanned = self.set.Match(encoded) if self.set is not None else None
            if scanned == _ONLY_SENTINEL:  # most values: nothing found
                continue
            if scanned:
                into.update(pattern.key for pattern in (self.patterns[index - 1] for index in scanned if index)
                            if not pattern.confirmed or pattern.regex.search(encoded))
            else:
                into.update(pattern.key for pattern in self.patterns if pattern.regex.search(value))


@dataclass(frozen=True)
class _Condition:
    """One match of a rule: a pattern (by its key) or a number."""

    match: RuleMatch
    pattern: _Pattern | None
    number: float


class _Rule:
    def __init__(self, order: int, rule: Rule, conditions: tuple[_Condition, ...]) -> None:
        self.order, self.rule, self.conditions = order, rule, conditions
        # The patterns that must be found for the rule to hold, when there are such: else every
        # entry asks it (a negation, an age, a score, or any of them with a pattern).
        positive = [c.pattern.key for c in conditions if c.pattern is not None and not c.match.negated]
        self.triggers = tuple(positive) if positive and (not rule.any or len(positive) == len(conditions)) else ()

    def level(self, subject: Subject) -> int | None:
        """The level the rule judges this subject's entries at (0: its source, 1: its collections,
        2: every source, _SET: a named set's), or None when its scope leaves them out."""
        kind, _, name = self.rule.scope.partition(":")
        if kind == "source" and name != subject.source_id or kind == "collection" and name not in subject.collections:
            return None
        if self.rule.rule_set is not None:
            return _SET
        return 0 if kind == "source" else 1 if kind == "collection" else 2

    def holds(self, found: set[int], entry: Entry, cutoff: _Cutoffs) -> bool:
        for condition in self.conditions:
            match = condition.match
            if condition.pattern is not None:
                held = condition.pattern.key in found
            elif match.field is RuleField.AGE:
                held = entry.sort_time < cutoff.stamp(condition.number)
            else:
                score = score_of(entry.analyzer_result)
                held = score is not None and score > condition.number
            if held != match.negated:
                if self.rule.any:
                    return True
            elif not self.rule.any:
                return False
        return not self.rule.any

    def why(self, found: set[int], entry: Entry, subject: Subject, cutoff: _Cutoffs) -> str:
        """Why the rule, which holds, holds: each match that holds, in words."""
        reasons = []
        for condition in self.conditions:
            match, pattern = condition.match, condition.pattern
            if pattern is not None:
                held = pattern.key in found
                if held and not match.negated:
                    text = pattern.found(values_of(match.field, entry, subject)) or ""
                    reasons.append(f"{match.field} matches {match.pattern} at {text[:_SHOWN_MAX]!r}"
                                   if is_regex(match.pattern) else f"{match.field} has {match.pattern!r}")
                elif not held and match.negated:
                    reasons.append(f"{match.field} does not match {match.pattern}" if is_regex(match.pattern)
                                   else f"{match.field} lacks {match.pattern!r}")
            elif match.field is RuleField.AGE:
                if (entry.sort_time < cutoff.stamp(condition.number)) != match.negated:
                    reasons.append(f"{'not ' if match.negated else ''}older than {condition.number:g} days")
            else:
                score = score_of(entry.analyzer_result)
                if (score is not None and score > condition.number) != match.negated:
                    reasons.append(f"score {score:.2f} above {condition.number:g}" if score is not None
                                   and not match.negated else f"not scored above {condition.number:g}")
        return (" or " if self.rule.any else " and ").join(reasons)


class _Cutoffs:
    """The date before which an entry is older than N days, at one judging's `now`."""

    def __init__(self, now: float) -> None:
        self.now, self._stamps = now, dict[float, str]()

    def stamp(self, days: float) -> str:
        if (found := self._stamps.get(days)) is None:
            found = self._stamps[days] = time.strftime(_STAMP, time.gmtime(self.now - days * DAY))
        return found


@dataclass
class _Plan:
    """What the book asks of one subject's entries: the rules whose scope names it, in the book's
    order with their level, and what it knows already of the subject itself."""

    rules: list[tuple[_Rule, int]]
    fields: list[_FieldSet]
    always: list[int]  # positions in rules asked of every entry
    triggered: dict[int, list[int]]  # a pattern's key -> positions in rules it may make hold
    allowlists: list[_Rule | None]  # each level's first keep rule
    found: set[int] = field(default_factory=set)  # patterns found in the subject (the source field)
    unmatched: Verdict = Verdict()  # of an entry no rule matches: its allowlists' alone


def _condition(match: RuleMatch, patterns: dict[tuple[RuleField, str], _Pattern]) -> _Condition:
    """The match compiled, its pattern shared with every rule's that has it; RuleError when it
    does not compile (and then nothing is shared)."""
    if match.field in NUMERIC:
        return _Condition(match, None, number_of(match))
    key = (match.field, match.pattern)
    if key not in patterns:
        patterns[key] = _Pattern(len(patterns), match.field, match.pattern)
    return _Condition(match, patterns[key], 0.0)


class RuleBook:
    """The rules compiled once, to judge many entries."""

    def __init__(self, rules: Sequence[Rule], version: int) -> None:
        self.version = version
        # A stored rule that no longer passes (edited by hand, or a limit lowered since) judges
        # nothing, rather than stopping every fetch: it is named here, with why.
        self.refused: list[tuple[str, str]] = []
        patterns: dict[tuple[RuleField, str], _Pattern] = {}
        compiled_rules = []
        for order, rule in enumerate(rules):
            try:
                check_scope(rule.scope)
                if not rule.matches:
                    raise RuleError("a rule needs at least one match")
                conditions = tuple(_condition(match, patterns) for match in rule.matches)
            except RuleError as refused:
                self.refused.append((rule.rule_id, str(refused)))
                continue
            compiled_rules.append(_Rule(order, rule, conditions))
        self._rules = tuple(compiled_rules)
        self.rules = tuple(compiled.rule for compiled in compiled_rules)
        self.rule_sets = tuple(sorted({rule.rule_set for rule in self.rules if rule.rule_set is not None}))
        self._fields = {f: _FieldSet(f, [p for p in patterns.values() if p.field is f])
                        for f in RuleField if any(p.field is f for p in patterns.values())}
        self._plans: dict[Subject, _Plan] = {}
        self._cutoffs = _Cutoffs(0.0)

    @classmethod
    def of(cls, rules: Sequence[Rule], version: int = 0) -> RuleBook:
        """The rules, checked already (rules/grammar.py), compiled."""
        return cls(rules, version)

    def judge(self, entry: Entry, subject: Subject, now: float) -> Verdict:
        if not self._rules:
            return Verdict()
        return self._verdict(entry, subject, now, None)

    def explain(self, entry: Entry, subject: Subject, now: float) -> list[Reason]:
        """Every rule that matches the entry, in the book's order, with why; and, when a level's
        keep rules block it as an allowlist, the first of them, saying so."""
        reasons: list[Reason] = []
        if self._rules:
            self._verdict(entry, subject, now, reasons)
        return reasons

    def _plan(self, subject: Subject) -> _Plan:
        if (plan := self._plans.get(subject)) is not None:
            return plan
        rules = [(rule, level) for rule in self._rules if (level := rule.level(subject)) is not None]
        always = [n for n, (rule, _) in enumerate(rules) if not rule.triggers]
        triggered: dict[int, list[int]] = {}
        for n, (rule, _) in enumerate(rules):
            for key in dict.fromkeys(rule.triggers):
                triggered.setdefault(key, []).append(n)
        used = {c.match.field for rule, _ in rules for c in rule.conditions if c.pattern is not None}
        allowlists: list[_Rule | None] = [None, None, None]
        for rule, level in rules:
            if level != _SET and rule.rule.action is RuleAction.KEEP and allowlists[level] is None:
                allowlists[level] = rule
        plan = _Plan(rules, [s for f, s in self._fields.items() if f in used and f is not RuleField.SOURCE],
                     always, triggered, allowlists)
        plan.unmatched = Verdict(self._blocked_by(plan, [False, False, False], [None, None, None], None))
        if RuleField.SOURCE in used:
            self._fields[RuleField.SOURCE].found(_source_values(subject), plan.found)
        if len(self._plans) >= _PLANS_MAX:
            self._plans.clear()
        self._plans[subject] = plan
        return plan

    def _verdict(self, entry: Entry, subject: Subject, now: float, reasons: list[Reason] | None) -> Verdict:
        plan = self._plan(subject)
        if not plan.rules:
            return Verdict()
        found = set(plan.found)
        for field_set in plan.fields:
            field_set.found(values_of(field_set.field, entry, subject), found)
        asked = set(plan.always)
        for key in found:
            asked.update(plan.triggered.get(key, ()))
        if not asked and reasons is None:
            return plan.unmatched
        if self._cutoffs.now != now:
            self._cutoffs = _Cutoffs(now)
        kept: list[bool] = [False, False, False]
        blocked: list[str | None] = [None, None, None]
        tags: list[str] = []
        in_sets: set[str] = set()
        out_of_sets: set[str] = set()
        for n in sorted(asked):
            rule, level = plan.rules[n]
            if not rule.holds(found, entry, self._cutoffs):
                continue
            action = rule.rule.action
            if reasons is not None:
                reasons.append(Reason(rule.rule.rule_id, action, rule.why(found, entry, subject, self._cutoffs)))
            if level == _SET:
                (out_of_sets if action is RuleAction.BLOCK else in_sets).add(str(rule.rule.rule_set))
            elif action is RuleAction.KEEP:
                kept[level] = True
            elif action is RuleAction.BLOCK:
                blocked[level] = blocked[level] or rule.rule.rule_id
            elif rule.rule.tag is not None and rule.rule.tag not in tags:
                tags.append(rule.rule.tag)
        return Verdict(self._blocked_by(plan, kept, blocked, reasons), tuple(tags),
                       tuple(sorted(in_sets - out_of_sets)))

    @staticmethod
    def _blocked_by(plan: _Plan, kept: list[bool], blocked: list[str | None],
                    reasons: list[Reason] | None) -> str | None:
        """The precedence: from the narrowest level out, a keep shows, a block blocks, and a
        level's keep rules that did not match block as an allowlist."""
        for level in range(3):
            if kept[level]:
                return None
            if blocked[level] is not None:
                return blocked[level]
            if (keeper := plan.allowlists[level]) is not None:
                if reasons is not None:
                    reasons.append(Reason(keeper.rule.rule_id, RuleAction.KEEP,
                                          f"matches none of the keep rules of {_LEVELS[level]}"))
                return keeper.rule.rule_id
        return None


def judged(entry: Entry, verdict: Verdict) -> Entry:
    """The entry carrying the verdict."""
    return replace(entry, blocked_by=verdict.blocked_by, tags=list(verdict.tags), rule_sets=list(verdict.rule_sets))

"""What a rule may say, checked before it is saved (docs/design.md#rule-engine). Pure.

A pattern is words (case-insensitive, whole words, a phrase as consecutive words) or a regular
expression between slashes, compiled by RE2, whose matching time is linear in the text; age and
score take a number. A refusal says what is wrong and, when it can, where in the pattern."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import re2

from starfeed.model import FEED_NAME, Rule, RuleAction, RuleField, RuleMatch
from starfeed.settings import Settings

SET_NAME = FEED_NAME  # a set's feed sits beside collections' in URLs
SOURCE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
TAG_MAX = 64  # characters: a tag is a category feeds show
NUMERIC = frozenset({RuleField.AGE, RuleField.SCORE})
AGE_DAYS_MAX = 36_500.0
# Bytes one pattern's program and scans may take: a pattern that needs more is refused ("pattern
# too large"), so rules_max patterns stay within a function's memory.
PATTERN_MEMORY = 1 << 20
# A word's edge: the text's start or end, or a character that is not part of a word.
_EDGE_BEFORE, _EDGE_AFTER = r"(?:^|[^\pL\pN_])", r"(?:$|[^\pL\pN_])"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# RE2's terse reasons a person may not read at once.
_PLAIN = {"missing )": "a ( is never closed", "unexpected )": "a ) closes no (",
          "missing ]": "a [ is never closed", "trailing \\": "it ends with a lone backslash"}
_UNENCODABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


class RuleError(ValueError):
    """A rule that cannot be saved: str() says why in words a person can act on (counting
    characters from 1); position is the 0-based offset in the pattern where the problem is, when
    there is one."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


def options() -> re2.Options:
    """RE2's options for every pattern: errors are ours to report, not RE2's to print; memory
    bounded."""
    chosen = re2.Options()
    chosen.log_errors = False
    chosen.max_mem = PATTERN_MEMORY
    return chosen


def is_regex(pattern: str) -> bool:
    return len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/")


def words_of(pattern: str) -> list[str]:
    return pattern.split()


def phrase_source(pattern: str) -> str:
    """The words in a row, in any case, wherever they are: whole words or not."""
    return "(?i)" + r"\s+".join(re2.escape(word) for word in words_of(pattern))


def regex_source(pattern: str) -> str:
    """The RE2 expression a words or /regex/ pattern stands for (not checked: check_match does)."""
    if is_regex(pattern):
        return pattern[1:-1]
    return f"(?i){_EDGE_BEFORE}({phrase_source(pattern)}){_EDGE_AFTER}"


def compiled(pattern: str) -> re2._Regexp:
    """The pattern compiled; RuleError with the position of the problem when RE2 refuses it."""
    source = regex_source(pattern)
    try:
        return re2.compile(source, options())
    except re2.error as refused:
        raise _refusal(pattern, refused) from None


def _refusal(pattern: str, refused: re2.error) -> RuleError:
    """RE2's reason ("invalid perl operator: (?<=") in a person's words, with where it is in the
    pattern as written (its leading slash counted)."""
    detail = refused.args[0] if refused.args else b""
    text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    reason, _, fragment = text.partition(": ")
    body = pattern[1:-1]
    if reason == "missing )":
        at: int | None = len(body)
    elif reason == "unexpected )":
        at = _unopened_paren(body)
    else:
        at = body.find(fragment) if fragment and fragment in body else None
    reason = _PLAIN.get(reason, reason)
    if reason == "invalid perl operator" and fragment.startswith(("(?=", "(?!", "(?<=", "(?<!")):
        reason = "look-around is not supported (RE2 matches in linear time)"
    elif reason == "invalid escape sequence" and fragment[1:].isdigit():
        reason = "back-references are not supported (RE2 matches in linear time)"
    position = at + 1 if at is not None else None
    where = f", at character {position + 1}" if position is not None else ""
    shown = f" '{fragment}'" if fragment and fragment != body else ""
    return RuleError(f"{pattern}: {reason}{where}{shown}", position)


def _unopened_paren(body: str) -> int | None:
    """Where a ")" closes nothing, skipping escapes and character classes."""
    depth, index, in_class = 0, 0, False
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if body[index + 1:index + 2] == "]":  # "[]...]": the first "]" is a member
                index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    return None


def number_of(match: RuleMatch) -> float:
    """An age's days or a score's threshold; RuleError when it is not one."""
    try:
        number = float(match.pattern)
    except ValueError:
        number = math.nan
    if match.field is RuleField.AGE and not 0 < number <= AGE_DAYS_MAX:
        raise RuleError(f"age takes a number of days above 0 and at most {AGE_DAYS_MAX:,.0f}: {match.pattern[:40]!r}",
                        0)
    if match.field is RuleField.SCORE and not 0 <= number <= 1:
        raise RuleError(f"score takes a number from 0 to 1: {match.pattern[:40]!r}", 0)
    return number


def check_match(match: RuleMatch, settings: Settings) -> None:
    pattern = match.pattern
    if odd := _UNENCODABLE.search(pattern):
        raise RuleError(f"the {match.field} pattern holds a character that is not text (a lone surrogate or a "
                        "control character)", odd.start())
    if len(pattern) > settings.rule_pattern_max:
        raise RuleError(f"a pattern may be at most {settings.rule_pattern_max} characters: this {match.field} "
                        f"pattern has {len(pattern)}", settings.rule_pattern_max)
    if match.field in NUMERIC:
        number_of(match)
        return
    if is_regex(pattern):
        if len(pattern) == 2:
            raise RuleError(f"an empty regular expression matches every {match.field}: write one between the "
                            "slashes", 1)
    elif not words_of(pattern):
        raise RuleError(f"the {match.field} pattern is empty: give words, or a regular expression between "
                        "slashes (/CVE-\\d+/)", 0)
    elif pattern.startswith("/"):
        raise RuleError(f"{pattern!r} starts with a slash but does not end with one: a regular expression is "
                        "written between slashes", len(pattern))
    compiled(pattern)


def check_scope(scope: str) -> None:
    kind, _, name = scope.partition(":")
    if scope == "global":
        return
    if kind == "collection" and SET_NAME.fullmatch(name):
        return
    if kind == "source" and SOURCE_ID.fullmatch(name):
        return
    raise RuleError(f"the scope is global, collection:NAME or source:ID, not {scope[:80]!r}")


def check_rule(rule: Rule, settings: Settings) -> None:
    """Every pattern compiles and fits, the action has what it needs, the scope and set name are
    well formed; RuleError otherwise."""
    if not rule.matches:
        raise RuleError("a rule needs at least one match (--title, --text, ... or --older-than)")
    for match in rule.matches:
        check_match(match, settings)
    if rule.action is RuleAction.TAG:
        tag = (rule.tag or "").strip()
        if not tag or len(tag) > TAG_MAX or _CONTROL.search(tag) or tag != rule.tag:
            raise RuleError(f"a tag rule adds a tag of 1 to {TAG_MAX} printable characters, without spaces "
                            f"around it: {rule.tag!r}")
    elif rule.tag is not None:
        raise RuleError(f"only a tag rule takes a tag; a {rule.action} rule adds none")
    check_scope(rule.scope)
    if rule.rule_set is not None and not SET_NAME.fullmatch(rule.rule_set):
        raise RuleError(f"a set's name is lower-case letters, digits, - and _ (at most 64), starting with a "
                        f"letter or digit: {rule.rule_set[:80]!r}")


def check_book(rules: Sequence[Rule], settings: Settings) -> None:
    """At most rules_max rules, each well formed, no two with one id."""
    if len(rules) > settings.rules_max:
        raise RuleError(f"at most {settings.rules_max} rules may exist (STARFEED_RULES_MAX); this makes {len(rules)}")
    seen: set[str] = set()
    for rule in rules:
        if rule.rule_id in seen:
            raise RuleError(f"two rules have the id {rule.rule_id!r}")
        seen.add(rule.rule_id)
        check_rule(rule, settings)

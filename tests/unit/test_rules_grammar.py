"""What a rule may say (rules/grammar.py): patterns RE2 compiles, refused with the position of the
problem, limits from the settings, and the shape of scopes, tags and set names."""

import pytest

from starfeed.model import Rule, RuleAction, RuleField, RuleMatch
from starfeed.rules.grammar import RuleError, check_book, check_rule
from starfeed.settings import Settings

SETTINGS = Settings()


def rule(*matches: RuleMatch, action=RuleAction.BLOCK, **fields) -> Rule:
    return Rule(fields.pop("rule_id", "r1"), action, matches or (RuleMatch(RuleField.TITLE, "sponsored"),), **fields)


def refusal(pattern: str, field=RuleField.TITLE, settings=SETTINGS) -> RuleError:
    with pytest.raises(RuleError) as refused:
        check_rule(rule(RuleMatch(field, pattern)), settings)
    return refused.value


@pytest.mark.parametrize("pattern", ["sponsored", "hot deals", "C++", "café", "/CVE-\\d+/", "/(?i)^ask hn:/",
                                     "/(a+)+$/", "/\\bfoo\\b/", "/[/]/", "and/or"])
def test_words_and_regular_expressions_rE2_compiles_are_accepted(pattern):
    check_rule(rule(RuleMatch(RuleField.TEXT, pattern)), SETTINGS)


@pytest.mark.parametrize(("pattern", "position", "says"), [
    ("/(?<=a)b/", 1, "look-around"),
    ("/(?<!a)b/", 1, "look-around"),
    ("/x(?=y)/", 2, "look-around"),
    ("/(?!x)y/", 1, "look-around"),
    ("/(a)\\1/", 4, "back-references"),
    ("/abc(/", 5, "( is never closed"),
    ("/a)b/", 2, ") closes no ("),
    ("/[ab/", 1, "[ is never closed"),
    ("/ab**/", 3, "bad repetition operator"),
    ("/x{2000}/", 2, "invalid repetition size"),
    ("/[z-a]/", 2, "invalid character class range"),
])
def test_a_pattern_re2_refuses_is_refused_with_its_reason_and_position(pattern, position, says):
    refused = refusal(pattern)
    assert refused.position == position
    assert says in str(refused)
    assert f"at character {position + 1}" in str(refused)
    assert pattern in str(refused)


def test_an_unbalanced_paren_inside_a_class_or_escaped_is_not_the_one_blamed():
    assert refusal("/[)]\\)a)/").position == 7


@pytest.mark.parametrize(("pattern", "says"), [
    ("//", "empty regular expression"), ("   ", "empty"), ("", "empty"), ("/abc", "does not end with one"),
    ("a\x00b", "not text"), ("\ud800", "not text")])
def test_an_empty_or_half_written_pattern_is_refused(pattern, says):
    assert says in str(refusal(pattern))


def test_a_pattern_longer_than_the_setting_is_refused():
    settings = Settings(rule_pattern_max=10)
    check_rule(rule(RuleMatch(RuleField.TITLE, "x" * 10)), settings)
    refused = refusal("x" * 11, settings=settings)
    assert "at most 10 characters" in str(refused)


@pytest.mark.parametrize(("field", "pattern", "ok"), [
    (RuleField.AGE, "7", True), (RuleField.AGE, "0.5", True), (RuleField.AGE, "0", False),
    (RuleField.AGE, "-1", False), (RuleField.AGE, "seven", False), (RuleField.AGE, "nan", False),
    (RuleField.AGE, "inf", False), (RuleField.AGE, "1e9", False),
    (RuleField.SCORE, "0.7", True), (RuleField.SCORE, "0", True), (RuleField.SCORE, "1", True),
    (RuleField.SCORE, "1.5", False), (RuleField.SCORE, "high", False)])
def test_age_takes_days_and_score_a_number_from_0_to_1(field, pattern, ok):
    if ok:
        check_rule(rule(RuleMatch(field, pattern)), SETTINGS)
    else:
        assert refusal(pattern, field).position == 0


def test_a_rule_needs_a_match():
    with pytest.raises(RuleError, match="at least one match"):
        check_rule(Rule("r1", RuleAction.BLOCK, ()), SETTINGS)


@pytest.mark.parametrize(("action", "tag", "ok"), [
    (RuleAction.TAG, "security", True), (RuleAction.TAG, "two words", True), (RuleAction.TAG, None, False),
    (RuleAction.TAG, "", False), (RuleAction.TAG, " x", False), (RuleAction.TAG, "x" * 65, False),
    (RuleAction.TAG, "a\nb", False), (RuleAction.BLOCK, "security", False), (RuleAction.KEEP, None, True)])
def test_a_tag_rule_has_a_tag_and_only_it(action, tag, ok):
    if ok:
        check_rule(rule(action=action, tag=tag), SETTINGS)
    else:
        with pytest.raises(RuleError, match="tag"):
            check_rule(rule(action=action, tag=tag), SETTINGS)


@pytest.mark.parametrize(("scope", "ok"), [
    ("global", True), ("collection:news", True), ("source:0123456789ab", True), ("collection:", False),
    ("collection:News", False), ("source:", False), ("source:a b", False), ("everything", False),
    ("Global", False), ("collection:a/b", False)])
def test_the_scope_is_global_a_collection_or_a_source(scope, ok):
    if ok:
        check_rule(rule(scope=scope), SETTINGS)
    else:
        with pytest.raises(RuleError, match="scope"):
            check_rule(rule(scope=scope), SETTINGS)


@pytest.mark.parametrize(("name", "ok"), [("cves", True), ("rust-news_2", True), ("CVEs", False),
                                          ("-x", False), ("a/b", False), ("x" * 65, False), ("", False)])
def test_a_set_is_named_like_a_collection(name, ok):
    if ok:
        check_rule(rule(rule_set=name), SETTINGS)
    else:
        with pytest.raises(RuleError, match="set's name"):
            check_rule(rule(rule_set=name), SETTINGS)


def test_the_book_holds_at_most_the_setting_and_no_two_rules_of_one_id():
    settings = Settings(rules_max=3)
    check_book([rule(rule_id=f"r{n}") for n in range(3)], settings)
    with pytest.raises(RuleError, match="at most 3 rules"):
        check_book([rule(rule_id=f"r{n}") for n in range(4)], settings)
    with pytest.raises(RuleError, match="two rules"):
        check_book([rule(rule_id="a"), rule(rule_id="a")], settings)
    with pytest.raises(RuleError, match="never closed"):
        check_book([rule(rule_id="a"), rule(RuleMatch(RuleField.TITLE, "/(/"), rule_id="b")], settings)

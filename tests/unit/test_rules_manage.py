"""What `starfeed rules` and /api/v1/rules say of a rule, without a stack: its id, the command
that makes it (pasted back, the same rule), and which match a refusal is about."""

import shlex
from dataclasses import replace

import pytest

from starfeed.cli import _parser
from starfeed.cli.rules import drafted
from starfeed.model import RuleAction, RuleField, RuleMatch
from starfeed.rules import manage
from starfeed.rules.grammar import RuleError, check_rule
from starfeed.settings import Settings

RULES = [
    manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "sponsored")]),
    manage.draft(RuleAction.KEEP, [RuleMatch(RuleField.TEXT, "python"), RuleMatch(RuleField.TEXT, "rust")],
                 any_match=True, scope="collection:news"),
    manage.draft(RuleAction.TAG, [RuleMatch(RuleField.TEXT, "/CVE-\\d{4}-\\d+/"),
                                  RuleMatch(RuleField.AUTHOR, "it's a bot", negated=True)],
                 tag="security", rule_set="cves"),
    manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.AGE, "30", negated=True),
                                    RuleMatch(RuleField.SCORE, "0.8"), RuleMatch(RuleField.HOST, "ads.example.org")],
                 scope="source:3f2a9c1d7b6e"),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.rule_id)
def test_the_command_a_rule_shows_makes_the_same_rule(rule):
    args = _parser().parse_args(["rules", "add", *shlex.split(manage.command_of(rule))])
    assert drafted(args) == rule
    check_rule(rule, Settings())


def test_a_rule_s_id_is_what_it_says():
    rule = RULES[0]
    assert manage.rule_id_of(rule) == rule.rule_id and len(rule.rule_id) == manage.RULE_ID_LENGTH
    assert manage.rule_id_of(replace(rule, rule_id="x", created_at="2026-11-28T03:00:00Z")) == rule.rule_id
    assert len({r.rule_id for r in RULES}) == len(RULES)
    negated = manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "sponsored", negated=True)])
    assert negated.rule_id != rule.rule_id


def test_a_refusal_names_the_match_at_fault_or_none():
    settings = Settings()
    rule = manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "fine"), RuleMatch(RuleField.TEXT, "/a(?=b)/")])
    with pytest.raises(RuleError) as refused:
        check_rule(rule, settings)
    assert manage.faulty_match(rule, refused.value, settings) == rule.matches[1]
    untagged = manage.draft(RuleAction.TAG, [RuleMatch(RuleField.TITLE, "fine")])
    with pytest.raises(RuleError) as refused:
        check_rule(untagged, settings)
    assert manage.faulty_match(untagged, refused.value, settings) is None

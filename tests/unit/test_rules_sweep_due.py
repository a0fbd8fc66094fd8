"""When the rules' sweep judges stored entries again (rules/sweep.py), and how a followed
account's stars and their copies are cut into transactions (store/entries.py)."""

from starfeed.model import Entry, Rule, RuleAction, RuleField, RuleMatch, RuleSweep
from starfeed.parse.normalize import rfc3339
from starfeed.rules.sweep import DAY, due
from starfeed.store.entries import TRANSACTION_ITEMS, _transactions

NOW = 1_800_000_000.0
ON_TITLE = Rule("t", RuleAction.BLOCK, (RuleMatch(RuleField.TITLE, "ad"),))
ON_AGE = Rule("a", RuleAction.BLOCK, (RuleMatch(RuleField.AGE, "30"),))
ENDED = RuleSweep(version=3, done=True, finished_at=rfc3339(NOW - DAY + 60))


def test_a_sweep_is_due_when_the_rules_changed_or_it_is_not_done():
    assert not due(RuleSweep(), [], 0, NOW)  # never any rule
    assert due(RuleSweep(), [ON_TITLE], 1, NOW)
    assert not due(ENDED, [ON_TITLE], 3, NOW)
    assert due(ENDED, [ON_TITLE], 4, NOW)
    assert due(RuleSweep(version=3, done=False, cursor="{}"), [ON_TITLE], 3, NOW)


def test_rules_on_age_sweep_again_a_day_after_the_last_sweep_ended():
    assert not due(ENDED, [ON_TITLE, ON_AGE], 3, NOW)
    assert due(ENDED, [ON_TITLE, ON_AGE], 3, NOW + 60)
    assert not due(ENDED, [ON_TITLE], 3, NOW + 7 * DAY)


def test_stars_are_cut_so_each_transaction_holds_its_copies():
    def star(n: int, sets: int) -> Entry:
        return Entry(entry_uid=f"s{n}", feed_id="f", rule_sets=[f"set{k}" for k in range(sets)])

    plain = [star(n, 0) for n in range(120)]
    assert [len(c) for c in _transactions(plain, 1)] == [49, 49, 22]  # 1 + 49 × 2 = 99 items
    mixed = [star(n, n % 3) for n in range(60)]
    chunks = list(_transactions(mixed, 2))
    assert [e for c in chunks for e in c] == mixed
    for chunk in chunks:
        assert 1 + sum(3 + len(e.rule_sets) for e in chunk) <= TRANSACTION_ITEMS
    assert list(_transactions([], 4)) == []

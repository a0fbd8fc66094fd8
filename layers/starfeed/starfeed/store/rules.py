"""The rules (model.Rule) and their re-evaluation's progress (model.RuleSweep): two items of the
stats table, beside the pace. The rules are one item, read whole (one read unit for a few rules)
and written with its version as the condition, so two changes at once cannot lose one."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, fields

from starfeed.model import Rule, RuleAction, RuleField, RuleMatch, RuleSweep
from starfeed.settings import Settings

log = logging.getLogger(__name__)
RULES_KEY = "rules"  # the items' keys in the stats table, whose other items are days
SWEEP_KEY = "rules-sweep"


def _stored(rule: Rule) -> dict:
    return asdict(rule)


def _rule_of(stored: object) -> Rule | None:
    """A stored rule; None for one edited by hand into what is no rule (rules/grammar.py checks
    the rest, when the book is compiled)."""
    try:
        matches = tuple(RuleMatch(RuleField(m["field"]), m["pattern"], bool(m.get("negated")))
                        for m in stored["matches"])
        known = {f.name for f in fields(Rule)} - {"action", "matches"}
        return Rule(action=RuleAction(stored["action"]), matches=matches,
                    **{k: v for k, v in stored.items() if k in known})
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


class Rules:
    def __init__(self, dynamodb, settings: Settings):
        self._db, self._table = dynamodb, settings.stats_table

    def book(self, consistent: bool = False) -> tuple[list[Rule], int]:
        """Every rule, and the version of the set (0: none was ever saved)."""
        item = self._db.get_item(TableName=self._table, Key={"day": {"S": RULES_KEY}},
                                 ConsistentRead=consistent).get("Item")
        if not item:
            return [], 0
        version = int(item["version"]["N"])  # written by save() alone: a save's condition
        try:
            stored = json.loads(item["rules"]["S"])
        except (KeyError, TypeError, ValueError):
            stored = None
        stored = stored if isinstance(stored, list) else [None]
        rules = [rule for rule in map(_rule_of, stored) if rule is not None]
        if len(rules) < len(stored):
            # Every fetch reads the book: one rule edited by hand must not stop them all.
            log.error("rules: %d stored rules could not be read (edited by hand?) and judge nothing: "
                      "`starfeed rules list` shows what is left", len(stored) - len(rules))
        return rules, version

    def save(self, rules: list[Rule], version: int, changed_at: str) -> bool:
        """Store the rules as version + 1, unless they changed since `version` was read (False)."""
        condition, values = "attribute_not_exists(version)", {}
        if version:
            condition, values = "version = :version", {":version": {"N": str(version)}}
        try:
            self._db.update_item(
                TableName=self._table, Key={"day": {"S": RULES_KEY}},
                UpdateExpression="SET #rules = :rules, version = :next, changed_at = :at",
                ConditionExpression=condition, ExpressionAttributeNames={"#rules": "rules"},
                ExpressionAttributeValues={**values, ":rules": {"S": json.dumps([_stored(r) for r in rules])},
                                           ":next": {"N": str(version + 1)}, ":at": {"S": changed_at}})
        except self._db.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def rule_sets(self) -> tuple[str, ...]:
        """The named rule sets the rules make, sorted: each is a feed, "r/SET/feed" (docs/design.md#rule-sets)."""
        rules, _ = self.book()
        return tuple(sorted({r.rule_set for r in rules if r.rule_set}))

    def sweep(self) -> RuleSweep:
        """Where the re-evaluation of stored entries stands; a finished one of version 0 before any."""
        item = self._db.get_item(TableName=self._table, Key={"day": {"S": SWEEP_KEY}},
                                 ConsistentRead=True).get("Item")
        if not item:
            return RuleSweep()
        state = json.loads(item["state"]["S"])
        return RuleSweep(**{f.name: state[f.name] for f in fields(RuleSweep) if f.name in state})

    def save_sweep(self, sweep: RuleSweep) -> None:
        self._db.put_item(TableName=self._table, Item={"day": {"S": SWEEP_KEY},
                                                       "state": {"S": json.dumps(asdict(sweep))}})

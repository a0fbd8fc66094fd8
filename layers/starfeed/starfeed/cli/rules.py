"""starfeed rules add | test | list | remove: what sources bring, blocked, kept or tagged at every
scope, and named sets of rules served as feeds of their own (docs/design.md#rules)."""

from __future__ import annotations

import argparse
import json
import textwrap
import time

from starfeed.cli.common import CliError, clip, connect, count
from starfeed.model import Rule, RuleAction, RuleField, RuleMatch, Verdict
from starfeed.rules import manage
from starfeed.rules.grammar import RuleError, check_rule
from starfeed.settings import Settings

# The fields a pattern of words or a /regular expression/ is matched against, with their help.
TEXT_FIELDS = {
    RuleField.TITLE: "the title",
    RuleField.TEXT: "the summary and the content, as text",
    RuleField.AUTHOR: "the authors",
    RuleField.LINK: "the entry's URL",
    RuleField.HOST: "its link's host",
    RuleField.CATEGORY: "the categories",
    RuleField.SOURCE: "the source's id, title or URL",
}
DEFAULT_LAST = 20


class _Match(argparse.Action):
    """Each MATCH option adds one condition to args.matches, in the order given."""

    def __init__(self, *args, field: RuleField, negated: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.field, self.negated = field, negated

    def __call__(self, parser, namespace, value, option_string=None):
        namespace.matches = [*(namespace.matches or []), RuleMatch(self.field, value, self.negated)]


def add_commands(commands) -> None:
    rules = commands.add_parser(
        "rules", help="block, keep or tag entries at every scope; named sets of rules served as feeds",
        description="Rules judge the entries sources bring: block leaves an entry out of every served feed "
        "(it stays stored), keep shows only what it matches in its scope, tag adds a category. A narrower "
        "scope (a source, then a collection) makes an exception to a wider one.").add_subparsers(
        dest="verb", required=True)
    add = rules.add_parser("add", help="add a rule: judged at the next fetch, and stored entries at the next "
                           "scheduler run", description="Add a rule. New entries are judged as they are "
                           "fetched; the stored ones again from the next scheduler run, in pages "
                           "(`starfeed rules list` shows how far).")
    _rule_arguments(add)
    add.set_defaults(action=_add)
    trying = rules.add_parser("test", help="try a rule on its scope's last entries: which it matches and why, "
                              "and what they would be shown as (nothing is saved)")
    _rule_arguments(trying)
    trying.add_argument("--last", type=count, default=DEFAULT_LAST, metavar="N",
                        help=f"the scope's newest N entries (default {DEFAULT_LAST}, at most {manage.TRIAL_MAX:,})")
    trying.add_argument("--json", action="store_true", help="every entry tried, as one JSON document")
    trying.set_defaults(action=_test)
    listing = rules.add_parser("list", help="every rule, what it holds back, and how far the stored entries "
                               "are judged by the current rules")
    listing.add_argument("--json", action="store_true", help="every field, as one JSON document (the REST API's)")
    listing.set_defaults(action=_list)
    remove = rules.add_parser("remove", help="remove a rule: what it held back comes back at the next "
                              "scheduler run")
    remove.add_argument("id")
    remove.set_defaults(action=_remove)


def _rule_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule_action", metavar="ACTION", choices=[str(a) for a in RuleAction],
                        help="block (left out of the served feeds), keep (only what keep rules match is shown "
                             "in their scope) or tag (adds TAG to the entry's categories)")
    parser.add_argument("tag", metavar="TAG", nargs="?", help="the category a tag rule adds")
    matches = parser.add_argument_group(
        "MATCH (one or more; all must hold, or any with --any)",
        "PATTERN is words, matched case-insensitively as whole words (a phrase as consecutive words), or a "
        "regular expression between slashes, such as '/CVE-\\d+/' (case-sensitive unless it starts with (?i); "
        "RE2's syntax: no look-around or back-references). --not-FIELD holds when the pattern does not match.")
    for field, what in TEXT_FIELDS.items():
        matches.add_argument(f"--{field}", action=_Match, field=field, metavar="PATTERN", help=what)
    matches.add_argument("--older-than", action=_Match, field=RuleField.AGE, metavar="DAYS",
                         help="entries older than DAYS, by their date as feeds sort them")
    matches.add_argument("--score-above", action=_Match, field=RuleField.SCORE, metavar="X",
                         help="entries the deframer scored above X (0 to 1): its max_score as a rule")
    for field in RuleField:  # --not-title, …, --not-older-than: what the group's description says
        matches.add_argument(manage.option_of(RuleMatch(field, "", negated=True)), action=_Match, field=field,
                             negated=True, help=argparse.SUPPRESS)
    parser.add_argument("--any", action="store_true", help="any one MATCH suffices")
    parser.add_argument("--scope", default="global", metavar="SCOPE",
                        help="whose entries it judges: global (default), collection:NAME or source:ID")
    parser.add_argument("--name", metavar="SET", help="put it in a named set, served as the feed /r/SET/feed "
                        "(its rules judge nothing else)")
    parser.set_defaults(matches=None)


def drafted(args: argparse.Namespace) -> Rule:
    """The rule the arguments give, not checked yet."""
    action = RuleAction(args.rule_action)
    if not args.matches:
        raise CliError("a rule needs at least one MATCH: --title, --text, --author, --link, --host, --category, "
                       "--source (or --not-FIELD), --older-than or --score-above")
    if args.tag is not None and action != RuleAction.TAG:
        raise CliError(f"{args.tag!r}: only a tag rule takes a TAG (`rules add tag TAG --title ...`); a "
                       "PATTERN follows its option, as in --title PATTERN")
    return manage.draft(action, args.matches, tag=args.tag, any_match=args.any, scope=args.scope,
                        rule_set=args.name)


def _rule_of(args, settings: Settings) -> Rule:
    """The rule the arguments give, checked; a refusal names the option and points at the error."""
    rule = drafted(args)
    try:
        check_rule(rule, settings)
    except RuleError as exc:
        raise CliError(refusal(rule, exc, settings)) from None
    return rule


def refusal(rule: Rule, error: RuleError, settings: Settings) -> str:
    """A refused rule in words; when a pattern is at fault, the pattern with a caret under the error."""
    match = manage.faulty_match(rule, error, settings)
    if match is None:
        return f"rule refused: {error}"
    option = manage.option_of(match)
    text = f"rule refused: {option}: {error}"
    if error.position is not None:
        text += f"\n  {option} {match.pattern}\n  {' ' * (len(option) + 1 + error.position)}^"
    return text


def _add(args) -> None:
    storage = connect(args.stack)
    rule = _rule_of(args, storage.settings)
    try:
        added = manage.add(storage, rule, time.time())
    except RuleError as exc:
        raise CliError(refusal(rule, exc, storage.settings)) from None
    except manage.Refused as exc:
        raise CliError(str(exc)) from None
    if added.existed:
        print(f"already there: {added.rule.rule_id} {manage.command_of(added.rule)}")
        return
    print(f"added {added.rule.rule_id}: {manage.command_of(added.rule)}")
    print(f"rules version {added.version}: new entries are judged as they are fetched, the stored ones again "
          "from the next scheduler run (`starfeed rules list` shows how far)")
    if added.rule.rule_set:
        print(f"its set's feed: {storage.settings.public_url.rstrip('/')}/r/{added.rule.rule_set}/feed")


def _test(args) -> None:
    storage = connect(args.stack)
    rule = _rule_of(args, storage.settings)
    try:
        tried = manage.trial(storage, rule, args.last, time.time())
    except RuleError as exc:
        raise CliError(refusal(rule, exc, storage.settings)) from None
    except manage.Refused as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps({"rule": manage.rule_document(rule), "entries": [manage.tried_document(t) for t in tried]},
                         indent=1, ensure_ascii=False))
        return
    scope = {"global": "every source"}.get(rule.scope, rule.scope)
    matched = sum(1 for t in tried if t.matched)
    print(f"{rule.rule_id}: {manage.command_of(rule)} (not saved)")
    print(f"tried on the last {len(tried)} entries of {scope}: {matched} matched, "
          f"{sum(1 for t in tried if t.changed)} would be shown otherwise")
    if not tried:
        return
    header = ("MATCH", "NOW", "WITH IT", "DATE", "SOURCE", "TITLE")
    rows = [("yes" if t.matched else "no", verdict_words(t.before), verdict_words(t.after),
             t.entry.sort_time[:10], clip(t.source, 24), t.entry.title or t.entry.canonical_link or t.entry.entry_uid)
            for t in tried]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for row, t in zip([header, *rows], [None, *tried]):
        print("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), clip(row[5], 60)]).rstrip())
        for reason in t.reasons if t else []:
            print(textwrap.indent(reason.why, " " * (widths[0] + 2)))


def verdict_words(verdict: Verdict) -> str:
    """shown, or blocked by which rule, and the tags and sets a verdict adds."""
    words = [f"blocked ({verdict.blocked_by})" if verdict.blocked_by else "shown"]
    if verdict.tags:
        words.append("tags " + ",".join(verdict.tags))
    words += [f"in r/{name}" for name in verdict.rule_sets]
    return "; ".join(words)


def _list(args) -> None:
    listed = manage.listing(connect(args.stack))
    if args.json:
        print(json.dumps(manage.listing_document(listed), indent=1, ensure_ascii=False))
        return
    header = ("ID", "BLOCKED", "RULE")
    rows = [(r.rule_id, f"{listed.blocked[r.rule_id]:,}" if r.action != RuleAction.TAG else "-",
             manage.command_of(r)) for r in listed.rules]
    if rows:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(2)]
        for row in [header, *rows]:
            print(f"{row[0].ljust(widths[0])}  {row[1].rjust(widths[1])}  {row[2]}")
    else:
        print("(no rules: add one with `starfeed rules add block --title WORDS`)")
    stale = sum(n for rule_id, n in listed.blocked.items() if rule_id not in {r.rule_id for r in listed.rules})
    if stale:
        print(f"{stale:,} entries are still held back by rules removed since: the re-evaluation brings them back")
    print(manage.sweep_words(listed.version, listed.sweep))


def _remove(args) -> None:
    try:
        rule, version = manage.remove(connect(args.stack), args.id, time.time())
    except manage.Refused as exc:
        raise CliError(str(exc)) from None
    print(f"removed {rule.rule_id}: {manage.command_of(rule)}")
    undone = ("the entries it tagged lose its tag" if rule.action == RuleAction.TAG and not rule.rule_set
              else f"its set's feed changes (r/{rule.rule_set})" if rule.rule_set
              else "what it held back comes back")
    print(f"rules version {version}: {undone} from the next scheduler run (`starfeed rules list` shows how far)")

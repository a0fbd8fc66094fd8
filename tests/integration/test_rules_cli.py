"""The rules as a person manages them (docs/design.md#rules), against the local stack: `starfeed
rules add | test | list | remove`, a refused pattern shown with where it fails, the limits, what
the rules hold back in `source list`, the REST API agreeing with the CLI, and the rule book's
storage (its version as the condition of every change)."""

import json
import time
from dataclasses import replace

from starfeed.model import RuleAction, RuleField, RuleMatch, RuleSweep
from starfeed.rules import manage
from starfeed.rules.grammar import RuleError
from starfeed.store import Storage

from conftest import api_call
from conftest import run_cli as run
from origin import Reply, rss


def _subscribed(stack, capsys, origin, path: str, *items: tuple[str, str], collection: str | None = None) -> str:
    """A source with these entries stored (newest first); its id."""
    url = origin.serve(path, Reply(200, rss(*items, title="Deals and news")))
    code, out, err = run(capsys, "source", "add", url, "--backfill", str(len(items)),
                         *(["--collection", collection] if collection else []))
    assert code == 0, err
    stack.run_cycle()
    return out.split()[1]


def _block(storage, source_id: str, entry_uid: str, rule_id: str) -> None:
    """Mark a stored entry as the rules' re-evaluation would."""
    E = storage.records.Entry
    E.get(source_id, entry_uid).update(actions=[E.blocked_by.set(rule_id)])


def test_the_rule_book_round_trips_and_a_stale_version_is_refused(storage):
    assert storage.rules.book() == ([], 0)
    rule = manage.draft(RuleAction.TAG, [RuleMatch(RuleField.TEXT, "/CVE-\\d+/"),
                                         RuleMatch(RuleField.AUTHOR, "bot", negated=True)],
                        tag="security", any_match=True, scope="collection:news", rule_set="cves")
    rule = replace(rule, created_at="2026-11-28T03:00:00Z")
    assert storage.rules.save([rule], 0, "2026-11-28T03:00:00Z")
    assert storage.rules.book(consistent=True) == ([rule], 1)
    assert not storage.rules.save([], 0, "2026-11-28T03:00:01Z")  # written meanwhile: the change is refused
    assert storage.rules.save([], 1, "2026-11-28T03:00:01Z")
    assert storage.rules.book(consistent=True) == ([], 2)
    sweep = RuleSweep(version=2, cursor='{"feed_id": "x"}', done=False, judged=200, changed=3,
                      started_at="2026-11-28T03:00:02Z")
    storage.rules.save_sweep(sweep)
    assert storage.rules.sweep() == sweep


def test_a_rule_edited_by_hand_into_no_rule_is_left_out_and_the_others_still_judge(storage):
    good = manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "sponsored")])
    assert storage.rules.save([good], 0, "2026-11-28T03:00:00Z")
    db, table = storage.client("dynamodb"), storage.settings.stats_table
    item = db.get_item(TableName=table, Key={"day": {"S": "rules"}}, ConsistentRead=True)["Item"]
    stored = json.loads(item["rules"]["S"])
    for broken in ({"action": "explode", "matches": []}, 7, {"action": "block"}):
        db.put_item(TableName=table, Item={**item, "rules": {"S": json.dumps([broken, *stored])}})
        assert storage.rules.book(consistent=True) == ([good], 1), broken
    db.put_item(TableName=table, Item={**item, "rules": {"S": "not json"}})
    assert storage.rules.book(consistent=True) == ([], 1)  # and the next save replaces it


def test_a_change_made_meanwhile_is_kept_and_the_add_retried(storage, monkeypatch):
    """Two changes at once: the one whose condition fails reads the rules again and adds its own."""
    first = manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "sponsored")])
    second = manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "hot deals")])
    save, raced = storage.rules.save, []

    def racing_save(rules, version, changed_at):
        if not raced:  # another writer gets in first
            raced.append(save([first], version, changed_at))
        return save(rules, version, changed_at)

    monkeypatch.setattr(storage.rules, "save", racing_save)
    added = manage.add(storage, second, time.time())
    assert raced == [True] and added.version == 2
    assert [r.rule_id for r in storage.rules.book(consistent=True)[0]] == [first.rule_id, second.rule_id]


def test_add_test_list_and_remove_from_the_command_line(stack, storage, capsys, origin):
    source_id = _subscribed(stack, capsys, origin, "/rules-cli.xml", ("d1", "Sponsored: a hot deal"),
                            ("d2", "Python 3.14 released"), ("d3", "Unsponsored thoughts"))
    # Tried first: the draft's matches with the reason, what they would be shown as; nothing saved.
    code, out, err = run(capsys, "rules", "test", "block", "--title", "sponsored", "--last", "10")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == "tried on the last 3 entries of every source: 1 matched, 1 would be shown otherwise"
    row = next(line for line in lines if "Sponsored: a hot deal" in line)
    draft_id = manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "sponsored")]).rule_id
    assert row.split()[:4] == ["yes", "shown", "blocked", f"({draft_id})"]
    assert "sponsored" in lines[lines.index(row) + 1].lower()  # the reason, below its entry
    assert next(line for line in lines if "Unsponsored" in line).split()[:3] == ["no", "shown", "shown"]
    tried = json.loads(run(capsys, "rules", "test", "block", "--title", "sponsored", "--json")[1])
    assert [t["matches"] for t in tried["entries"]] == [True, False, False]
    assert tried["entries"][0]["with_rule"]["blocked_by"] == tried["rule"]["rule_id"]
    # A keep rule tried alone is an allowlist: what it does not match would be left out, and says why.
    out = run(capsys, "rules", "test", "keep", "--title", "python", "--scope", f"source:{source_id}")[1]
    assert out.splitlines()[1] == (f"tried on the last 3 entries of source:{source_id}: 1 matched, 2 would be "
                                   "shown otherwise")
    unmatched = next(line for line in out.splitlines() if "Unsponsored" in line)
    assert unmatched.split()[:3] == ["no", "shown", "blocked"]
    assert "matches none of the keep rules" in out.splitlines()[out.splitlines().index(unmatched) + 1]
    assert storage.rules.book() == ([], 0)
    assert "(no rules" in run(capsys, "rules", "list")[1]

    code, out, err = run(capsys, "rules", "add", "block", "--title", "sponsored")
    assert code == 0, err
    rule_id = out.split()[1].rstrip(":")
    assert out.splitlines()[0] == f"added {rule_id}: block --title sponsored"
    assert run(capsys, "rules", "add", "block", "--title", "sponsored")[1].startswith(f"already there: {rule_id}")
    code, out, _ = run(capsys, "rules", "add", "tag", "python", "--title", "python", "--scope", f"source:{source_id}")
    assert code == 0
    tag_id = out.split()[1].rstrip(":")
    out = run(capsys, "rules", "list")[1]
    assert out.splitlines()[0].split() == ["ID", "BLOCKED", "RULE"]
    assert out.splitlines()[1].split() == [rule_id, "0", "block", "--title", "sponsored"]
    assert out.splitlines()[2].split() == [tag_id, "-", "tag", "python", "--title", "python", "--scope",
                                           f"source:{source_id}"]
    assert "version 2 of the rules: the stored entries are judged again from the next scheduler run" in out

    # What a rule holds back, once the re-evaluation has marked it: counted per rule and per source.
    _block(storage, source_id, "d1", rule_id)
    assert run(capsys, "rules", "list")[1].splitlines()[1].split()[:2] == [rule_id, "1"]
    listed = json.loads(run(capsys, "rules", "list", "--json")[1])
    assert [(r["rule_id"], r["blocked"], r["command"]) for r in listed["rules"]] == [
        (rule_id, 1, "block --title sponsored"), (tag_id, 0, f"tag python --title python --scope source:{source_id}")]
    assert listed["version"] == 2 and listed["sweep"]["in_progress"] is True
    sources = {s["source_id"]: s for s in json.loads(run(capsys, "source", "list", "--json")[1])}
    assert sources[source_id]["blocked"] == 1
    assert "1 stored entry held back by rules" in run(capsys, "source", "list")[1]
    out = run(capsys, "source", "list", "--blocked")[1]
    assert out.splitlines()[0] == f"{source_id}  Deals and news: 1 blocked"
    assert out.splitlines()[1].split()[1:] == [rule_id, "Sponsored:", "a", "hot", "deal"]
    assert "rules: 2; version 2 of the rules" in run(capsys, "status")[1]

    code, out, _ = run(capsys, "rules", "remove", rule_id)
    assert code == 0 and out.startswith(f"removed {rule_id}: block --title sponsored")
    code, _, err = run(capsys, "rules", "remove", rule_id)
    assert code == 1 and f"no rule with id {rule_id}" in err
    assert [r.rule_id for r in storage.rules.book()[0]] == [tag_id]


def test_a_refused_rule_says_why_and_where(stack, capsys):
    code, out, err = run(capsys, "rules", "add", "block", "--title", "/sponsor(?=ed)/")
    assert code == 1 and out == ""
    first, shown, caret = err.splitlines()
    assert first.startswith("starfeed: rule refused: --title: /sponsor(?=ed)/") and "look-around" in first
    assert shown == "  --title /sponsor(?=ed)/"
    assert caret.index("^") == shown.index("(?=")
    code, _, err = run(capsys, "rules", "test", "block", "--text", "/(a|b/")
    assert code == 1 and "rule refused: --text:" in err and err.splitlines()[2].index("^") == len("  --text /(a|b")
    assert "back-references" in run(capsys, "rules", "add", "block", "--title", "/(a)\\1/")[2]
    for argv, words in ((["tag", "--title", "x"], "a tag rule adds a tag"),
                        (["block", "sponsored", "--title", "x"], "only a tag rule takes a TAG"),
                        (["block"], "a rule needs at least one MATCH"),
                        (["block", "--older-than", "soon"], "age takes a number of days"),
                        (["block", "--title", "x", "--scope", "everywhere"], "the scope is global"),
                        (["block", "--title", "x", "--scope", "source:nosuch"], "no source with id nosuch")):
        code, _, err = run(capsys, "rules", "add", *argv)
        assert code in (1, 2) and words in err, (argv, err)
    assert "(no rules" in run(capsys, "rules", "list")[1]


def test_the_limits_hold(stack, storage, capsys):
    code, _, err = run(capsys, "rules", "test", "block", "--title", "x", "--last", "5000")
    assert code == 1 and "a rule is tried on 1 to 1,000 entries, not 5,000" in err
    long = "w" * (storage.settings.rule_pattern_max + 1)
    code, _, err = run(capsys, "rules", "add", "block", "--title", long)
    assert code == 1 and f"at most {storage.settings.rule_pattern_max} characters" in err
    few = Storage(replace(storage.settings, rules_max=2))
    for word in ("one", "two"):
        manage.add(few, manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, word)]), time.time())
    try:
        manage.add(few, manage.draft(RuleAction.BLOCK, [RuleMatch(RuleField.TITLE, "three")]), time.time())
        raise AssertionError("a third rule was saved")
    except RuleError as exc:
        assert "at most 2 rules" in str(exc)
    assert len(storage.rules.book()[0]) == 2


def test_the_rest_api_and_the_cli_agree(stack, storage, capsys, origin):
    source_id = _subscribed(stack, capsys, origin, "/rules-rest.xml", ("r1", "CVE-2026-1234 fixed"))
    body = {"action": "tag", "tag": "security", "matches": [{"field": "text", "pattern": "/CVE-\\d+/"}],
            "rule_set": "cves"}
    added = api_call(stack, "POST", "/api/v1/rules", body)
    assert added["statusCode"] == 201, added["body"]
    rule = json.loads(added["body"])["rule"]
    assert added["headers"]["Location"].endswith(f"/api/v1/rules/{rule['rule_id']}")
    assert rule["command"] == "tag security --text '/CVE-\\d+/' --name cves"
    # The same rule from the CLI is the same rule: found, not added twice.
    out = run(capsys, "rules", "add", "tag", "security", "--text", "/CVE-\\d+/", "--name", "cves")[1]
    assert out.startswith(f"already there: {rule['rule_id']}")
    assert api_call(stack, "POST", "/api/v1/rules", body)["statusCode"] == 200
    run(capsys, "rules", "add", "block", "--host", "ads.example.org", "--scope", f"source:{source_id}")
    listed = json.loads(api_call(stack, "GET", "/api/v1/rules")["body"])
    assert listed == json.loads(run(capsys, "rules", "list", "--json")[1])
    assert [r["command"] for r in listed["rules"]][1] == f"block --host ads.example.org --scope source:{source_id}"

    refused = api_call(stack, "POST", "/api/v1/rules", {"action": "block", "matches": [
        {"field": "title", "pattern": "fine"}, {"field": "title", "pattern": "/sponsor(?=ed)/"}]})
    assert refused["statusCode"] == 422
    problem = json.loads(refused["body"])
    assert "look-around" in problem["detail"]
    assert problem["errors"] == [{"in": "body.matches[1].pattern", "detail": problem["detail"].removeprefix(
        "rule refused: "), "position": len("/sponsor")}]
    missing = api_call(stack, "POST", "/api/v1/rules", {"action": "block", "scope": "source:nosuch",
                                                       "matches": [{"field": "title", "pattern": "x"}]})
    assert missing["statusCode"] == 404 and "no source with id nosuch" in missing["body"]

    removed = api_call(stack, "DELETE", f"/api/v1/rules/{rule['rule_id']}")
    assert removed["statusCode"] == 200 and json.loads(removed["body"])["version"] == 3
    assert api_call(stack, "DELETE", f"/api/v1/rules/{rule['rule_id']}")["statusCode"] == 404
    assert rule["rule_id"] not in run(capsys, "rules", "list")[1]

"""Rules applied where entries are stored (docs/design.md#rules): new and rewritten entries judged
before they are written, stored entries judged again by the scheduler's sweep after the rules
change, an analyzed entry judged again by its score; the verdict on the entry, its collection
copies and its rule sets' copies. Writes are counted: an unchanged entry costs none, and the
sweep writes only the entries whose verdict changed."""

import json
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace

from starfeed.cli import main
from starfeed.fetch.entries import judged_new
from starfeed.fetch.job import fetch_source
from starfeed.local.aws_calls import observed
from starfeed.model import (
    Entry,
    GitHubAccount,
    Rule,
    RuleAction,
    RuleField,
    RuleMatch,
    RuleSweep,
    Source,
    rule_set_partition,
    sort_key_of,
)
from starfeed.parse.normalize import rfc3339
from starfeed.rules.sweep import run_sweep
from starfeed.sources import add_source
from starfeed.store import Storage

from origin import Reply, rss

_WRITES = {"PutItem", "UpdateItem", "DeleteItem"}


def rule(rule_id: str, action: str, *matches: tuple[str, str], **options) -> Rule:
    return Rule(rule_id, RuleAction(action), tuple(RuleMatch(RuleField(f), p) for f, p in matches), **options)


def save_rules(storage, *rules: Rule) -> None:
    """The rules saved as `starfeed rules add` saves them: the whole book, its version moved on."""
    _, version = storage.rules.book(consistent=True)
    assert storage.rules.save(list(rules), version, rfc3339(time.time()))


@contextmanager
def counted(storage):
    """DynamoDB items written, by table ("entries", "copies": the collection entries table, or the
    table's own name), and GetItems of the rules."""
    names = {storage.settings.entries_table: "entries", storage.settings.collection_entries_table: "copies"}
    calls = Counter()

    def count(service, operation, params):
        if service != "dynamodb":
            return
        if operation in _WRITES:
            calls[names.get(params["TableName"], params["TableName"])] += 1
        elif operation == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                calls[names.get(table, table)] += len(requests)
        elif operation == "TransactWriteItems":
            for item in params["TransactItems"]:
                calls[names.get(next(iter(item.values()))["TableName"], "?")] += 1
        elif operation == "GetItem" and params["Key"].get("day") == {"S": "rules"}:
            calls["rules read"] += 1

    with observed(count):
        yield calls


def stored(storage, feed_id: str, uid: str):
    return storage.analyses.entry(feed_id, uid)


def copy(storage, partition: str, entry):
    """An entry's copy in a collection's or a rule set's partition, or None."""
    C = storage.records.CollectionEntry
    return next(iter(C.query(partition, C.sort_key == sort_key_of(entry))), None)


def render_requests(stack) -> set[str]:
    """The targets asked of the renderer so far (taken off its queue)."""
    url, targets = stack.queue("RenderQueue"), set()
    while messages := stack.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        for message in messages:
            targets.update(json.loads(message["Body"])["targets"])
            stack.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return targets


def blocked_by(storage, rule_id: str) -> set[str]:
    return {key.entry_uid for key in storage.records.Entry.blocked.query(rule_id)}


def test_entries_are_judged_as_they_are_stored_and_an_unchanged_one_costs_nothing(stack, storage, origin):
    save_rules(storage, rule("ads", "block", ("title", "sponsored")),
               rule("cve", "keep", ("title", "/CVE-\\d+/"), rule_set="cves"),
               rule("sec", "tag", ("text", "security"), tag="security"))
    items = [("j1", "Sponsored: a gadget"), ("j2", "CVE-2026-1234 is fixed"), ("j3", "A security update")]
    url = origin.serve("/judged.xml", Reply(200, rss(*items)),
                       Reply(200, rss(("j2", "A fix, no CVE number"), *items[::2])),
                       Reply(200, rss(("j2", "A fix, no CVE number"), *items[::2], title="Renamed")))
    source = add_source(storage, url, time.time() - 3600, ["judged"])[0]
    render_requests(stack)

    with counted(storage) as calls:
        fetch_source(storage, source.source_id)
    assert calls["rules read"] == 1
    sponsored, cve, security = (stored(storage, source.source_id, uid) for uid in ("j1", "j2", "j3"))
    # Stored, marked: its collection copy too (the feeds read it), and the Blocked index lists it.
    assert sponsored.blocked_by == "ads" and copy(storage, "judged", sponsored).blocked_by == "ads"
    assert blocked_by(storage, "ads") == {"j1"}
    assert cve.blocked_by is None and cve.rule_sets == ["cves"] and cve.tags == []
    assert copy(storage, rule_set_partition("cves"), cve).title == "CVE-2026-1234 is fixed"
    assert security.tags == ["security"] and copy(storage, "judged", security).tags == ["security"]
    assert copy(storage, rule_set_partition("cves"), security) is None
    assert {"feed", f"s/{source.source_id}/feed", "c/judged/feed", "r/cves/feed"} <= render_requests(stack)

    # Rewritten, it is judged again: out of the set, its copy there deleted.
    fetch_source(storage, source.source_id)
    cve = stored(storage, source.source_id, "j2")
    assert cve.title == "A fix, no CVE number" and cve.rule_sets == []
    assert copy(storage, rule_set_partition("cves"), cve) is None
    assert copy(storage, "judged", cve).rule_sets == []

    # Other bytes, the same entries: nothing read of the rules, nothing written of the entries.
    with counted(storage) as calls:
        fetch_source(storage, source.source_id)
    assert storage.sources.get(source.source_id).title == "Renamed"
    assert (calls["entries"], calls["copies"], calls["rules read"]) == (0, 0, 0)


def test_a_rule_added_later_takes_effect_after_one_scheduler_run_and_its_removal_undoes_it(stack, storage, origin):
    items = [("w1", "Sponsored post"), ("w2", "News"), ("w3", "Sponsored again"), ("w4", "More news")]
    source = add_source(storage, origin.serve("/later.xml", Reply(200, rss(*items))), time.time() - 3600,
                        ["later"])[0]
    stack.run_cycle()
    assert blocked_by(storage, "ads") == set()
    save_rules(storage, rule("ads", "block", ("title", "sponsored")),
               rule("ad-set", "keep", ("title", "sponsored"), rule_set="ads"))

    with counted(storage) as calls:
        stack.tick()
    sweep = storage.rules.sweep()
    assert sweep.done and sweep.version == storage.rules.book()[1] and (sweep.judged, sweep.changed) == (4, 2)
    assert blocked_by(storage, "ads") == {"w1", "w3"}
    for uid in ("w1", "w3"):
        entry = stored(storage, source.source_id, uid)
        assert copy(storage, "later", entry).blocked_by == "ads"
        assert copy(storage, rule_set_partition("ads"), entry).rule_sets == ["ads"]
    # Only the changed entries are written: each item, its collection copy, its new set copy.
    assert (calls["entries"], calls["copies"]) == (2, 4)
    assert render_requests(stack) >= {"feed", f"s/{source.source_id}/feed", "c/later/feed", "r/ads/feed"}

    # Nothing changed since: the next run judges nothing, writes nothing.
    with counted(storage) as calls:
        stack.tick()
    assert (calls["entries"], calls["copies"]) == (0, 0) and storage.rules.sweep() == sweep

    save_rules(storage)  # every rule removed
    with counted(storage) as calls:
        stack.tick()
    assert blocked_by(storage, "ads") == set() and storage.rules.sweep().changed == 2
    for uid in ("w1", "w3"):
        entry = stored(storage, source.source_id, uid)
        assert entry.rule_sets == [] and copy(storage, "later", entry).blocked_by is None
        assert copy(storage, rule_set_partition("ads"), entry) is None
    assert (calls["entries"], calls["copies"]) == (2, 4)  # two updates, two copies deleted
    assert render_requests(stack) >= {"feed", f"s/{source.source_id}/feed", "c/later/feed", "r/ads/feed"}


def test_the_sweep_goes_a_page_at_a_time_and_goes_on_from_where_it_stopped(stack, storage, origin):
    items = [(f"p{n}", f"Paged {'sponsored ' if n % 2 else ''}post {n}") for n in range(5)]
    source = add_source(storage, origin.serve("/paged.xml", Reply(200, rss(*items))), time.time() - 3600)[0]
    fetch_source(storage, source.source_id)
    save_rules(storage, rule("ads", "block", ("title", "sponsored")))
    paged = Storage(replace(storage.settings, rules_sweep_page=2))
    runs = []
    while not runs or not runs[-1].done:
        runs.append(run_sweep(paged, time.time(), seconds=0))  # one page a run
        assert len(runs) <= 4
    assert [(r.judged, r.done) for r in runs] == [(2, False), (4, False), (5, True)]
    assert runs[-1].changed == 2 and runs[0].cursor and not runs[-1].cursor
    assert blocked_by(storage, "ads") == {"p1", "p3"}
    assert run_sweep(paged, time.time(), seconds=0) == runs[-1]  # done: nothing is read again

    # A rule on age judges by the clock: a day after the sweep ended, it starts again.
    save_rules(storage, rule("old", "block", ("age", "1")))
    done = run_sweep(storage, time.time())
    assert done.done and blocked_by(storage, "old") == set()
    tomorrow = time.time() + 2 * 86400
    assert run_sweep(storage, tomorrow).changed == 5 and blocked_by(storage, "old") == {f"p{n}" for n in range(5)}


def test_an_analyzed_entry_is_judged_again_by_its_score(stack, storage, origin):
    save_rules(storage, rule("loud", "block", ("score", "0.5")),
               rule("loud-set", "keep", ("score", "0.5"), rule_set="loud"))
    origin.serve("/robots.txt", Reply(404))
    items = [("s1", "Minister SLAMS critics in SHOCKING row!"), ("s2", "Council approves budget")]
    document = rss(*items)
    for uid in (b"s1", b"s2"):
        document = document.replace(b"https://example.org/" + uid, f"{origin.url}/gone".encode())
    source = add_source(storage, origin.serve("/scored.xml", Reply(200, document)), time.time() - 3600, ["scored"])[0]
    assert main(["source", "deframe", source.source_id, "on"]) == 0
    stack.tick()
    fetches = next(queue for queue in stack.queues if queue.queue_url == stack.queue("FetchQueue"))
    fetches.poll()  # the fetch alone: stored before it is analyzed, no rule on score holds yet
    assert stored(storage, source.source_id, "s1").blocked_by is None
    stack.drain()  # analyzed, then judged again
    loud, calm = stored(storage, source.source_id, "s1"), stored(storage, source.source_id, "s2")
    assert loud.analyzer_result["score"] > 0.5 and loud.blocked_by == "loud" and loud.rule_sets == ["loud"]
    assert copy(storage, "scored", loud).blocked_by == "loud"
    assert copy(storage, rule_set_partition("loud"), loud).analyzer_result["score"] > 0.5
    assert calm.analyzer_result["score"] <= 0.5 and calm.blocked_by is None and calm.rule_sets == []


def test_no_rules_no_sweep(stack, storage):
    with counted(storage) as calls:
        assert run_sweep(storage, time.time()) == RuleSweep()
    assert calls["rules read"] == 1 and not calls["entries"]


def test_a_fetcher_invocation_reads_the_rules_once(stack, storage, origin):
    save_rules(storage, rule("ads", "block", ("title", "sponsored")))
    sources = [add_source(storage, origin.serve(f"/batch{n}.xml", Reply(200, rss((f"b{n}", f"Sponsored {n}")))),
                          time.time() - 3600)[0] for n in range(3)]
    stack.tick()
    with counted(storage) as calls:
        invocations = next(q for q in stack.queues if q.queue_url == stack.queue("FetchQueue")).poll()
    assert invocations == 3 and calls["rules read"] == 1  # one batch of three fetches
    assert blocked_by(storage, "ads") == {f"b{n}" for n in range(3)}
    assert {stored(storage, s.source_id, f"b{n}").blocked_by for n, s in enumerate(sources)} == {"ads"}


def test_stars_and_purges_keep_the_rule_sets_copies_in_step(stack, storage):
    save_rules(storage, rule("starred", "keep", ("title", "starred"), rule_set="stars"))
    account = Source(source_id="5e7000000001", url="https://api.github.test/users/rs", kind="github-user",
                     status="ok", github=GitHubAccount(login="rs"), collections=["rs-github"], created_at=1.0)
    storage.sources.add(account)
    when = rfc3339(time.time())
    star = Entry(entry_uid="rs-star", feed_id=account.source_id, title="rs starred a/b", published=when,
                 first_seen=when, last_seen=when, canonical_link="https://github.com/a/b", content_hash="s")
    [star] = judged_new(storage, [star], account, time.time())
    storage.entries.store_stars(account, [star], None)  # with its copies, in one transaction
    assert copy(storage, "rs-github", star).rule_sets == ["stars"]
    assert copy(storage, rule_set_partition("stars"), star).title == "rs starred a/b"
    assert storage.entries.purge(account.source_id, account.collections) == 1
    assert copy(storage, "rs-github", star) is None and copy(storage, rule_set_partition("stars"), star) is None

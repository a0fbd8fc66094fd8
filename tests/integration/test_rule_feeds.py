"""What the rules' verdicts make of the served feeds (docs/design.md#rules), through the local
stack: a blocked entry stays stored and leaves every feed, page and lookup, listed by the REST API
only when asked; tags are categories in every format; a rule set is a feed of its own, negotiated,
valid in every format, attributed, listed in OPML and the index, and gone with its last rule.

The verdicts are written here as the ingest and the sweep write them (stored on the entry and its
copies, a set's entries copied into its partition): what is under test is how they are served."""

import json
import subprocess
import sys
import time
from dataclasses import replace

import feedparser
import listparser
import pytest

from starfeed.model import Rule, RuleAction, RuleField, RuleMatch, rule_set_partition
from starfeed.parse.normalize import rfc3339
from starfeed.sources import add_source
from starfeed.store.records import collection_entry_record, entry_record

from conftest import SHARED, api_call, body_of, http_get
from origin import Reply, rss
from test_selected_pages import json_feed_schemas

VALIDATOR = SHARED / "tools" / "validate-feed"
SPONSORED = Rule("r-block", RuleAction.BLOCK, (RuleMatch(RuleField.TITLE, "sponsored"),))
TAG_CVE = Rule("r-tag", RuleAction.TAG, (RuleMatch(RuleField.TITLE, r"/CVE-\d+/"),), tag="cve")
SET_CVE = Rule("r-set", RuleAction.KEEP, (RuleMatch(RuleField.TITLE, r"/CVE-\d+/"),), rule_set="cve")


def judged(storage, source, collections: list[str], verdicts: dict[str, dict]) -> None:
    """Each listed entry of the source stored again with its verdict, on its item and its copies,
    and copied into the partition of each rule set it is in."""
    records, settings = storage.records, storage.settings
    for entry in storage.entries.recent(source.source_id, 50):
        if entry.entry_uid not in verdicts:
            continue
        entry = replace(entry, **verdicts[entry.entry_uid])
        entry_record(records, entry, settings).save()
        for partition in collections + [rule_set_partition(s) for s in entry.rule_sets]:
            collection_entry_record(records, partition, entry, settings).save()


def fresh(stack, path: str, headers: dict | None = None) -> dict:
    """The api's answer past its cache window of a few seconds (what a reader gets a moment later)."""
    cache = stack.functions["ApiFunction"].module.app.feed_cache
    ttl, cache.ttl = cache.ttl, 0
    try:
        return http_get(stack, path, headers)
    finally:
        cache.ttl = ttl


def served(stack, path: str, headers: dict | None = None) -> str:
    response = fresh(stack, path, headers)
    assert response["statusCode"] == 200, (path, response)
    return body_of(response)


def validated(document: str, url: str, tmp_path) -> dict:
    path = tmp_path / url.rsplit("/", 1)[-1]
    path.write_text(document)
    done = subprocess.run([sys.executable, str(VALIDATOR), str(path), "--base", url, "--json"],
                          capture_output=True, text=True, timeout=300)
    return json.loads(done.stdout)


@pytest.fixture
def judged_sources(stack, storage, origin):
    """Two sources, one in the collection "news"; rules block sponsored posts, tag CVEs and make
    the set "cve" of them; the verdicts stored; every feed rendered."""
    a = add_source(storage, origin.serve("/a.xml", Reply(200, rss(
        ("a-cve", "CVE-2026-1234 in a parser"), ("a-ad", "Sponsored: CVE-2026-0001 scanner deal"),
        ("a-plain", "Plain news"), title="Alpha"))), time.time() - 3600, ["news"])[0]
    b = add_source(storage, origin.serve("/b.xml", Reply(200, rss(
        ("b-cve", "Kernel CVE-2026-9999"), ("b-other", "Other things"), title="Beta"))), time.time() - 3600)[0]
    stack.run_cycle()
    assert storage.rules.save([SPONSORED, TAG_CVE, SET_CVE], 0, rfc3339(time.time()))
    in_set = {"tags": ["cve"], "rule_sets": ["cve"]}
    judged(storage, a, ["news"], {"a-cve": in_set, "a-ad": {"blocked_by": "r-block", **in_set}})
    judged(storage, b, [], {"b-cve": in_set})
    storage.queues.send_render(["feed", "c/news/feed", f"s/{a.source_id}/feed", f"s/{b.source_id}/feed",
                                "r/cve/feed", "sources"])
    stack.drain()
    return a, b


def test_a_blocked_entry_stays_stored_and_leaves_every_feed_page_and_lookup(stack, storage, judged_sources):
    a, _ = judged_sources
    assert storage.entry_lists.with_uid("a-ad")[0].blocked_by == "r-block"  # stored, marked
    for path in ("/feed.json", "/c/news/feed.json", f"/s/{a.source_id}/feed.json", "/r/cve/feed.json"):
        ids = {item["id"] for item in json.loads(served(stack, path))["items"]}
        assert "a-ad" not in ids and "a-cve" in ids, path
    for path in ("/feed.xml", "/feed.atom", "/c/news/feed.xml", "/", "/c/news/", "/r/cve/",
                 f"/s/{a.source_id}/feed.atom", f"/s/{a.source_id}/feed.xml?max_score=1"):
        assert "Sponsored" not in served(stack, path), path
    assert "Plain news" in served(stack, "/c/news/")
    held = fresh(stack, "/api/item?url=https://example.org/a-ad")
    assert (held["statusCode"], body_of(held)) == (404, "held back by rule r-block\n")
    site = json.loads(served(stack, "/api/site?root=127.0.0.1"))
    assert "a-ad" not in {item["entry_uid"] for item in site["items"]} and site["items"]


def test_tags_are_categories_in_every_format(stack, judged_sources):
    a, _ = judged_sources
    items = {i["id"]: i for i in json.loads(served(stack, f"/s/{a.source_id}/feed.json"))["items"]}
    assert items["a-cve"]["tags"] == ["cve"] and "tags" not in items["a-plain"]
    for path in ("/feed.xml", "/feed.atom", "/c/news/feed.atom"):
        entries = {e.id: e for e in feedparser.parse(served(stack, path)).entries}
        cve = next(e for e in entries.values() if e.title == "CVE-2026-1234 in a parser")
        assert [t.term for t in cve.tags] == ["cve"], path


def test_a_rule_set_is_a_feed_negotiated_valid_attributed_and_listed(stack, judged_sources, tmp_path):
    a, b = judged_sources
    for accept, kind in (("application/atom+xml", "atom10"), ("application/rss+xml", "rss20"), (None, "rss20")):
        response = fresh(stack, "/r/cve/feed", {"accept": accept} if accept else {})
        assert response["statusCode"] == 200 and "Accept" in response["headers"]["Vary"]
        assert feedparser.parse(body_of(response)).version == kind
    as_json = json.loads(served(stack, "/r/cve/feed", {"accept": "application/feed+json"}))
    assert as_json["feed_url"] == "http://feeds.test/r/cve/feed.json" and as_json["title"] == "starfeed: cve"
    assert {i["id"] for i in as_json["items"]} == {"a-cve", "b-cve"}
    assert {i["_starfeed"]["source"]["title"] for i in as_json["items"]} == {"Alpha", "Beta"}
    for validator in json_feed_schemas():
        assert not list(validator.iter_errors(as_json))
    if not VALIDATOR.exists():
        pytest.skip(f"{VALIDATOR} is absent: the W3C Feed Validator lives beside the repository in CI")
    for extension in ("xml", "atom"):
        url = f"http://feeds.test/r/cve/feed.{extension}"
        document = served(stack, f"/r/cve/feed.{extension}")
        assert "<source" in document  # every item names the feed it came from
        verdict = validated(document, url, tmp_path)
        assert verdict["errors"] == [], verdict
    opml = listparser.parse(served(stack, "/opml.xml"))
    assert "http://feeds.test/r/cve/feed.atom" in {f.url for f in opml.feeds}
    assert 'href="/r/cve/"' in served(stack, "/") and 'href="/r/cve/feed.json"' in served(stack, "/stats")


def test_a_rule_set_without_rules_is_refused_with_words_and_unpublished(stack, storage, judged_sources):
    assert fresh(stack, "/r/nope/feed.xml")["statusCode"] == 404
    assert "no rule is in it" in body_of(fresh(stack, "/r/nope/feed"))
    assert fresh(stack, "/r/cve/feed.txt")["statusCode"] == 404
    assert fresh(stack, "/r/Not..valid/feed")["statusCode"] == 404
    rules, version = storage.rules.book(consistent=True)
    assert storage.rules.save([r for r in rules if r.rule_set is None], version, rfc3339(time.time()))
    storage.queues.send_render(["r/cve/feed", "feed"])  # the sources summary (OPML) follows the set's
    stack.drain()
    assert not storage.blobs.has_feed("r/cve/feed.xml") and not storage.blobs.has_feed("r/cve/index.html")
    for path in ("/r/cve/feed", "/r/cve/feed.json", "/r/cve/"):
        response = fresh(stack, path)
        assert response["statusCode"] == 404 and "no rule set cve" in body_of(response), path
    for path in ("/opml.xml", "/", "/stats"):
        assert "/r/cve/" not in served(stack, path), path


def test_a_new_rule_set_is_served_before_its_first_render(stack, storage):
    assert storage.rules.save([SET_CVE], 0, rfc3339(time.time()))
    document = json.loads(served(stack, "/r/cve/feed.json"))
    assert document["items"] == [] and document["title"] == "starfeed: cve"
    page = fresh(stack, "/r/cve/")
    assert page["statusCode"] == 404 and "rendered with the set's feed" in body_of(page)


def test_the_rest_api_shows_verdicts_and_lists_blocked_entries_when_asked(stack, judged_sources):
    a, _ = judged_sources

    def listed(path: str) -> dict[str, dict]:
        response = api_call(stack, "GET", path)
        assert response["statusCode"] == 200, response
        return {e["entry_uid"]: e for e in json.loads(body_of(response))["entries"]}

    for path in (f"/api/v1/feeds/{a.source_id}/entries", "/api/v1/entries"):
        shown = listed(path)
        assert "a-ad" not in shown and shown["a-cve"]["tags"] == ["cve"] and shown["a-cve"]["rule_sets"] == ["cve"]
        assert shown["a-cve"]["blocked_by"] is None
        every = listed(f"{path}?blocked=true")
        assert every["a-ad"]["blocked_by"] == "r-block" and set(every) == set(shown) | {"a-ad"}
        assert set(listed(f"{path}?blocked=only")) == {"a-ad"}
        assert api_call(stack, "GET", f"{path}?blocked=maybe")["statusCode"] == 422
    # One page at a time, blocked entries left out, pages full.
    first = json.loads(body_of(api_call(stack, "GET", f"/api/v1/feeds/{a.source_id}/entries?limit=1")))
    assert [e["entry_uid"] for e in first["entries"]] == ["a-cve"] and first["next"]
    assert api_call(stack, "GET", "/api/v1/entries/a-ad")["statusCode"] == 200  # asked for by its uid
    document = json.loads(body_of(api_call(stack, "GET", "/api/v1/openapi.json")))
    parameters = document["paths"]["/api/v1/feeds/{feed_id}/entries"]["get"]["parameters"]
    assert "blocked" in {p["name"] for p in parameters}
    assert {"blocked_by", "tags", "rule_sets"} <= set(document["components"]["schemas"]["Entry"]["properties"])


def test_a_set_added_or_removed_by_a_person_is_listed_or_unlisted_at_the_next_render(stack, storage):
    from starfeed.rules import manage

    added = manage.add(storage, SET_CVE, time.time())
    stack.drain()  # no entry matched: only the rule's own render request lists the set
    for path in ("/opml.xml", "/"):
        assert "/r/cve/" in served(stack, path), path
    assert storage.blobs.has_feed("r/cve/feed.xml")
    manage.remove(storage, added.rule.rule_id, time.time())
    stack.drain()
    assert not storage.blobs.has_feed("r/cve/feed.xml")
    for path in ("/opml.xml", "/"):
        assert "/r/cve/" not in served(stack, path), path

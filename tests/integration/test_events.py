"""Every file in events/ goes to its handler, as `sam local invoke -e` would deliver it."""

import copy
import json
import time

import feedparser

from starfeed.model import Source

from conftest import ROOT, body_of, load_event
from origin import Reply, rss

EVENT_FOR = {"scheduler.json": "SchedulerFunction", "fetcher.json": "FetcherFunction",
             "renderer.json": "RendererFunction", "api.json": "ApiFunction",
             "enricher.json": "EnricherFunction", "rest.json": "RestFunction", "websub.json": "WebSubFunction",
             "history.json": "HistoryFunction"}


def test_every_event_file_has_a_function():
    assert {p.name for p in (ROOT / "events").glob("*.json")} == set(EVENT_FOR)


def seed_event_sources(storage, origin):
    """The sources that events/fetcher.json names, served by a loopback origin."""
    for n, source_id in enumerate(("e0e0e0e0e001", "e0e0e0e0e002"), start=1):
        url = origin.serve(f"/event{n}.xml", Reply(200, rss((f"ev{n}", f"Event item {n}"))))
        storage.sources.delete(source_id)
        storage.sources.add(Source(source_id=source_id, url=url, created_at=time.time() - 3600,
                                          next_check_at=time.time() + 3600))


def test_scheduler_event(stack, storage):
    result = stack.functions["SchedulerFunction"].invoke(load_event("scheduler.json"))
    assert set(result) == {"due", "leased", "enqueued", "pace_horizon"}
    stack.drain()


def test_fetcher_event_then_renderer_event_then_api_event(stack, storage, origin):
    seed_event_sources(storage, origin)
    result = stack.functions["FetcherFunction"].invoke(load_event("fetcher.json"))
    assert result == {"batchItemFailures": []}
    assert storage.sources.get("e0e0e0e0e001").status == "ok"
    assert storage.sources.get("e0e0e0e0e002").entry_count == 1

    assert stack.functions["RendererFunction"].invoke(load_event("renderer.json")) == \
        {"batchItemFailures": []}
    one = stack.functions["ApiFunction"].invoke(
        {**load_event("api.json"), "rawPath": "/s/e0e0e0e0e001/feed.xml"})
    assert [e.title for e in feedparser.parse(body_of(one)).entries] == ["Event item 1"]

    response = stack.functions["ApiFunction"].invoke(load_event("api.json"))
    assert response["statusCode"] == 200
    assert response["headers"]["Content-Type"].startswith("application/atom+xml")
    assert "Event item 1" in {e.title for e in feedparser.parse(body_of(response)).entries}

    listing = stack.functions["RestFunction"].invoke(load_event("rest.json"))
    assert listing["statusCode"] == 200 and listing["headers"]["Content-Type"] == "application/json"
    assert {"e0e0e0e0e001", "e0e0e0e0e002"} <= {f["id"] for f in json.loads(listing["body"])["feeds"]}


def test_a_failed_record_fails_alone_and_its_host_group_is_still_fetched(stack, storage, origin):
    seed_event_sources(storage, origin)
    event = copy.deepcopy(load_event("fetcher.json"))
    broken, same_host, other_host = (copy.deepcopy(event["Records"][0]), event["Records"][0],
                                     event["Records"][1])
    broken.update(messageId="broken-1", body="{broken")
    other_host["attributes"]["MessageGroupId"] = "elsewhere.example"
    event["Records"] = [broken, same_host, other_host]
    same_host_id = json.loads(same_host["body"])["source_id"]
    before = storage.sources.get(same_host_id).last_fetch_at
    result = stack.functions["FetcherFunction"].invoke(event)
    assert [f["itemIdentifier"] for f in result["batchItemFailures"]] == ["broken-1"]
    assert storage.sources.get(same_host_id).last_fetch_at != before
    assert storage.sources.get("e0e0e0e0e002").last_fetch_at is not None


def test_renderer_reports_a_malformed_record_and_renders_the_rest(stack):
    event = copy.deepcopy(load_event("renderer.json"))
    bad = {**event["Records"][0], "messageId": "bad-1", "body": "[]"}
    event["Records"].append(bad)
    assert stack.functions["RendererFunction"].invoke(event) == \
        {"batchItemFailures": [{"itemIdentifier": "bad-1"}]}


def test_event_files_are_valid_json_of_the_right_shape():
    for name in EVENT_FOR:
        event = json.loads((ROOT / "events" / name).read_text())
        if name in ("fetcher.json", "renderer.json", "enricher.json"):
            assert all(r["eventSource"] == "aws:sqs" for r in event["Records"])
        if name == "fetcher.json":
            assert all(r["attributes"]["MessageGroupId"] for r in event["Records"])
        if name == "api.json":
            assert event["version"] == "2.0" and event["requestContext"]["http"]["method"] == "GET"
        if name == "scheduler.json":
            assert event["detail-type"] == "Scheduled Event"


def test_a_render_target_for_a_removed_source_is_skipped(stack, storage):
    event = copy.deepcopy(load_event("renderer.json"))
    event["Records"][0]["body"] = json.dumps({"targets": ["s/0000deadbeef/feed"]})
    assert stack.functions["RendererFunction"].invoke(event) == {"batchItemFailures": []}
    assert not storage.blobs.has_feed("s/0000deadbeef/feed.xml")


def test_enricher_event_analyzes_the_entry_it_names(stack, storage, origin):
    seed_event_sources(storage, origin)
    article = origin.serve("/ev1", Reply(200, b"<html><body><article>" + b"<p>Event one happened today.</p>" * 20
                                         + b"</article></body></html>", {"Content-Type": "text/html"}))
    origin.serve("/event1.xml", Reply(200, rss(("ev1", "Event item 1")).replace(b"https://example.org/ev1",
                                                                                 article.encode())))
    storage.sources.change("e0e0e0e0e001", {"deframe": True})
    stack.functions["FetcherFunction"].invoke(load_event("fetcher.json"))
    assert stack.functions["EnricherFunction"].invoke(load_event("enricher.json")) == {"batchItemFailures": []}
    result = storage.analyses.entry("e0e0e0e0e001", "ev1").analyzer_result
    assert result["input"] == "article" and result["summary"].startswith("Event one happened today.")
    stack.drain()
    fresh = stack.cold_start("ApiFunction")  # not an instance that cached the feed before
    one = fresh.invoke({**load_event("api.json"), "rawPath": "/s/e0e0e0e0e001/feed.xml"})
    assert "Original headline: Event item 1" in body_of(one)


def test_a_hub_s_verification_event_is_answered_with_its_challenge_once(stack, storage):
    """events/websub.json: a hub verifying the subscription starfeed asked for."""
    event = load_event("websub.json")
    source_id, token = event["rawPath"].split("/")[2:4]
    storage.sources.delete(source_id)
    storage.sources.add(Source(source_id=source_id, url="https://blog.example/feed.xml", created_at=time.time(),
                               next_check_at=time.time() + 3600,
                               push={"hub": "https://websub.example/", "topic": "https://blog.example/feed.xml",
                                     "token": token, "state": "pending", "requested_at": time.time()},
                               push_secret="s" * 64))
    answer = stack.functions["WebSubFunction"].invoke(event)
    assert answer["statusCode"] == 200 and answer["body"] == "8e2f4c1a"
    assert storage.sources.get(source_id).push["state"] == "verified"
    assert stack.functions["WebSubFunction"].invoke(event)["statusCode"] == 404  # verified already
    storage.sources.delete(source_id)


def test_a_history_event_walks_its_source_s_feed(stack, storage, origin):
    """events/history.json: a walk's first step, the feed itself, which links no archive here."""
    event = load_event("history.json")
    step = json.loads(event["Records"][0]["body"])
    storage.sources.delete(step["source_id"])
    url = origin.serve("/no-archive.xml", Reply(200, rss(("na1", "No archive"))))
    storage.sources.add(Source(source_id=step["source_id"], url=url, created_at=time.time(),
                               next_check_at=time.time() + 3600))
    event["Records"][0]["body"] = json.dumps({**step, "url": url})
    assert stack.functions["HistoryFunction"].invoke(event) == {"batchItemFailures": []}
    history = storage.sources.get(step["source_id"]).history
    assert history["state"] == "done" and "links no archive" in history["reason"]
    storage.sources.delete(step["source_id"])


def test_on_aws_the_api_s_links_name_the_domain_it_was_called_at(stack, storage, origin, monkeypatch):
    """The template cannot give the api function its own URL (a circular dependency): a Link
    header names the domain API Gateway was called at."""
    seed_event_sources(storage, origin)
    stack.functions["FetcherFunction"].invoke(load_event("fetcher.json"))
    stack.functions["RendererFunction"].invoke(load_event("renderer.json"))
    api = stack.functions["ApiFunction"].module
    monkeypatch.delenv("STARFEED_PUBLIC_URL")
    monkeypatch.setattr(api.storage, "settings", api.storage.settings)  # restored after the test
    response = stack.functions["ApiFunction"].invoke({**load_event("api.json"), "rawPath": "/s/e0e0e0e0e001/feed.xml"})
    assert response["headers"]["Link"] == \
        '<https://abc123.execute-api.us-east-1.amazonaws.com/s/e0e0e0e0e001/feed.xml>; rel="self"'

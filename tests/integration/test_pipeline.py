"""The whole path through the local stack: add -> schedule -> fetch -> store -> render -> serve."""

import json
import time

import feedparser

from starfeed.model import Source
from starfeed.sources import add_source

from conftest import aggregate_rendered, body_of, http_get
from origin import Reply, rss
from waiting import eventually

HOUR = 3600


def subscribe(storage, url):
    """Subscribed an hour ago, so the fixtures' items (all newer) pass the first-poll rule."""
    return add_source(storage, url, time.time() - HOUR)


def feed_of(response) -> feedparser.FeedParserDict:
    assert response["statusCode"] == 200, response
    return feedparser.parse(body_of(response))


def make_due(storage, source_id):
    """Bring a source's next check to now, as time passing would."""
    storage.sources.change(source_id, {"next_check_at": time.time() - 1, "locked_until": None})


def test_a_new_source_is_fetched_rendered_and_served(stack, storage, origin):
    url = origin.serve("/news.xml", Reply(200, rss(("n1", "Alpha"), ("n2", "Beta"), title="News"),
                                          {"ETag": '"e1"', "Content-Type": "application/rss+xml"}))
    source, created = subscribe(storage, url)
    assert created
    stack.run_cycle()

    feed = feed_of(http_get(stack, f"/s/{source.source_id}/feed.xml"))
    assert feed.feed.title == "News"
    assert [e.title for e in feed.entries] == ["Alpha", "Beta"]
    titles = {e.title for e in feed_of(http_get(stack, "/feed.xml")).entries}
    assert {"Alpha", "Beta"} <= titles

    atom = http_get(stack, "/feed", {"accept": "application/atom+xml"})
    assert atom["headers"]["Content-Type"].startswith("application/atom+xml")
    assert atom["headers"]["Vary"] == "Accept, Accept-Encoding"
    assert feedparser.parse(body_of(atom)).version == "atom10"
    as_json = http_get(stack, "/feed.json")
    assert as_json["headers"]["Content-Type"].startswith("application/feed+json")
    assert {"Alpha", "Beta"} <= {i["title"] for i in json.loads(body_of(as_json))["items"]}
    rss_default = http_get(stack, "/feed")
    assert rss_default["headers"]["Content-Type"].startswith("application/rss+xml")
    page = http_get(stack, "/")
    assert page["headers"]["Content-Type"].startswith("text/html") and "Alpha" in body_of(page)
    assert http_get(stack, "/healthz")["statusCode"] == 200

    stored = storage.sources.get(source.source_id)
    assert (stored.status, stored.http_status, stored.etag) == ("ok", 200, '"e1"')
    assert stored.next_check_at > time.time() and stored.locked_until is None


def test_a_second_fetch_is_conditional_and_stores_nothing_twice(stack, storage, origin):
    body = rss(("c1", "One"), ("c2", "Two"))
    url = origin.serve("/cond.xml", Reply(200, body, {"ETag": '"v1"'}),
                       Reply(304, headers={"ETag": '"v1"'}), Reply(200, body, {"ETag": '"v2"'}))
    source, _ = subscribe(storage, url)
    stack.run_cycle()
    make_due(storage, source.source_id)
    stack.run_cycle()
    assert origin.hits("/cond.xml")[1]["if-none-match"] == '"v1"'
    assert storage.sources.get(source.source_id).status == "not-modified"
    make_due(storage, source.source_id)
    stack.run_cycle()  # the same items again under a new validator: deduplicated
    entries = storage.entries.recent(source.source_id, 50)
    assert sorted(e.entry_uid for e in entries) == ["c1", "c2"]
    # Unchanged within a week (settings.sighting_refresh): seeing them again cost no write.
    assert all(e.seen_count == 1 and e.last_seen == e.first_seen for e in entries)


def test_raw_bytes_are_stored_before_parsing_even_when_parsing_fails(stack, storage, origin):
    url = origin.serve("/broken.xml", Reply(200, b"<html>not a feed</html>"))
    source, _ = subscribe(storage, url)
    stack.run_cycle()
    stored = storage.sources.get(source.source_id)
    assert stored.status == "error" and "not a feed" in stored.last_error
    s3 = storage.client("s3")
    key = f"fetches/{stored.fetch_history[0]['fetch_id']}.raw"
    line, _, body = s3.get_object(Bucket=storage.settings.raw_bucket, Key=key)["Body"].read().partition(b"\n")
    record = json.loads(line)  # one object: the record's line, then the bytes as received
    assert body == b"<html>not a feed</html>" and record["http_status"] == 200
    assert record["content_length"] == len(body) and record["body_ref"]["key"] == key
    assert record["feed_id"] == source.source_id


def test_bad_sources_show_their_error_and_never_stop_the_others(stack, storage, origin):
    now = time.time()
    good, _ = add_source(storage, origin.serve("/good.xml", Reply(200, rss(("g", "Good")))), now)
    missing, _ = add_source(storage, origin.serve("/gone.xml", Reply(404, b"")), now)
    refused, _ = subscribe(storage, "http://127.0.0.1:9/feed.xml")
    stack.run_cycle()
    assert storage.sources.get(good.source_id).status == "ok"
    for bad, words in ((missing, "404 Not Found"), (refused, "could not connect")):
        stored = storage.sources.get(bad.source_id)
        assert stored.status == "error" and words in stored.last_error
        assert stored.next_check_at > now and stored.consecutive_failures == 1


def test_the_scheduler_reads_only_due_sources_and_leases_them(stack, storage, origin):
    stack.run_cycle()  # settle what other tests left due
    now = time.time()
    already_due = set(storage.sources.due_ids(now))  # what other tests leave behind
    for n in range(30):
        storage.sources.add(Source(source_id=f"later{n:07d}", url=f"{origin.url}/later/{n}",
                                          created_at=now, next_check_at=now + 3600))
    due, _ = add_source(storage, origin.serve("/due.xml", Reply(200, rss(("d", "Due")))), now)
    report = stack.tick(now)
    # The 30 not yet due are never read; a leftover may be due yet still leased elsewhere.
    assert report["due"] == len(already_due | {due.source_id})
    assert 1 <= report["leased"] == report["enqueued"] <= report["due"]
    assert storage.sources.get(due.source_id).locked_until is not None  # ours is leased
    assert stack.tick(now)["leased"] == 0  # leased: not fetched twice
    stack.drain()
    assert storage.sources.get(due.source_id).locked_until is None


def test_a_record_that_keeps_failing_is_retried_alone_then_dead_lettered(stack, storage, origin, monkeypatch):
    """Its host's other sources are fetched in the same batch; it comes back after the retry
    window (1 s here), not the queue's 30 minutes, and SQS moves it aside after 3 receives."""
    from dataclasses import replace

    from starfeed.store import Storage

    sqs = stack.sqs
    queue, dlq = stack.queue("FetchQueue"), stack.queue("FetchDeadLetterQueue")
    fetch_source = next(q for q in stack.queues if q.queue_url == queue)
    fetcher = stack.functions["FetcherFunction"].module
    monkeypatch.setattr(fetcher, "storage", Storage(replace(storage.settings, fetch_retry_seconds=1)))
    stack.drain()  # what other tests left queued would share the first receive
    healthy, _ = subscribe(storage, origin.serve("/beside-poison.xml", Reply(200, rss(("bp", "Beside")))))
    lease = storage.sources.take_lease(healthy.source_id, time.time()).locked_until
    group = healthy.host
    sqs.send_message(QueueUrl=queue, MessageBody="not json", MessageGroupId=group,
                     MessageDeduplicationId=f"poison-{time.time()}")
    sqs.send_message(QueueUrl=queue, MessageGroupId=group, MessageDeduplicationId=f"healthy-{time.time()}",
                     MessageBody=json.dumps({"source_id": healthy.source_id, "lease": lease}))
    receives = [fetch_source.poll()]
    assert storage.sources.get(healthy.source_id).status == "ok"  # not held behind the poison
    for _ in range(2):  # back after its visibility timeout (fetch_retry_seconds), alone
        receives.append(eventually(fetch_source.poll, what="the poison's next delivery"))
    assert receives == [2, 1, 1]

    def dead_lettered():  # maxReceiveCount is 3: the next receive moves it aside, delivering nothing
        assert fetch_source.poll() == 0
        return sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10).get("Messages")

    dead = eventually(dead_lettered, what="the poison in the dead-letter queue")
    assert [m["Body"] for m in dead] == ["not json"]
    for message in dead:  # handled: the next test finds the dead-letter queue empty
        sqs.delete_message(QueueUrl=dlq, ReceiptHandle=message["ReceiptHandle"])


def test_bad_requests_get_a_short_4xx(stack):
    for path, status in (("/nope", 404), ("/feed.html", 404), ("/s/zz/feed.xml", 404),
                         ("/s/../feed.xml", 404), ("/s/0123456789ab/feed.xml", 404),
                         ("/feed.xml/extra", 404)):
        response = http_get(stack, path)
        assert response["statusCode"] == status, path
        assert len(body_of(response)) < 200
    refused = http_get(stack, "/feed", {"accept": "application/rss+xml;q=0"})
    assert refused["statusCode"] == 406 and "application/atom+xml" in body_of(refused)
    huge = http_get(stack, "/feed", {"accept": "x/y," * 3000})
    assert huge["statusCode"] == 400
    for path in ("/rss?url=https://example.org/", "/api/item?url=https://example.org/"):
        # Longer than DynamoDB accepts as a key: a 400 from us, not a 500 from the query.
        assert http_get(stack, path + "a" * 2100)["statusCode"] == 400, path


def test_etag_and_last_modified_give_304(stack, storage):
    aggregate_rendered(stack, storage)
    first = http_get(stack, "/feed.xml")
    etag = first["headers"]["ETag"]
    assert http_get(stack, "/feed.xml", {"if-none-match": etag})["statusCode"] == 304
    since = first["headers"]["Last-Modified"]
    assert http_get(stack, "/feed.xml", {"if-modified-since": since})["statusCode"] == 304

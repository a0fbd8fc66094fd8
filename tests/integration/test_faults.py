"""AWS faults through the local stack (docs/design.md#failure-isolation). Each ends with no entry lost, none duplicated,
nothing in a dead-letter queue, and the source fetching normally again without anyone acting."""

import json
import time
from dataclasses import replace

import pytest

from starfeed.sources import add_source
from starfeed.store import Storage

from conftest import dead_letters, failed_records, http_get
from origin import Reply, rss
from waiting import eventually

ITEMS = (("f1", "One"), ("f2", "Two"), ("f3", "Three"))


@pytest.fixture
def faults(stack):
    yield stack.faults
    stack.faults.clear()


@pytest.fixture
def quick_retries(stack, storage, monkeypatch):
    """The fetcher's retry window at 1 s instead of 30, so a retried record comes back at once."""
    fetcher = stack.functions["FetcherFunction"].module
    monkeypatch.setattr(fetcher, "storage", Storage(replace(storage.settings, fetch_retry_seconds=1)))


def subscribe(storage, origin, path):
    url = origin.serve(path, Reply(200, rss(*ITEMS), {"ETag": f'"{path}"'}))
    return add_source(storage, url, time.time() - 3600)[0]


def make_due(storage, source_id):
    storage.sources.change(source_id, {"next_check_at": time.time() - 1, "locked_until": None})


def assert_whole(stack, storage, source_id):
    """Every item stored once, served in the source's feed, nothing dead-lettered."""
    entries = storage.entries.recent(source_id, 50)
    assert sorted(e.entry_uid for e in entries) == ["f1", "f2", "f3"]
    assert all(e.seen_count >= 1 for e in entries)
    feed = http_get(stack, f"/s/{source_id}/feed.json")
    assert feed["statusCode"] == 200
    assert failed_records(stack) == dead_letters(stack) == 0


@pytest.mark.parametrize("code", ["ThrottlingException", "ProvisionedThroughputExceededException"])
def test_throttled_entry_writes_are_a_recorded_failure_then_recover(stack, storage, origin, faults, code):
    source = subscribe(storage, origin, f"/throttled-{code}.xml")
    faults.inject("dynamodb", "BatchWriteItem", code, storage.settings.entries_table)
    stack.run_cycle()
    failed = storage.sources.get(source.source_id)
    assert failed.status == "error" and failed.last_error.startswith(f"store: {code}")
    assert failed.etag is None  # not kept: the next fetch reads the whole document again
    faults.clear()
    make_due(storage, source.source_id)
    stack.run_cycle()
    assert storage.sources.get(source.source_id).status == "ok"
    assert_whole(stack, storage, source.source_id)


def test_a_throttled_source_write_retries_the_record_alone(stack, storage, origin, faults, quick_retries):
    source = subscribe(storage, origin, "/source-throttled.xml")
    neighbour = subscribe(storage, origin, "/source-throttled-neighbour.xml")
    stack.tick()  # both leased; then only the first source's outcome cannot be written
    faults.inject("dynamodb", "UpdateItem", "ProvisionedThroughputExceededException", source.source_id)
    fetcher = next(q for q in stack.queues if q.queue_url == stack.queue("FetchQueue"))
    fetcher.poll()
    assert storage.sources.get(neighbour.source_id).status == "ok"  # same host, same batch
    assert storage.sources.get(source.source_id).status == "new"
    faults.clear()

    def retried():  # after the record's retry window, alone
        stack.drain()
        return storage.sources.get(source.source_id).status == "ok"

    eventually(retried, what="the throttled record's retry")
    assert_whole(stack, storage, source.source_id)
    assert_whole(stack, storage, neighbour.source_id)


def test_an_s3_failure_storing_the_raw_body_stops_before_parsing(stack, storage, origin, faults):
    source = subscribe(storage, origin, "/raw-fails.xml")
    faults.inject("s3", "PutObject", "SlowDown", storage.settings.raw_bucket)
    stack.run_cycle()
    failed = storage.sources.get(source.source_id)
    assert failed.status == "error" and failed.last_error.startswith("store raw: SlowDown")
    assert storage.entries.recent(source.source_id, 50) == []  # nothing parsed unkept
    faults.clear()
    make_due(storage, source.source_id)
    stack.run_cycle()
    assert_whole(stack, storage, source.source_id)


def test_a_renderer_failure_fails_its_target_alone_and_is_retried(stack, storage, origin, faults):
    source = subscribe(storage, origin, "/render-fails.xml")
    other = subscribe(storage, origin, "/render-fine.xml")
    # Each in a collection of its own: their feeds are rendered to the bucket (a source's own
    # feed is built when read).
    for member, collection in ((source, "render-fails"), (other, "render-fine")):
        storage.sources.change(member.source_id, {"collections": [collection]})
        storage.collections.join(collection, member.source_id)
    render_queue = stack.queue("RenderQueue")
    timeout = stack.sqs.get_queue_attributes(QueueUrl=render_queue, AttributeNames=["VisibilityTimeout"])
    # Back soon, but not within the cycle's own drain: on a slow machine a one-second timeout let the
    # drain receive it again while the fault held, three times, and dead-letter it.
    stack.sqs.set_queue_attributes(QueueUrl=render_queue, Attributes={"VisibilityTimeout": "8"})
    try:
        faults.inject("s3", "PutObject", "InternalError", storage.settings.feeds_bucket, key="c/render-fails/")
        stack.run_cycle()
        assert http_get(stack, "/c/render-fine/feed.xml")["statusCode"] == 200
        assert http_get(stack, "/c/render-fails/feed.xml")["statusCode"] == 404  # not rendered yet
        faults.clear()

        def rendered():  # after the render message's visibility timeout
            stack.drain()
            return http_get(stack, "/c/render-fails/feed.xml")["statusCode"] == 200

        eventually(rendered, what="the failed target's retry")
    finally:
        stack.sqs.set_queue_attributes(QueueUrl=render_queue, Attributes=timeout["Attributes"])
    assert_whole(stack, storage, source.source_id)
    assert_whole(stack, storage, other.source_id)
    for member in (source, other):
        storage.sources.delete(member.source_id)  # their origins close with the test


class Killed(BaseException):
    """What a Lambda timeout does to a batch: the function stops, nothing is acknowledged."""


def test_a_fetcher_that_dies_mid_batch_loses_and_repeats_nothing(stack, storage, origin, monkeypatch):
    stack.drain()
    sources = [subscribe(storage, origin, f"/dies-{n}.xml") for n in range(3)]
    fetcher = stack.functions["FetcherFunction"].module
    real, calls = fetcher.fetch_record, []

    def dies_on_the_second(record, lambda_context):
        calls.append(record)
        if len(calls) == 2:
            raise Killed
        real(record, lambda_context)

    queue = stack.queue("FetchQueue")
    timeout = stack.sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["VisibilityTimeout"])
    stack.sqs.set_queue_attributes(QueueUrl=queue, Attributes={"VisibilityTimeout": "1"})
    monkeypatch.setattr(fetcher, "fetch_record", dies_on_the_second)
    try:
        stack.tick()
        with pytest.raises(Killed):
            next(q for q in stack.queues if q.queue_url == queue).poll()
        monkeypatch.setattr(fetcher, "fetch_record", real)

        def redelivered():  # the visibility timeout: the whole batch comes back
            stack.drain()
            return all(storage.sources.get(s.source_id).status == "ok" for s in sources)

        eventually(redelivered, what="the killed batch's redelivery")
    finally:
        stack.sqs.set_queue_attributes(QueueUrl=queue, Attributes=timeout["Attributes"])
    for source in sources:
        assert len(origin.hits(source.url.removeprefix(origin.url))) == 1  # each fetched once
        assert storage.sources.get(source.source_id).status == "ok"
        assert_whole(stack, storage, source.source_id)


def test_a_message_delivered_twice_fetches_once(stack, storage, origin):
    stack.drain()
    source = subscribe(storage, origin, "/twice.xml")
    lease = storage.sources.take_lease(source.source_id, time.time()).locked_until
    body = json.dumps({"source_id": source.source_id, "lease": lease})
    for n in range(2):  # SQS is at-least-once: the same message again, under another receipt
        stack.sqs.send_message(QueueUrl=stack.queue("FetchQueue"), MessageBody=body,
                               MessageGroupId=source.host, MessageDeduplicationId=f"twice-{n}-{time.time()}")
    stack.drain()
    assert len(origin.hits("/twice.xml")) == 1
    assert_whole(stack, storage, source.source_id)

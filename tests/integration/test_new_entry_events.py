"""NewEntry events (docs/design.md#new-entry-event): each entry stored for the first time is a
NewEntry event on the stack's EventBridge bus, as a program attached by a rule (here one targeting
an SQS queue) receives it."""

import json
import time

import pytest

from starfeed.cli import main
from starfeed.sources import add_source
from starfeed.store.events import Events

from origin import Reply, rss


@pytest.fixture
def rule_to_queue(stack, storage):
    """A rule on the bus for NewEntry events, delivering to a queue of the test's own."""
    events = storage.client("events")
    bus = storage.settings.event_bus_name
    queue_url = stack.sqs.create_queue(QueueName=f"new-entries-{time.time_ns()}")["QueueUrl"]
    arn = stack.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="new-entries", EventBusName=bus, EventPattern=json.dumps({"detail-type": ["NewEntry"]}))
    events.put_targets(Rule="new-entries", EventBusName=bus, Targets=[{"Id": "queue", "Arn": arn}])
    yield queue_url
    events.remove_targets(Rule="new-entries", EventBusName=bus, Ids=["queue"])
    events.delete_rule(Name="new-entries", EventBusName=bus)


def received(stack, queue_url) -> list[dict]:
    out = []
    while messages := stack.sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages"):
        for message in messages:
            out.append(json.loads(message["Body"]))
            stack.sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return out


def test_one_new_entry_event_per_new_entry_and_none_again(stack, storage, origin, rule_to_queue):
    items = [(f"ev-{n}", f"Event {n}") for n in range(12)]  # more than one PutEvents batch
    url = origin.serve("/events.xml", Reply(200, rss(*items, title="Eventful")))
    source = add_source(storage, url, time.time() - 3600)[0]
    stack.run_cycle()
    events = [e for e in received(stack, rule_to_queue) if e["detail"]["feed_id"] == source.source_id]
    assert len(events) == 12 and {e["detail-type"] for e in events} == {"NewEntry"}
    assert {e["source"] for e in events} == {"starfeed"}
    detail = next(e["detail"] for e in events if e["detail"]["entry_uid"] == "ev-0")
    stored = storage.analyses.entry(source.source_id, "ev-0")
    assert detail == {"entry_uid": "ev-0", "feed_id": source.source_id, "published": stored.published,
                      "canonical_link": "https://example.org/ev-0", "raw_refs": stored.raw_refs,
                      "ingested_at": stored.first_seen, "title": "Event 0",
                      "blocked_by": None, "tags": [], "rule_sets": [],
                      "source": {"url": url, "title": "Eventful",
                                 "feed": f"http://feeds.test/s/{source.source_id}/feed.xml"}}
    assert stored.raw_refs and stored.raw_refs[0]["fetch_id"]

    # Fetched again with one more entry: one event, for it alone.
    origin.serve("/events.xml", Reply(200, rss(("ev-new", "Newest"), *items, title="Eventful")))
    storage.sources.change(source.source_id, {"next_check_at": time.time() - 1, "locked_until": None})
    stack.run_cycle()
    again = [e["detail"]["entry_uid"] for e in received(stack, rule_to_queue)
             if e["detail"]["feed_id"] == source.source_id]
    assert again == ["ev-new"]
    main(["source", "remove", source.source_id])


class _Flaky:
    """PutEvents that refuses the first entry of each request once."""

    def __init__(self):
        self.requests, self.refused = [], set()

    def put_events(self, Entries):
        self.requests.append([json.loads(e["Detail"])["entry_uid"] for e in Entries])
        results = []
        for entry in Entries:
            uid = json.loads(entry["Detail"])["entry_uid"]
            if uid not in self.refused and not results:
                self.refused.add(uid)
                results.append({"ErrorCode": "InternalFailure", "ErrorMessage": "try again"})
            else:
                results.append({"EventId": uid})
        return {"FailedEntryCount": sum(1 for r in results if "ErrorCode" in r), "Entries": results}


def test_entries_eventbridge_refuses_are_sent_again(storage):
    flaky = _Flaky()
    events = Events(flaky, storage.settings, sleep=lambda _: None)
    assert events.new_entries([{"entry_uid": str(n)} for n in range(12)]) == 12
    assert [len(r) for r in flaky.requests[:2]] == [10, 2]  # batches of 10
    assert flaky.requests[2] == ["0", "10"]  # only the refused ones, sent again

"""Fetcher: one SQS FIFO record per due source. A source's failure is recorded on the source and
its record succeeds. A record that still raises (its source could not be read or written) is
reported alone as a batch item failure and made visible again after STARFEED_FETCH_RETRY_SECONDS,
so its host's message group waits no longer than that; the queue dead-letters it after
maxReceiveCount receives."""

import json

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from starfeed import observe
from starfeed.fetch.entries import one_rule_book
from starfeed.fetch.job import fetch_source
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
log = observe.logger("fetcher")
storage = Storage(Settings.from_env())
# Not SqsFifoPartialProcessor: it would fail the rest of the failing record's host group too.
# Records are independent fetches (each carries its own lease), so every one of them runs.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


# Time a fetch needs beyond its HTTP deadline: storing, parsing and writing the outcome.
STORE_SECONDS = 10


class NotStarted(Exception):
    """Too little of the invocation left for a whole fetch: retried soon rather than cut off by
    the timeout, which would hold the whole batch for the queue's visibility timeout."""


def fetch_record(record, lambda_context) -> None:
    needed = (storage.settings.fetch_deadline + STORE_SECONDS) * 1000
    if lambda_context.get_remaining_time_in_millis() < needed:
        storage.blobs.flush_taps()  # what the batch stored so far is tapped before time runs out
        raise NotStarted(f"{lambda_context.get_remaining_time_in_millis()} ms left")
    message = json.loads(record.body)
    fetch_source(storage, message["source_id"], lease=message.get("lease"), push=message.get("push"))


@observe.handler
def handler(event, context):
    # The batch's new entries tapped in one object, and judged by one read of the rules.
    with storage.blobs.tap_batch(), one_rule_book():
        response = process_partial_response(event=event, record_handler=fetch_record,
                                            processor=processor, context=context)
    failed = {failure["itemIdentifier"] for failure in response.get("batchItemFailures", [])}
    try:
        storage.queues.retry_fetches_later([r["receiptHandle"] for r in event["Records"] if r["messageId"] in failed])
    except Exception:  # they come back after the queue's visibility timeout instead
        log.exception("fetcher: failed records keep the queue's visibility timeout")
    return response

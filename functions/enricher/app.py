"""Enricher: one SQS record per new entry of a deframed source (docs/design.md#deframe-pipeline).

Each record is analyzed on its own: a failing one is reported alone as a batch item failure,
retried after the queue's visibility timeout and dead-lettered after maxReceiveCount. Over the
day's budget, a record waits invisible until the next UTC day (SQS allows 12 hours at a time);
one that has waited often is put back as a new message, so waiting never dead-letters it. A
record that came before its entry's write is tried again after RETRY_SOON. One whose article's
host asks for a delay between requests waits for the host's turn, WAITS_IN_PLACE times at most;
then its feed's own content is analyzed. The batch's analyzed
entries ask for one render of their feeds."""

import json
import time

from starfeed import observe
from starfeed.enrich.job import EnrichMessage, HostBusy, Known, NotStoredYet, OverBudget, analyzer_from, enrich
from starfeed.fetch.entries import one_rule_book
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
log = observe.logger("enricher")
storage = Storage(Settings.from_env())
analyzer = analyzer_from(storage.settings)
# SQS refuses a visibility beyond 12 hours from the receive: less this function's timeout.
MAX_VISIBILITY = 43200 - 600
RETRY_SOON = 30  # seconds before a message that came before its entry's write is tried again
# Waits for the budget, or for a host's turn, a message may spend as the same message; the queue
# dead-letters at 5 receives.
WAITS_IN_PLACE = 3
clock = time.time  # the day the budget counts in (tests move it to tomorrow)
robots_known: dict[str, dict] = {}  # each host's robots.txt, as long as this instance lives


def seconds_to_next_day(now: float) -> int:
    return int(86400 - now % 86400) + 60  # a minute past midnight UTC, when the budget is new


@observe.handler
def handler(event, context):
    with one_rule_book():  # the batch's analyzed entries judged again by one read of the rules
        return enrich_batch(event)


def enrich_batch(event):
    now = clock()
    known = Known(robots=robots_known)  # the batch's sources are read once each
    targets: set[str] = set()
    failed: list[str] = []
    waiting, requeued, soon, turns = [], [], [], []
    for record in event["Records"]:
        try:
            body = json.loads(record["body"])
            message = EnrichMessage(str(body["feed_id"]), str(body["entry_uid"]))
        except (KeyError, TypeError, ValueError) as exc:
            log.error("enricher: record %s is malformed (%s); it goes back to the queue", record.get("messageId"), exc)
            failed.append(record["messageId"])
            continue
        receives = int(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))
        try:
            targets.update(enrich(storage, analyzer, message, now, known, wait_for_turn=receives < WAITS_IN_PLACE))
        except OverBudget as exc:
            (requeued if receives >= WAITS_IN_PLACE else waiting).append(record)
            log.info("enricher: %s/%s waits for tomorrow: %s", message.feed_id, message.entry_uid, exc)
        except NotStoredYet as exc:
            log.info("enricher: %s; tried again in %d s", exc, RETRY_SOON)
            soon.append(record)
        except HostBusy as exc:
            turns.append(([record], min(MAX_VISIBILITY, max(1, int(exc.until - now) + 1))))
            log.info("enricher: %s/%s waits for its host's turn: %s", message.feed_id, message.entry_uid, exc)
        except Exception:  # this record alone is retried; the others go on
            log.exception("enricher: %s/%s failed; it is retried", message.feed_id, message.entry_uid)
            failed.append(record["messageId"])
    if requeued:
        storage.queues.enrich_later([r["body"] for r in requeued])
    for records, seconds in ((waiting, min(MAX_VISIBILITY, seconds_to_next_day(now))), (soon, RETRY_SOON), *turns):
        if not records:
            continue
        failed += [r["messageId"] for r in records]
        try:
            storage.queues.hide_enrichments([r["receiptHandle"] for r in records], seconds)
        except Exception:  # they come back after the queue's visibility timeout instead
            log.exception("enricher: %d records keep the queue's visibility timeout", len(records))
    if targets:
        storage.queues.send_render(sorted(targets))  # a failure retries the batch: analyzed ones render then
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}

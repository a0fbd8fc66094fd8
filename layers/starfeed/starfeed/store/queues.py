"""SQS: the FIFO fetch queue (one message group per host), the render queue and the enrichment queue."""

from __future__ import annotations

import json
from dataclasses import dataclass

from starfeed.settings import Settings

BATCH = 10  # SendMessageBatch's limit
MAX_DELAY = 900  # SQS's longest DelaySeconds


@dataclass(frozen=True)
class QueueDepth:
    """A queue as an operator sees it: what waits, what is being worked on, and its dead letters."""
    name: str
    waiting: int  # visible and delayed messages
    in_flight: int  # received, not yet deleted
    dead_letters: int | None = None  # None: no dead-letter queue
    dead_letter_arn: str | None = None


@dataclass(frozen=True)
class FetchMessage:
    source_id: str
    scheduled_at: float
    group: str  # the source's host: one fetch per host at a time
    lease: float | None = None  # the lease this fetch holds; a stale message is skipped
    push: str | None = None  # a pushed document's fetch id (WebSub): taken instead of a fetch

    @property
    def body(self) -> str:
        return json.dumps({"source_id": self.source_id, "scheduled_at": self.scheduled_at,
                           "lease": self.lease, **({"push": self.push} if self.push else {})})

    @property
    def deduplication_id(self) -> str:
        # One fetch per source (docs/design.md#leases) and scheduled time, however often it is enqueued;
        # a pushed document once, however often the hub delivers it.
        return f"{self.source_id}-push-{self.push}" if self.push else f"{self.source_id}-{int(self.scheduled_at)}"


class Queues:
    def __init__(self, sqs, settings: Settings):
        self._sqs = sqs
        self._settings = settings

    def send_fetches(self, messages: list[FetchMessage]) -> int:
        sent = 0
        for start in range(0, len(messages), BATCH):
            chunk = messages[start:start + BATCH]
            response = self._sqs.send_message_batch(
                QueueUrl=self._settings.fetch_queue_url,
                Entries=[{"Id": str(i), "MessageBody": m.body, "MessageGroupId": m.group or "-",
                          "MessageDeduplicationId": m.deduplication_id}
                         for i, m in enumerate(chunk)])
            if response.get("Failed"):
                raise RuntimeError(f"fetch queue refused {len(response['Failed'])} messages: "
                                   f"{response['Failed'][0].get('Message')}")
            sent += len(chunk)
        return sent

    def retry_fetches_later(self, receipt_handles: list[str]) -> None:
        """Failed fetch messages come back after the retry window, not the queue's visibility
        timeout: FIFO holds the rest of their host's group while they are in flight."""
        for start in range(0, len(receipt_handles), BATCH):
            response = self._sqs.change_message_visibility_batch(
                QueueUrl=self._settings.fetch_queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": handle,
                          "VisibilityTimeout": self._settings.fetch_retry_seconds}
                         for i, handle in enumerate(receipt_handles[start:start + BATCH])])
            if response.get("Failed"):
                raise RuntimeError(f"{len(response['Failed'])} failed fetch messages keep the queue's "
                                   f"visibility timeout: {response['Failed'][0].get('Message')}")

    def depths(self) -> list[QueueDepth]:
        """Every queue of the deployment with its dead-letter queue (read from its redrive
        policy): three attributes each, GetQueueAttributes being free of charge beyond requests."""
        depths = []
        for name, url in (("fetch", self._settings.fetch_queue_url), ("render", self._settings.render_queue_url),
                          ("enrich", self._settings.enrich_queue_url), ("history", self._settings.history_queue_url)):
            if not url:
                continue
            attributes = self._attributes(url, "RedrivePolicy")
            dead = json.loads(attributes.get("RedrivePolicy") or "{}").get("deadLetterTargetArn")
            dead_count = None
            if dead:
                try:
                    dead_url = self._sqs.get_queue_url(QueueName=dead.rsplit(":", 1)[-1])["QueueUrl"]
                    dead_count = sum(int(self._attributes(dead_url).get(a, 0)) for a in _COUNTED)
                except self._sqs.exceptions.QueueDoesNotExist:
                    dead_count = None  # the redrive policy names a queue that is gone
            depths.append(QueueDepth(name, int(attributes.get("ApproximateNumberOfMessages", 0))
                                     + int(attributes.get("ApproximateNumberOfMessagesDelayed", 0)),
                                     int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)), dead_count, dead))
        return depths

    def _attributes(self, url: str, *extra: str) -> dict:
        return self._sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[*_COUNTED, *extra])["Attributes"]

    def send_history(self, step: dict) -> None:
        """A step of a source's archive walk (fetch/history.py), after its delay (at most SQS's)."""
        delay = min(MAX_DELAY, max(0, int(step.pop("delay", 0))))
        self._sqs.send_message(QueueUrl=self._settings.history_queue_url, MessageBody=json.dumps(step),
                               DelaySeconds=delay)

    def send_render(self, targets: list[str]) -> None:
        self._sqs.send_message(QueueUrl=self._settings.render_queue_url,
                               MessageBody=json.dumps({"targets": sorted(set(targets))}))

    def send_enrichments(self, feed_id: str, entry_uids: list[str]) -> None:
        """One message per new entry of a deframed source, for the enricher."""
        self._send_batches(self._settings.enrich_queue_url,
                           [json.dumps({"feed_id": feed_id, "entry_uid": uid}) for uid in entry_uids])

    def enrich_later(self, bodies: list[str]) -> None:
        """Put enrichment messages back as new ones, after SQS's longest delay: a message that has
        waited for the budget many times must not reach the dead-letter queue for it."""
        self._send_batches(self._settings.enrich_queue_url, bodies, delay=MAX_DELAY)

    def hide_enrichments(self, receipt_handles: list[str], seconds: int) -> None:
        """Received enrichment messages stay invisible this long (SQS allows 12 hours at most)."""
        for start in range(0, len(receipt_handles), BATCH):
            response = self._sqs.change_message_visibility_batch(
                QueueUrl=self._settings.enrich_queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": seconds}
                         for i, handle in enumerate(receipt_handles[start:start + BATCH])])
            if response.get("Failed"):
                raise RuntimeError(f"{len(response['Failed'])} enrichment messages keep the queue's "
                                   f"visibility timeout: {response['Failed'][0].get('Message')}")

    def _send_batches(self, queue_url: str, bodies: list[str], delay: int = 0) -> None:
        for start in range(0, len(bodies), BATCH):
            response = self._sqs.send_message_batch(QueueUrl=queue_url, Entries=[
                {"Id": str(i), "MessageBody": body, **({"DelaySeconds": delay} if delay else {})}
                for i, body in enumerate(bodies[start:start + BATCH])])
            if response.get("Failed"):
                raise RuntimeError(f"{queue_url.rsplit('/', 1)[-1]} refused {len(response['Failed'])} messages: "
                                   f"{response['Failed'][0].get('Message')}")


_COUNTED = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed",
            "ApproximateNumberOfMessagesNotVisible")

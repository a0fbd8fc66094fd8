"""SQS: the FIFO fetch queue (one message group per host) and the render queue."""

from __future__ import annotations

import json
from dataclasses import dataclass

from starfeed.settings import Settings

BATCH = 10  # SendMessageBatch's limit


@dataclass(frozen=True)
class FetchMessage:
    source_id: str
    scheduled_at: float
    group: str  # the source's host: one fetch per host at a time
    lease: float | None = None  # the lease this fetch holds; a stale message is skipped

    @property
    def body(self) -> str:
        return json.dumps({"source_id": self.source_id, "scheduled_at": self.scheduled_at,
                           "lease": self.lease})

    @property
    def deduplication_id(self) -> str:
        # Seed 003 §15: one fetch per source and scheduled time, however often it is enqueued.
        return f"{self.source_id}-{int(self.scheduled_at)}"


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

    def send_render(self, targets: list[str]) -> None:
        self._sqs.send_message(QueueUrl=self._settings.render_queue_url,
                               MessageBody=json.dumps({"targets": sorted(set(targets))}))

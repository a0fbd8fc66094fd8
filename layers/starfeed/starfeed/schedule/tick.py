"""One scheduler run: find due sources on the index, lease each, enqueue one fetch per source."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from starfeed.store import Storage
from starfeed.store.queues import FetchMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TickReport:
    due: int
    leased: int
    enqueued: int


def run_tick(storage: Storage, now: float) -> TickReport:
    due = storage.catalog.due_source_ids(now)
    messages = []
    for source_id in due:
        source = storage.catalog.take_lease(source_id, now)
        if source is None:
            continue  # another run holds it, or it stopped being due
        messages.append(FetchMessage(source.source_id, source.next_check_at or now, source.host))
    enqueued = storage.queues.send_fetches(messages)
    if due:
        log.info("scheduler: %d due, %d leased, %d enqueued", len(due), len(messages), enqueued)
    return TickReport(due=len(due), leased=len(messages), enqueued=enqueued)

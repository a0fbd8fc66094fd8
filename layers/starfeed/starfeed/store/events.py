"""EventBridge: a NewEntry event (docs/design.md#new-entry-event) for each entry stored for the first time, so that
other programs (a notifier, a search index, an archive) attach to starfeed by a rule on its bus
instead of reading its tables."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from starfeed.settings import Settings

BATCH = 10  # PutEvents' limit on entries per request
ATTEMPTS = 3  # sends of an entry EventBridge reported as failed, with backoff between them
SOURCE = "starfeed"
DETAIL_TYPE = "NewEntry"


class EventsNotSent(Exception):
    """Entries EventBridge kept failing after ATTEMPTS sends."""


@dataclass
class Events:
    client: object
    settings: Settings
    sleep: object = time.sleep

    def new_entries(self, details: list[dict]) -> int:
        """Publish one NewEntry per detail (fetch/record.new_entry_detail), 10 to a PutEvents
        request; entries EventBridge reports as failed are sent again (ATTEMPTS in all). Returns
        how many were published."""
        if not self.settings.event_bus_name or not details:
            return 0
        pending = [{"Source": SOURCE, "DetailType": DETAIL_TYPE, "EventBusName": self.settings.event_bus_name,
                    "Detail": json.dumps(detail, ensure_ascii=False)} for detail in details]
        for attempt in range(ATTEMPTS):
            failed = []
            for start in range(0, len(pending), BATCH):
                chunk = pending[start:start + BATCH]
                response = self.client.put_events(Entries=chunk)
                if response.get("FailedEntryCount"):
                    failed += [sent for sent, result in zip(chunk, response["Entries"]) if result.get("ErrorCode")]
            if not failed:
                return len(details)
            pending = failed
            if attempt + 1 < ATTEMPTS:
                self.sleep(0.2 * 2 ** attempt)
        raise EventsNotSent(f"{len(pending)} of {len(details)} NewEntry events not accepted by EventBridge")

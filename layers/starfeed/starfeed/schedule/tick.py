"""One scheduler run: find due sources on the index, lease each, enqueue one fetch per source."""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass

from starfeed.model import Source
from starfeed.settings import Settings

from starfeed.store import Storage
from starfeed.store.queues import FetchMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TickReport:
    due: int
    leased: int
    enqueued: int


def message_group(source: Source, settings: Settings) -> str:
    """The source's host (one fetch at a time per host), or one of N groups for a host allowed
    N at once (STARFEED_HOST_GROUPS, e.g. "api.github.com=5")."""
    host = source.host
    groups = settings.host_groups_for(host)
    return host if groups <= 1 else f"{host}#{zlib.crc32(source.source_id.encode()) % groups}"


def _lease(storage: Storage, source_id: str, now: float) -> Source | None:
    try:
        return storage.catalog.take_lease(source_id, now)
    except (TypeError, ValueError, KeyError) as exc:
        # One unreadable item must not stop the run for every other source.
        log.warning("scheduler: %s could not be read (%s); skipped this run", source_id, exc)
        return None


def run_tick(storage: Storage, now: float) -> TickReport:
    due = storage.catalog.due_source_ids(now)
    leased = [source for source in (_lease(storage, i, now) for i in due) if source]
    # One read of the host pauses a run: a paused host's sources wait for its pause to end.
    pauses = storage.catalog.host_pauses({s.host for s in leased}, now)
    messages = []
    for source in leased:
        if source.host in pauses:
            storage.catalog.change_source(source.source_id, {
                "next_check_at": pauses[source.host], "locked_until": None, "reason": "host-paused"})
            continue
        messages.append(FetchMessage(source.source_id, source.next_check_at or now,
                                     message_group(source, storage.settings), source.locked_until))
    enqueued = storage.queues.send_fetches(messages)
    if due:
        log.info("scheduler: %d due, %d leased, %d enqueued%s", len(due), len(leased), enqueued,
                 f", {len(leased) - len(messages)} waiting for a paused host" if len(messages) < len(leased) else "")
    return TickReport(due=len(due), leased=len(leased), enqueued=enqueued)

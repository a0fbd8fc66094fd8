"""Sending fetches: a due source leased (a conditional write of its lease), and its message in
its host's group. The scheduler's run sends the due ones; a hint (the GitHub timeline) sends the
sources it makes due at once."""

from __future__ import annotations

import logging
import zlib

from starfeed.model import Source
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.store.queues import FetchMessage

log = logging.getLogger(__name__)


def message_group(source: Source, settings: Settings) -> str:
    """The source's host (one fetch at a time per host), or one of N groups for a host allowed
    N at once (STARFEED_HOST_GROUPS, e.g. "api.github.com=5")."""
    host = source.host
    groups = settings.host_groups_for(host)
    return host if groups <= 1 else f"{host}#{zlib.crc32(source.source_id.encode()) % groups}"


def lease(storage: Storage, source_id: str, now: float) -> Source | None:
    try:
        return storage.sources.take_lease(source_id, now)
    except (TypeError, ValueError, KeyError) as exc:
        # One unreadable item must not stop the run for every other source.
        log.warning("scheduler: %s could not be read (%s); skipped this run", source_id, exc)
        return None


def send_now(storage: Storage, source_ids: list[str], now: float) -> int:
    """Lease sources made due now and enqueue their fetches at once, between scheduler runs (a
    hint that they have news); one already leased is being fetched, and is left to that fetch."""
    leased = [source for source in (lease(storage, i, now) for i in source_ids) if source]
    return storage.queues.send_fetches([FetchMessage(s.source_id, now, message_group(s, storage.settings),
                                                     s.locked_until) for s in leased])

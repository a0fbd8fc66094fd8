"""Fetch one leased source, whatever its kind: the lease and the host's pause checked, then its
kind's fetch (starfeed.kinds), which stores what it found and writes the outcome and the next
check back. A document a WebSub hub pushed is taken instead of a fetch."""

from __future__ import annotations

import logging
import random
import time
from copy import deepcopy

from starfeed import observe
from starfeed.fetch.record import wait_for_host
from starfeed.kinds.registry import kind_of
from starfeed.model import FetchOutcome
from starfeed.schedule.decide import asked_host
from starfeed.store import Storage

log = logging.getLogger(__name__)


def fetch_source(storage: Storage, source_id: str, lease: float | None = None,
                 now: float | None = None, rng: random.Random | None = None,
                 push: str | None = None) -> FetchOutcome | None:
    """The fetch's outcome; None when the message is done with unfetched: the source is gone or
    disabled, or the message's lease is no longer the source's (a redelivered or stale one).
    push: the fetch id of a document a WebSub hub pushed (stored by the callback), taken instead
    of a fetch. Only a failure to read or write the source itself escapes: then the message is
    retried."""
    now = time.time() if now is None else now
    source = storage.sources.get(source_id)
    if source is None or not source.live:
        log.info("fetcher: %s is gone, removed or disabled; skipped", source_id)
        return None
    if push is not None:
        return kind_of(source).take_push(storage, source, push, now)
    if lease is not None and source.locked_until != lease:
        log.info("fetcher: %s: this message's lease is not the source's; skipped", source_id)
        return None
    lease = source.locked_until
    host = asked_host(source, now, storage.settings)  # a WebSub lease's renewal alone asks the hub's
    paused = storage.hosts.paused({host}, now).get(host)
    if paused is not None:
        wait_for_host(storage, source, paused.until, now)
        return None
    # What the source was when read: its outcome writes only what the fetch changed.
    before = deepcopy(source)
    with observe.span("fetch", source_id=source.source_id, host=source.host):
        return kind_of(source).fetch(storage, source, before, lease, now, rng or random.Random())

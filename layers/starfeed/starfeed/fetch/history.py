"""A source's history, imported once (RFC 5005): from its feed, the archive is walked document by
document (rel="prev-archive" of archived feeds, RFC 5005 section 4, or rel="next" of paged feeds,
section 3), one message of the history queue each, so that it goes at its own slow pace beside the
polling, under the same SSRF guard, limits and host pauses. Each document is fetched once and its
raw bytes stored; its entries are kept whatever their dates (the age filters are for news, not
history), marked backfilled: no NewEntry event, no analysis, and their own dates in the feeds.

The walk stops at the archive's end, at a document walked already (a loop), at a document whose
entries were all stored already (imported before), at STARFEED_BACKFILL_MAX_DOCS documents or
STARFEED_BACKFILL_MAX_ENTRIES entries, or at a document that cannot be read; the source's
`history` says how far it got and why it stopped."""

from __future__ import annotations

import hashlib
import logging

from starfeed.fetch.document import source_asking
from starfeed.fetch.entries import entry_targets, store_entries
from starfeed.fetch.http import FetchResult, fetch
from starfeed.fetch.record import store_raw
from starfeed.fetch.stage import describe
from starfeed.kinds.registry import FEED, kind_of
from starfeed.model import Source
from starfeed.parse.ingest import ingest
from starfeed.store import Storage
from starfeed.urlpolicy import redact

log = logging.getLogger(__name__)
MAX_DELAY = 900  # SQS's longest delay: a host paused longer is tried again after it
WALKED_KEPT = 1000  # archive documents a source remembers having walked (16 bytes each)


def first_step(source: Source) -> dict:
    """The walk's first message: the feed itself, for its link to the archive."""
    return {"source_id": source.source_id, "url": source.url, "docs": 0, "entries": 0, "walked": []}


def walk_step(storage: Storage, step: dict, now: float) -> dict | None:
    """One document of the walk; the next step (with "delay", seconds), or None once it stops."""
    source = storage.sources.get(step["source_id"])
    if source is None or not source.live:
        log.info("history: %s is gone, removed or disabled; the walk stops", step["source_id"])
        return None
    paused = storage.hosts.paused({source.host}, now).get(source.host)
    if paused is not None:  # the host asked to be left alone: the walk waits too
        return {**step, "delay": min(MAX_DELAY, int(paused.until - now) + 1)}
    settings, url = storage.settings, step["url"]
    try:
        # Its archive is asked for as its feed is: its own headers, cookies and proxy.
        ask = source_asking(storage, source)
        result = ask if isinstance(ask, FetchResult) else fetch(url, settings, ask=ask)
        raw_ref = store_raw(storage, source, result, now) if result.status is not None else None
        if result.error:
            return _stop(storage, source, step, now, "stopped", f"{redact(url)}: {result.error}")
        # An archive's documents are feeds (RFC 5005), whatever reads the source's own.
        ingested = ingest(FEED.read, result.body, result.url, result.headers.get("Content-Type"), source, now,
                          settings, history=True)
        if ingested.error:
            return _stop(storage, source, step, now, "stopped", f"{redact(url)}: {ingested.error}")
        # The feed's own entries too: a first fetch's filters leave out those published before
        # the subscription, and history is the point here.
        room = max(0, settings.backfill_max_entries - step["entries"])
        for entry in ingested.entries[:room]:
            entry.raw_refs = [{"fetch_id": raw_ref["fetch_id"]}] if raw_ref else []
        new = store_entries(storage, ingested.entries[:room], now, source.collections, document="archive",
                            source=source).new
        if new:
            storage.queues.send_render(kind_of(source).targets(source) + entry_targets(new))
    except Exception as exc:  # noqa: BLE001 - the walk stops with the reason; polling goes on
        return _stop(storage, source, step, now, "stopped", f"{redact(url)}: {describe(exc)}")
    walked = [*step["walked"], _digest(url)]
    done = {**step, "url": ingested.older, "docs": step["docs"] + 1, "entries": step["entries"] + len(new),
            "walked": walked}
    older = ingested.older
    stored = len(new)
    if older is None:
        return _stop(storage, source, done, now, "done", "the archive ends here" if step["docs"] else
                     "the feed links no archive (rel=\"prev-archive\") and no next page (rel=\"next\")", stored)
    if _digest(older) in walked:
        return _stop(storage, source, done, now, "done", f"{redact(older)} was walked already: a loop", stored)
    if _digest(older) in (source.history or {}).get("walked", []):
        return _stop(storage, source, done, now, "done", f"{redact(older)} was walked already, by an earlier walk",
                     stored)
    # A step retried (its next message was lost) finds its own entries stored: that is no end.
    retried = _digest(url) in (source.history or {}).get("walked", [])
    if step["docs"] and ingested.entries and not new and not retried:
        return _stop(storage, source, done, now, "done", "a document whose entries were all stored already", stored)
    if done["docs"] > settings.backfill_max_docs:
        return _stop(storage, source, done, now, "stopped",
                     f"{settings.backfill_max_docs} archive documents walked (STARFEED_BACKFILL_MAX_DOCS)", stored)
    if done["entries"] >= settings.backfill_max_entries:
        return _stop(storage, source, done, now, "stopped",
                     f"{settings.backfill_max_entries} entries imported (STARFEED_BACKFILL_MAX_ENTRIES)", stored)
    _progress(storage, source, done, now, "walking", None, len(new))
    return {**done, "delay": settings.backfill_pause}


def _stop(storage: Storage, source: Source, step: dict, now: float, state: str, reason: str,
          new: int = 0) -> None:
    _progress(storage, source, step, now, state, reason, new)
    log.info("history: %s: %s after %d documents, %d entries: %s", redact(source.url), state,
             max(0, step["docs"] - 1), step["entries"], reason)
    return None


def _progress(storage: Storage, source: Source, step: dict, now: float, state: str, reason: str | None,
              new: int = 0) -> None:
    earlier = (source.history or {}).get("walked", [])
    history = {**(source.history or {}), "state": state, "documents": max(0, step["docs"] - 1),
               "entries": step["entries"], "reason": reason, "at": now,
               # The archive documents walked, by digest, this walk's and earlier ones': never fetched again.
               "walked": (earlier + [d for d in step["walked"][1:] if d not in earlier])[-WALKED_KEPT:]}
    if state != "walking":
        history["finished_at"] = now
    changes = {"history": history}
    if new:  # `source list` counts what a walk stored with the rest
        changes["entry_count"] = source.entry_count + new
    storage.sources.change(source.source_id, changes)


def _digest(url: str | None) -> str:
    return hashlib.sha256((url or "").encode()).hexdigest()[:16]

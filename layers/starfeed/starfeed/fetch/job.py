"""Fetch one leased source: conditional GET, raw bytes stored before parsing, entries normalized
and deduplicated, the outcome and the next check written back, renders requested."""

from __future__ import annotations

import logging
import random
import time
import uuid

from starfeed.fetch.http import FetchResult, fetch
from starfeed.model import FetchOutcome, Source
from starfeed.parse.feed import parse_feed
from starfeed.parse.normalize import normalize_entries, rfc3339
from starfeed.schedule.decide import decide
from starfeed.store import Storage

log = logging.getLogger(__name__)


def fetch_source(storage: Storage, source_id: str, now: float | None = None,
                 rng: random.Random | None = None) -> FetchOutcome | None:
    """The fetch's outcome; None when the source is gone or disabled (the message is done with)."""
    now = time.time() if now is None else now
    source = storage.catalog.get_source(source_id)
    if source is None or not source.enabled:
        log.info("fetcher: %s is gone or disabled; skipped", source_id)
        return None
    lease, first_fetch = source.locked_until, source.status == "new"
    result = fetch(source.url, storage.settings, etag=source.etag,
                   last_modified=source.last_modified)
    raw_ref = _store_raw(storage, source, result, now) if result.status is not None else None
    outcome, new = _ingest(storage, source, result, raw_ref, now)

    decision = decide(source, outcome, storage.settings, now, rng or random.Random())
    source.interval, source.next_check_at = decision.interval, decision.next_check_at
    source.reason, source.consecutive_failures = decision.reason, decision.consecutive_failures
    source.last_fetch_at, source.http_status = now, result.status
    source.last_error = outcome.error
    if outcome.failed:
        source.status = "error"
    else:
        source.status = "not-modified" if outcome.not_modified else "ok"
        source.last_success_at = now
        source.etag = result.headers.get("ETag") or source.etag
        source.last_modified = result.headers.get("Last-Modified") or source.last_modified
    source.entry_count += len(new)
    if not storage.catalog.finish_fetch(source, lease):
        log.warning("fetcher: lease on %s was lost; its outcome was not written", source.url)
    if new or first_fetch:  # a first fetch publishes the source's feed, even empty
        storage.queues.send_render(["feed", f"s/{source.source_id}/feed"])
    log.info("fetcher: %s -> %s, %d new, next in %ds (%s)%s", source.url,
             result.status or "no response", len(new),
             int((decision.next_check_at or now) - now), decision.reason,
             f": {outcome.error}" if outcome.error else "")
    return outcome


def _ingest(storage: Storage, source: Source, result: FetchResult, raw_ref: dict | None,
            now: float) -> tuple[FetchOutcome, list]:
    if result.error:
        return FetchOutcome(result.status, error=result.error, retry_after=result.retry_after), []
    if result.not_modified or _same_validators(source, result):
        return FetchOutcome(result.status, not_modified=True), []
    parsed = parse_feed(result.body, result.url, result.headers.get("Content-Type"))
    if parsed.error:
        return FetchOutcome(result.status, error=parsed.error), []
    entries = normalize_entries(parsed.entries, source.source_id, result.url, now)
    for entry in entries:
        entry.raw_refs = [{"fetch_id": raw_ref["fetch_id"]}] if raw_ref else []
    new = storage.catalog.upsert_entries(entries, now)
    source.title = parsed.title or source.title
    source.site_url = parsed.link or source.site_url
    return FetchOutcome(result.status, new_entries=len(new), ttl_minutes=parsed.ttl_minutes), new


def _same_validators(source: Source, result: FetchResult) -> bool:
    """A 200 carrying the validator we already hold is unmodified too."""
    etag, modified = result.headers.get("ETag"), result.headers.get("Last-Modified")
    return bool((etag and etag == source.etag) or (not etag and modified and modified == source.last_modified))


def _store_raw(storage: Storage, source: Source, result: FetchResult, now: float) -> dict:
    record = {"feed_id": source.source_id, "fetched_at": rfc3339(now), "url": result.url,
              "http_status": result.status, "request_headers": result.request_headers,
              "response_headers": result.headers, "content_type": result.headers.get("Content-Type")}
    return storage.blobs.put_raw_fetch(uuid.uuid4().hex, record, result.body)

"""What every fetch job writes onto its source, whatever the kind: the raw payload's reference,
the fetch history, and the scheduling decision with its history. Shared by fetch/document.py
(feeds and pages) and fetch/github_job.py (GitHub), so neither imports the other."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import asdict

from starfeed.fetch.http import FetchResult
from starfeed.fetch.stage import describe
from starfeed.formats import DEFAULT
from starfeed.model import SUCCEEDED_BY_STATUS, Entry, FailureClass, FetchOutcome, Source
from starfeed.parse.normalize import rfc3339
from starfeed.schedule.decide import Decision
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.urlpolicy import redact

log = logging.getLogger(__name__)


def store_raw(storage: Storage, source: Source, result: FetchResult, now: float) -> dict | None:
    """Every response is kept before it is parsed (docs/design.md#raw-first), but a 304: it has no body to
    parse, and its two PUTs (the body's and the record's) were the largest line of the bill
    (`make cost`: most fetches are 304s). Its status and time stay in the fetch history."""
    if result.not_modified:
        return None
    record = {"feed_id": source.source_id, "fetched_at": rfc3339(now), "url": redact(result.url),
              "http_status": result.status, "request_headers": result.request_headers,
              "response_headers": dict(result.headers), "content_type": result.headers.get("Content-Type")}
    return storage.blobs.put_raw_fetch(uuid.uuid4().hex, record, result.body)


def new_entry_detail(source: Source, entry: Entry, public_url: str) -> dict:
    """A NewEntry event's detail: its payload (docs/design.md#new-entry-event), plus the entry's title, the rules'
    verdict (a consumer of every entry sees which the feeds leave out) and its source as a consumer
    names it (the URL redacted, as every public view shows it)."""
    return {"entry_uid": entry.entry_uid, "feed_id": entry.feed_id, "published": entry.published,
            "canonical_link": entry.canonical_link, "raw_refs": entry.raw_refs, "ingested_at": entry.first_seen,
            "title": entry.title, "blocked_by": entry.blocked_by, "tags": list(entry.tags),
            "rule_sets": list(entry.rule_sets),
            "source": {"url": redact(source.url), "title": source.title,
                       "feed": f"{public_url.rstrip('/')}/" + DEFAULT.file(f"s/{source.source_id}/feed")}}


def publish_new(storage: Storage, source: Source, entries: list[Entry]) -> None:
    """NewEntry events for entries just stored for the first time, after the write that made them
    new: a redelivered fetch finds them stored and publishes nothing again. Entries EventBridge
    refuses are sent again (store/events.py); what it still refuses is logged, and the fetch,
    whose entries are stored, goes on."""
    if not entries:
        return
    try:
        storage.events.new_entries([new_entry_detail(source, e, storage.settings.public_url) for e in entries])
    except Exception as exc:  # noqa: BLE001 - the entries are stored; only their announcement is lost
        log.error("fetcher: %s: NewEntry events for %d entries not published: %s", redact(source.url),
                  len(entries), describe(exc))


def tap_new(storage: Storage, source: Source, entries: list[Entry], now: float) -> None:
    """The NDJSON tap (docs/design.md#ndjson-taps): new entries as NDJSON in the raw bucket,
    partitioned by day, for Athena or `starfeed tap export` (each names its fetch in raw_refs). Best
    effort, like the events: the entries are stored."""
    if not entries:
        return
    try:
        storage.blobs.put_tap(rfc3339(now)[:10], [json.dumps(asdict(e), ensure_ascii=False) for e in entries])
    except Exception as exc:  # noqa: BLE001 - the entries are stored; only the tap misses them
        log.error("fetcher: %s: %d entries not tapped: %s", redact(source.url), len(entries), describe(exc))


def remember_fetch(source: Source, raw_ref: dict | None, status: int | None, outcome: str, now: float,
                   settings: Settings, elapsed: float | None = None, failure: FailureClass | None = None) -> None:
    """The source's last fetches, newest first, each with its raw payload's id (the payload's
    record holds its digest) and, for a request made, its duration (ms: `starfeed status` takes
    the p99 from them) and, for a failure, its class. Keys without a value, and an outcome its
    status says, are left out: the
    source item is written twice a fetch, at a write unit per KB, and these records were most of
    it (outcome_of reads them back)."""
    record = {"fetch_id": raw_ref["fetch_id"] if raw_ref else None, "at": rfc3339(now), "status": status,
              "outcome": None if SUCCEEDED_BY_STATUS.get(status) == outcome else outcome,
              "class": failure.value if failure else None, "ms": round(elapsed * 1000) if elapsed else None}
    record = {key: value for key, value in record.items() if value is not None}
    source.fetch_history = ([record] + source.fetch_history)[:settings.fetch_history]


def wait_for_host(storage: Storage, source: Source, until: float, now: float) -> None:
    """Not fetched: the host asked to be left alone until `until` (a pause, a crawl delay's turn
    taken by another request). The source comes back then; its lease is released, nothing failed."""
    storage.sources.change(source.source_id, {"next_check_at": until, "locked_until": None, "reason": "host-paused"})
    log.info("fetcher: %s: host %s is paused for %ds; not fetched", redact(source.url), source.host, until - now)


def apply_decision(source: Source, decision: Decision, now: float, settings: Settings) -> None:
    """The schedule's decision, written onto the source with a line in its decision history."""
    source.decisions = ([{"at": rfc3339(now), "reason": decision.reason, "before": source.interval,
                          "after": decision.interval}] + source.decisions)[:settings.decision_history]
    source.interval, source.next_check_at = decision.interval, decision.next_check_at
    source.reason, source.consecutive_failures = decision.reason, decision.consecutive_failures
    source.publications, source.ewma_interarrival = list(decision.publications), decision.ewma
    source.hour_counts = list(decision.hour_counts)


def fetch_fields(source: Source, before: Source, http_status: int | None, outcome: FetchOutcome, new: int,
                 retries: int) -> dict:
    """The fields of a fetch's log line (docs/design.md#log-fields) (and what its metrics are made of): the URL
    redacted as every public view shows it; never a credential, a token or a secret."""
    return {"feed_id": source.source_id, "url": redact(source.url), "host": source.host, "kind": source.kind,
            "decision_reason": source.reason, "http_status": http_status,
            "interval_before": before.interval, "interval_after": source.interval,
            "ewma_interval": round(source.ewma_interarrival) if source.ewma_interarrival else None,
            "new_entries": new, "not_modified": bool(outcome.not_modified), "retries": retries,
            "error": outcome.error, "status_class": outcome.failure.metric if outcome.failure else None,
            "bytes_in": 0, "compression_ratio": None, "latency_ms": None}

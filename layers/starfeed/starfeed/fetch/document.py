"""Fetch one leased source read from one HTTP document (a feed, a web page: kinds.base.DocumentKind):
conditional GET, raw bytes stored before parsing, entries read by its kind and deduplicated, the
outcome and the next check written back, renders requested. And take a document a WebSub hub
pushed, as a fetched one is taken."""

from __future__ import annotations

import logging
import random
import time
from copy import deepcopy
from dataclasses import replace
from typing import Protocol

from requests.utils import parse_header_links

from starfeed import observe
from starfeed.fetch import robots
from starfeed.fetch.entries import entry_targets, store_entries
from starfeed.fetch.guard import origin_of
from starfeed.fetch.headers import freshness
from starfeed.fetch.http import Asking, FetchResult, asking, fetch
from starfeed.fetch.options import OptionError, Secrets
from starfeed.fetch.record import (
    apply_decision,
    fetch_fields,
    publish_new,
    remember_fetch,
    store_raw,
    tap_new,
    wait_for_host,
)
from starfeed.fetch.stage import StageFailed, describe, stage
from starfeed.model import Document, FailureClass, FetchOutcome, Pace, Source, Status, document_failure, failure_class
from starfeed.parse.ingest import Ingested, ingest
from starfeed.parse.normalize import rfc3339
from starfeed.render import SOURCES_SUMMARY
from starfeed.schedule.decide import decide_fetch, pushed_check, renewal_only
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.store.blobs import raw_fetch_key
from starfeed.store.records import DAY
from starfeed.store.secrets import Unreadable
from starfeed.urlpolicy import redact
from starfeed.websub import hub, subscription

log = logging.getLogger(__name__)


class DocumentKind(Protocol):
    """What this fetch asks of a kind read from one document (starfeed.kinds.base.DocumentKind)."""

    @property
    def crawled(self) -> bool: ...

    def read(self, body: bytes, url: str, content_type: str | None, source: Source, now: float,
             settings: Settings, history: bool = False) -> Ingested: ...

    def targets(self, source: Source) -> list[str]: ...


def fetch_document(kind: DocumentKind, storage: Storage, source: Source, before: Source, lease: float | None,
                   now: float, rng: random.Random) -> FetchOutcome | None:
    """Every stage after the lease is guarded: whatever a document holds, the source records the
    outcome (a failure with its stage and cause) and its message succeeds. None: nothing fetched,
    as its host's turn had not come (the source moved to it), or as the check was for its WebSub
    lease's renewal alone."""
    settings, first_fetch = storage.settings, source.status == Status.NEW
    if renewal_only(source, now, settings):
        renew_lease(storage, source, now)
        return None
    previously_failed, listed = source.status == Status.ERROR, _listing(source)
    result, raw_ref, new = FetchResult(source.url, None), None, []
    retries = observe.RetryCounter(time.sleep)
    try:
        with stage("fetch"), observe.span("http request", source_id=source.source_id, host=source.host):
            ask = source_asking(storage, source)  # a FetchResult when its options cannot be used
            page = ask if isinstance(ask, FetchResult) else (
                _fetch_page(storage, source, now, retries, ask) if kind.crawled else
                fetch(source.url, settings, etag=source.etag, last_modified=source.last_modified, sleep=retries,
                      ask=ask))
            if page is None:
                return None
            result = page
            observe.annotate(http_status=result.status)
        # The document parsed last time, byte for byte, is kept already and holds no new entry.
        same_document = _same_document(source, result, now, settings)
        with stage("store raw"), observe.span("store raw"):  # every byte kept before it is parsed
            raw_ref = (store_raw(storage, source, result, now)
                       if result.status is not None and not same_document else None)
        with stage("parse"), observe.span("parse"):
            outcome, ingested = _outcome(kind, source, result, now, settings, same_document)
        if ingested is not None and not same_document:
            with observe.span("store"):
                new, error = _store(storage, source, ingested, raw_ref, now)
            outcome = replace(outcome, new_entries=len(new), error=error)
        # A first fetch publishes the source's feed, even empty; after a failure the entries a
        # failed attempt stored may not have been rendered yet.
        if new or first_fetch or previously_failed:
            with stage("render request"), observe.span("render request"):
                storage.queues.send_render(kind.targets(source) + entry_targets(new))
        if result.status is not None and not outcome.failed:
            _subscribe_if_announced(storage, source, result, ingested, now)
            # Written already, before the hub was asked: its verification, which may come before
            # this fetch's outcome is written, is not overwritten by it.
            before.push, before.push_secret = source.push, source.push_secret
    except StageFailed as failed:
        log.warning("fetcher: %s: %s", redact(source.url), failed)
        outcome = FetchOutcome(result.status, error=str(failed), failure=FailureClass.OURS)

    # Decisions follow the pace the scheduler derives from every source (schedule/pace.py).
    with observe.span("schedule decision"):
        _record(source, result, outcome, raw_ref, now, settings, storage.pace.current(), rng)
    refusing = outcome.failure is not None and outcome.failure.refusing
    if refusing or result.status == 429 or (result.status == 503 and result.retry_after is not None):
        # Every source on the host waits, not only this one (politeness is per host): a site that
        # blocks or rate-limits one of its feeds refuses its neighbours too.
        wait = max(result.retry_after or 0.0, (source.next_check_at or now) - now)  # as long as the source waits
        storage.hosts.pause(source.host, now + wait, outcome.error or f"HTTP {result.status}")
    source.entry_count += len(new)
    with observe.span("store outcome"):
        written = storage.sources.finish_fetch(source, before, lease)
    if not written:
        log.warning("fetcher: lease on %s was lost; its outcome was not written", redact(source.url))
    elif _listing(source) != listed:
        # A 410 disabled it: its own feed is unpublished and its entries leave the others.
        relist(storage, [] if source.enabled else kind.targets(source))
    fields = fetch_fields(source, before, result.status, outcome, len(new), retries.count)
    fields.update(zip(("bytes_in", "compression_ratio"), observe.wire_bytes(result.headers, result.body)))
    fields["latency_ms"] = round(result.elapsed * 1000)
    observe.fetched(fields)
    log.info("fetcher: %s -> %s, %d new, next %s (%s)%s", redact(source.url),
             result.status or "no response", len(new),
             f"in {int(source.next_check_at - now)}s" if source.next_check_at else "never",
             source.reason, f": {outcome.error}" if outcome.error else "", extra=fields)
    return outcome


def _store(storage: Storage, source: Source, ingested: Ingested, raw_ref: dict | None,
           now: float, document: Document = "feed") -> tuple[list, str | None]:
    """A document's entries stored (a fetched one's, or a pushed one's: document "push"): (the new
    ones, why some could not be stored). A deframed source's new entries are queued for analysis
    before they are written (the enricher retries one it cannot read yet)."""
    with stage("store"):
        for entry in ingested.entries:
            entry.raw_refs = [{"fetch_id": raw_ref["fetch_id"]}] if raw_ref else []
        announce = (lambda fresh: storage.queues.send_enrichments(
            source.source_id, [e.entry_uid for e in fresh])) if source.deframe else None
        stored = store_entries(storage, ingested.entries, now, source.collections, announce, document,
                               ingested.left_out, source)
    source.title = ingested.title or source.title
    source.site_url = ingested.link or source.site_url
    source.language = ingested.language or source.language
    source.last_dropped = dict(ingested.dropped)  # `source list` says what the filters hid
    publish_new(storage, source, stored.new)  # with the source's title, new on a first fetch
    tap_new(storage, source, stored.new, now)
    return stored.new, stored.error


def take_push(kind: DocumentKind, storage: Storage, source: Source, fetch_id: str, now: float) -> FetchOutcome | None:
    """A document a WebSub hub pushed, its raw bytes stored by the callback: parsed, filtered,
    deduplicated, stored and rendered as a fetched one is, and recorded as "push" in the fetch
    history. The schedule is the safety check's; the lease stays with the fetch that holds one."""
    stored = storage.blobs.get_raw_fetch(raw_fetch_key(fetch_id))
    if stored is None:
        log.warning("fetcher: %s: pushed document %s is not stored (expired?); nothing taken",
                    redact(source.url), fetch_id)
        return None
    record, body = stored
    before = deepcopy(source)
    raw_ref = {"fetch_id": fetch_id, "key": raw_fetch_key(fetch_id), "body_sha256": record.get("body_sha256")}
    topic = (source.push or {}).get("topic") or source.url
    content_type = (record.get("response_headers") or {}).get("Content-Type")
    new: list = []
    try:
        with stage("parse"):
            ingested = ingest(kind.read, body, topic, content_type, source, now, storage.settings)
        outcome = FetchOutcome(200, error=ingested.error,
                               failure=document_failure(ingested.error) if ingested.error else None)
        if not ingested.error:
            new, error = _store(storage, source, ingested, raw_ref, now, "push")
            outcome = replace(outcome, new_entries=len(new), error=error)
        if new:
            with stage("render request"):
                storage.queues.send_render(kind.targets(source) + entry_targets(new))
    except StageFailed as failed:
        outcome = FetchOutcome(200, error=str(failed), failure=FailureClass.OURS)
    remember_fetch(source, raw_ref, 200, f"push: {outcome.error}" if outcome.error else "push", now,
                   storage.settings, failure=outcome.failure)
    source.entry_count += len(new)
    storage.sources.finish_fetch(source, before, None, release=False)
    log.info("fetcher: %s <- pushed, %d new%s", redact(source.url), len(new),
             f": {outcome.error}" if outcome.error else "",
             extra={"feed_id": source.source_id, "url": redact(source.url), "host": source.host, "pushed": True,
                    "new_entries": len(new), "error": outcome.error})
    return outcome


def _subscribe_if_announced(storage: Storage, source: Source, result: FetchResult, ingested: Ingested | None,
                            now: float) -> None:
    """WebSub: a feed that announces a hub and its self URL is subscribed to (or its subscription
    renewed, or asked for again after a denial or a failure). The subscription is written before
    the hub is asked, since the hub may verify it at once; a hub that refuses is recorded, and
    the fetch goes on whatever happens."""
    settings = storage.settings
    try:
        found = subscription.discover(parse_header_links(result.headers.get("Link") or ""),
                                      ingested.hub if ingested else None,
                                      ingested.self_url if ingested else None, result.url)
        why = subscription.wanted(source.push, found, now, settings)
        if why is None:
            return
        hub_url, topic = found
        if why in ("new", "moved") or not source.push_secret:
            push, secret = subscription.new_subscription(hub_url, topic, now)
        else:  # the same callback and secret: the hub renews what it has
            push, secret = {**source.push, "requested_at": now, "renewing": True}, source.push_secret
        storage.sources.change(source.source_id, {"push": push, "push_secret": secret})
        error = hub.ask(hub_url, "subscribe", topic, hub.callback_url(settings, source.source_id, push["token"]),
                        secret, settings)
        if error:
            push = {**push, "reason": error, "renewing": False,
                    "state": push["state"] if why == "renew" else subscription.FAILED}
            storage.sources.change(source.source_id, {"push": push})
        source.push, source.push_secret = push, secret
        log.info("fetcher: %s: WebSub subscription (%s) %s", redact(source.url), why,
                 f"refused: {error}" if error else f"asked of {hub_url}")
    except Exception as exc:  # noqa: BLE001 - push is a bonus: polling goes on without it
        log.warning("fetcher: %s: WebSub subscription not asked for: %s", redact(source.url), describe(exc))


def source_asking(storage: Storage, source: Source) -> Asking | FetchResult:
    """How the source is asked for: its options with their secret values from the token store,
    and its proxy or STARFEED_PROXY; or, when one of them cannot be used, the failed fetch that
    says why (that source alone fails, docs/design.md#request-options)."""
    options = source.request
    try:
        secrets = None
        if options is not None and options.has_secrets:
            try:
                secrets = Secrets.of(storage.secrets.source_secret(options.secret or ""))
            except Unreadable as exc:
                raise OptionError(f"its secret values: {exc}") from None
        return asking(options, secrets, storage.settings, storage.secrets.proxy_login)
    except OptionError as exc:
        why = (f"{FailureClass.OPTIONS.words}: {exc}; not fetched (`starfeed source set "
               f"{source.source_id} ...` gives them again)")
        return FetchResult(source.url, None, error=why, failure=FailureClass.OPTIONS)


def renew_lease(storage: Storage, source: Source, now: float) -> None:
    """WebSub: the lease renewed before it ends, with the same callback and secret, and the feed
    not fetched: it stays on its safety poll (docs/design.md#websub-renewal). The next check (this
    renewal asked again, or the poll) is written with the request, and the lease released, before
    the hub is asked: its verification, which may come at once, sets the next check from the new lease."""
    settings, push = storage.settings, {**(source.push or {}), "requested_at": now, "renewing": True}
    source.push = push
    at, reason = pushed_check(source, now, settings)
    storage.sources.change(source.source_id, {"push": push, "next_check_at": at, "locked_until": None,
                                              "reason": reason})
    callback = hub.callback_url(settings, source.source_id, push["token"])
    error = hub.ask(push["hub"], "subscribe", push["topic"], callback, source.push_secret, settings)
    if error:
        storage.sources.change(source.source_id, {"push": {**push, "reason": error, "renewing": False}})
    log.info("fetcher: %s: WebSub lease renewal %s; not fetched", redact(source.url),
             f"refused: {error}" if error else f"asked of {push['hub']}")


def _fetch_page(storage: Storage, source: Source, now: float, sleep=time.sleep,
                ask: Asking | None = None) -> FetchResult | None:
    """A website source is crawled, so its host's robots.txt decides first; a page it disallows
    is not requested, and says why. A Crawl-delay is the host's turn, taken before the request
    (docs/design.md#crawl-delay); None when another request has it: the source waits for its end,
    as for a host's pause, unfetched."""
    allowed = robots.check(storage, source.url, now, storage.hosts.robots_known)
    if not allowed.allowed:
        why = f"{FailureClass.ROBOTS.words}: {allowed.reason} (not fetched; checked again when due)"
        return FetchResult(source.url, None, error=why, refused=True, failure=FailureClass.ROBOTS)
    if (free_at := robots.turn(storage, source.url, allowed, now)) is not None:
        wait_for_host(storage, source, free_at, now)
        return None
    return fetch(source.url, storage.settings, etag=source.etag, last_modified=source.last_modified,
                 sleep=sleep, ask=ask)


def _listing(source: Source) -> tuple:
    """What the views that list every source show of it; they are rebuilt when it changes. A
    healthy feed flips between ok and not-modified all day: that alone is no change."""
    healthy = source.status in (Status.OK, Status.NOT_MODIFIED)
    return healthy or source.status, source.title, source.site_url, source.enabled, source.last_error


def relist(storage: Storage, targets: list[str]) -> None:
    """Render these targets and the views that list every source. Best effort: the fetch's outcome
    is written, and the listing is rebuilt at the next change if this request is lost."""
    try:
        storage.queues.send_render([*targets, SOURCES_SUMMARY])
    except Exception as exc:  # noqa: BLE001 - the fetch's outcome is written; only a view lags
        log.warning("fetcher: the sources summary was not requested: %s", describe(exc))


def _outcome(kind: DocumentKind, source: Source, result: FetchResult, now: float, settings: Settings,
             same_document: bool = False) -> tuple[FetchOutcome, Ingested | None]:
    if result.error:
        failure = result.failure or failure_class(result.status, refused=result.refused)
        return FetchOutcome(result.status, error=result.error, retry_after=result.retry_after, failure=failure), None
    if result.not_modified or _same_validators(source, result):
        fresh_for = freshness(result.headers, now, settings.max_interval)
        return FetchOutcome(result.status, not_modified=True, fresh_for=fresh_for), None
    ingested = ingest(kind.read, result.body, result.url, result.headers.get("Content-Type"), source, now, settings)
    if ingested.error:
        return FetchOutcome(result.status, error=ingested.error, failure=document_failure(ingested.error)), None
    # The same bytes are still read, for what only the document says (its ttl and skip windows,
    # its hub): parsing costs CPU alone; its entries, stored already, are not read or written, and
    # its posts, counted already, are not counted again (the rhythm's hours would grow each time).
    return FetchOutcome(result.status, not_modified=same_document, ttl_minutes=ingested.ttl_minutes,
                        fresh_for=freshness(result.headers, now, settings.max_interval),
                        skip_hours=ingested.skip_hours, skip_days=ingested.skip_days,
                        publications=() if same_document else ingested.publications), ingested


def _record(source: Source, result: FetchResult, outcome: FetchOutcome, raw_ref: dict | None,
            now: float, settings: Settings, pace: Pace, rng: random.Random) -> None:
    """The fetch's outcome and the next check, written onto the source."""
    decision = decide_fetch(source, outcome, settings, now, rng, pace)
    apply_decision(source, decision, now, settings)
    source.last_fetch_at, source.http_status, source.last_error = now, result.status, outcome.error
    source.failure = outcome.failure
    if decision.dead:
        source.status = Status.DEAD  # off the schedule until `starfeed source sync`
    elif outcome.failed:
        source.status = Status.ERROR
    else:
        source.status = Status.NOT_MODIFIED if outcome.not_modified else Status.OK
        source.last_success_at = now
        etag, last_modified = result.validators
        source.etag, source.last_modified = etag or source.etag, last_modified or source.last_modified
        if raw_ref and not outcome.not_modified:  # a document read and stored whole
            source.body_sha256, source.body_stored_at = raw_ref["body_sha256"], now
    if result.status == 410:
        source.enabled, source.status = False, Status.GONE
        source.last_error = f"{outcome.error}; the source is disabled"
    _follow_permanent_redirect(source, result, now, settings)
    remember_fetch(source, raw_ref, result.status, outcome.error or source.status, now, settings, result.elapsed,
                   outcome.failure)


def _follow_permanent_redirect(source: Source, result: FetchResult, now: float,
                               settings: Settings) -> None:
    target = result.permanent_redirect if result.error is None else None
    if target is not None and len(target.encode()) > settings.max_link_bytes:
        target = None  # the source's URL is an index key: it stays where it was, and still works
    if target is not None and source.request is not None and source.request.has_secrets \
            and origin_of(target) != origin_of(source.url):
        target = None  # its secrets belong to its origin: the move is followed at each fetch, without them
    if target is None:
        source.redirect_url, source.redirect_count = None, 0
        return
    source.redirect_count = source.redirect_count + 1 if target == source.redirect_url else 1
    source.redirect_url = target
    if source.redirect_count >= settings.redirect_persistence:
        log.info("fetcher: %s moved permanently to %s; the source now uses it", redact(source.url), redact(target))
        # The latest changes only: a feed that keeps moving cannot grow its item without bound.
        source.url_changes = (source.url_changes + [{"from": redact(source.url), "to": redact(target),
                                                     "at": rfc3339(now)}])[-settings.decision_history:]
        source.url, source.redirect_url, source.redirect_count = target, None, 0


def _same_document(source: Source, result: FetchResult, now: float, settings: Settings) -> bool:
    """A 200 whose body is the last document stored and parsed, byte for byte, while its stored
    copy is younger than half the raw retention: it is not stored again, and its entries are
    neither read nor written (an unchanged 200 stored an object and read every entry it listed).
    Once the copy is older, the bytes are stored again, so a fetch never points at an expired one."""
    fresh = source.body_stored_at is not None and now - source.body_stored_at < settings.raw_retention_days * DAY / 2
    return (result.status == 200 and not result.error and fresh and source.body_sha256 is not None
            and result.body_sha256 == source.body_sha256)


def _same_validators(source: Source, result: FetchResult) -> bool:
    """A 200 carrying the validator we already hold is unmodified too."""
    etag, modified = result.headers.get("ETag"), result.headers.get("Last-Modified")
    return bool((etag and etag == source.etag) or (not etag and modified and modified == source.last_modified))

"""Stored sources and entries as the REST API shows them. Pure: URLs redacted and held to the
policy every output follows, times in RFC 3339, and each one's links."""

from __future__ import annotations

from dataclasses import asdict
from urllib.parse import quote

from starfeed.fetch.options import shown, via
from starfeed.formats import FORMATS
from starfeed.model import Entry, Source, failure_words
from starfeed.parse.normalize import rfc3339
from starfeed.serve.lookup import public
from starfeed.serve.rest import models
from starfeed.urlpolicy import redact

V1 = "/api/v1"


def _stamp(epoch: float | None) -> str | None:
    return rfc3339(epoch) if epoch is not None else None


def state_of(source: Source) -> str:
    if source.deleted_at is not None:
        return "removed"
    return str(source.status) if source.enabled else "disabled"


def feed_view(source: Source, base: str, global_proxy: str = "") -> models.Feed:
    """global_proxy: STARFEED_PROXY, when a feed without a proxy of its own goes through it."""
    base = base.rstrip("/")
    options = shown(source.request)
    return models.Feed(
        id=source.source_id, url=redact(source.url), kind=str(source.kind), title=source.title,
        site_url=source.site_url, collections=list(source.collections), state=state_of(source),
        enabled=bool(source.enabled), removed_at=_stamp(source.deleted_at), deframe=bool(source.deframe),
        root_domain=source.root_domain, created_at=rfc3339(source.created_at), http_status=source.http_status,
        last_error=source.last_error, failure_class=str(source.failure) if source.failure else None,
        failure_words=failure_words(source.failure, source.last_error),
        validators=models.Validators(etag=source.etag, last_modified=source.last_modified),
        schedule=models.Schedule(polling=bool(source.polling), interval_sec=int(source.interval or 0),
                                 min_interval_sec=source.min_interval, max_interval_sec=source.max_interval,
                                 next_check_at=_stamp(source.next_check_at) if source.live else None,
                                 reason=source.reason),
        stats=models.Stats(last_fetch_at=_stamp(source.last_fetch_at), last_success_at=_stamp(source.last_success_at),
                           consecutive_failures=source.consecutive_failures,
                           ewma_interarrival_sec=(int(source.ewma_interarrival)
                                                  if source.ewma_interarrival is not None else None),
                           entry_count=source.entry_count, dropped_last_fetch=dict(source.last_dropped)),
        links=models.FeedLinks(**{f.link_name: f"{base}/" + f.file(f"s/{source.source_id}/feed") for f in FORMATS},
                               entries=f"{base}{V1}/feeds/{source.source_id}/entries"),
        history=source.history and {k: source.history.get(k) for k in ("state", "documents", "entries", "reason")},
        request=models.RequestOptionsView(**options) if options else None,
        proxy=via(source.request, global_proxy),
        selectors=models.PageSelectors(**asdict(source.selectors)) if source.selectors else None)


def entry_path(entry_uid: str) -> str:
    """GET /api/v1/entries/{entry_uid}: the uid percent-encoded whole, slashes included."""
    return f"{V1}/entries/{quote(entry_uid, safe='')}"


def entry_view(entry: Entry, base: str) -> models.Entry:
    base = base.rstrip("/")
    document = public(entry)
    links = {"self": f"{base}{entry_path(entry.entry_uid)}?feed_id={entry.feed_id}",
             "feed": f"{base}{V1}/feeds/{entry.feed_id}"}
    fetch_id = next((r.get("fetch_id") for r in entry.raw_refs if r.get("fetch_id")), None)
    if fetch_id:
        links["raw"] = f"{base}{V1}/raw/{fetch_id}"
    document.pop("ordered_at", None)
    return models.Entry(**document, links=links)

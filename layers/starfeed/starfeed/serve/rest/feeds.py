"""/api/v1/feeds: list, read, subscribe, unsubscribe, refetch, and a feed's entries. Each action
is the package function `starfeed source …` calls (starfeed/subscribe.py)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from starfeed import subscribe
from starfeed.cursors import MAX_CURSOR_LENGTH, BadCursor, decode_keys, encode_keys
from starfeed.model import Selectors
from starfeed.serve.rest.models import PAGE_LIMIT, EntryPage, Feed, FeedPage, NewFeed, Refetch, Subscribed
from starfeed.serve.rest.paging import link_header, page_url
from starfeed.serve.rest.problems import ApiProblem, responses
from starfeed.serve.rest.views import V1, entry_view, feed_view
from starfeed.store import Storage
from starfeed.store.limits import SORT_KEY_BYTES

FEED_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # ids are hex; any the store holds is listed, so taken
STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
FeedId = Annotated[str, Path(pattern=FEED_ID.pattern, description="a feed's id, as GET /feeds lists it")]
Limit = Annotated[int, Query(ge=1, le=PAGE_LIMIT)]
Cursor = Annotated[str | None, Query(max_length=MAX_CURSOR_LENGTH, description="the `next` of the page before")]
Blocked = Annotated[Literal["false", "true", "only"], Query(
    description="the entries rules block (docs/design.md#rule-verdict), left out of every feed: false leaves "
                "them out, true lists them too, only lists them alone")]
# What each value of `blocked` asks the store for: shown entries, both, blocked ones.
BLOCKED_STATES: dict[str, bool | None] = {"false": False, "true": None, "only": True}
Moment = Annotated[str | None, Query(
    pattern=r"^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?$",
    description="RFC 3339, or a date (a time without a zone is UTC)")]


def stamp(moment: str | None) -> str | None:
    """A query's time as the store writes them: UTC, to the second."""
    if moment is None:
        return None
    try:
        parsed = datetime.fromisoformat(moment.upper().replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError):  # 9999-12-31T23:59-01:00 is past the last year a datetime holds
        raise ApiProblem(400, f"{moment!r} is not a time: expected RFC 3339, such as 2026-11-26T08:00:00Z") from None


def cursor_keys(cursor: str | None, kind: str, names: tuple[str, ...],
                valid: Callable[[dict[str, str]], bool] = lambda keys: True) -> dict[str, str] | None:
    """The keys a page's cursor holds. A cursor is read as hostile: keys it could not have come
    from (valid() says) are refused like an unreadable one, before they reach a query."""
    if cursor is None:
        return None
    try:
        keys = decode_keys(cursor, kind, names)
        if not valid(keys):
            raise BadCursor(f"cursor is not a cursor of this list: take it from the `next` of a page of {kind}")
    except BadCursor as exc:
        raise ApiProblem(400, str(exc)) from None
    return keys


def fits_key(value: str) -> bool:
    """Short enough for a DynamoDB range key (an entry's uid, a sort key)."""
    return len(value.encode("utf-8", "surrogatepass")) <= SORT_KEY_BYTES


def is_day(value: str) -> bool:
    try:
        return bool(datetime.strptime(value, "%Y-%m-%d"))
    except ValueError:
        return False


def _is_float(value: str) -> bool:
    try:
        return float(value) >= 0
    except ValueError:
        return False


def router(storage: Storage, base: Callable[[], str]) -> Router:
    """base(): the API's public URL, for the links a request's answer gives."""
    routes = Router()

    def shown(source) -> Feed:
        return feed_view(source, base(), subscribe.global_proxy_of(source, storage.settings))

    def existing(feed_id: str):
        """The feed, or 404: a removed one is gone until restored (subscribing to its URL again)."""
        source = storage.sources.get(feed_id)
        if source is None:
            raise ApiProblem(404, f"no feed with id {feed_id}: GET {V1}/feeds lists them")
        if source.deleted_at is not None:
            raise ApiProblem(404, f"feed {feed_id} was removed: POST {V1}/feeds with its URL, or "
                                  f"`starfeed source restore {feed_id}`, brings it back")
        return source

    @routes.get(f"{V1}/feeds", summary="Every feed (removed ones left out), oldest subscription first",
                responses=responses({200: FeedPage}, 400, 422))
    def list_feeds(limit: Limit = 50, cursor: Cursor = None) -> Response[FeedPage]:
        after = cursor_keys(cursor, "feeds", ("created_at", "id"),
                            lambda keys: fits_key(keys["id"]) and _is_float(keys["created_at"]))
        sources = sorted((s for s in storage.sources.all() if s.deleted_at is None),
                         key=lambda s: (s.created_at, s.source_id))
        if after:
            start = (float(after["created_at"]), after["id"])
            sources = [s for s in sources if (s.created_at, s.source_id) > start]
        page, more = sources[:limit], len(sources) > limit
        next_url = None
        if more:
            last = page[-1]
            next_url = page_url(base(), f"{V1}/feeds", {"limit": limit, "cursor": encode_keys(
                "feeds", {"created_at": repr(last.created_at), "id": last.source_id})})
        feeds = [shown(s) for s in page]
        return Response(200, "application/json", FeedPage(feeds=feeds, next=next_url), link_header(next_url))

    @routes.get(f"{V1}/feeds/<feed_id>", summary="One feed: its state, schedule and last fetch",
                responses=responses({200: Feed}, 404, 422))
    def get_feed(feed_id: FeedId) -> Feed:
        return shown(existing(feed_id))

    @routes.post(f"{V1}/feeds", summary="Subscribe, as `starfeed source add` does: checked once first "
                 "(an HTML page gives the feed it announces); a URL subscribed already is found, a removed "
                 "one restored", operation_id="subscribe", responses=responses({201: Subscribed, 200: Subscribed}, 422))
    def add_feed(new: Annotated[NewFeed, Body()]) -> Response[Subscribed]:
        try:
            done = subscribe.subscribe_url(storage, new.url, time.time(), collections=new.collections or None,
                                           backfill=new.backfill, website=new.website, pick=new.pick,
                                           no_check=not new.check, enforce_domain=new.enforce_domain,
                                           no_root_domain=new.no_root_domain, deframe=new.deframe,
                                           selectors=Selectors(**new.selectors.model_dump()) if new.selectors else None)
            if new.history:  # a feed subscribed already too: its history is what was asked for
                done.source = subscribe.start_history(storage, done.source.source_id, time.time())
        except subscribe.Refused as exc:
            raise ApiProblem(422, str(exc)) from None
        inspection = done.checked.inspection if done.checked else None
        from starfeed.inspect import first_fetch, found

        body = Subscribed(outcome=done.outcome, feed=shown(done.source),
                          found=found(inspection) if inspection else None,
                          first_fetch=first_fetch(inspection, new.backfill) if inspection else None,
                          discovered=[{"url": f.url, "kind": f.kind, "title": f.title}
                                      for f in (done.checked.feeds if done.checked else [])],
                          joined=done.joined, not_applied=done.not_applied)
        created = done.outcome == "added"
        headers = {"Location": f"{base().rstrip('/')}{V1}/feeds/{done.source.source_id}"}
        return Response(201 if created else 200, "application/json", body, headers)

    @routes.delete(f"{V1}/feeds/<feed_id>", summary="Unsubscribe (`starfeed source remove`): never fetched or "
                   "served again; kept until purged (then 404 here). Answers the feed as removed",
                   responses=responses({200: Feed}, 404, 422))
    def remove_feed(feed_id: FeedId) -> Feed:
        existing(feed_id)
        try:
            return shown(subscribe.remove(storage, feed_id, time.time()))
        except subscribe.Refused as exc:  # removed meanwhile, by another request
            raise ApiProblem(404, str(exc)) from None

    @routes.post(f"{V1}/feeds/<feed_id>/refetch", summary="Fetch now (`starfeed source sync`): the next "
                 "scheduler run fetches it", responses=responses({202: Refetch}, 404, 409, 422))
    def refetch(feed_id: FeedId) -> Response[Refetch]:
        existing(feed_id)
        try:
            subscribe.sync(storage, feed_id, time.time())
        except subscribe.Refused as exc:
            raise ApiProblem(409, str(exc)) from None
        return Response(202, "application/json",
                        Refetch(feed_id=feed_id, detail="due now: the next scheduler run fetches it"))

    @routes.post(f"{V1}/feeds/<feed_id>/backfill", summary="Import the feed's archive once (RFC 5005, "
                 "`starfeed source backfill`): 202, walked a document at a time; the feed's `history` follows it",
                 responses=responses({202: Feed}, 404, 409, 422))
    def backfill(feed_id: FeedId) -> Response[Feed]:
        existing(feed_id)
        try:
            source = subscribe.start_history(storage, feed_id, time.time())
        except subscribe.Refused as exc:
            raise ApiProblem(409, str(exc)) from None
        return Response(202, "application/json", shown(source))

    @routes.get(f"{V1}/feeds/<feed_id>/entries", summary="A feed's entries, newest first, whose time (as its "
                "feed orders them) is at or after `since` and before `until`",
                responses=responses({200: EntryPage}, 400, 404, 422))
    def feed_entries(feed_id: FeedId, since: Moment = None, until: Moment = None, limit: Limit = 50,
                     cursor: Cursor = None, blocked: Blocked = "false") -> Response[EntryPage]:
        existing(feed_id)
        since, until = stamp(since), stamp(until)
        if since and until and since > until:
            raise ApiProblem(400, f"since {since} is later than until {until}")
        # DynamoDB refuses a start key outside the query's range: a cursor reused with another range is not one.
        after = cursor_keys(cursor, "feed-entries", ("feed_id", "entry_uid", "sort_key"), lambda keys: (
            fits_key(keys["entry_uid"]) and fits_key(keys["sort_key"])
            and (not since or keys["sort_key"] >= since) and (not until or keys["sort_key"] < until)))
        if after and after["feed_id"] != feed_id:
            raise ApiProblem(400, "cursor is not a cursor of this list: it belongs to another feed's entries")
        page = storage.entry_lists.of_feed(feed_id, limit, since, until, after, BLOCKED_STATES[blocked])
        next_url = page.after and page_url(base(), f"{V1}/feeds/{feed_id}/entries", {
            "since": since, "until": until, "limit": limit, "blocked": None if blocked == "false" else blocked,
            "cursor": encode_keys("feed-entries", page.after)})
        return Response(200, "application/json",
                        EntryPage(entries=[entry_view(e, base()) for e in page.entries], next=next_url),
                        link_header(next_url))

    return routes

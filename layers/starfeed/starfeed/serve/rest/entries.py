"""/api/v1/entries (every feed's, in the order they were first stored), one entry by its uid,
and /api/v1/raw/{fetch_id}: the bytes a fetch received, as stored."""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from typing import Annotated
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from starfeed.cursors import encode_keys
from starfeed.parse.normalize import rfc3339
from starfeed.serve.rest.feeds import (
    BLOCKED_STATES,
    FEED_ID,
    STAMP,
    Blocked,
    Cursor,
    Limit,
    Moment,
    cursor_keys,
    fits_key,
    is_day,
    stamp,
)
from starfeed.serve.rest.models import Entry, EntryPage
from starfeed.serve.rest.paging import link_header, page_url
from starfeed.serve.rest.problems import ApiProblem, responses
from starfeed.serve.rest.views import V1, entry_view
from starfeed.store import Storage
from starfeed.store.blobs import raw_fetch_key
from starfeed.store.limits import SORT_KEY_BYTES

DAY = 86400
# A recorded header is shown as Starfeed-Origin-<Name>: only names HTTP allows, values on one line.
_HEADER_NAME = re.compile(r"^[A-Za-z0-9-]{1,64}$")
URL_SAFE = ":/?#[]@!$&'()*+,;=%~"
RAW_ANSWER_BYTES = 4 * 1024 * 1024  # a Lambda answers 6 MB at most, and bytes go base64-encoded


def router(storage: Storage, base: Callable[[], str]) -> Router:
    """base(): the API's public URL, for the links a request's answer gives."""
    routes = Router()

    def shown(entries):
        """Entries of removed feeds are gone until the feed is restored."""
        sources = storage.sources.get_many({e.feed_id for e in entries}) if entries else {}
        return [e for e in entries if e.feed_id in sources and sources[e.feed_id].deleted_at is None]

    @routes.get(f"{V1}/entries", summary="Every feed's entries first stored at `since` or later, in the order "
                "they were stored: poll with the last one's first_seen, or walk `next` (a page holds fewer than "
                "`limit` when it leaves blocked entries out)", responses=responses({200: EntryPage}, 400, 422))
    def entries_since(since: Moment = None, limit: Limit = 50, cursor: Cursor = None,
                      blocked: Blocked = "false") -> Response[EntryPage]:
        now = time.time()
        horizon = now - (storage.settings.entry_retention_days + 1) * DAY
        # Nothing older is stored: a page never walks the days before the retention period.
        start = max(stamp(since) or rfc3339(now - DAY), rfc3339(horizon))
        # A page starts no earlier than `since`'s day, and no query walks the days before it.
        after = cursor_keys(cursor, "entries", ("seen_day", "first_seen", "feed_id", "entry_uid"), lambda keys: (
            is_day(keys["seen_day"]) and start[:10] <= keys["seen_day"] <= rfc3339(now)[:10]
            and STAMP.match(keys["first_seen"]) is not None and keys["first_seen"] >= start
            and keys["first_seen"][:10] == keys["seen_day"] and fits_key(keys["feed_id"])
            and fits_key(keys["entry_uid"])))
        page = storage.entry_lists.first_seen_since(start, limit, after, now)
        next_url = page.after and page_url(base(), f"{V1}/entries", {
            "since": start, "limit": limit, "blocked": None if blocked == "false" else blocked,
            "cursor": encode_keys("entries", page.after)})
        state = BLOCKED_STATES[blocked]
        listed = [e for e in shown(page.entries) if state is None or (e.blocked_by is not None) == state]
        return Response(200, "application/json",
                        EntryPage(entries=[entry_view(e, base()) for e in listed], next=next_url),
                        link_header(next_url))

    @routes.get(f"{V1}/entries/<entry_uid>", summary="One entry by its uid, percent-encoded whole (slashes "
                "included); feed_id picks among feeds that share it, else the newest copy",
                responses=responses({200: Entry}, 404, 422))
    def one_entry(entry_uid: Annotated[str, Path(max_length=SORT_KEY_BYTES)],
                  feed_id: Annotated[str | None, Query(pattern=FEED_ID.pattern)] = None) -> Entry:
        copies = []
        for uid in dict.fromkeys((unquote(entry_uid), entry_uid)):  # see app.py: the path arrives decoded or not
            if 0 < len(uid.encode("utf-8", "surrogatepass")) <= SORT_KEY_BYTES:  # the table's range key
                copies += storage.entry_lists.with_uid(uid)
        copies = [e for e in shown(copies) if feed_id is None or e.feed_id == feed_id]
        if not copies:
            raise ApiProblem(404, "no stored entry has this uid" + (f" in feed {feed_id}" if feed_id else ""))
        return entry_view(copies[0], base())

    @routes.get(f"{V1}/raw/<fetch_id>", summary="The bytes a fetch received, as stored; its recorded status "
                "and response headers as Starfeed-Origin-* headers",
                responses=responses({200: "application/octet-stream"}, 404, 413, 422))
    def raw(fetch_id: Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")]):
        stored = storage.blobs.get_raw_fetch(raw_fetch_key(fetch_id))
        if stored is None:
            raise ApiProblem(404, f"no raw payload {fetch_id}: never stored, or past RawRetentionDays")
        record, body = stored
        if len(body) > RAW_ANSWER_BYTES:
            raise ApiProblem(413, f"{len(body):,} bytes: over what a Lambda may answer ({RAW_ANSWER_BYTES:,} "
                                  f"bytes, base64-encoded); it is in the raw bucket as {raw_fetch_key(fetch_id)}, "
                                  "after the record's line")
        headers = {"Starfeed-Origin-Status": str(record.get("http_status")),
                   "Starfeed-Fetched-At": str(record.get("fetched_at")),
                   "Starfeed-Url": quote(str(record.get("url")), safe=URL_SAFE),
                   "Repr-Digest": f"sha-256=:{base64.b64encode(bytes.fromhex(record['body_sha256'])).decode()}:",
                   # The body is the origin's, never ours to run: a browser must not render it.
                   "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"}
        for name, value in (record.get("response_headers") or {}).items():
            if _HEADER_NAME.match(name):
                headers[f"Starfeed-Origin-{name}"] = " ".join(str(value).split()).encode("ascii", "replace").decode()
        return Response(200, "application/octet-stream", body, headers)

    return routes


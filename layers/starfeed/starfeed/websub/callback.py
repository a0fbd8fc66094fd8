"""The callback a WebSub hub talks to, /websub/{source_id}/{token}: public, since hubs cannot
sign as IAM asks, and unguessable, a token per subscription. GET is the hub's verification of
intent (the challenge echoed only for what we asked for, else 404); POST is content, accepted
only with a valid X-Hub-Signature over the exact body (else acknowledged and discarded, as WebSub section 8
allows), then stored raw and queued for the fetcher, which takes it as it takes a fetch."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import time

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from starfeed.model import Source
from starfeed.parse.normalize import rfc3339
from starfeed.schedule.decide import pushed_check
from starfeed.schedule.dispatch import message_group
from starfeed.store import Storage
from starfeed.store.queues import FetchMessage
from starfeed.urlpolicy import redact
from starfeed.websub import subscription

log = logging.getLogger(__name__)
KEPT_HEADERS = ("content-type", "link", "x-hub-signature")  # what a pushed document's raw record keeps


def router(storage: Storage) -> Router:
    routes = Router()

    def subscribed(source_id: str, token: str) -> Source | None:
        source = storage.sources.get(source_id) if len(source_id) <= 64 else None
        push = source.push if source else None
        # As bytes: a path API Gateway decoded may hold any character, which compare_digest refuses in a str.
        return source if push and hmac.compare_digest(str(push.get("token", "")).encode(), token.encode()) else None

    def text(status: int, body: str = "") -> Response:
        return Response(status, "text/plain; charset=utf-8", body)

    @routes.get("/websub/<source_id>/<token>")
    def verification(source_id: str, token: str):
        source = subscribed(source_id, token)
        query = routes.current_event.get_query_string_value
        mode, topic, challenge = query("hub.mode"), query("hub.topic"), query("hub.challenge") or ""
        if source is None:
            return text(404, "no such subscription\n")
        agree, push = subscription.verified(source.push, mode, topic, query("hub.lease_seconds"), query("hub.reason"),
                                            time.time(), storage.settings)
        if not agree:
            log.info("websub: %s: refused the hub's %s of %s", redact(source.url), mode, redact(topic))
            return text(404, "not a subscription starfeed asked for\n")
        changes = {"push": push, **({} if push else {"push_secret": None})}
        if subscription.is_verified(push, time.time()):  # polled daily from now on, its lease renewed before it ends
            source.push = push
            changes.update(zip(("next_check_at", "reason"), pushed_check(source, time.time(), storage.settings)))
        storage.sources.change(source_id, changes)
        log.info("websub: %s: %s by the hub", redact(source.url), (push or {}).get("state", "unsubscribed"))
        return text(200, challenge if mode != "denied" else "")

    @routes.post("/websub/<source_id>/<token>")
    def content(source_id: str, token: str):
        source = subscribed(source_id, token)
        if source is None:
            return text(404, "no such subscription\n")
        event = routes.current_event
        body = base64.b64decode(event.body or "") if event.is_base64_encoded else (event.body or "").encode()
        if len(body) > storage.settings.websub_max_body:
            log.warning("websub: %s: a push of %d bytes refused (limit %d)", redact(source.url), len(body),
                        storage.settings.websub_max_body)
            return text(413, f"over {storage.settings.websub_max_body} bytes\n")
        if not subscription.signature_valid(event.headers.get("x-hub-signature"), source.push_secret, body):
            log.warning("websub: %s: a push with %s signature discarded", redact(source.url),
                        "an invalid" if event.headers.get("x-hub-signature") else "no")
            return text(202, "discarded\n")  # WebSub section 8: acknowledged, so the hub does not retry it
        if not source.live:
            log.info("websub: %s: a push for a removed or disabled source discarded", redact(source.url))
            return text(202, "discarded\n")
        now = time.time()
        topic = source.push.get("topic") or source.url
        record = {"feed_id": source_id, "fetched_at": rfc3339(now), "url": redact(topic), "http_status": 200,
                  "request_headers": {}, "push": True, "content_type": event.headers.get("content-type"),
                  "response_headers": {name.title(): event.headers[name] for name in KEPT_HEADERS
                                       if name in event.headers}}
        # Its id from its bytes: a hub delivering it again within SQS's five minutes is taken once.
        raw = storage.blobs.put_raw_fetch(hashlib.sha256(body).hexdigest()[:32], record, body)
        storage.queues.send_fetches([FetchMessage(source_id, now, message_group(source, storage.settings),
                                                  push=raw["fetch_id"])])
        log.info("websub: %s: %d bytes pushed, queued as %s", redact(source.url), len(body), raw["fetch_id"])
        return text(202, "accepted\n")

    return routes

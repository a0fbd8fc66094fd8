"""A source's WebSub subscription, decided without I/O: discovery (WebSub section 4), when to ask the hub
(subscribe, renew, try again), and the content signature (section 8). Stored on the source as `push`
(what `source list` may show) and `push_secret` (never shown)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from starfeed.model import Push
from starfeed.parse.normalize import web_link
from starfeed.settings import Settings

PENDING, VERIFIED, DENIED, UNSUBSCRIBING, FAILED = "pending", "verified", "denied", "unsubscribing", "failed"
RETRY_SECONDS = {PENDING: 86400, DENIED: 7 * 86400, FAILED: 86400}  # before asking the hub again
SAFETY_CHECK = 86400  # a pushed feed is still polled, once a day (docs/design.md#pushed-schedule)
RENEW_SHARE = 0.2  # a lease is renewed when this share of it is left (docs/design.md#websub-renewal)
MAX_LEASE = 365 * 86400  # a longer lease granted is taken as a year: the renewal still comes
SIGNATURES = {"sha1": hashlib.sha1, "sha256": hashlib.sha256, "sha384": hashlib.sha384, "sha512": hashlib.sha512}


def discover(links: list[dict[str, str]], document_hub: str | None, document_self: str | None,
             url: str) -> tuple[str, str] | None:
    """(hub, topic): the Link header's rel="hub" and rel="self" first (links: the header as
    requests.utils.parse_header_links reads it), then the document's; both absolute http(s)
    URLs, else None."""
    def rel(name: str) -> str | None:
        for link in links:
            if name in str(link.get("rel", "")).split():
                return web_link(link.get("url"), url)
        return None

    hub, topic = rel("hub") or document_hub, rel("self") or document_self
    return (hub, topic) if hub and topic else None


def new_subscription(hub: str, topic: str, now: float) -> tuple[dict, str]:
    """(push, secret): a subscription to ask for, its callback token unguessable and its own."""
    return ({"hub": hub, "topic": topic, "token": secrets.token_hex(16), "state": PENDING, "requested_at": now,
             "expires_at": None, "reason": None}, secrets.token_hex(32))


def is_verified(push: Push | None, now: float) -> bool:
    return bool(push) and push.get("state") == VERIFIED and (push.get("expires_at") or 0) > now


def safety_poll_at(last_poll: float | None, interval: float | None, now: float) -> float:
    """When a pushed feed is polled (docs/design.md#pushed-schedule): a day after its last poll, or
    its own interval after it when that is longer. Its lease's renewals do not move it."""
    return (last_poll or now) + max(interval or 0.0, SAFETY_CHECK)


def renewal_at(push: Push | None, settings: Settings) -> float | None:
    """When to ask the hub to renew a verified lease (docs/design.md#websub-renewal): when a fifth
    of the lease granted is left, but a scheduler period before its end at least (a run may come
    that late), half the lease at most, and `websub_renew_before` at most. Asked since then and
    no new lease granted (a hub that refused, or has not verified yet): once more halfway to the
    end of that lead. None when there is nothing to renew, or no time left to ask before it ends
    (the next poll asks again)."""
    if not push or push.get("state") != VERIFIED or not settings.websub_subscribe:
        return None
    if not askable(settings.public_url, push.get("hub") or ""):
        return None
    expires = push.get("expires_at") or 0.0
    granted = expires - (push.get("verified_at") or push.get("requested_at") or expires)
    lead = min(float(settings.websub_renew_before), max(granted * RENEW_SHARE, float(settings.schedule_period)),
               granted / 2)
    at, asked = expires - lead, push.get("requested_at") or 0.0
    if asked >= at:
        at = asked + lead / 2
    return at if at < expires else None


def pushed_check_at(push: Push | None, poll_at: float, settings: Settings) -> float:
    """A verified subscription's next check: its feed's safety poll, or its lease's renewal when
    that comes first."""
    renewal = renewal_at(push, settings)
    return poll_at if renewal is None else min(poll_at, renewal)


def renews_only(push: Push | None, poll_at: float, now: float, settings: Settings) -> bool:
    """A check that comes for the lease's renewal alone: the hub is asked, the feed (whose safety
    poll is not due) is not fetched."""
    renewal = renewal_at(push, settings)
    return renewal is not None and renewal <= now < poll_at


def askable(public_url: str, hub: str) -> bool:
    """Whether to ask this hub at all: not starfeed itself (a feed may name any URL as its hub),
    not a hub that could never reach our callback (on loopback, under `make run` without a
    tunnel), and not one the secret would reach in clear text (WebSub section 5.1: https, but for loopback)."""
    def loopback(url: str) -> bool:
        host = (urlsplit(url).hostname or "").lower()
        return host == "localhost" or host.endswith(".localhost") or host.startswith("127.") or host == "::1"
    base = public_url.rstrip("/")
    if hub == base or hub.startswith(base + "/"):
        return False
    if loopback(hub):
        return True
    return not loopback(public_url) and urlsplit(hub).scheme == "https"


def wanted(push: dict | None, found: tuple[str, str] | None, now: float, settings: Settings) -> str | None:
    """Why to ask the hub for a subscription now ("new", "moved", "renew", "again"), or None."""
    if not found or not settings.websub_subscribe or not askable(settings.public_url, found[0]):
        return None
    if not push or push.get("state") == UNSUBSCRIBING:
        return "new"
    if (push.get("hub"), push.get("topic")) != found:
        return "moved"
    state = push.get("state")
    if state == VERIFIED:
        renewal = renewal_at(push, settings)
        lapsed = (push.get("expires_at") or 0) <= now
        return "renew" if lapsed or (renewal is not None and renewal <= now) else None
    waited = now - (push.get("requested_at") or 0)
    return "again" if waited >= RETRY_SECONDS.get(state, 0) else None


def signature_valid(header: str | None, secret: str | None, body: bytes) -> bool:
    """X-Hub-Signature: method=hex, an HMAC of the exact body with the subscription's secret
    (sha1, sha256, sha384 or sha512, as WebSub section 8 allows)."""
    if not header or not secret or "=" not in header:
        return False
    method, _, given = header.strip().partition("=")
    digest = SIGNATURES.get(method.strip().lower())
    if digest is None:
        return False
    expected = hmac.new(secret.encode(), body, digest).hexdigest()
    return hmac.compare_digest(expected.encode(), given.strip().lower().encode())  # bytes: any header compares


def verified(push: dict | None, mode: str | None, topic: str | None, lease: str | None, reason: str | None,
             now: float, settings: Settings) -> tuple[bool, dict | None]:
    """A hub's verification of intent (WebSub section 5.3) or denial (section 5.2): (whether we agree, the subscription
    to store then; None clears it). We agree only to what we asked for: a pending subscription
    (or renewal) or unsubscription of the same topic, or a denial of one."""
    if not push or not topic or topic != push.get("topic"):
        return False, None
    asked = push.get("state") == PENDING or push.get("renewing")
    if mode == "subscribe" and asked:
        # A lease as the hub grants it, within reason: "²" is a digit to isdigit(), and ten years is no lease.
        number = lease and lease.isascii() and lease.isdigit() and len(lease) <= 12
        seconds = int(lease) if number else settings.websub_lease_seconds
        seconds = min(seconds, MAX_LEASE)
        return True, {**push, "state": VERIFIED, "expires_at": now + max(60, seconds), "verified_at": now,
                      "renewing": False, "reason": None}
    if mode == "unsubscribe" and push.get("state") == UNSUBSCRIBING:
        return True, None
    if mode == "denied" and (asked or push.get("state") == VERIFIED):
        return True, {**push, "state": DENIED, "renewing": False, "requested_at": now,
                      "reason": f"denied by the hub: {reason}" if reason else "denied by the hub (no reason given)"}
    return False, None

"""WebSub's pure parts: discovery, when to ask the hub, the hub's verifications, signatures."""

import hashlib
import hmac

import pytest
from requests.utils import parse_header_links

from starfeed.settings import Settings
from starfeed.websub.subscription import (
    discover,
    new_subscription,
    pushed_check_at,
    renewal_at,
    renews_only,
    safety_poll_at,
    signature_valid,
    verified,
    wanted,
)

SETTINGS = Settings(public_url="https://feeds.example")
NOW = 1_800_000_000.0
FEED = "https://blog.example/feed.xml"
HUB = "https://hub.example/"


@pytest.mark.parametrize("header, doc_hub, doc_self, found", [
    (f'<{HUB}>; rel="hub", <{FEED}>; rel="self"', None, None, (HUB, FEED)),
    (f'<{HUB}>; rel="hub"', None, "https://blog.example/other.xml", (HUB, "https://blog.example/other.xml")),
    ('</hub>; rel="hub", <feed.xml>; rel="self"', None, None, ("https://blog.example/hub", FEED)),  # relative
    (f'<{HUB}>; rel="hub self"', None, None, (HUB, HUB)),
    (None, HUB, FEED, (HUB, FEED)), (None, HUB, None, None), (None, None, FEED, None),
    ('<javascript:alert(1)>; rel="hub"', None, FEED, None), ("garbage", None, None, None)])
def test_discovery_takes_the_link_header_first_then_the_document(header, doc_hub, doc_self, found):
    assert discover(parse_header_links(header or ""), doc_hub, doc_self, FEED) == found


def test_when_the_hub_is_asked():
    push, _ = new_subscription(HUB, FEED, NOW)
    assert wanted(None, (HUB, FEED), NOW, SETTINGS) == "new" and wanted(push, None, NOW, SETTINGS) is None
    assert wanted(push, (HUB, FEED), NOW + 3600, SETTINGS) is None  # pending: the hub verifies soon
    assert wanted(push, (HUB, FEED), NOW + 86400, SETTINGS) == "again"  # it never did
    assert wanted(push, ("https://other-hub.example/", FEED), NOW, SETTINGS) == "moved"
    live = {**push, "state": "verified", "expires_at": NOW + 10 * 86400}
    assert wanted(live, (HUB, FEED), NOW, SETTINGS) is None
    assert wanted(live, (HUB, FEED), NOW + 8 * 86400 + 1, SETTINGS) == "renew"
    denied = {**push, "state": "denied"}
    assert wanted(denied, (HUB, FEED), NOW + 6 * 86400, SETTINGS) is None
    assert wanted(denied, (HUB, FEED), NOW + 7 * 86400, SETTINGS) == "again"
    assert wanted(None, (HUB, FEED), NOW, Settings(public_url="https://feeds.example", websub_subscribe=False)) is None


def test_a_new_subscription_has_its_own_token_and_secret():
    (one, secret_one), (two, secret_two) = new_subscription(HUB, FEED, NOW), new_subscription(HUB, FEED, NOW)
    assert one["token"] != two["token"] and secret_one != secret_two
    assert len(one["token"]) == 32 and len(secret_one) == 64 and one["state"] == "pending"


def test_the_callback_agrees_only_to_what_was_asked():
    pending, _ = new_subscription(HUB, FEED, NOW)
    agree, push = verified(pending, "subscribe", FEED, "3600", None, NOW, SETTINGS)
    assert agree and push["state"] == "verified" and push["expires_at"] == NOW + 3600
    assert verified(push, "subscribe", FEED, "3600", None, NOW, SETTINGS) == (False, None)  # not asked again
    assert verified(pending, "subscribe", "https://elsewhere.example/", "1", None, NOW, SETTINGS) == (False, None)
    assert verified(pending, "unsubscribe", FEED, None, None, NOW, SETTINGS) == (False, None)
    assert verified(None, "subscribe", FEED, None, None, NOW, SETTINGS) == (False, None)
    unsubscribing = {**pending, "state": "unsubscribing"}
    assert verified(unsubscribing, "unsubscribe", FEED, None, None, NOW, SETTINGS) == (True, None)
    agree, denied = verified(pending, "denied", FEED, None, "spam", NOW, SETTINGS)
    assert agree and denied["state"] == "denied" and denied["reason"] == "denied by the hub: spam"
    _, odd = verified(pending, "subscribe", FEED, "ten days", None, NOW, SETTINGS)  # not a number: ours
    assert odd["expires_at"] == NOW + SETTINGS.websub_lease_seconds


@pytest.mark.parametrize("method", ["sha1", "sha256", "sha384", "sha512"])
def test_a_signature_over_the_exact_body_is_valid(method):
    body, secret = b"<rss>\xff\x00</rss>", "k" * 64
    signature = f"{method}={hmac.new(secret.encode(), body, getattr(hashlib, method)).hexdigest()}"
    assert signature_valid(signature, secret, body)
    assert signature_valid(signature.upper().replace(method.upper(), method), secret, body)  # hex in capitals
    assert not signature_valid(signature, secret, body + b" ")
    assert not signature_valid(signature, "other", body)


@pytest.mark.parametrize("header", [None, "", "sha256", "md5=" + "0" * 32, "sha256=", "=abc", "sha256=zz"])
def test_anything_else_is_not_a_signature(header):
    assert not signature_valid(header, "secret", b"body")
    assert not signature_valid("sha256=" + hmac.new(b"secret", b"body", hashlib.sha256).hexdigest(), None, b"body")


def test_a_pushed_feed_is_polled_a_day_after_its_last_poll_or_its_own_interval():
    assert safety_poll_at(NOW, 600, NOW + 3600) == NOW + 86400  # sooner schedules wait a day
    assert safety_poll_at(NOW, 3 * 86400, NOW) == NOW + 3 * 86400  # rarer ones stay
    assert safety_poll_at(None, None, NOW) == NOW + 86400  # not polled yet: from now


def lease(granted: float, asked: float | None = None, **more) -> dict:
    """A verified subscription, its lease granted at NOW; asked: when the hub was last asked."""
    return {"hub": HUB, "topic": FEED, "state": "verified", "verified_at": NOW, "expires_at": NOW + granted,
            "requested_at": NOW - 1 if asked is None else asked, **more}


@pytest.mark.parametrize("push, renewal", [
    (lease(10 * 86400), NOW + 8 * 86400),  # a fifth left: two days
    (lease(30 * 86400), NOW + 28 * 86400),  # websub_renew_before at most
    (lease(3600), NOW + 3600 - 720),  # a fifth of an hour
    (lease(1800), NOW + 1800 - 360),
    (lease(1000), NOW + 1000 - 300),  # a scheduler period before its end at least
    (lease(240), NOW + 120),  # four minutes: half the lease at most
    (lease(240, asked=NOW + 120), NOW + 180),  # asked, not granted again yet: once more halfway
    (lease(240, asked=NOW + 180), None),  # no time left to ask again: the next poll does
    (lease(240, state="pending"), None), (lease(240, state="denied"), None), (None, None),
    (lease(240, hub="http://hub.example/"), None),  # a hub no longer asked (in clear text)
])
def test_a_lease_is_renewed_when_a_fifth_of_it_is_left(push, renewal):
    assert renewal_at(push, SETTINGS) == renewal


@pytest.mark.parametrize("push, poll_at, check", [
    (lease(240), NOW + 86400, NOW + 120),  # the renewal first, the poll stays
    (lease(10 * 86400), NOW + 86400, NOW + 86400),  # the poll first
    (lease(240, asked=NOW + 180), NOW + 86400, NOW + 86400),  # nothing left to renew: the poll
])
def test_a_verified_feed_is_checked_at_its_poll_or_its_renewal_whichever_comes_first(push, poll_at, check):
    assert pushed_check_at(push, poll_at, SETTINGS) == check


@pytest.mark.parametrize("now, poll_at, alone", [
    (NOW + 119, NOW + 86400, False),  # not due yet
    (NOW + 120, NOW + 86400, True),  # the renewal alone: the feed is not fetched
    (NOW + 120, NOW + 120, False),  # the poll is due too: it fetches, and renews
])
def test_a_check_for_the_renewal_alone_does_not_poll(now, poll_at, alone):
    assert renews_only(lease(240), poll_at, now, SETTINGS) is alone
    assert wanted(lease(240), (HUB, FEED), now, SETTINGS) == ("renew" if now >= NOW + 120 else None)


@pytest.mark.parametrize("body", [
    b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><link rel="hub" href="https://hub.example/"/>'
    b'<link rel="self" href="https://blog.example/feed.xml"/><entry><id>1</id><title>x</title></entry></feed>',
    b'{"version": "https://jsonfeed.org/version/1.1", "title": "t", "feed_url": "https://blog.example/feed.xml",'
    b' "hubs": [{"type": "rssCloud", "url": "https://cloud.example/"}, {"type": "WebSub", "url": "https://hub.example/"}],'
    b' "items": []}'])
def test_a_document_names_its_hub_and_self_url(body):
    from starfeed.parse.feed import parse_feed

    parsed = parse_feed(body, FEED)
    assert (parsed.hub, parsed.self_url) == (HUB, FEED)


def test_a_callback_on_loopback_is_offered_only_to_a_hub_on_loopback():
    local = Settings(public_url="http://127.0.0.1:3000")
    assert wanted(None, (HUB, FEED), NOW, local) is None  # make run without a tunnel
    assert wanted(None, ("http://127.0.0.1:4444/hub", FEED), NOW, local) == "new"
    assert wanted(None, (HUB, FEED), NOW, Settings(public_url="https://tunnel.example")) == "new"


def test_starfeed_itself_and_a_hub_in_clear_text_are_never_asked():
    assert wanted(None, ("https://feeds.example/api/v1/feeds/abc/backfill", FEED), NOW, SETTINGS) is None
    assert wanted(None, ("http://hub.example/", FEED), NOW, SETTINGS) is None  # the secret in clear text
    local = Settings(public_url="http://127.0.0.1:3000")
    assert wanted(None, ("http://127.0.0.1:3000/websub/x", FEED), NOW, local) is None


@pytest.mark.parametrize("header", ["sha256=ünïcode", "sha256=" + "é" * 64, "sha1=\u0000"])
def test_a_signature_in_any_characters_is_refused_not_raised(header):
    assert not signature_valid(header, "secret", b"body")


@pytest.mark.parametrize("lease, seconds",
                         [("²", 864000), ("99999999999", 365 * 86400), ("9" * 5000, 864000), ("-5", 864000)])
def test_a_lease_granted_oddly_is_taken_within_reason(lease, seconds):
    pending, _ = new_subscription(HUB, FEED, NOW)
    _, push = verified(pending, "subscribe", FEED, lease, None, NOW, SETTINGS)
    assert push["expires_at"] == NOW + seconds

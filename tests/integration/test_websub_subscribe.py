"""The WebSub subscriber (docs/design.md#websub) against a loopback hub written from the spec: a feed
that announces a hub is subscribed to, verified at our callback, pushed to (signed pushes taken,
forged, unsigned and oversized ones not), polled daily while verified, renewed, denied, and
unsubscribed when removed."""

import time

import pytest

from starfeed.fetch.job import fetch_source
from starfeed.sources import add_source

from conftest import row_of, run_cli
from origin import Reply, rss
from waiting import eventually
from websub_hub import Hub


@pytest.fixture
def hub(storage, api_url):
    server = Hub(storage.settings.public_url, api_url)
    yield server
    server.close()


def announcing(origin, hub, path: str, *items, in_header: bool = False) -> str:
    """A feed at path that announces the hub and its self URL (atom:link, or the Link header)."""
    url = f"{origin.url}{path}"
    links = f'<atom:link rel="hub" href="{hub.url}"/><atom:link rel="self" href="{url}"/>'
    body = rss(*items, extra="" if in_header else links).replace(
        b'<rss version="2.0">', b'<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">')
    headers = {"Link": f'<{hub.url}>; rel="hub", <{url}>; rel="self"'} if in_header else {}
    return origin.serve(path, Reply(200, body, headers))


def subscribed(storage, hub, url: str, *items, origin=None):
    source = add_source(storage, url, time.time() - 3600, backfill=len(items))[0]
    fetch_source(storage, source.source_id)
    eventually(lambda: hub.active, what="the hub's verified subscription")
    return storage.sources.get(source.source_id)


def test_a_feed_announcing_a_hub_is_subscribed_verified_pushed_and_polled_daily(
        stack, storage, hub, origin, capsys):
    url = announcing(origin, hub, "/pushed.xml", ("p1", "Before the push"))
    source = subscribed(storage, hub, url, ("p1", "Before the push"))
    request = hub.requests[0]
    assert request["hub.mode"] == "subscribe" and request["hub.topic"] == url
    assert request["hub.callback"] == f"http://feeds.test/websub/{source.source_id}/{source.push['token']}"
    assert len(request["hub.secret"]) == 64 and request["hub.lease_seconds"] == "864000"
    assert hub.verifications == [("subscribe", 200, hub.verifications[0][2])]
    assert source.push["state"] == "verified" and source.push["expires_at"] > time.time() + 9 * 86400
    assert source.next_check_at > time.time() + 86400 - 60  # the daily safety check

    # A signed push: stored raw, taken as a fetch is, with no poll of the origin.
    polls = len(origin.requests)
    pushed = rss(("p2", "Pushed at once"), ("p1", "Before the push"))
    assert [r.status_code for r in hub.distribute(url, pushed)] == [202]
    stack.drain()
    entries = {e.entry_uid: e for e in storage.entries.recent(source.source_id, 10)}
    assert set(entries) == {"p1", "p2"} and len(origin.requests) == polls
    stored = storage.sources.get(source.source_id)
    assert stored.fetch_history[0]["outcome"] == "push"
    raw = storage.blobs.get_raw_fetch(f"fetches/{entries['p2'].raw_refs[0]['fetch_id']}.raw")
    assert raw[1] == pushed and raw[0]["push"] is True  # and its render was asked for, and drained
    assert "Pushed at once" in storage.blobs.get_feed("feed.xml").body.decode()  # the aggregate rendered

    # sha1 and sha512 signatures are taken too; forged, unsigned and oversized pushes are not.
    for method, item in (("sha1", ("p3", "Signed sha1")), ("sha512", ("p4", "Signed sha512"))):
        assert [r.status_code for r in hub.distribute(url, rss(item), method=method)] == [202]
    forged = hub.distribute(url, rss(("x1", "Forged")), secret="not the secret")
    unsigned = hub.distribute(url, rss(("x2", "Unsigned")), method=None)
    assert [r.status_code for r in forged + unsigned] == [202, 202]  # acknowledged, and discarded
    big = hub.distribute(url, b"<rss>" + b" " * (storage.settings.websub_max_body + 1) + b"</rss>")
    assert [r.status_code for r in big] == [413]
    stack.drain()
    assert {e.entry_uid for e in storage.entries.recent(source.source_id, 10)} == {"p1", "p2", "p3", "p4"}

    code, out, _ = run_cli(capsys, "source", "list")
    assert code == 0 and f"  {source.source_id}  verified until " in out and "last push" in out
    assert " in 23h " in row_of(out, source.source_id) or " in 1d " in row_of(out, source.source_id)  # NEXT
    code, out, _ = run_cli(capsys, "source", "list", "--json")
    assert stored.push_secret not in out and stored.push["token"] not in out


def test_the_callback_answers_only_what_starfeed_asked_for(stack, storage, hub, origin):
    url = announcing(origin, hub, "/guarded.xml", ("g1", "Guarded"), in_header=True)  # Link header discovery
    source = subscribed(storage, hub, url, ("g1", "Guarded"))
    callback = hub.requests[0]["hub.callback"]
    wrong_token = callback.rsplit("/", 1)[0] + "/" + "0" * 32
    for target, query in ((callback, {"hub.mode": "subscribe", "hub.topic": "https://elsewhere.example/feed"}),
                          (callback, {"hub.mode": "unsubscribe", "hub.topic": url}),  # never asked for
                          (callback, {"hub.mode": "subscribe", "hub.topic": url}),  # verified already
                          (wrong_token, {"hub.mode": "subscribe", "hub.topic": url}),
                          (callback.rsplit("/", 1)[0] + "/ünïcödé", {"hub.mode": "subscribe", "hub.topic": url})):
        answer = hub.verify_as(target, **query, **{"hub.challenge": "c"})
        assert answer.status_code == 404 and answer.text != "c", query
    assert storage.sources.get(source.source_id).push["state"] == "verified"


def test_a_denied_subscription_says_why_and_polling_stays_adaptive(stack, storage, hub, origin, capsys):
    hub.deny_next = True
    url = announcing(origin, hub, "/denied.xml", ("d1", "Denied"))
    source = add_source(storage, url, time.time() - 3600, backfill=1)[0]
    fetch_source(storage, source.source_id)
    eventually(lambda: hub.verifications, what="the hub's denial")
    stored = storage.sources.get(source.source_id)
    assert stored.push["state"] == "denied" and stored.push["reason"] == "denied by the hub: topic not allowed here"
    assert "daily safety" not in (stored.reason or "")  # its own adaptive schedule
    code, out, _ = run_cli(capsys, "source", "list")
    assert f"{source.source_id}  denied ({hub.host}): denied by the hub: topic not allowed here" in out
    # Not asked again at the next fetch: a denial waits a week.
    fetch_source(storage, source.source_id)
    assert len(hub.requests) == 1


def test_a_hub_that_refuses_is_recorded_and_asked_again_a_day_later(stack, storage, hub, origin):
    hub.refuse_next = 400
    url = announcing(origin, hub, "/refused.xml", ("r1", "Refused"))
    source = add_source(storage, url, time.time() - 3600, backfill=1)[0]
    assert fetch_source(storage, source.source_id).new_entries == 1  # the fetch went on
    push = storage.sources.get(source.source_id).push
    assert push["state"] == "failed" and "answered 400 Bad Request: no subscriptions today" in push["reason"]
    fetch_source(storage, source.source_id, now=time.time() + 86400 + 60)
    eventually(lambda: hub.active, what="the subscription asked for again")
    assert len(hub.requests) == 2


def test_the_lease_is_renewed_before_it_ends_and_removal_unsubscribes(stack, storage, hub, origin):
    url = announcing(origin, hub, "/leased.xml", ("l1", "Leased"))
    source = subscribed(storage, hub, url, ("l1", "Leased"))
    token, expires = source.push["token"], source.push["expires_at"]
    # A day before the renewal is due, the daily check renews it, with the same callback and secret.
    fetch_source(storage, source.source_id, now=expires - storage.settings.websub_renew_before + 60)
    eventually(lambda: len(hub.verifications) == 2, what="the renewal's verification")
    renewed = storage.sources.get(source.source_id)
    assert hub.requests[1]["hub.callback"] == hub.requests[0]["hub.callback"]
    assert hub.requests[1]["hub.secret"] == hub.requests[0]["hub.secret"]
    assert renewed.push["token"] == token and renewed.push["state"] == "verified" and not renewed.push["renewing"]

    assert run_cli_remove(source.source_id) == 0
    eventually(lambda: not hub.active, what="the unsubscription's verification")
    assert hub.requests[-1]["hub.mode"] == "unsubscribe" and hub.verifications[-1][:2] == ("unsubscribe", 200)
    gone = storage.sources.get(source.source_id)
    assert gone.push is None and gone.push_secret is None


def run_cli_remove(source_id: str) -> int:
    from starfeed.cli import main

    return main(["source", "remove", source_id])


def test_a_short_lease_is_renewed_before_it_ends_while_the_feed_stays_on_its_daily_poll(stack, storage, hub, origin):
    hub.grant = 240  # four minutes, whatever was asked
    url = announcing(origin, hub, "/short.xml", ("s1", "Short lease"))
    source = add_source(storage, url, time.time() - 3600, backfill=1)[0]
    stack.run_cycle()
    eventually(lambda: storage.sources.get(source.source_id).push.get("state") == "verified", what="verified")
    polled_at = storage.sources.get(source.source_id).last_fetch_at
    for renewal in range(1, 4):  # each check before the lease ends renews it, and fetches nothing
        stored = storage.sources.get(source.source_id)
        expires = stored.push["expires_at"]
        assert expires - 240 + 100 <= stored.next_check_at <= expires - 100, renewal  # before the lease ends
        assert stored.reason.endswith("lease renewal, then the daily safety check")
        assert fetch_source(storage, source.source_id, now=stored.next_check_at) is None
        eventually(lambda lease_end=expires: storage.sources.get(source.source_id).push["expires_at"] > lease_end,
                   what="the renewal's verification")
        assert len(hub.requests) == 1 + renewal and hub.requests[-1]["hub.secret"] == hub.requests[0]["hub.secret"]
    assert len(origin.hits("/short.xml")) == 1  # the first fetch only
    # The daily safety poll comes a day after the first: it fetches the feed.
    assert fetch_source(storage, source.source_id, now=polled_at + 86400).error is None
    assert len(origin.hits("/short.xml")) == 2


def test_a_lease_is_renewed_while_the_feed_s_host_is_paused_when_the_hub_is_elsewhere(stack, storage, hub, origin):
    hub.grant = 240
    url = announcing(origin, hub, "/paused-feed.xml", ("h1", "Held"))
    source = add_source(storage, url, time.time() - 3600, backfill=1)[0]
    stack.run_cycle()
    eventually(lambda: storage.sources.get(source.source_id).push.get("state") == "verified", what="verified")
    stored = storage.sources.get(source.source_id)
    at, expires = stored.next_check_at, stored.push["expires_at"]
    # The feed's site rate-limits starfeed for two days: its host waits; the hub's does not.
    storage.hosts.pause(source.host, at + 2 * 86400, "rate-limited by the site: 429 Too Many Requests")
    scheduler = stack.functions["SchedulerFunction"].module
    scheduler.run_tick(scheduler.storage, at)
    leased = storage.sources.get(source.source_id)
    assert leased.reason != "host-paused" and leased.locked_until is not None  # sent to the fetcher
    assert fetch_source(storage, source.source_id, lease=leased.locked_until, now=at) is None
    eventually(lambda: storage.sources.get(source.source_id).push["expires_at"] > expires,
               what="the renewal's verification")
    assert len(hub.requests) == 2 and len(origin.hits("/paused-feed.xml")) == 1  # the hub asked, the feed not
    # The feed's own safety poll waits for its host's pause.
    polled_at = storage.sources.get(source.source_id).last_fetch_at
    assert fetch_source(storage, source.source_id, now=polled_at + 86400) is None
    assert storage.sources.get(source.source_id).reason == "host-paused"
    assert len(origin.hits("/paused-feed.xml")) == 1
    storage.hosts.clear_pause(source.host)
    stack.drain()

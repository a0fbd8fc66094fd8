"""Sites that refuse starfeed, through the local stack with loopback origins behaving as real sites
do: a bot protection's challenge and a rate limit are named in words a user can act on, their
pages kept raw, and the source (and its host) waits on its own schedule, never hammering the site;
a response the fetch's deadline cuts short is a timeout, not a document."""

import json
import time

import pytest

from starfeed.fetch.job import fetch_source
from starfeed.sources import add_source

from conftest import api_call, body_of, row_of
from conftest import run_cli as run
from origin import Reply, rss

CHALLENGE = (b'<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head><body>'
             b'<noscript>Enable JavaScript and cookies to continue</noscript>'
             b'<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8a1b"></script></body></html>')
CLOUDFLARE = {"cf-mitigated": "challenge", "Server": "cloudflare", "CF-RAY": "8a1b2c3d4e5f-AMS",
              "Content-Type": "text/html; charset=UTF-8", "Cache-Control": "private, max-age=0, no-store"}


def subscribe(storage, url):
    return add_source(storage, url, time.time() - 3600)[0]


def cycles(stack, start: float, count: int, every: float) -> None:
    """`count` scheduler runs, `every` seconds apart from `start` (the scheduler's own clock:
    a due source is one whose next check has come by then), each with its fetches done."""
    scheduler = stack.functions["SchedulerFunction"].module
    for n in range(count):
        scheduler.run_tick(scheduler.storage, start + n * every)
        stack.drain()


def test_a_cloudflare_challenge_is_named_kept_and_waited_out_for_hours(stack, storage, capsys, origin):
    url = origin.serve("/cf.xml", Reply(403, CHALLENGE, CLOUDFLARE))
    neighbour = subscribe(storage, origin.serve("/neighbour.xml", Reply(200, rss(("n", "N")))))
    storage.sources.change(neighbour.source_id, {"next_check_at": time.time() + 3600})  # due in an hour
    source = subscribe(storage, url)
    now = time.time()
    cycles(stack, now, 11, 1800)  # five hours of scheduler runs, within the shortest jittered wait
    assert len(origin.hits("/cf.xml")) == 1  # asked once: every later run leaves it alone

    stored = storage.sources.get(source.source_id)
    assert (stored.status, stored.failure, stored.reason) == ("error", "blocked", "blocked-backoff")
    assert stored.last_error.startswith("blocked by bot protection (Cloudflare): 403 Forbidden with a challenge page")
    assert stored.next_check_at - now > 5 * 3600  # hours, not the interval's minutes
    record, body = storage.blobs.get_raw_fetch(f"fetches/{stored.fetch_history[0]['fetch_id']}.raw")
    assert body == CHALLENGE and record["http_status"] == 403  # the challenge page is kept raw
    assert record["response_headers"]["cf-mitigated"] == "challenge"
    # Its host waits with it: a neighbour coming due meanwhile is not asked either.
    assert storage.hosts.paused({source.host}, now)[source.host].until >= stored.next_check_at - 1
    assert not origin.hits("/neighbour.xml")

    out = run(capsys, "source", "list")[1]
    assert "failing: blocked by bot" in row_of(out, source.source_id)
    assert "new: held by a host pause" in row_of(out, neighbour.source_id)
    assert "blocked by bot protection (Cloudflare): 403 Forbidden" in out.split("why they fail", 1)[1]
    paused = " ".join(out.split("paused hosts", 1)[1].split())
    assert f"{source.host} until " in paused and "blocked by bot protection (Cloudflare)" in paused
    listed = {s["source_id"]: s for s in json.loads(run(capsys, "source", "list", "--json")[1])}
    assert listed[source.source_id]["failure_class"] == "blocked"
    assert listed[source.source_id]["failure_words"] == "blocked by bot protection (Cloudflare)"
    assert listed[neighbour.source_id]["failure_class"] is None
    feed = json.loads(body_of(api_call(stack, "GET", f"/api/v1/feeds/{source.source_id}")))
    assert (feed["failure_class"], feed["failure_words"]) == ("blocked", "blocked by bot protection (Cloudflare)")
    assert feed["last_error"] == stored.last_error

    code, out, err = run(capsys, "inspect", url)
    assert code == 1 and out == ""
    assert "blocked by bot protection (Cloudflare)" in err and "failure:  blocked" in err
    assert "--user-agent" in err and "--cookie" in err and "--proxy" in err  # what to try next

    # Fetched now by hand: its host's pause still holds it, and sync says so, with the rule in words.
    asked = len(origin.hits("/cf.xml"))
    code, out, err = run(capsys, "source", "sync", source.source_id)
    assert code == 0, err
    pause = storage.hosts.pause_of(source.host, time.time())
    until = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(pause["until"]))
    said = " ".join(out.split())
    assert "due now" not in said
    assert (f"{source.source_id} is not asked now: its host {source.host} is paused until {until} (in ") in said
    assert "because blocked by bot protection (Cloudflare): 403 Forbidden" in said
    assert "next: try a browser's user agent (--user-agent)" in said
    assert f"`starfeed source set {source.source_id}`" in said
    cycles(stack, time.time(), 1, 0)
    assert len(origin.hits("/cf.xml")) == asked
    assert "failing: blocked by bot" in row_of(run(capsys, "source", "list")[1], source.source_id)


@pytest.mark.parametrize("retry_after, reason, least", [
    ("7200", "retry-after", 7200),  # as long as the site asks, exactly
    ("5", "rate-limited-backoff", 3600 * 0.85),  # asking again in 5 s would hammer it: its own wait
])
def test_a_rate_limited_source_waits_as_long_as_the_site_asks_or_longer(stack, storage, capsys, origin,
                                                                        retry_after, reason, least):
    url = origin.serve("/limited.xml", Reply(429, b"Too Many Requests", {"Retry-After": retry_after}))
    source = subscribe(storage, url)
    now = time.time()
    cycles(stack, now, 10, 300)  # 45 minutes of scheduler runs, one every 5
    assert len(origin.hits("/limited.xml")) == 1

    stored = storage.sources.get(source.source_id)
    assert (stored.failure, stored.reason) == ("rate-limited", reason)
    assert stored.next_check_at - now >= least - 5
    assert stored.last_error.startswith("rate-limited by the site: 429 Too Many Requests from 127.0.0.1")
    out = run(capsys, "source", "list")[1]
    assert "failing: rate-limited by" in row_of(out, source.source_id)
    assert stored.last_error in " ".join(out.split("why they fail", 1)[1].split())
    code, _, err = run(capsys, "inspect", url)
    assert code == 1 and "rate-limited by the site" in err and "next:" in err
    status = run(capsys, "status")[1]
    assert "failing: 1 rate-limited by the site" in status


def test_a_response_the_deadline_cuts_short_is_a_timeout_not_a_document(stack, storage, capsys, origin,
                                                                         monkeypatch):
    """An origin sending a byte at a time, with no Content-Length: when the deadline shuts the
    socket, the body ends as if whole; only the deadline says it was cut."""
    feed = rss(("t", "Trickled"))
    url = origin.serve("/trickle.xml", Reply(200, feed, {"Content-Type": "application/rss+xml"},
                                             chunk=1, chunk_delay=0.1, length=False))
    source = subscribe(storage, url)
    object.__setattr__(storage.settings, "fetch_deadline", 2.0)
    fetch_source(storage, source.source_id)

    stored = storage.sources.get(source.source_id)
    assert (stored.status, stored.failure, stored.entry_count) == ("error", "timeout", 0)
    assert stored.last_error.startswith("timed out: the response was still arriving when the fetch's 2 s deadline")
    record, body = storage.blobs.get_raw_fetch(f"fetches/{stored.fetch_history[0]['fetch_id']}.raw")
    assert 0 < len(body) < len(feed) and feed.startswith(body)  # what arrived is kept raw

    monkeypatch.setenv("STARFEED_FETCH_DEADLINE", "2")
    code, out, err = run(capsys, "inspect", url)
    assert code == 1 and out == "" and "timed out: the response was still arriving" in err
    assert "http:     200 in 2." in err and "failure:  timeout" in err and "entries:" not in err

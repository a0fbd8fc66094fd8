"""robots.txt for what starfeed crawls (docs/design.md#robots): website sources and the HTML pages whose
feeds `source add` discovers honour it for our token; feeds do not; Crawl-delay holds the host."""

import time
from dataclasses import replace

import pytest

from starfeed.fetch.job import fetch_source
from starfeed.settings import Settings
from starfeed.sources import add_source
from starfeed.store import Storage

from conftest import row_of, run_cli
from origin import Reply, rss

PAGE = b"<html><head><title>Notes</title></head><body><article><p>What the page says.</p></article></body></html>"
HTML = {"Content-Type": "text/html"}


def website(storage, origin, robots: Reply, path: str = "/notes"):
    origin.serve("/robots.txt", robots)
    url = origin.serve(path, Reply(200, PAGE, HTML))
    return add_source(storage, url, time.time() - 3600, kind="website")[0]


def page_requests(origin, path: str) -> int:
    return sum(1 for requested, _ in origin.requests if requested == path)


def fetcher(stack, another: bool = False):
    """The fetch queue's consumer: the stack's fetcher, or another instance of it with its own memory."""
    queue = next(q for q in stack.queues if q.function.logical_id == "FetcherFunction")
    return replace(queue, function=stack.cold_start("FetcherFunction")) if another else queue


def added_website(capsys, url: str) -> str:
    code, out, err = run_cli(capsys, "source", "add", url, "--website")
    assert code == 0, err
    return out.split()[1]


def test_robots_txt_is_read_once_a_day_whichever_instance_asks(stack, storage, origin, capsys):
    origin.serve("/robots.txt", Reply(200, b"User-agent: *\nDisallow: /private/\n"))
    source_id = added_website(capsys, origin.serve("/notes", Reply(200, PAGE, HTML)))  # the page's first request
    for another in (False, True, False, True):  # four more, by two fetcher instances in turn
        storage.sources.change(source_id, {"next_check_at": time.time() - 1})
        stack.tick()
        assert fetcher(stack, another).poll() == 1
    assert page_requests(origin, "/notes") == 5 and page_requests(origin, "/robots.txt") == 1


def test_a_page_robots_txt_disallows_is_never_requested_and_says_why(stack, storage, origin, capsys):
    source = website(storage, origin, Reply(200, b"User-agent: starfeed\nDisallow: /notes\n"))
    outcome = fetch_source(storage, source.source_id)
    assert outcome.error == (f"refused by robots.txt: disallowed by {origin.url}/robots.txt (not fetched; checked "
                             "again when due)")
    assert outcome.failure == "robots"
    assert page_requests(origin, "/notes") == 0 and page_requests(origin, "/robots.txt") == 1
    stored = storage.sources.get(source.source_id)
    assert stored.status == "error" and stored.next_check_at > time.time()
    code, out, _ = run_cli(capsys, "source", "list")
    assert code == 0 and "failing: refused by robot" in row_of(out, source.source_id)
    assert f"disallowed by {origin.url}/robots.txt" in out
    # Due again: the cached answer decides, robots.txt is not read again within the day.
    fetch_source(storage, source.source_id)
    assert page_requests(origin, "/robots.txt") == 1 and page_requests(origin, "/notes") == 0


@pytest.mark.parametrize("robots, allowed", [
    (Reply(404, b"not here"), True),  # no robots.txt: everything allowed
    (Reply(200, b"User-agent: *\nDisallow: /private/\n"), True),
    (Reply(503, b"busy"), False),  # unreachable: nothing until it is read again
    (Reply(200, b"User-agent: *\nDisallow: /\n"), False)])
def test_robots_txt_answers_decide_the_fetch(stack, storage, origin, robots, allowed):
    source = website(storage, origin, robots)
    outcome = fetch_source(storage, source.source_id)
    assert (outcome.error is None) is allowed, outcome.error
    assert page_requests(origin, "/notes") == (1 if allowed else 0)
    if robots.status == 503:
        assert "robots.txt unreachable (server error: 503 Service Unavailable" in outcome.error


def test_a_crawl_delay_holds_the_host_after_the_request(stack, storage, origin):
    source = website(storage, origin, Reply(200, b"User-agent: starfeed\nCrawl-delay: 30\n"))
    before = time.time()
    assert fetch_source(storage, source.source_id).new_entries == 1
    pause = storage.hosts.pause_of(source.host, time.time())
    assert pause is not None and before + 29 <= pause["until"] <= time.time() + 31
    assert pause["reason"] == f"its robots.txt asks for 30 s between requests (Crawl-delay in {origin.url}/robots.txt)"
    # Another source on the host, due meanwhile, waits for the delay to pass.
    other = website(storage, origin, Reply(200, b"User-agent: starfeed\nCrawl-delay: 30\n"), "/other")
    assert fetch_source(storage, other.source_id) is None and page_requests(origin, "/other") == 0
    storage.hosts.clear_pause(source.host)


def test_a_crawl_delay_holds_whichever_instance_requests_the_page(stack, storage, origin, capsys):
    origin.serve("/robots.txt", Reply(200, b"User-agent: *\nCrawl-delay: 600\n"))
    url = origin.serve("/slow", Reply(200, PAGE, HTML))
    source_id = added_website(capsys, url)  # read once by `source add`: the host's turn is taken
    # Due at once, but not fetched within the delay, by this fetcher or another: moved to the turn's end.
    for another in (False, True):
        storage.sources.change(source_id, {"next_check_at": time.time() - 1})
        stack.tick()
        fetcher(stack, another).poll()
        stored = storage.sources.get(source_id)
        assert stored.reason == "host-paused" and stored.next_check_at > time.time() + 590 and not stored.locked_until
    # Nor checked again by `source add` of another page of the host.
    code, _, err = run_cli(capsys, "source", "add", f"{origin.url}/other", "--website")
    assert code == 1 and "asks for 600 s between requests" in err and "--no-check" in err
    assert page_requests(origin, "/slow") == 1 and page_requests(origin, "/other") == 0
    # Two instances that both find the host free take its turn with one conditional write: one does.
    host = storage.sources.get(source_id).host
    storage.hosts.clear_pause(host)
    now, instances = time.time(), [Storage(Settings.from_env(stack.environment)) for _ in range(2)]
    turns = [i.hosts.take_turn(host, now, now + 600, "Crawl-delay: 600 s") for i in instances]
    assert turns == [None, now + 600]
    storage.hosts.clear_pause(host)


def test_a_feed_is_not_subject_to_robots_txt(stack, storage, origin):
    origin.serve("/robots.txt", Reply(200, b"User-agent: *\nDisallow: /\n"))
    url = origin.serve("/feed.xml", Reply(200, rss(("r1", "Still read"))))
    source = add_source(storage, url, time.time() - 3600, backfill=1)[0]
    assert fetch_source(storage, source.source_id).new_entries == 1
    assert page_requests(origin, "/robots.txt") == 0


def test_autodiscovery_and_website_subscriptions_honour_robots_txt(stack, storage, origin, capsys):
    origin.serve("/robots.txt", Reply(200, b"User-agent: starfeed\nDisallow: /hidden\n"))
    feed = origin.serve("/found.xml", Reply(200, rss(("d1", "Discovered"))))
    announce = f'<html><head><link rel="alternate" type="application/rss+xml" href="{feed}"></head></html>'.encode()
    origin.serve("/hidden", Reply(200, announce, HTML))
    shown = origin.serve("/shown", Reply(200, announce, HTML))
    code, _, err = run_cli(capsys, "source", "add", f"{origin.url}/hidden")
    assert code == 1 and f"disallowed by {origin.url}/robots.txt; not subscribed" in err
    code, _, err = run_cli(capsys, "source", "add", f"{origin.url}/hidden", "--website")
    assert code == 1 and "disallowed by" in err and page_requests(origin, "/hidden") == 1  # the first add only
    code, out, err = run_cli(capsys, "source", "add", shown)
    assert code == 0, err
    assert "added " in out and feed in out
    source_id = out.split()[1]
    assert run_cli(capsys, "source", "remove", source_id)[0] == 0  # due, at an origin about to go

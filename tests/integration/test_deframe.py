"""Deframing (docs/design.md#deframing) end to end on the local stack: a deframed source's new entries are
downloaded (robots.txt honoured), analyzed by the mock, stored, and served with and without
max_score; the daily budget holds entries back until the next day without losing them."""

import json
import time
from dataclasses import replace
from urllib.parse import quote

import feedparser
import pytest

from starfeed.cli import main
from starfeed.sources import add_source
from starfeed.store import Storage

from conftest import body_of, http_get
from origin import Reply
from waiting import eventually

ROBOTS = b"User-agent: *\nDisallow: /private/\n"


def page(title: str, words: str) -> bytes:
    paragraphs = "".join(f"<p>{words} Sentence {n} of the article adds a detail that readers of the story need.</p>"
                         for n in range(6))
    return (f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> <a href='/x'>World</a></nav>"
            f"<article><h1>{title}</h1>{paragraphs}</article><footer>Copyright the publisher</footer>"
            "</body></html>").encode()


def feed(base: str, items: list[tuple[str, str, str]], title="Deframe desk") -> bytes:
    now = time.time() - 60
    body = "".join(
        f"<item><title>{t}</title><link>{base}{path}</link><guid>{base}{path}</guid>"
        f"<pubDate>{time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime(now - i * 60))}</pubDate>"
        f"<description>{d}</description></item>" for i, (path, t, d) in enumerate(items))
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title><link>{base}/</link>'
            f"<description>d</description>{body}</channel></rss>").encode()


def item(stack, url, max_score=None):
    query = f"/api/item?url={quote(url, safe='')}" + (f"&max_score={max_score}" if max_score is not None else "")
    response = http_get(stack, query)
    return response["statusCode"], body_of(response)


def titles(xml: str) -> list[str]:
    return [e.title for e in feedparser.parse(xml).entries]


@pytest.fixture
def deframed_source(stack, storage, origin, capsys):
    """A deframed source of four articles: a neutral one, a loud one, one robots.txt disallows,
    and one whose page is gone."""
    origin.serve("/robots.txt", Reply(200, ROBOTS, {"Content-Type": "text/plain"}))
    origin.serve("/news/budget", Reply(200, page("Council approves budget", "The council voted seven to two."),
                                       {"Content-Type": "text/html"}))
    origin.serve("/news/row", Reply(200, page("Minister SLAMS critics in SHOCKING row!", "The minister replied."),
                                    {"Content-Type": "text/html"}))
    origin.serve("/private/memo", Reply(200, page("Memo", "Not for robots."), {"Content-Type": "text/html"}))
    items = [("/news/budget", "Council approves budget", "The council approved the budget."),
             ("/news/row", "Minister SLAMS critics in SHOCKING row!", "The minister answered critics."),
             ("/private/memo", "Leaked memo published", "A memo about the schedule was published."),
             ("/news/gone", "Report released", "The annual report was released today.")]
    url = origin.serve("/deframe.xml", Reply(200, feed(origin.url, items)))
    source = add_source(storage, url, time.time() - 3600)[0]
    assert main(["source", "deframe", source.source_id, "on"]) == 0
    assert "deframing on" in capsys.readouterr().out
    stack.run_cycle()
    yield source, origin
    main(["source", "remove", source.source_id])
    stack.drain()


def test_new_entries_are_analyzed_from_their_articles_and_served(stack, storage, deframed_source):
    source, origin = deframed_source
    code, body = item(stack, f"{origin.url}/news/budget")
    assert code == 200
    result = json.loads(body)["analyzer_result"]
    assert result["input"] == "article" and result["download_error"] is None and result["model"] == "mock"
    assert result["score"] == 0 and result["title"] == "Council approves budget"
    assert "seven to two" in result["summary"] and "Copyright" not in result["summary"]  # the article's text
    assert result["prompt_version"].startswith("default:") and result["tokens_in"] > 0
    loud = json.loads(item(stack, f"{origin.url}/news/row")[1])["analyzer_result"]
    assert loud["score"] == 1.0 and loud["title"] == "The minister replied"
    # robots.txt disallows /private/: the page is never requested, the feed's content is used.
    memo = json.loads(item(stack, f"{origin.url}/private/memo")[1])["analyzer_result"]
    assert memo["input"] == "feed" and memo["download_error"] == f"disallowed by {origin.url}/robots.txt"
    assert memo["summary"] == "A memo about the schedule was published."
    assert origin.hits("/private/memo") == [] and len(origin.hits("/robots.txt")) == 1  # cached per host
    gone = json.loads(item(stack, f"{origin.url}/news/gone")[1])["analyzer_result"]
    assert gone["input"] == "feed" and gone["download_error"].startswith("gone: 404 Not Found")
    assert origin.hits("/news/budget")[0]["user-agent"].startswith("starfeed/")

    # The source's feed carries the deframed titles, the original headline in the content.
    feed_xml = body_of(http_get(stack, f"/s/{source.source_id}/feed.xml"))
    assert titles(feed_xml) == ["Council approves budget", "The minister replied", "Leaked memo published",
                                "Report released"]
    assert "Original headline: Minister SLAMS critics in SHOCKING row!" in feed_xml
    assert f"<link>{origin.url}/news/row</link>" in feed_xml

    # max_score: on the source's feed, the proxy and the item lookup.
    filtered = http_get(stack, f"/s/{source.source_id}/feed.xml?max_score=0.5")
    assert filtered["statusCode"] == 200
    assert titles(body_of(filtered)) == ["Council approves budget", "Leaked memo published", "Report released"]
    assert f'href="http://feeds.test/s/{source.source_id}/feed.xml?max_score=0.5" rel="self"' in body_of(filtered)
    proxied = http_get(stack, f"/rss?url={quote(source.url, safe='')}&max_score=0.500")
    assert body_of(proxied) == body_of(filtered)  # one threshold, one cached response
    assert proxied["headers"]["X-Cache"] == "HIT"
    again = http_get(stack, f"/s/{source.source_id}/feed.xml?max_score=0.5",
                     {"If-None-Match": filtered["headers"]["ETag"]})
    assert again["statusCode"] == 304
    json_feed = json.loads(body_of(http_get(stack, f"/s/{source.source_id}/feed.json?max_score=0.1")))
    assert [i["title"] for i in json_feed["items"]] == ["Council approves budget", "Leaked memo published",
                                                       "Report released"]
    assert item(stack, f"{origin.url}/news/row", 0.5) == (
        404, "held back by max_score: its framing score 1 is above max_score 0.5\n")
    assert item(stack, f"{origin.url}/news/budget", 0.5)[0] == 200
    assert http_get(stack, f"/s/{source.source_id}/feed.xml?max_score=2")["statusCode"] == 400
    site = json.loads(body_of(http_get(stack, "/api/site?root=127.0.0.1")))
    ours = [i for i in site["items"] if i["feed_id"] == source.source_id]
    assert len(ours) == 4 and all(i["analyzer_result"]["score"] is not None for i in ours)


def test_the_same_article_in_two_feeds_is_analyzed_once_per_feed(stack, storage, deframed_source, other_origin):
    source, origin = deframed_source
    url = other_origin.serve("/syndicated.xml", Reply(200, feed(origin.url, [
        ("/news/budget", "Budget passes", "Syndicated copy.")], title="Wire")))
    wire = add_source(storage, url, time.time() - 3600)[0]
    assert main(["source", "deframe", wire.source_id, "on"]) == 0
    stack.run_cycle()
    ours = storage.analyses.entry(source.source_id, f"{origin.url}/news/budget")
    theirs = storage.analyses.entry(wire.source_id, f"{origin.url}/news/budget")
    assert ours.analyzer_result and theirs.analyzer_result
    assert theirs.analyzer_result["title"] == "Budget passes"  # its own item, its own analysis
    assert len(origin.hits("/news/budget")) == 2
    main(["source", "remove", wire.source_id])


def test_over_budget_entries_wait_for_the_next_day_and_are_not_lost(stack, storage, deframed_source, monkeypatch):
    source, origin = deframed_source
    enricher = stack.functions["EnricherFunction"].module
    spent = storage.analyses.usage(time.time())["calls"]
    monkeypatch.setattr(enricher, "storage", Storage(replace(enricher.storage.settings, analyzer_daily_calls=spent)))
    called = []
    analyze = enricher.analyzer.analyze
    monkeypatch.setattr(enricher.analyzer, "analyze", lambda request: called.append(request) or analyze(request))
    monkeypatch.setattr(enricher, "seconds_to_next_day", lambda now: 2)  # tomorrow comes soon here
    origin.serve("/news/late", Reply(200, page("Late news", "Late but calm."), {"Content-Type": "text/html"}))
    origin.serve("/deframe.xml", Reply(200, feed(origin.url, [("/news/late", "Late news", "It came late.")])))
    storage.sources.change(source.source_id, {"next_check_at": time.time() - 1, "locked_until": None})
    stack.run_cycle()
    late = storage.analyses.entry(source.source_id, f"{origin.url}/news/late")
    assert late is not None and late.analyzer_result is None and called == []  # not analyzed at any cost
    assert "Late news" in titles(body_of(http_get(stack, f"/s/{source.source_id}/feed.xml")))
    assert "Late news" not in titles(body_of(http_get(stack, f"/s/{source.source_id}/feed.xml?max_score=1")))
    assert item(stack, f"{origin.url}/news/late", 1)[1] == "held back by max_score: not analyzed yet\n"
    usage = storage.analyses.usage(time.time())
    assert usage["calls"] == spent  # the refused call was not counted

    # The next day: a new budget, and the waiting entry is analyzed.
    tomorrow = time.time() + 86400
    monkeypatch.setattr(enricher, "clock", lambda: tomorrow)

    def analyzed():
        stack.drain()
        entry = storage.analyses.entry(source.source_id, f"{origin.url}/news/late")
        return entry.analyzer_result

    assert eventually(analyzed, what="the waiting entry analyzed the next day")["input"] == "article"
    assert len(called) == 1
    assert storage.analyses.usage(tomorrow)["calls"] == 1
    dlq = stack.queue("EnrichDeadLetterQueue")
    assert stack.sqs.receive_message(QueueUrl=dlq).get("Messages") is None


def test_source_list_and_stats_show_usage_against_the_budget(stack, deframed_source, capsys):
    source, _ = deframed_source
    main(["source", "list"])
    out = capsys.readouterr().out
    assert "analyzer today:" in out and "of 1,000 calls" in out
    stats = body_of(http_get(stack, "/stats"))
    assert "Analyzer today" in stats and "of 1,000 calls" in stats


def test_a_failed_enrichment_request_stores_nothing_and_the_retried_fetch_queues_them(stack, storage, origin,
                                                                                      monkeypatch, capsys):
    url = origin.serve("/seam.xml", Reply(200, feed(origin.url, [("/news/seam", "Seam story", "It held.")])))
    source = add_source(storage, url, time.time() - 3600, deframe=True)[0]
    fetcher = stack.functions["FetcherFunction"].module
    send = fetcher.storage.queues.send_enrichments

    def refused(*args):
        raise RuntimeError("SQS is down")

    monkeypatch.setattr(fetcher.storage.queues, "send_enrichments", refused)
    stack.run_cycle()
    assert storage.sources.get(source.source_id).last_error.startswith("store: ")
    assert storage.analyses.entry(source.source_id, f"{origin.url}/news/seam") is None  # nothing written

    monkeypatch.setattr(fetcher.storage.queues, "send_enrichments", send)
    storage.sources.change(source.source_id, {"next_check_at": time.time() - 1, "locked_until": None})
    stack.run_cycle()
    entry = storage.analyses.entry(source.source_id, f"{origin.url}/news/seam")
    assert entry.analyzer_result["input"] == "feed"  # the page is not served: the feed's content
    main(["source", "remove", source.source_id])
    capsys.readouterr()


def test_a_message_before_its_entry_is_tried_again_soon(stack, storage, origin, monkeypatch):
    url = origin.serve("/early.xml", Reply(200, feed(origin.url, [("/news/early", "Early story", "It came.")])))
    source = add_source(storage, url, time.time() - 3600, deframe=True, backfill=1)[0]
    monkeypatch.setattr(stack.functions["EnricherFunction"].module, "RETRY_SOON", 1)
    storage.queues.send_enrichments(source.source_id, [f"{origin.url}/news/early"])
    stack.drain()  # the enricher finds no entry yet: the message comes back, it is not dropped
    assert storage.analyses.entry(source.source_id, f"{origin.url}/news/early") is None
    stack.run_cycle()  # the fetch stores the entry (and queues its own message)

    def analyzed():
        stack.drain()
        return storage.analyses.entry(source.source_id, f"{origin.url}/news/early").analyzer_result

    assert eventually(analyzed, what="the early message's entry analyzed")["summary"] == "It came."
    main(["source", "remove", source.source_id])


def test_deframing_an_existing_source_queues_its_stored_entries(stack, storage, origin, capsys):
    url = origin.serve("/later.xml", Reply(200, feed(origin.url, [("/news/l1", "One", "First."),
                                                                   ("/news/l2", "Two", "Second.")])))
    source = add_source(storage, url, time.time() - 3600)[0]
    stack.run_cycle()
    assert storage.analyses.entry(source.source_id, f"{origin.url}/news/l1").analyzer_result is None
    assert main(["source", "deframe", source.source_id, "on"]) == 0
    assert "2 stored entries without a result queued for analysis" in capsys.readouterr().out
    stack.drain()
    assert all(storage.analyses.entry(source.source_id, f"{origin.url}/news/{n}").analyzer_result
               for n in ("l1", "l2"))
    # The item lookup takes the newest copy a reader may see, or with max_score the newest analyzed.
    copy = origin.serve("/plain.xml", Reply(200, feed(origin.url, [("/news/l1", "One again", "Copy.")])))
    plain = add_source(storage, copy, time.time() - 3600)[0]
    stack.run_cycle()
    code, body = item(stack, f"{origin.url}/news/l1")
    assert code == 200 and json.loads(body)["feed_id"] == plain.source_id
    code, body = item(stack, f"{origin.url}/news/l1", 1)
    assert code == 200 and json.loads(body)["feed_id"] == source.source_id
    for removed in (source, plain):
        main(["source", "remove", removed.source_id])


def test_article_downloads_take_their_host_s_crawl_delay_turn(stack, storage, origin, capsys):
    """A host whose robots.txt asks for a delay between requests gets one article download per turn,
    whichever instance asks: the others wait for theirs, or, after waiting often, read the feed."""
    from starfeed.enrich.job import EnrichMessage, HostBusy, enrich
    from starfeed.enrich.mock import MockAnalyzer

    origin.serve("/robots.txt", Reply(200, b"User-agent: *\nCrawl-delay: 2\n", {"Content-Type": "text/plain"}))
    paths = ["/slow/a", "/slow/b", "/slow/c"]
    for path in paths:
        origin.serve(path, Reply(200, page(f"Story {path[-1]}", "The harbour reopened."),
                                 {"Content-Type": "text/html"}))
    url = origin.serve("/slow.xml", Reply(200, feed(origin.url, [(p, f"Story {p[-1]}", "In brief.") for p in paths])))
    asked_at: list[float] = []  # when each article was asked for

    class Timed(list):
        def append(self, request):
            if request[0] in paths:
                asked_at.append(time.monotonic())
            super().append(request)

    origin.requests = Timed(origin.requests)
    source = add_source(storage, url, time.time() - 3600, deframe=True, backfill=3)[0]
    stack.run_cycle()  # the fetch, then the enricher: one article on the host's turn, the others wait

    def analyzed():
        stack.drain()
        results = [storage.analyses.entry(source.source_id, f"{origin.url}{p}").analyzer_result for p in paths]
        return all(results) and results

    results = eventually(analyzed, 60, what="every entry analyzed in its turn")
    assert len(asked_at) == sum(1 for r in results if r["input"] == "article") >= 2
    assert all(later - earlier >= 1.9 for earlier, later in zip(asked_at, asked_at[1:])), asked_at
    assert all(len(origin.hits(p)) <= 1 for p in paths)

    # Directly: the turn another request holds makes the entry wait, or, when told not to, read the feed.
    # Once the last download's own turn has ended (under load it may still hold the host).
    def turn_taken() -> float | None:
        at = time.time()
        return at if storage.hosts.take_turn(source.host, at, at + 30, "another request's turn") is None else None

    now = eventually(turn_taken, 10, what="the host's turn taken")
    message = EnrichMessage(source.source_id, f"{origin.url}/slow/a")
    storage.sources.change(source.source_id, {"prompt": "Another prompt: be brief."})  # analyzed again
    with pytest.raises(HostBusy) as busy:
        enrich(storage, MockAnalyzer(0), message, now)
    assert now + 29 <= busy.value.until <= now + 31
    enrich(storage, MockAnalyzer(0), message, now, wait_for_turn=False)
    result = storage.analyses.entry(source.source_id, f"{origin.url}/slow/a").analyzer_result
    assert result["input"] == "feed"
    assert result["download_error"] == (f"its robots.txt asks for 2 s between requests (Crawl-delay in "
                                        f"{origin.url}/robots.txt), and its turn was another request's")
    storage.hosts.clear_pause(source.host)
    main(["source", "remove", source.source_id])
    capsys.readouterr()

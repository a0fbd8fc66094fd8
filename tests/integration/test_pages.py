"""RFC 5005 section 3 paged feeds (docs/design.md#paging) and Link headers: a reader walking
rel="next" sees every stored entry once and stops, and walking rel="previous" back sees the same
pages; every feed names itself in a Link header."""

import json
import time
from urllib.parse import urlsplit

from starfeed.cli import main
from starfeed.cursors import encode_sort_key
from starfeed.sources import add_source

from conftest import aggregate_rendered, body_of, http_get
from origin import Reply, rss


def walk(stack, path: str, rel: str = "next") -> list[dict]:
    """Every page from `path` on, following next_url (JSON Feed) or our previous_url, as a reader would."""
    pages = []
    while path:
        response = http_get(stack, path)
        assert response["statusCode"] == 200, (path, body_of(response))
        document = json.loads(body_of(response))
        pages.append(document)
        assert len(pages) < 50, "the pages do not end"
        following = document.get("next_url") if rel == "next" else document.get("_starfeed", {}).get("previous_url")
        path = path_of(following) if following else None
    return pages


def path_of(url: str) -> str:
    return f"{urlsplit(url).path}?{urlsplit(url).query}" if urlsplit(url).query else urlsplit(url).path


def items_of(page: dict) -> list[tuple[str | None, str]]:
    """(the item's source feed, in a mixed feed; its id) of each item of a page."""
    return [(item.get("_starfeed", {}).get("source", {}).get("feed_url"), item["id"]) for item in page["items"]]


def there_and_back(stack, path: str) -> list[tuple[str | None, str]]:
    """The items of every page walking next from the first page, checked against the pages
    walking previous from the last back to the first: the same pages, each item on one."""
    forward = walk(stack, path)
    backward = walk(stack, path_of(forward[-1]["feed_url"]), "previous")
    assert [items_of(p) for p in backward] == [items_of(p) for p in reversed(forward)]
    assert backward[-1]["feed_url"] == f"http://feeds.test{path}" and "_starfeed" not in backward[-1]
    seen = [item for page in forward for item in items_of(page)]
    assert len(seen) == len(set(seen))
    return seen


def test_a_reader_walking_next_sees_every_entry_once(stack, storage, origin):
    items = [(f"page-{n}", f"Paged {n}") for n in range(62)]
    url = origin.serve("/paged.xml", Reply(200, rss(*items, title="Paged")))
    source = add_source(storage, url, time.time() - 3600, ["paged"], backfill=62)[0]
    stack.run_cycle()

    pages = walk(stack, f"/s/{source.source_id}/feed.json")
    assert [len(p["items"]) for p in pages] == [50, 12]
    seen = [item["id"] for page in pages for item in page["items"]]
    assert sorted(seen) == sorted(uid for uid, _ in items) and len(seen) == len(set(seen))
    assert seen[:3] == ["page-0", "page-1", "page-2"]  # newest first, page after page

    collection = [item["id"] for page in walk(stack, "/c/paged/feed.json") for item in page["items"]]
    assert sorted(collection) == sorted(seen)
    # The aggregate: every stored entry once across its pages, ours among them.
    everything = [(item["_starfeed"]["source"].get("feed_url"), item["id"])
                  for page in walk(stack, "/feed.json") for item in page["items"]]
    assert len(everything) == len(set(everything))
    assert {uid for feed, uid in everything if feed == url} == set(seen)
    main(["source", "remove", source.source_id])


def test_a_reader_walking_previous_from_the_last_page_sees_the_same_pages(stack, storage, origin):
    items = [(f"walk-{n}", f"Walked {n}") for n in range(130)]
    url = origin.serve("/walked.xml", Reply(200, rss(*items, title="Walked")))
    # Some of the same articles through another source, dated half a minute earlier: a mixed
    # feed shows one article once on a page.
    echo = origin.serve("/echo.xml", Reply(200, rss(*items[:40], title="Echo", newest=time.time() - 90)))
    source = add_source(storage, url, time.time() - 3600, ["walked"], backfill=130)[0]
    echoed = add_source(storage, echo, time.time() - 3600, ["walked"], backfill=40)[0]
    stack.run_cycle()

    own = there_and_back(stack, f"/s/{source.source_id}/feed.json")
    assert len(own) == 130 and {uid for _, uid in own} == {uid for uid, _ in items}
    collection = there_and_back(stack, "/c/walked/feed.json")
    assert {uid for _, uid in collection} == {uid for uid, _ in items}
    # The aggregate: every stored entry once across its pages, ours among them, both ways.
    everything = there_and_back(stack, "/feed.json")
    assert {uid for feed, uid in everything if feed == url} | {uid for feed, uid in everything if feed == echo} == {
        uid for uid, _ in items}
    for removed in (source, echoed):
        main(["source", "remove", removed.source_id])


def test_pages_link_first_and_next_in_rss_and_atom_and_headers(stack, storage, origin):
    url = origin.serve("/linked.xml", Reply(200, rss(*[(f"ln-{n}", f"Linked {n}") for n in range(55)])))
    source = add_source(storage, url, time.time() - 3600, backfill=55)[0]
    stack.run_cycle()
    first = http_get(stack, f"/s/{source.source_id}/feed.atom")
    assert first["headers"]["Link"] == f'<http://feeds.test/s/{source.source_id}/feed.atom>; rel="self"'
    document = body_of(first)
    assert 'rel="first"' not in document and 'rel="previous"' not in document
    next_url = document.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0]
    assert next_url.startswith(f"http://feeds.test/s/{source.source_id}/feed.atom?before=")
    second = http_get(stack, next_url.removeprefix("http://feeds.test"))
    assert second["headers"]["Link"] == f'<{next_url}>; rel="self"'
    page = body_of(second)
    assert page.count("<entry>") == 5 and 'rel="next"' not in page
    assert f'href="http://feeds.test/s/{source.source_id}/feed.atom" rel="first"' in page
    assert f'href="http://feeds.test/s/{source.source_id}/feed.atom" rel="previous"' in page  # page 2: the first
    rss_page = body_of(http_get(stack, f"/s/{source.source_id}/feed.xml?before={next_url.rsplit('=', 1)[1]}"))
    assert rss_page.count("<item>") == 5
    assert http_get(stack, f"/s/{source.source_id}/feed.xml?before=not-a-cursor")["statusCode"] == 400
    assert http_get(stack, f"/s/{source.source_id}/feed.xml?after=not-a-cursor")["statusCode"] == 400
    both = f"?before={next_url.rsplit('=', 1)[1]}&after={next_url.rsplit('=', 1)[1]}"
    assert http_get(stack, f"/s/{source.source_id}/feed.xml{both}")["statusCode"] == 400
    impossible = encode_sort_key("2026-13-45T00:00:00Z#x")
    assert http_get(stack, f"/feed.xml?before={impossible}")["statusCode"] == 400
    # A cursor from the future pages from today: everything stored, newest first.
    future = json.loads(body_of(http_get(stack, f"/s/{source.source_id}/feed.json?before="
                                               f"{encode_sort_key('2099-01-01T00:00:00Z#x')}")))
    assert len(future["items"]) == 50 and future["items"][0]["id"] == "ln-0"
    everything = json.loads(body_of(http_get(stack, f"/feed.json?before={encode_sort_key('2099-01-01T00:00:00Z#x')}")))
    assert "ln-0" in {item["id"] for item in everything["items"]}
    main(["source", "remove", source.source_id])


def test_a_configured_hub_is_announced_in_the_link_header(stack, storage, monkeypatch):
    from dataclasses import replace

    aggregate_rendered(stack, storage)
    api = stack.cold_start("ApiFunction")  # a fresh instance: nothing cached from other tests
    monkeypatch.setattr(api.module.storage, "settings",
                        replace(api.module.storage.settings, websub_hub="https://hub.example/"))
    from starfeed.local.http_bridge import http_api_event

    response = api.invoke(http_api_event("GET", "/feed.json", {}, b"", "198.51.100.7"))
    assert response["headers"]["Link"] == ('<http://feeds.test/feed.json>; rel="self", '
                                           '<https://hub.example/>; rel="hub"')


def test_a_backfilled_history_older_than_the_retention_period_is_on_the_aggregate_s_pages(stack, storage, origin):
    """Entries dated a year before they were stored stay as long as recent ones; a reader walking
    the aggregate's pages reaches them too, after everything newer."""
    year_ago = time.time() - 365 * 86400
    items = [(f"hist-{n}", f"History {n}") for n in range(3)]
    url = origin.serve("/history.xml", Reply(200, rss(*items, title="History", newest=year_ago)))
    add_source(storage, url, time.time() - 3600, backfill=3)
    stack.run_cycle()
    everything = [(item["_starfeed"]["source"].get("feed_url"), item["id"])
                  for page in walk(stack, "/feed.json") for item in page["items"]]
    assert len(everything) == len(set(everything))
    assert [uid for feed, uid in everything if feed == url] == [uid for uid, _ in items]

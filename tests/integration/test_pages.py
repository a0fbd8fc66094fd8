"""RFC 5005 §3 paged feeds and Link headers: a reader walking rel="next" sees every stored entry
once and stops; every feed names itself in a Link header."""

import json
import time
from urllib.parse import urlsplit

from conftest import body_of, http_get

from origin import Reply, rss
from starfeed.cli import main
from starfeed.render.job import encode_cursor
from starfeed.sources import add_source


def walk(stack, path: str) -> list[dict]:
    """Every page from `path` on, following next_url (JSON Feed), as a reader would."""
    pages = []
    while path:
        response = http_get(stack, path)
        assert response["statusCode"] == 200, (path, body_of(response))
        document = json.loads(body_of(response))
        pages.append(document)
        assert len(pages) < 50, "the pages do not end"
        following = document.get("next_url")
        path = f"{urlsplit(following).path}?{urlsplit(following).query}" if following else None
    return pages


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


def test_pages_link_first_and_next_in_rss_and_atom_and_headers(stack, storage, origin):
    url = origin.serve("/linked.xml", Reply(200, rss(*[(f"ln-{n}", f"Linked {n}") for n in range(55)])))
    source = add_source(storage, url, time.time() - 3600, backfill=55)[0]
    stack.run_cycle()
    first = http_get(stack, f"/s/{source.source_id}/feed.atom")
    assert first["headers"]["Link"] == f'<http://feeds.test/s/{source.source_id}/feed.atom>; rel="self"'
    document = body_of(first)
    assert 'rel="first"' not in document
    next_url = document.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0]
    assert next_url.startswith(f"http://feeds.test/s/{source.source_id}/feed.atom?before=")
    second = http_get(stack, next_url.removeprefix("http://feeds.test"))
    assert second["headers"]["Link"] == f'<{next_url}>; rel="self"'
    page = body_of(second)
    assert page.count("<entry>") == 5 and 'rel="next"' not in page
    assert f'href="http://feeds.test/s/{source.source_id}/feed.atom" rel="first"' in page
    rss_page = body_of(http_get(stack, f"/s/{source.source_id}/feed.xml?before={next_url.rsplit('=', 1)[1]}"))
    assert rss_page.count("<item>") == 5
    assert http_get(stack, f"/s/{source.source_id}/feed.xml?before=not-a-cursor")["statusCode"] == 400
    impossible = encode_cursor("2026-13-45T00:00:00Z#x")
    assert http_get(stack, f"/feed.xml?before={impossible}")["statusCode"] == 400
    # A cursor from the future pages from today: everything stored, newest first.
    future = json.loads(body_of(http_get(stack, f"/s/{source.source_id}/feed.json?before="
                                               f"{encode_cursor('2099-01-01T00:00:00Z#x')}")))
    assert len(future["items"]) == 50 and future["items"][0]["id"] == "ln-0"
    everything = json.loads(body_of(http_get(stack, f"/feed.json?before={encode_cursor('2099-01-01T00:00:00Z#x')}")))
    assert "ln-0" in {item["id"] for item in everything["items"]}
    main(["source", "remove", source.source_id])


def test_a_configured_hub_is_announced_in_the_link_header(stack, monkeypatch):
    from dataclasses import replace

    api = stack.cold_start("ApiFunction")  # a fresh instance: nothing cached from other tests
    monkeypatch.setattr(api.module.storage, "settings",
                        replace(api.module.storage.settings, websub_hub="https://hub.example/"))
    from starfeed.local.http_bridge import http_api_event

    response = api.invoke(http_api_event("GET", "/feed.json", {}, b"", "198.51.100.7"))
    assert response["headers"]["Link"] == ('<http://feeds.test/feed.json>; rel="self", '
                                           '<https://hub.example/>; rel="hub"')

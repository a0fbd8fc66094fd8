"""What feed readers meet (docs/design.md#serving), through the api function with API Gateway v2 events."""

import base64
import email.utils
import gzip
import json
import time

import feedparser
import listparser

from starfeed.model import Entry
from starfeed.serve.cache import FeedCache
from starfeed.serve.lookup import interleave
from starfeed.sources import add_source

from conftest import body_of, http_get
from origin import Reply, rss


def subscribe(storage, url, **options):
    return add_source(storage, url, time.time() - 3600, **options)[0]


def test_collections_have_their_own_feeds_and_pages(stack, storage, origin):
    a = subscribe(storage, origin.serve("/ca.xml", Reply(200, rss(("ca", "Coll A")))), collections=["tech"])
    subscribe(storage, origin.serve("/cb.xml", Reply(200, rss(("cb", "Coll B")))), collections=["tech", "news"])
    subscribe(storage, origin.serve("/cc.xml", Reply(200, rss(("cc", "Outside")))))
    stack.run_cycle()
    titles = {e.title for e in feedparser.parse(body_of(http_get(stack, "/c/tech/feed.xml"))).entries}
    assert titles == {"Coll A", "Coll B"}
    news = http_get(stack, "/c/news/feed", {"accept": "application/feed+json"})
    assert [i["title"] for i in json.loads(body_of(news))["items"]] == ["Coll B"]
    page = body_of(http_get(stack, "/c/tech/"))
    assert "Coll A" in page and "Outside" not in page and 'href="/c/news/"' in page
    assert http_get(stack, "/c/nope/feed.xml")["statusCode"] == 404
    assert http_get(stack, "/c/NOT..valid/feed.xml")["statusCode"] == 404
    assert storage.collections.members("tech") and a.source_id in storage.collections.members("tech")


def test_rss_by_url_serves_the_source_feed(stack, storage, origin):
    url = origin.serve("/byurl.xml", Reply(200, rss(("u", "By URL"))))
    source = subscribe(storage, url)
    before = http_get(stack, "/rss?url=" + url)  # built when asked: empty until its first fetch
    assert before["statusCode"] == 200 and "By URL" not in body_of(before)
    stack.run_cycle()
    cache = stack.functions["ApiFunction"].module.app.feed_cache
    ttl, cache.ttl = cache.ttl, 0  # past the api's window of a few seconds
    try:
        found = http_get(stack, "/rss?url=" + url)
    finally:
        cache.ttl = ttl
    assert found["statusCode"] == 200 and "By URL" in body_of(found)
    assert http_get(stack, "/rss?url=https://unknown.example/feed")["statusCode"] == 404
    assert http_get(stack, "/rss?url=not-a-url")["statusCode"] == 400
    disabled = storage.sources.get(source.source_id)
    disabled.enabled = False
    storage.records.Source(source.source_id).update(actions=[storage.records.Source.enabled.set(False)])
    assert http_get(stack, "/rss?url=" + url)["statusCode"] == 403


def test_opml_exports_read_back_with_listparser(stack, storage, origin):
    url = origin.serve("/opml.xml", Reply(200, rss(("o", "O"), title="Opml Feed")))
    source = subscribe(storage, url, collections=["reading"])
    stack.run_cycle()
    published = listparser.parse(body_of(http_get(stack, "/opml.xml")))
    assert not published.bozo
    urls = {f.url for f in published.feeds}
    base = storage.settings.public_url
    assert {f"{base}/feed.xml", f"{base}/feed.atom", f"{base}/feed.json",
            f"{base}/c/reading/feed.xml", f"{base}/s/{source.source_id}/feed.json"} <= urls
    assert any(f.title == "Opml Feed (Atom)" for f in published.feeds)
    subscriptions = listparser.parse(body_of(http_get(stack, "/subscriptions.opml")))
    mine = [f for f in subscriptions.feeds if f.url == url]
    assert mine and mine[0].title == "Opml Feed" and ["reading"] in mine[0].categories


def fresh_get(stack, path: str) -> dict:
    """GET without the api function's 30 s memory of an earlier test's copy."""
    cache = stack.functions["ApiFunction"].module.app.feed_cache
    ttl, cache.ttl = cache.ttl, 0
    try:
        return http_get(stack, path)
    finally:
        cache.ttl = ttl


def test_every_feed_opml_xml_lists_exists(stack, storage, origin):
    """/opml.xml lists built feeds only (docs/design.md#opml): it listed the GitHub follow list's
    feed and collections never rendered, which answer 404. Every URL it lists is fetched here
    through the api function."""
    from starfeed.model import Source, source_id_for
    from starfeed.render import SOURCES_SUMMARY
    from starfeed.render.job import render_targets

    fetched = subscribe(storage, origin.serve("/listed.xml", Reply(200, rss(("l", "Listed")))),
                        collections=["listed"])
    never = subscribe(storage, origin.url + "/never.xml", collections=["never-fetched"])
    storage.sources.change(never.source_id, {"next_check_at": None})  # stays "new"
    following = Source(source_id=source_id_for("https://api.github.test/user/following"),
                       url="https://api.github.test/user/following", kind="github-following",
                       title="GitHub follow list", status="ok", last_fetch_at=time.time())
    storage.sources.add(following)
    try:
        stack.run_cycle()
        render_targets(storage, [SOURCES_SUMMARY])
        published = listparser.parse(body_of(fresh_get(stack, "/opml.xml")))
        base = storage.settings.public_url
        urls = {f.url for f in published.feeds}
        assert f"{base}/c/listed/feed.xml" in urls and f"{base}/s/{fetched.source_id}/feed.atom" in urls
        assert not any("never-fetched" in u or never.source_id in u or following.source_id in u for u in urls)
        # Sources other tests wrote straight into the table were never fetched, so never built.
        injected = {s.source_id for s in storage.sources.all() if not s.fetch_history}
        for url in sorted(urls):
            path = url.removeprefix(base)
            if path.split("/")[1:2] == ["s"] and path.split("/")[2] in injected:
                continue
            assert http_get(stack, path)["statusCode"] == 200, path
    finally:
        for source in (never, following):
            storage.sources.delete(source.source_id)


def test_item_and_site_lookups(stack, storage, origin):
    # "localhost": a site of its own, apart from the 127.0.0.1 sources of other tests.
    busy = origin.serve("/busy.xml", Reply(200, rss(*[(f"b{n}", f"Busy {n}") for n in range(8)]))
                        ).replace("127.0.0.1", "localhost")
    quiet = origin.serve("/quiet.xml", Reply(200, rss(("q1", "Quiet 1"), ("q2", "Quiet 2")))
                         ).replace("127.0.0.1", "localhost")
    for url in (busy, quiet):
        subscribe(storage, url)
    stack.run_cycle()
    item = http_get(stack, "/api/item?url=https://example.org/q1")
    assert item["statusCode"] == 200 and json.loads(body_of(item))["title"] == "Quiet 1"
    assert http_get(stack, "/api/item?url=https://example.org/never")["statusCode"] == 404
    site = json.loads(body_of(http_get(stack, "/api/site?root=localhost")))
    assert {busy, quiet} <= {f["url"] for f in site["feeds"]}
    titles = [i["title"] for i in site["items"]][:4]
    assert titles[:4] in (["Busy 0", "Quiet 1", "Busy 1", "Quiet 2"], ["Quiet 1", "Busy 0", "Quiet 2", "Busy 1"])
    assert http_get(stack, "/api/site?root=unknown.example")["statusCode"] == 404
    assert http_get(stack, "/api/site?root=../../etc")["statusCode"] == 400


def entry(feed, n, link=None):
    return Entry(entry_uid=f"{feed}{n}", feed_id=feed, canonical_link=link or f"https://x/{feed}{n}",
                 first_seen="t", last_seen="t")


def test_interleave_is_fair_and_distinct():
    prolific = [entry("p", n) for n in range(10)]
    rare = [entry("r", 0), entry("r", 1, link="https://x/p0")]  # the same URL as p0
    out = interleave([prolific, rare], 5)
    assert [e.entry_uid for e in out] == ["p0", "r0", "p1", "p2", "p3"]


def test_warm_repeats_are_cache_hits_and_a_new_render_invalidates(stack, storage, origin):
    url = origin.serve("/cached.xml", Reply(200, rss(("c1", "First"))),
                       Reply(200, rss(("c2", "Second"), ("c1", "First"))))
    source = subscribe(storage, url)
    stack.run_cycle()
    path = f"/s/{source.source_id}/feed.xml"
    first, again = http_get(stack, path), http_get(stack, path)
    assert (first["headers"]["X-Cache"], again["headers"]["X-Cache"]) in (("MISS", "HIT"), ("HIT", "HIT"))
    assert again["headers"]["X-Cache"] == "HIT"
    cache = stack.functions["ApiFunction"].module.app.feed_cache
    stats_before = dict(cache.stats)
    storage.sources.change(source.source_id, {"next_check_at": time.time() - 1, "locked_until": None})
    stack.run_cycle()
    ttl, cache.ttl = cache.ttl, 0  # let the cached copy be revalidated now
    try:
        fresh = http_get(stack, path)
    finally:
        cache.ttl = ttl
    assert fresh["headers"]["X-Cache"] == "MISS" and "Second" in body_of(fresh)
    assert cache.stats["invalidations"] == stats_before["invalidations"] + 1


def test_last_modified_is_the_render_time_and_gzip_is_offered(stack, storage, origin):
    source = subscribe(storage, origin.serve("/lm.xml", Reply(200, rss(("l", "L")))))
    stack.run_cycle()
    response = http_get(stack, f"/s/{source.source_id}/feed.xml", {"accept-encoding": "gzip"})
    assert response["headers"]["Content-Encoding"] == "gzip" and response["isBase64Encoded"]
    document = gzip.decompress(base64.b64decode(response["body"]))
    build = feedparser.parse(document).feed.updated_parsed
    assert email.utils.parsedate(response["headers"]["Last-Modified"])[:6] == build[:6]
    assert response["headers"]["Cache-Control"].startswith("public, max-age=")


def test_cache_is_bounded_in_bytes_and_counts_evictions():
    from starfeed.store.blobs import FeedObject

    clock = [0.0]
    cache = FeedCache(max_bytes=250, ttl=10, clock=lambda: clock[0])
    objects = {k: FeedObject(b"x" * 100, "text/plain", f'"{k}"', 0.0) for k in "abc"}
    for key in "abc":
        cache.get(key, lambda etag, k=key: objects[k])
    assert cache.summary()["entries"] == 2 and cache.stats["evictions"] == 1
    assert cache.get("c", lambda etag: 1 / 0)[1] is True  # a hit never loads
    clock[0] = 11
    from starfeed.store.blobs import NotModified

    def unchanged(etag):
        assert etag == '"c"'
        raise NotModified

    assert cache.get("c", unchanged) == (objects["c"], True)  # revalidated by ETag


def test_the_dashboard_counts_formats_readers_and_the_cache(stack, storage, origin):
    subscribe(storage, origin.serve("/dash.xml", Reply(200, rss(("d", "D")))))
    stack.run_cycle()
    for agent, path in (("Feedly/1.0", "/feed.xml"), ("Feedly/1.0", "/feed.atom"),
                        ("NetNewsWire (RSS Reader)", "/feed.json"), ("NetNewsWire (RSS Reader)", "/feed.json")):
        assert http_get(stack, path, {"user-agent": agent})["statusCode"] == 200
    response = http_get(stack, "/stats")
    page = body_of(response)
    assert response["statusCode"] == 200 and response["headers"]["Content-Type"].startswith("text/html")
    assert page.count("<svg") >= 3 and "<script" not in page
    for words in ("Requests by format", "Top readers", "Feedly", "NetNewsWire", "JSON Feed",
                  "Cache hit rate", "Render time", "Recent errors", "Sources"):
        assert words in page, words
    assert "198.51.100.7" not in page  # the test requests' source address is never kept
    day = storage.counters.days(1)
    (counters,) = day.values()
    assert counters["ua:Feedly"] >= 2 and counters["req:json"] >= 2
    assert any(k.startswith("render:rss:") for k in counters)

"""A new render reaches every api instance within the revalidation window (docs/design.md#api-cache).

Each instance is its own execution environment of the api function (its own cache), on a
clock the test moves: nothing here waits for or asserts on the wall clock.
"""

import time

from starfeed.serve.cache import FeedCache
from starfeed.sources import add_source
from starfeed.store.blobs import FeedObject, NotModified

from conftest import body_of
from origin import Reply, rss


def instance(stack, clock):
    api = stack.cold_start("ApiFunction")
    api.module.app.feed_cache.clock = lambda: clock[0]
    return api


def ask(api, path):
    from starfeed.local.http_bridge import http_api_event

    response = api.invoke(http_api_event("GET", path, {}, b"", "198.51.100.7"))
    assert response["statusCode"] == 200
    return body_of(response), response["headers"]["X-Cache"]


def gets(api) -> int:
    """S3 GETs this instance made for its cache: a 304 or a body."""
    stats = api.module.app.feed_cache.stats
    return stats["revalidations"] + stats["misses"]


def test_every_instance_serves_a_new_render_after_one_window(stack, storage, origin):
    url = origin.serve("/fresh.xml", Reply(200, rss(("f1", "Fresh One"))),
                       Reply(200, rss(("f2", "Fresh Two"), ("f1", "Fresh One"))))
    source = add_source(storage, url, time.time() - 3600)[0]
    stack.run_cycle()
    path = f"/s/{source.source_id}/feed.xml"
    clock = [1000.0]
    busy, idle = instance(stack, clock), instance(stack, clock)
    window = busy.module.app.feed_cache.ttl
    assert window == storage.settings.api_cache_ttl and 0 < window <= 5  # a few seconds
    for api in (busy, idle):  # each read it once: its own copy
        body, cached = ask(api, path)
        assert cached == "MISS" and "Fresh One" in body and "Fresh Two" not in body

    clock[0] += window * 0.9
    assert ask(busy, path)[1] == "HIT"  # within the window: from memory
    before = {"busy": gets(busy), "idle": gets(idle)}

    storage.sources.change(source.source_id, {"next_check_at": time.time() - 1})
    stack.run_cycle()  # fetched and rendered: the new feed is in S3

    # Still within the window of their last check: the old copy, and no S3 request.
    for api in (busy, idle):
        body, cached = ask(api, path)
        assert "Fresh Two" not in body and cached == "HIT"
    assert {"busy": gets(busy), "idle": gets(idle)} == before

    clock[0] += window * 0.1  # one window after their last check: both revalidate and see it
    for name, api in (("busy", busy), ("idle", idle)):
        invalidations = api.module.app.feed_cache.stats["invalidations"]
        body, cached = ask(api, path)
        assert "Fresh Two" in body and cached == "MISS", name
        assert api.module.app.feed_cache.stats["invalidations"] == invalidations + 1
        assert gets(api) == before[name] + 1  # one GET brought it
        assert ask(api, path) == (body, "HIT")  # and the next window starts from memory


def test_one_get_per_window_timed_from_when_it_was_asked():
    """The window starts when the GET starts: a render that lands while the GET is in flight
    is picked up a window after the request, not a window after a slow answer."""
    clock, loads = [0.0], []

    def load(etag):
        loads.append(clock[0])
        clock[0] += 0.5  # a slow S3 answer
        if etag == '"v1"':
            raise NotModified
        return FeedObject(b"v1", "application/rss+xml", '"v1"', 0.0)

    cache = FeedCache(ttl=2.0, clock=lambda: clock[0])
    for at in (0.0, 0.6, 1.0, 1.9, 2.0, 2.4, 3.9, 4.0):
        clock[0] = max(clock[0], at)
        cache.get("feed.xml", load)
    # 0.0 (first read, answered at 0.5), 2.0 (window from 0.0, answered at 2.5), 4.0.
    assert loads == [0.0, 2.0, 4.0]
    assert cache.stats == {"hits": 7, "misses": 1, "evictions": 0, "invalidations": 0, "revalidations": 2}


def test_the_deployed_window_is_a_few_seconds():
    from starfeed.settings import Settings

    assert 0 < Settings().api_cache_ttl <= 5
    assert FeedCache().ttl == Settings().api_cache_ttl

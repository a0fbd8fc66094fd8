"""What a reader of the aggregate sees across sources: one article once, under the source that had
it first, and a new undated feed that does not push dated news aside."""

import calendar
import json
import time
import uuid

import feedparser

from starfeed.sources import add_source

from conftest import body_of, http_get
from origin import Reply, rss

HOUR = 3600


def entries_of(stack, path):
    response = http_get(stack, path)
    assert response["statusCode"] == 200, response
    return feedparser.parse(body_of(response)).entries


def test_an_article_two_sources_carry_appears_once_under_the_first(stack, storage, origin, other_origin):
    shared, tag = f"shared-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    # Seen first, and (should both sightings fall in one second) dated first.
    first_url = origin.serve("/first.xml", Reply(200, rss((shared, "Shared story"), title="First",
                                                          newest=time.time() - 600)))
    second_url = other_origin.serve("/second.xml", Reply(200, rss((shared, "Shared story, mirrored"),
                                                                  (f"own-{tag}", "Own story"), title="Second")))
    collection = f"mirrors-{tag}"
    first, _ = add_source(storage, first_url, time.time() - HOUR, [collection])
    stack.run_cycle()  # the first source has it first
    second, _ = add_source(storage, second_url, time.time() - HOUR, [collection])
    stack.run_cycle()

    link = f"https://example.org/{shared}"
    # The collection's feed, which only this test's sources make (the aggregate of the shared
    # stack holds the other tests' entries too, and shows 50).
    for path in (f"/c/{collection}/feed.xml",):
        entries = entries_of(stack, path)
        carrying = [e for e in entries if e.get("link") == link]
        assert [e.title for e in carrying] == ["Shared story"], path
        assert any(e.get("title") == "Own story" for e in entries), path
    # Each source's own feed still carries everything it published.
    assert {e.title for e in entries_of(stack, f"/s/{second.source_id}/feed.xml")} == \
        {"Shared story, mirrored", "Own story"}


def undated_rss(count: int, tag: str) -> bytes:
    items = "".join(f"<item><title>Old {i}</title><link>https://undated.example/{tag}/{i}</link></item>"
                    for i in range(count))
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Undated</title>'
            f"<link>https://undated.example/</link><description>d</description>{items}</channel></rss>").encode()


def test_a_new_undated_feed_contributes_its_first_few_behind_dated_news(stack, storage, origin, other_origin):
    tag = uuid.uuid4().hex[:8]
    collection = f"mixed-{tag}"  # the same ordering as the aggregate, without other tests' entries
    dated_url = origin.serve("/dated.xml", Reply(200, rss((f"news-{tag}", "Dated news"), title="Dated",
                                                          newest=time.time() - 2 * 86400)))
    add_source(storage, dated_url, time.time() - 3 * 86400, [collection])
    stack.run_cycle()
    undated_url = other_origin.serve("/undated.xml", Reply(200, undated_rss(20, tag)))
    source, _ = add_source(storage, undated_url, time.time(), [collection])
    stack.run_cycle()

    own = entries_of(stack, f"/s/{source.source_id}/feed.xml")
    assert [e.title for e in own] == ["Old 0", "Old 1", "Old 2"]  # the feed's first three, in its order
    stored = storage.sources.get(source.source_id)
    assert (stored.entry_count, stored.last_dropped) == \
        (3, {"undated beyond the feed's first 3": 17})
    titles = [e.get("title", "") for e in entries_of(stack, f"/c/{collection}/feed.xml")]
    assert titles == ["Dated news", "Old 0", "Old 1", "Old 2"]  # two-day-old news still leads


def dated_rss(items: list[tuple[str, str, str]], tag: str) -> bytes:
    """items: (guid, title, RFC 822 date)."""
    body = "".join(f"<item><title>{t}</title><link>https://tomorrow.example/{tag}/{g}</link>"
                   f"<guid isPermaLink='false'>{tag}-{g}</guid><pubDate>{d}</pubDate></item>" for g, t, d in items)
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Tomorrow</title>'
            f"<link>https://tomorrow.example/</link><description>d</description>{body}</channel></rss>").encode()


def rfc822(epoch: float) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(epoch))


def test_a_feed_dating_its_items_in_2099_does_not_lead_and_what_its_first_fetch_left_out_stays_out(
        stack, storage, origin, other_origin, monkeypatch):
    """docs/design.md#undated-and-future and #left-out, as a reader of a collection sees them."""
    # The feed is read again right after its next render: no window of warm cache before that.
    monkeypatch.setattr(stack.functions["ApiFunction"].module.app.feed_cache, "ttl", 0)
    tag = uuid.uuid4().hex[:8]
    collection = f"future-{tag}"
    dated_url = origin.serve("/news.xml", Reply(200, rss((f"news-{tag}", "Dated news"), title="Dated",
                                                         newest=time.time() - 2 * 86400)))
    add_source(storage, dated_url, time.time() - 3 * 86400, [collection])
    stack.run_cycle()
    far = "Thu, 01 Jan 2099 00:00:00 GMT"
    first = [("fresh", "Fresh", rfc822(time.time() - 60)), *((f"far{n}", f"Far {n}", far) for n in range(5))]
    # The feed's next change: one new item, and a date left out by the first fetch moved into the past.
    second = [("later", "Later", rfc822(time.time())), *first[:4], ("far4", "Far 4", rfc822(time.time() - 86400))]
    url = other_origin.serve("/tomorrow.xml", Reply(200, dated_rss(first, tag)), Reply(200, dated_rss(second, tag)))
    source, _ = add_source(storage, url, time.time() - HOUR, [collection])
    stack.run_cycle()

    # Counted as undated: the first three kept, the rest left out by the same rule.
    stored = storage.sources.get(source.source_id)
    assert (stored.entry_count, stored.last_dropped) == \
        (4, {"dated in the future beyond the feed's first 3 undated": 2})
    entries = entries_of(stack, f"/c/{collection}/feed.xml")
    assert [e.title for e in entries] == ["Fresh", "Dated news", "Far 0", "Far 1", "Far 2"]  # news leads
    week_ago = time.time() - 7 * 86400
    assert all(abs(calendar.timegm(e.published_parsed) - week_ago) < HOUR for e in entries[2:])
    # The date as the source gave it: on the entry, in JSON Feed, and on the index.
    (far0,) = [e for e in storage.entries.recent(source.source_id, 10) if e.title == "Far 0"]
    assert far0.published == "2099-01-01T00:00:00Z"
    items = json.loads(body_of(http_get(stack, f"/c/{collection}/feed.json")))["items"]
    assert [i["_starfeed"].get("date_published_as_given") for i in items if i["title"].startswith("Far")] == \
        ["2099-01-01T00:00:00Z"] * 3
    assert "dated 2099-01-01 00:00:00 UTC by its source" in body_of(http_get(stack, f"/c/{collection}/"))

    storage.sources.change(source.source_id, {"next_check_at": time.time() - 1, "locked_until": None})
    stack.run_cycle()
    # One new entry: neither Far 3 nor Far 4 (its date now in the past) comes in as new.
    assert storage.sources.get(source.source_id).entry_count == 5
    titles = [e.title for e in entries_of(stack, f"/c/{collection}/feed.xml")]
    assert titles == ["Later", "Fresh", "Dated news", "Far 0", "Far 1", "Far 2"]

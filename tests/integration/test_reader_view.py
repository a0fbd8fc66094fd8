"""What a reader of the aggregate sees across sources: one article once, under the source that had
it first, and a new undated feed that does not push dated news aside."""

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

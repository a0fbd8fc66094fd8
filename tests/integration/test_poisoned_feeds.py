"""Poisoned feeds on one host beside a healthy one (docs/design.md#failure-isolation). The healthy feed's entries are
served after one scheduler cycle, every poisoned source shows what happened, nothing reaches a
dead-letter queue, and every document served stays well-formed and free of script URLs."""

import json
import time
from xml.etree import ElementTree as ET

from starfeed.sources import add_source

from conftest import body_of, dead_letters, failed_records, http_get
from origin import Reply, rss

NOW = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() - 60))
ISO_NOW = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))


def item(guid: str, title: str = "Item", link: str = "https://example.org/x", extra: str = "",
         date: str = NOW) -> str:
    return (f"<item><title>{title}</title><link>{link}</link><guid isPermaLink='false'>{guid}</guid>"
            f"<pubDate>{date}</pubDate>{extra}</item>")


def channel(items: str, title: str = "Poison", link: str = "https://example.org/") -> bytes:
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title><link>{link}</link>'
            f"<description>d</description>{items}</channel></rss>").encode()


def json_feed(items: list) -> bytes:
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "JSON poison",
                       "items": items}).encode()


POISONS = {
    "/hugo-zero-date.xml": channel(item("z1", date="Mon, 01 Jan 0001 00:00:00 +0000")),
    "/hugo-zero-date.atom": (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Hugo</title>'
        b'<id>urn:x</id><updated>0001-01-01T00:00:00Z</updated><entry><title>Zero</title><id>urn:z</id>'
        b'<link href="https://example.org/z"/><updated>0001-01-01T00:00:00Z</updated></entry></feed>'),
    "/tags-five.json": json_feed([{"id": "t", "url": "https://example.org/t", "content_text": "x", "tags": 5,
                                   "date_published": ISO_NOW}]),
    "/attachments-true.json": json_feed([{"id": "a", "url": "https://example.org/a", "content_text": "x",
                                          "attachments": True, "date_published": ISO_NOW}]),
    "/every-member-wrong.json": json_feed([{"id": {"x": 1}, "url": 7, "title": ["t"], "tags": "t",
                                            "authors": "me", "date_published": 12, "content_html": 5}, 3]),
    "/long-guid.xml": channel(item("g" * 2300)),
    "/long-link.xml": channel(item("l1", link="https://example.org/" + "a" * 2100)),
    "/huge-item.xml": channel(item("h1", extra="<description>" + "<p>word</p>" * 50000 + "</description>")),
    "/control-title.xml": channel(item("c1"), title="Bad\x01\x02\x1b title"),
    "/javascript-link.xml": channel(item("j1", link="javascript:alert(1)"), link="javascript:alert(document.domain)"),
    "/not-a-feed.json": b'{"version": "https://jsonfeed.org/version/1.1", "items": 5}',
}


def test_poisoned_feeds_are_their_own_problem(stack, storage, origin):
    stack.drain()
    dead_before = dead_letters(stack)
    hour_ago = time.time() - 3600
    healthy = add_source(storage, origin.serve("/healthy.xml", Reply(200, rss(("ok1", "Healthy news")))),
                         hour_ago)[0]
    poisoned = {path: add_source(storage, origin.serve(path, Reply(200, body)), hour_ago)[0]
                for path, body in POISONS.items()}
    stack.run_cycle()

    feed = http_get(stack, f"/s/{healthy.source_id}/feed.xml")
    assert feed["statusCode"] == 200 and "Healthy news" in body_of(feed)
    for path, source in poisoned.items():
        stored = storage.sources.get(source.source_id)
        assert stored.status in ("ok", "error"), path  # fetched, and it says how it went
        assert stored.status == "ok" or stored.last_error, path
    assert storage.sources.get(poisoned["/not-a-feed.json"].source_id).status == "error"
    assert failed_records(stack) == 0  # every record succeeded: none waits for a retry
    assert dead_letters(stack) == dead_before

    # Entries were fitted, not rejected.
    assert storage.entries.recent(poisoned["/long-guid.xml"].source_id, 5)
    assert storage.entries.recent(poisoned["/huge-item.xml"].source_id, 5)
    long_link = storage.entries.recent(poisoned["/long-link.xml"].source_id, 5)
    assert long_link and long_link[0].canonical_link is None and long_link[0].warnings

    for path, source in [("/healthy.xml", healthy), *poisoned.items()]:
        for extension in ("xml", "atom"):
            response = http_get(stack, f"/s/{source.source_id}/feed.{extension}")
            assert response["statusCode"] == 200, path  # a first fetch publishes, even empty
            document = body_of(response)
            ET.fromstring(document.encode())  # well-formed
            assert "javascript:" not in document.lower()
    for path in ("/feed.xml", "/feed.atom", "/"):
        document = body_of(http_get(stack, path))
        assert "javascript:" not in document.lower(), path
        if path != "/":
            ET.fromstring(document.encode())

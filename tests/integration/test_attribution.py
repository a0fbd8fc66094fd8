"""Attribution (docs/design.md#feed-content), through the local stack: every item of the aggregate
and of a collection names the source it came from, in RSS (<source url>), Atom (<source> with title,
id and link), JSON Feed (_starfeed.source) and the HTML index; one article seen through two sources
appears once; a source's own feed carries the language its feed declares."""

import json
import time

from lxml import etree

from starfeed.sources import add_source

from conftest import body_of, http_get
from origin import Reply, rss

HOUR = 3600
A = "{http://www.w3.org/2005/Atom}"


def served(stack, path: str) -> str:
    response = http_get(stack, path)
    assert response["statusCode"] == 200, (path, response)
    return body_of(response)


def test_every_item_of_the_aggregate_and_collections_names_its_source(stack, storage, origin):
    shared = ("attr-shared", "One story, two feeds")
    one = origin.serve("/attr-one.xml", Reply(200, rss(shared, ("attr-1", "Only in one"), title="Harbour Notes",
                                                       extra="<language>en-gb</language>")))
    two = origin.serve("/attr-two.xml", Reply(200, rss(shared, ("attr-2", "Only in two"), title="Quay Letters",
                                                       newest=time.time() - 30)))
    # Subscribed an hour ago, so the items (all newer) pass the first-poll rule.
    first, _ = add_source(storage, one, time.time() - HOUR, collections=["attribution"])
    second, _ = add_source(storage, two, time.time() - HOUR, collections=["attribution"])
    stack.run_cycle()
    titles = {first.url: "Harbour Notes", second.url: "Quay Letters"}

    for path in ("/c/attribution/feed", "/feed"):
        items = etree.fromstring(served(stack, f"{path}.xml").encode()).iter("item")
        named = [(i.findtext("title"), i.find("source")) for i in items]
        assert all(source is not None and source.text and source.get("url") for _, source in named)
        ours = {title: (source.get("url"), source.text) for title, source in named if source.get("url") in titles}
        # The session's other tests fill the aggregate too: there, ours may have left its newest 50.
        expected = {"Only in one": (first.url, "Harbour Notes"), "Only in two": (second.url, "Quay Letters")}
        for title, attribution in expected.items():
            assert ours.get(title, attribution if path == "/feed" else None) == attribution
        # The same article through both sources: once, under the source that had it first.
        assert [t for t, _ in named].count("One story, two feeds") == (1 if path != "/feed" else
                                                                        min(1, len(ours)))

        for entry in etree.fromstring(served(stack, f"{path}.atom").encode()).iter(f"{A}entry"):
            source = entry.find(f"{A}source")
            assert source is not None and source.findtext(f"{A}title") and source.findtext(f"{A}id")
            assert source.find(f"{A}link[@rel='self']") is not None
            assert entry.findtext(f"{A}author/{A}name")
            if source.findtext(f"{A}id") in titles:
                assert source.findtext(f"{A}title") == titles[source.findtext(f"{A}id")]

        for item in json.loads(served(stack, f"{path}.json"))["items"]:
            assert item["_starfeed"]["source"]["title"] and item["authors"]
            if item.get("title") == "Only in two":
                assert item["_starfeed"]["source"] == {"title": "Quay Letters", "feed_url": second.url,
                                                       "home_page_url": "https://example.org/"}

    page = served(stack, "/c/attribution/")
    assert "Harbour Notes" in page and "Quay Letters" in page

    # A source's own feed: the channel names it, and carries the language it declares.
    own = etree.fromstring(served(stack, f"/s/{first.source_id}/feed.xml").encode())
    assert own.findtext("channel/title") == "Harbour Notes"
    assert own.findtext("channel/language") == "en-GB"
    assert own.find("channel/item/source") is None
    assert etree.fromstring(served(stack, f"/s/{second.source_id}/feed.xml").encode()).find("channel/language") is None

"""Poisoned stored data (docs/design.md#failure-isolation) costs the renderer one target, never its batch, and
nothing it publishes carries a script link or a subscription's credentials."""

import copy
import json
import time

from lxml import etree

from starfeed.model import Source
from starfeed.render import SOURCES_SUMMARY

from conftest import body_of, http_get, load_event

GOOD, HOSTILE, CORRUPT = "14a000000001", "14a000000002", "14a000000003"
POISONED = "poisoned"  # a collection of the corrupt source
SECRET_URL = "https://user:pw@hostile.example/feed?token=s3cret"


def put_entry(storage, feed_id: str, uid: str, when: str, **attributes) -> None:
    """An entries item written as it is, bypassing every check a fetch would make."""
    item = {"feed_id": {"S": feed_id}, "entry_uid": {"S": uid}, "first_seen": {"S": when},
            "last_seen": {"S": when}, "content_hash": {"S": "x"}, "sort_key": {"S": f"{when}#{uid}"},
            "day": {"S": when[:10]}, "expires_at": {"N": str(int(time.time()) + 86400)}, **attributes}
    storage.client("dynamodb").put_item(TableName=storage.settings.entries_table, Item=item)


def seed(storage) -> None:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for source_id, url, fields in (
            (GOOD, "https://good.example/feed", {"title": "Good source"}),
            # (a) a control character in a channel-level field; (b) a script as the channel link
            (HOSTILE, SECRET_URL, {"title": "Hostile\x07 channel\x00", "site_url": "javascript:alert(1)"}),
            (CORRUPT, "https://corrupt.example/feed", {"title": "Corrupt source"})):
        storage.sources.delete(source_id)
        storage.sources.add(Source(source_id=source_id, url=url, status="ok", created_at=1.0, **fields))
    put_entry(storage, GOOD, "good-1", now, title={"S": "Good entry"},
              canonical_link={"S": "https://good.example/1"})
    put_entry(storage, HOSTILE, "hostile-1", now, title={"S": "Bell\x07 entry\x0b"},
              canonical_link={"S": "javascript:alert(document.cookie)"}, published={"S": "0001-01-01T00:00:00Z"},
              authors={"S": json.dumps([{"name": "\ud800 lone", "uri": "javascript:x"}, 5, "Bob"])},
              enclosures={"S": json.dumps([{"url": "data:text/html,x"}, {"url": 7}, "x"])},
              categories={"S": json.dumps([None, {"a": 1}, "ok"])}, content={"S": "<p>a]]>b\ufffe</p>"})
    # Unreadable: the store cannot even load it. Dated long ago, so only its own feed reads it, and
    # its collection's copy only that collection's feed.
    put_entry(storage, CORRUPT, "corrupt-1", "2020-01-01T00:00:00Z", authors={"S": "{not json"})
    storage.collections.join(POISONED, CORRUPT)
    storage.client("dynamodb").put_item(TableName=storage.settings.collection_entries_table, Item={
        "collection": {"S": POISONED}, "sort_key": {"S": "2020-01-01T00:00:00Z#corrupt-1"},
        "feed_id": {"S": CORRUPT}, "entry_uid": {"S": "corrupt-1"}, "first_seen": {"S": "2020-01-01T00:00:00Z"},
        "last_seen": {"S": "2020-01-01T00:00:00Z"}, "content_hash": {"S": "x"}, "authors": {"S": "{not json"},
        "expires_at": {"N": str(int(time.time()) + 86400)}})


def body(stack, storage, key: str) -> bytes:
    """What a reader gets: a rendered object, or a source's own feed as the api builds it."""
    if key.startswith("s/"):
        served = http_get(stack, f"/{key}")
        assert served["statusCode"] == 200, f"{key} was not served"
        return body_of(served).encode()
    obj = storage.blobs.get_feed(key)
    assert obj is not None, f"{key} was not rendered"
    return obj.body


def record(message_id: str, targets: list[str]) -> dict:
    template = load_event("renderer.json")["Records"][0]
    return {**copy.deepcopy(template), "messageId": message_id, "body": json.dumps({"targets": targets})}


def test_a_poisoned_target_fails_only_the_records_that_name_it(stack, storage):
    seed(storage)
    event = {"Records": [record("good", [f"s/{GOOD}/feed"]),
                         record("hostile-and-aggregate", [f"s/{HOSTILE}/feed", "feed"]),
                         record("corrupt", [f"c/{POISONED}/feed"]),
                         record("corrupt-again", [f"c/{POISONED}/feed", f"s/{GOOD}/feed"]),
                         record("summary", [SOURCES_SUMMARY])]}
    try:
        result = stack.functions["RendererFunction"].invoke(event)
        assert result == {"batchItemFailures": [{"itemIdentifier": "corrupt"},
                                                {"itemIdentifier": "corrupt-again"}]}
        assert "Good entry" in body(stack, storage, f"s/{GOOD}/feed.xml").decode()
        assert not storage.blobs.has_feed(f"c/{POISONED}/feed.xml")
        # A source's own feed is built when read: the corrupt one is a short 503, not a failure.
        unreadable = http_get(stack, f"/s/{CORRUPT}/feed.xml")
        assert unreadable["statusCode"] == 503 and unreadable["headers"]["Retry-After"]

        base = storage.settings.public_url
        for key in (f"s/{HOSTILE}/feed.xml", f"s/{HOSTILE}/feed.atom", "feed.xml", "feed.atom"):
            document = body(stack, storage, key)
            etree.fromstring(document)  # well-formed, or this raises
            text = document.decode()
            assert "javascript:" not in text and "data:text" not in text and "s3cret" not in text, key
        atom = etree.fromstring(body(stack, storage, f"s/{HOSTILE}/feed.atom"))
        ns = {"a": "http://www.w3.org/2005/Atom"}
        assert atom.findtext("a:title", namespaces=ns) == "Hostile channel"
        assert atom.find("a:link[@rel='alternate']", ns).get("href") == f"{base}/s/{HOSTILE}/feed"
        assert "Bell entry" in [e.findtext("a:title", namespaces=ns) for e in atom.findall("a:entry", ns)]
        feed = json.loads(body(stack, storage, f"s/{HOSTILE}/feed.json"))
        assert feed["home_page_url"] == f"{base}/s/{HOSTILE}/feed"
        assert feed["description"] == "Entries from https://hostile.example/feed?token=REDACTED"
        assert [i["id"] for i in feed["items"]] == ["hostile-1"] and "url" not in feed["items"][0]
        index = body(stack, storage, "index.html").decode()
        assert "Bell entry" in index and "Hostile channel" in index
        assert "javascript:" not in index and "s3cret" not in index and "\x07" not in index

        for key in ("opml.xml", "subscriptions.opml", "stats/sources.json"):
            text = body(stack, storage, key).decode()
            assert "s3cret" not in text and "user:pw" not in text and "javascript:" not in text, key
        etree.fromstring(body(stack, storage, "opml.xml"))
        etree.fromstring(body(stack, storage, "subscriptions.opml"))
    finally:
        for source_id in (GOOD, HOSTILE, CORRUPT):
            storage.sources.delete(source_id)
        storage.client("dynamodb").delete_item(TableName=storage.settings.collection_entries_table, Key={
            "collection": {"S": POISONED}, "sort_key": {"S": "2020-01-01T00:00:00Z#corrupt-1"}})

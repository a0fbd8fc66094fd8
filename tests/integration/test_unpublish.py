"""Unsubscribed means unpublished (docs/design.md#source-states), and the views that list every source read
the summary the renderer keeps when asked (the CLI and the fetcher ask when a listing changes)."""

import json
import time

from starfeed.fetch.entries import store_entries
from starfeed.model import Entry, GitHubAccount, Source
from starfeed.render import SOURCES_SUMMARY, targets_for
from starfeed.render.job import render_targets
from starfeed.render.summary import load_sources_summary
from starfeed.sources import GITHUB_COLLECTION as GITHUB

from conftest import http_get

FEED, ACCOUNT = "14b000000001", "14b000000002"
COLLECTION = "unpub"
FORMATS = ("xml", "atom", "json")


def add(storage, source: Source, title: str) -> Source:
    storage.sources.delete(source.source_id)
    storage.sources.add(source)
    for collection in source.collections:
        storage.collections.join(collection, source.source_id)
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    uid = f"{source.source_id}-1"
    entry = Entry(entry_uid=uid, feed_id=source.source_id, title=title, first_seen=when, last_seen=when,
                  canonical_link=f"https://example.org/{uid}", content_hash="x")
    store_entries(storage, [entry], time.time(), source.collections)  # as a fetch stores it
    return source


def text(storage, key: str) -> str:
    obj = storage.blobs.get_feed(key)
    return "" if obj is None else obj.body.decode()


def published(stack, source_id: str) -> list[bool]:
    """Whether the api serves the source's feed, in each format (it builds it when asked)."""
    return [http_get(stack, f"/s/{source_id}/feed.{extension}")["statusCode"] == 200 for extension in FORMATS]


def summary_row(storage, source_id: str):
    rows, _ = load_sources_summary(storage.blobs)
    return next((r for r in rows if r.source_id == source_id), None)


def set_enabled(storage, source_id: str, enabled: bool) -> None:
    assert storage.sources.change(source_id, {"enabled": enabled})


def test_disabled_then_removed_sources_leave_every_feed_page_and_list(stack, storage):
    feed = add(storage, Source(source_id=FEED, url="https://example.org/unpub.xml?api_key=s3cret", status="ok",
                               title="Unpublish me", collections=[COLLECTION], created_at=1.0), "Unpublished entry")
    account = add(storage, Source(source_id=ACCOUNT, url="https://api.github.test/users/unpub", kind="github-user",
                                  status="ok", title="unpub", github=GitHubAccount(login="unpub", tier="high"),
                                  collections=[GITHUB], created_at=1.0),
                  "unpub starred a/b")
    targets = sorted({t for s in (feed, account) for t in targets_for(s)})
    try:
        # A copy of its feed an older starfeed rendered leaves the bucket (and a CDN) at once.
        storage.blobs.put_feed(f"s/{FEED}/feed.xml", b"<rss/>", "application/rss+xml", rendered_at=1.0)
        # A source's first fetch asks for its feeds and the summary: /opml.xml lists its feed.
        report = render_targets(storage, [*targets, SOURCES_SUMMARY])
        assert not storage.blobs.has_feed(f"s/{FEED}/feed.xml") and f"s/{FEED}/feed" in report.announced
        assert not report.failed and SOURCES_SUMMARY in report.rendered
        assert published(stack, FEED) == [True] * 3
        assert f"/s/{FEED}/feed.json" in text(storage, "opml.xml")
        assert summary_row(storage, FEED).url == "https://example.org/unpub.xml?api_key=REDACTED"
        assert "s3cret" not in text(storage, "subscriptions.opml") + text(storage, "stats/sources.json")
        assert "unpub starred a/b" in text(storage, f"c/{GITHUB}/index-high.html")

        # Disabled: the CLI enqueues its targets and the summary.
        for source_id in (FEED, ACCOUNT):
            set_enabled(storage, source_id, False)
        report = render_targets(storage, [*targets, SOURCES_SUMMARY])
        assert not report.failed and sorted(report.unpublished) == sorted([f"s/{FEED}/feed", f"s/{ACCOUNT}/feed"])
        assert published(stack, FEED) == published(stack, ACCOUNT) == [False] * 3
        for key in ("feed.json", "index.html", f"c/{COLLECTION}/feed.xml", f"c/{COLLECTION}/index.html",
                    f"c/{GITHUB}/feed.atom", f"c/{GITHUB}/index.html", f"c/{GITHUB}/index-high.html"):
            page = text(storage, key)
            assert page and "Unpublished entry" not in page and "unpub starred a/b" not in page, key
        assert f"/s/{FEED}/" not in text(storage, "opml.xml")
        row = summary_row(storage, FEED)
        assert not row.enabled and not row.published

        # Enabled again (the CLI asks for the same renders): back in every feed.
        set_enabled(storage, FEED, True)
        assert not render_targets(storage, [*targets, SOURCES_SUMMARY]).failed
        assert published(stack, FEED) == [True] * 3
        assert "Unpublished entry" in text(storage, "feed.json")
        assert f"/s/{FEED}/feed.json" in text(storage, "opml.xml")

        # Removed: its entries stay stored until their TTL, yet nothing shows them.
        storage.sources.delete(FEED)
        report = render_targets(storage, [*targets, SOURCES_SUMMARY])
        assert not report.failed and f"s/{FEED}/feed" in report.unpublished
        assert published(stack, FEED) == [False] * 3
        assert "Unpublished entry" not in text(storage, "feed.json")
        assert summary_row(storage, FEED) is None
        assert "unpub.xml" not in text(storage, "subscriptions.opml")
        assert json.loads(text(storage, "stats/sources.json"))["built_at"] <= time.time()

        # A repeated unpublish (a retried record) is harmless.
        assert render_targets(storage, [f"s/{FEED}/feed"]).unpublished == [f"s/{FEED}/feed"]
    finally:
        for source_id in (FEED, ACCOUNT):
            storage.sources.delete(source_id)
        render_targets(storage, [*targets, SOURCES_SUMMARY])

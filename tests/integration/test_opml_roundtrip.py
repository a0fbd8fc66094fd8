"""/subscriptions.opml (docs/design.md#opml) read back with listparser, imported with `starfeed opml import`,
gives the same subscriptions and collections; GitHub accounts travel as starfeed's GitHub feed."""

import time
from collections import Counter

import listparser
from lxml import etree

from starfeed.cli import main
from starfeed.kinds.github_following import new_following
from starfeed.model import GitHubAccount, Source, source_id_for
from starfeed.render import SOURCES_SUMMARY
from starfeed.render.job import render_targets
from starfeed.sources import add_source

from conftest import body_of, http_get
from origin import Reply, rss

PAGE = (b"<html><head><title>A page</title></head><body><article><h1>A page</h1><p>"
        + b"Words of a page without a feed. " * 20 + b"</p></article></body></html>")


def cli(capsys, *argv) -> str:
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def export(stack, storage) -> bytes:
    render_targets(storage, [SOURCES_SUMMARY])
    cache = stack.functions["ApiFunction"].module.app.feed_cache
    ttl, cache.ttl = cache.ttl, 0  # not an earlier test's copy
    try:
        return body_of(http_get(stack, "/subscriptions.opml")).encode()
    finally:
        cache.ttl = ttl


def folders_of(document: bytes) -> dict[str, set[tuple[str, ...]]]:
    """xmlUrl -> the folder paths it sits in, as listparser reads them."""
    parsed = listparser.parse(document)
    assert not parsed.bozo and parsed.version == "opml2"
    return {f.url: {tuple(c) for c in f.categories} for f in parsed.feeds}


def test_subscriptions_round_trip(stack, storage, capsys, origin, tmp_path):
    base = storage.settings.public_url
    created = time.time() - 3600
    feeds = {name: origin.serve(f"/rt-{name}.xml", Reply(200, rss((f"rt-{name}", name.title()), title=f"RT {name}")))
             for name in ("news", "both", "loose")}
    collections = {"news": ["rt-news"], "both": ["rt-news", "rt-tech"], "loose": []}
    for name, url in feeds.items():
        add_source(storage, url, created, collections[name])
    page, _ = add_source(storage, origin.serve("/rt-page", Reply(200, PAGE, {"Content-Type": "text/html"})),
                         created, kind="website")
    following = new_following(storage.settings, time.time())
    following.status, following.next_check_at = "ok", None
    account = Source(source_id=source_id_for(f"{storage.settings.github_api_url}/user/99"), kind="github-user",
                     url=f"{storage.settings.github_api_url}/users/rt-octo/starred",
                     github=GitHubAccount(login="rt-octo"),
                     title="rt-octo", status="ok", collections=["github"], created_at=created)
    for source in (following, account):
        storage.sources.add(source)
    try:
        stack.run_cycle()
        document = export(stack, storage)
        exported = folders_of(document)

        # Exactly the subscriptions, foldered by collection; a source in two collections in both.
        assert exported[feeds["news"]] == {("rt-news",)}
        assert exported[feeds["both"]] == {("rt-news",), ("rt-tech",)}
        assert exported[feeds["loose"]] == set()
        # GitHub: starfeed's own GitHub feed, once; no API URL is presented as a feed.
        assert exported[f"{base}/c/github/feed.xml"] == set()
        assert not [u for u in exported if u.startswith(storage.settings.github_api_url)]
        # A page without a feed: the feed starfeed makes of it.
        assert exported[f"{base}/s/{page.source_id}/feed.xml"] == set()
        # No empty folder, and no outline twice in one folder.
        root = etree.fromstring(document)
        for outline in root.iter("outline"):
            assert outline.get("xmlUrl") or len(outline), etree.tostring(outline)
        for parent in [root.find("body"), *root.iter("outline")]:
            urls = Counter(o.get("xmlUrl") for o in parent.findall("outline") if o.get("xmlUrl"))
            assert not [u for u, n in urls.items() if n > 1]

        opml = tmp_path / "subscriptions.opml"
        opml.write_bytes(document)
        # Into the same starfeed: nothing new, nothing doubled.
        again = cli(capsys, "opml", "import", str(opml))
        assert ": 0 added, " in again and "failed" not in again.split("imported", 1)[1], again
        assert "starfeed's own GitHub feed" in again and f"{page.source_id} " in again
        # Unsubscribed, then imported: the same sources, in the same collections.
        for url in feeds.values():
            cli(capsys, "source", "remove", source_id_for(url))
        back = cli(capsys, "opml", "import", str(opml))
        assert ": 3 added, " in back, back
        restored = {s.url: sorted(s.collections) for s in storage.sources.all()}
        assert {name: restored[url] for name, url in feeds.items()} == collections
        for collection in ("rt-news", "rt-tech"):
            members = storage.collections.members(collection)
            assert {source_id_for(feeds[n]) for n in feeds if collection in collections[n]} <= set(members)
        stack.run_cycle()
        assert {u: exported[u] for u in feeds.values()} == \
            {u: folders for u, folders in folders_of(export(stack, storage)).items() if u in feeds.values()}
    finally:
        for source in (following, account, page):
            storage.sources.delete(source.source_id)

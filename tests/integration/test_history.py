"""A source's history (docs/design.md#archives): its RFC 5005 archive walked once through the history
queue, each document fetched once, its entries kept whatever their dates and marked backfilled;
the walk stops at the end, at a loop, at a broken link, at the limits, and says why."""

import calendar
import json
from dataclasses import replace

from starfeed.store import Storage

from conftest import run_cli
from origin import Reply, rss

YEAR_2024 = calendar.timegm((2024, 6, 1, 12, 0, 0))
ATOM = b'<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'


def document(items, newest: float, link: str | None = None, rel: str = "prev-archive") -> bytes:
    extra = f'<atom:link rel="{rel}" href="{link}"/>' if link else ""
    return rss(*items, extra=extra, newest=newest).replace(b'<rss version="2.0">', ATOM)


def archive(origin, name: str, chain: list[list[tuple[str, str]]], rel: str = "prev-archive",
            last_link: str | None = None) -> str:
    """The feed at /name/feed.xml, then its archive documents /name/N.xml, newest first, each
    linking the next older one (the oldest links last_link, if given)."""
    urls = [f"{origin.url}/{name}/feed.xml"] + [f"{origin.url}/{name}/{n}.xml" for n in range(len(chain) - 1, 0, -1)]
    for n, (url, items) in enumerate(zip(urls, chain)):
        older = urls[n + 1] if n + 1 < len(urls) else last_link
        origin.serve(url[len(origin.url):], Reply(200, document(items, YEAR_2024 - n * 86400 * 30, older, rel)))
    return urls[0]


def requests_for(origin, name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path, _ in origin.requests:
        if path.startswith(f"/{name}/"):
            counts[path] = counts.get(path, 0) + 1
    return counts


def added_with_history(capsys, url: str) -> str:
    code, out, err = run_cli(capsys, "source", "add", url, "--history")
    assert code == 0, err
    assert "history: " in out and "archive is walked" in out
    return out.split()[1]


def test_an_archived_feed_is_imported_whole_each_document_fetched_once(stack, storage, origin, capsys):
    chain = [[("cur-1", "Current")], [("old-5", "Five"), ("old-4", "Four")], [("old-3", "Three"), ("old-2", "Two")],
             [("old-1", "One")]]
    url = archive(origin, "arch", chain)
    source_id = added_with_history(capsys, url)
    stack.drain()
    stored = {e.entry_uid: e for e in storage.entries.recent(source_id, 50)}
    # The whole history: the archive's and the feed's own entry, which a first fetch leaves out.
    assert set(stored) == {"cur-1", "old-1", "old-2", "old-3", "old-4", "old-5"}
    assert all(e.backfilled for e in stored.values())
    source = storage.sources.get(source_id)
    assert (source.history["state"], source.history["documents"], source.history["entries"]) == ("done", 3, 6)
    assert source.entry_count == 6
    history = source.history
    assert history["reason"] == "the archive ends here"
    assert all(n == 1 for path, n in requests_for(origin, "arch").items() if path != "/arch/feed.xml")
    code, out, _ = run_cli(capsys, "source", "list")
    assert f"{source_id}  done " in out and "3 archive documents, 6 entries imported; the archive ends here" in out
    # Asked again: the archive documents walked before are not fetched again.
    assert run_cli(capsys, "source", "backfill", source_id)[0] == 0
    stack.drain()
    assert all(n == 1 for path, n in requests_for(origin, "arch").items() if path != "/arch/feed.xml")
    again = storage.sources.get(source_id).history
    assert again["state"] == "done" and "walked already" in again["reason"]


def test_a_paged_feed_is_walked_by_its_next_links(stack, storage, origin, capsys):
    url = archive(origin, "paged", [[("pg-4", "Four")], [("pg-3", "Three")], [("pg-2", "Two"), ("pg-1", "One")]],
                  rel="next")
    source_id = added_with_history(capsys, url)
    stack.drain()
    assert {"pg-1", "pg-2", "pg-3"} <= {e.entry_uid for e in storage.entries.recent(source_id, 50)}
    assert storage.sources.get(source_id).history["documents"] == 2


def test_a_loop_and_a_broken_link_end_the_walk_with_their_reason(stack, storage, origin, capsys):
    looped = archive(origin, "loop", [[("lp-3", "Three")], [("lp-2", "Two")], [("lp-1", "One")]],
                     last_link=f"{origin.url}/loop/2.xml")
    source_id = added_with_history(capsys, looped)
    stack.drain()
    history = storage.sources.get(source_id).history
    assert history["state"] == "done" and history["reason"].endswith("was walked already: a loop")
    assert requests_for(origin, "loop")["/loop/2.xml"] == 1

    broken = archive(origin, "broken", [[("br-2", "Two")], [("br-1", "One")]],
                     last_link=f"{origin.url}/broken/gone.xml")
    source_id = added_with_history(capsys, broken)
    stack.drain()
    history = storage.sources.get(source_id).history
    assert history["state"] == "stopped" and "gone.xml: gone: 404 Not Found" in history["reason"]
    assert history["entries"] == 2  # what came before the broken link is kept


def test_the_walk_stops_at_its_limits(stack, storage, origin, capsys, monkeypatch):
    chain = [[("lim-cur", "Current")]] + [[(f"lim-{n}", f"Old {n}")] for n in range(6, 0, -1)]
    url = archive(origin, "limits", chain)
    walker = stack.functions["HistoryFunction"].module
    monkeypatch.setattr(walker, "storage", Storage(replace(walker.storage.settings, backfill_max_docs=2)))
    source_id = added_with_history(capsys, url)
    stack.drain()
    history = storage.sources.get(source_id).history
    assert history["state"] == "stopped" and "STARFEED_BACKFILL_MAX_DOCS" in history["reason"]
    assert history["documents"] == 2 and len(requests_for(origin, "limits")) == 3  # the feed and two documents


def test_the_rest_api_starts_a_walk_and_shows_it(stack, storage, origin):
    from conftest import api_call

    url = archive(origin, "api", [[("api-2", "Now")], [("api-1", "Then")]])
    added = api_call(stack, "POST", "/api/v1/feeds", {"url": url, "history": True})
    assert added["statusCode"] == 201
    feed_id = json.loads(added["body"])["feed"]["id"]
    assert json.loads(added["body"])["feed"]["history"]["state"] == "queued"
    stack.drain()
    shown = json.loads(api_call(stack, "GET", f"/api/v1/feeds/{feed_id}")["body"])
    assert shown["history"] == {"state": "done", "documents": 1, "entries": 2, "reason": "the archive ends here"}
    entry = json.loads(api_call(stack, "GET", "/api/v1/entries/api-1")["body"])
    assert entry["backfilled"] is True
    refused = api_call(stack, "POST", f"/api/v1/feeds/{'f' * 12}/backfill")
    assert refused["statusCode"] == 404

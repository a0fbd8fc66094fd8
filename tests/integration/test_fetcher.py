"""The fetcher's behaviours (docs/design.md#fetching), through the local stack with real loopback origins."""

import json
import time

from starfeed.cli import main
from starfeed.fetch.job import fetch_source
from starfeed.local.aws_calls import observed
from starfeed.model import outcome_of
from starfeed.parse.normalize import rfc3339
from starfeed.store.digest import DIGEST_UID

from origin import Reply, rss
from waiting import eventually


def subscribe(storage, url, **options):
    from starfeed.sources import add_source

    return add_source(storage, url, time.time() - 3600, **options)[0]


def fetch_now(storage, source):
    """One fetch as the fetcher runs it, whatever the schedule says."""
    return fetch_source(storage, source.source_id)


def test_410_disables_the_source_and_says_why(stack, storage, origin):
    source = subscribe(storage, origin.serve("/gone.xml", Reply(410)))
    fetch_now(storage, source)
    stored = storage.sources.get(source.source_id)
    assert (stored.enabled, stored.status) == (False, "gone")
    assert "410 Gone" in stored.last_error and "disabled" in stored.last_error
    assert source.source_id not in storage.sources.due_ids(time.time() + 10 ** 9)


def test_a_permanent_redirect_that_persists_moves_the_source(stack, storage, origin):
    origin.serve("/old.xml", Reply(301, headers={"Location": "/new.xml"}))
    origin.serve("/new.xml", Reply(200, rss(("m", "Moved"))))
    source = subscribe(storage, origin.url + "/old.xml")
    for expected_url in (origin.url + "/old.xml", origin.url + "/old.xml", origin.url + "/new.xml"):
        fetch_now(storage, source)
        stored = storage.sources.get(source.source_id)
        assert stored.url == expected_url
    assert stored.url_changes[0]["from"] == origin.url + "/old.xml"
    assert storage.sources.find_by_url(origin.url + "/new.xml").source_id == source.source_id


def test_each_fetch_is_remembered_with_its_raw_payload(stack, storage, origin):
    url = origin.serve("/h.xml", Reply(200, rss(("h", "H")), {"ETag": '"1"'}),
                       Reply(304, headers={"ETag": '"1"'}), Reply(500))
    source = subscribe(storage, url)
    for _ in range(3):
        fetch_now(storage, source)
    history = storage.sources.get(source.source_id).fetch_history
    assert [h["status"] for h in history] == [500, 304, 200]  # newest first
    assert outcome_of(history[2]) == "ok" and history[0]["outcome"].startswith("server error: 500")
    assert "outcome" not in history[1] and outcome_of(history[1]) == "not-modified"  # its status says it
    assert "fetch_id" not in history[1]  # a 304 stores no payload: its record has no such key
    record, body = storage.blobs.get_raw_fetch(f"fetches/{history[2]['fetch_id']}.raw")
    assert b"<title>H</title>" in body and record["http_status"] == 200


def test_a_website_source_makes_an_entry_only_when_its_text_changes(stack, storage, origin):
    page = (b"<html><head><title>Notes</title><meta name='author' content='Ana'></head>"
            b"<body><article><p>First version.</p></article></body></html>")
    changed = page.replace(b"First", b"Second")
    url = origin.serve("/page", Reply(200, page, {"Content-Type": "text/html"}),
                       Reply(200, page, {"Content-Type": "text/html"}),
                       Reply(200, changed, {"Content-Type": "text/html"}))
    source = subscribe(storage, url, kind="website")
    counts = [fetch_now(storage, source).new_entries for _ in range(3)]
    assert counts == [1, 0, 1]
    entries = storage.entries.recent(source.source_id, 10)
    assert {e.summary for e in entries} == {"First version.", "Second version."}
    assert all(e.authors == [{"name": "Ana", "email": None, "uri": None}] for e in entries)


def test_an_entry_is_rewritten_at_most_the_configured_number_of_times(stack, storage, origin):
    def version(n):
        return rss(("clock", f"It is {n} o'clock"))
    url = origin.serve("/clock.xml", *[Reply(200, version(n)) for n in range(6)])
    source = subscribe(storage, url)
    limits = storage.settings.max_rewrites, storage.settings.sighting_refresh
    object.__setattr__(storage.settings, "max_rewrites", 2)
    object.__setattr__(storage.settings, "sighting_refresh", 0)  # every sighting is written
    try:
        for _ in range(6):
            fetch_now(storage, source)
    finally:
        object.__setattr__(storage.settings, "max_rewrites", limits[0])
        object.__setattr__(storage.settings, "sighting_refresh", limits[1])
    (stored,) = storage.entry_lists.of_feed(source.source_id, 10).entries  # as the REST API reads it
    assert stored.title == "It is 2 o'clock"  # the first version and two rewrites
    assert stored.seen_count == 6  # the fetches that rewrote it, or no longer could, are sightings too


def test_a_documents_sighting_is_one_digest_write_and_stays_with_an_entry_that_leaves(stack, storage, origin):
    url = origin.serve("/sighted.xml", Reply(200, rss(("s1", "One"), ("s2", "Two"), title="A")),
                       Reply(200, rss(("s1", "One"), ("s2", "Two"), title="B")),  # other bytes, the same items
                       Reply(200, rss(("s2", "Two"), title="C")))
    source = subscribe(storage, url)
    entries_table = storage.settings.entries_table
    calls = []

    def sightings():
        return {e.entry_uid: (e.seen_count, e.last_seen) for e in
                storage.entry_lists.of_feed(source.source_id, 10).entries}  # as the REST API reads them

    refresh = storage.settings.sighting_refresh
    object.__setattr__(storage.settings, "sighting_refresh", 0)  # every sighting is written
    try:
        fetch_now(storage, source)
        first = sightings()
        # The next sighting falls in a later second (last_seen is to the second).
        eventually(lambda: rfc3339(time.time()) > first["s1"][1], what="a second after the first sighting")
        with observed(lambda service, op, params: calls.append((op, params)) if service == "dynamodb" else None):
            fetch_now(storage, source)
        second = sightings()
        fetch_now(storage, source)
    finally:
        object.__setattr__(storage.settings, "sighting_refresh", refresh)
    read = [key["entry_uid"]["S"] for op, params in calls if op == "BatchGetItem"
            for key in params["RequestItems"].get(entries_table, {}).get("Keys", [])]
    written = [op for op, params in calls if params.get("TableName") == entries_table or entries_table in
               params.get("RequestItems", {})]
    assert read == [DIGEST_UID]  # the entries themselves were not read
    assert written.count("PutItem") == 1 and "UpdateItem" not in written and "BatchWriteItem" not in written
    assert {uid: count for uid, (count, _) in first.items()} == {"s1": 1, "s2": 1}
    assert {uid: count for uid, (count, _) in second.items()} == {"s1": 2, "s2": 2}
    assert second["s1"][1] > first["s1"][1]
    # s1 left the feed: its sightings stay with it, s2's go on.
    third = sightings()
    assert third["s1"] == second["s1"] and third["s2"][0] == 3 and third["s2"][1] >= second["s2"][1]
    storage.sources.delete(source.source_id)  # its origin closes with the test


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_inspect_prints_one_json_object_per_entry_and_the_summary_on_stderr(capsys, origin, monkeypatch):
    monkeypatch.setenv("STARFEED_ALLOW_PRIVATE_NETWORKS", "127.0.0.0/8")
    url = origin.serve("/i.xml", Reply(200, rss(("i1", "One"), ("i2", "Two"), newest=time.time() + 120)))
    code, out, err = run(capsys, "inspect", "--json", url)
    assert code == 0
    entries = [json.loads(line) for line in out.splitlines()]
    assert [e["title"] for e in entries] == ["One", "Two"]
    assert {"entry_uid", "feed_id", "canonical_link", "content_hash", "first_seen"} <= set(entries[0])
    assert "http:     200" in err and "format:   rss20" in err and "entries:  2 kept of 2" in err
    assert origin.hits("/i.xml")  # fetched, but nothing stored: no stack is needed at all


def test_inspect_explains_filtered_entries_and_all_shows_them(capsys, origin, monkeypatch):
    monkeypatch.setenv("STARFEED_ALLOW_PRIVATE_NETWORKS", "127.0.0.0/8")
    url = origin.serve("/old.xml", Reply(200, rss(("o1", "Old one"), ("o2", "Old two"))))
    code, out, err = run(capsys, "inspect", "--json", url)
    assert (code, out) == (0, "")
    assert "dropped:  2 published before you subscribed" in err and "--all" in err
    code, out, _ = run(capsys, "inspect", "--json", "--all", url)
    assert [json.loads(line)["entry_uid"] for line in out.splitlines()] == ["o1", "o2"]


def test_inspect_fails_with_one_line_and_never_a_traceback(capsys, origin, monkeypatch, tmp_path):
    monkeypatch.delenv("STARFEED_ALLOW_PRIVATE_NETWORKS", raising=False)
    monkeypatch.setenv("STARFEED_STATE_DIR", str(tmp_path))  # no local stack: the shell's settings hold
    code, out, err = run(capsys, "inspect", origin.url + "/x.xml")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1 and "refused" in err
    assert origin.requests == []
    code, _, err = run(capsys, "inspect", "/no/such/file.xml")
    assert code == 1 and "Traceback" not in err and "no such file" in err


def test_source_add_on_an_html_page_subscribes_to_the_feed_it_announces(stack, capsys, origin, monkeypatch):
    monkeypatch.setenv("STARFEED_ALLOW_PRIVATE_NETWORKS", "127.0.0.0/8")
    origin.serve("/blog/", Reply(200, b'<html><head><link rel="alternate" type="application/atom+xml" '
                                      b'href="/blog/atom.xml"><link rel="alternate" type="application/rss+xml" '
                                      b'href="/blog/rss.xml"></head><body>hi</body></html>',
                                 {"Content-Type": "text/html"}))
    code, out, _ = run(capsys, "source", "add", origin.url + "/blog/", "--pick")
    assert code == 0 and "1. atom" in out and "2. rss" in out and "added" not in out
    for path in ("/blog/atom.xml", "/blog/rss.xml"):  # source add checks the feed it picks
        origin.serve(path, Reply(200, rss(("b", "Blog post"), title="Blog")))
    code, out, _ = run(capsys, "source", "add", origin.url + "/blog/", "--pick", "2")
    assert code == 0 and any(line.startswith("added ") and line.endswith(f"{origin.url}/blog/rss.xml")
                             for line in out.splitlines())
    code, out, _ = run(capsys, "source", "add", origin.url + "/blog/")
    assert code == 0 and "added" in out and f"{origin.url}/blog/atom.xml" in out


def test_a_200_with_the_validator_already_held_counts_as_unmodified(stack, storage, origin):
    first = rss(("s1", "Same"))
    changed_but_same_etag = rss(("s1", "Same"), ("s2", "Would be new"))
    url = origin.serve("/same.xml", Reply(200, first, {"ETag": '"same"'}),
                       Reply(200, changed_but_same_etag, {"ETag": '"same"'}))
    source = subscribe(storage, url)
    assert fetch_now(storage, source).new_entries == 1
    outcome = fetch_now(storage, source)
    assert outcome.not_modified and outcome.new_entries == 0
    stored = storage.sources.get(source.source_id)
    assert stored.status == "not-modified" and stored.http_status == 200
    assert len(storage.entries.recent(source.source_id, 10)) == 1  # nothing parsed


def test_a_200_with_the_bytes_already_stored_stores_and_reads_no_entry_but_keeps_its_hints(stack, storage, origin):
    # A server without validators answers every poll with the whole document.
    same = rss(("b1", "Unchanged"), extra="<ttl>600</ttl>")
    url = origin.serve("/no-validators.xml", Reply(200, same), Reply(200, same), Reply(200, same),
                       Reply(200, rss(("b1", "Unchanged"), ("b2", "Then new"))))
    source = subscribe(storage, url)
    raw = storage.client("s3")

    def stored_objects():
        return raw.list_objects_v2(Bucket=storage.settings.raw_bucket)["KeyCount"]

    assert fetch_now(storage, source).new_entries == 1
    before = stored_objects()
    outcome = fetch_now(storage, source)
    assert outcome.not_modified and outcome.new_entries == 0
    assert outcome.ttl_minutes == 600  # still read, for what only the document says
    assert stored_objects() == before  # neither its body nor a record: the first fetch's are kept
    stored = storage.sources.get(source.source_id)
    assert (stored.status, stored.http_status) == ("not-modified", 200)
    assert [(h["status"], outcome_of(h), "fetch_id" in h) for h in stored.fetch_history] == [
        (200, "not-modified", False), (200, "ok", True)]
    # Once the stored copy is half the raw retention old, the same bytes are stored again.
    storage.sources.change(source.source_id, {"body_stored_at": time.time() - 16 * 86400})
    assert fetch_now(storage, source).new_entries == 0
    assert stored_objects() == before + 1
    assert fetch_now(storage, source).new_entries == 1  # other bytes are read
    storage.sources.delete(source.source_id)  # its origin closes with the test


def test_a_payload_stored_before_a_fetch_was_one_object_is_still_read(stack, storage):
    from starfeed.store.blobs import raw_fetch_key

    s3, bucket, fetch_id = storage.client("s3"), storage.settings.raw_bucket, "0123456789abcdef0123456789abcdef"
    s3.put_object(Bucket=bucket, Key="bodies/ab/ab0123", Body=b"<rss>stored before</rss>")
    s3.put_object(Bucket=bucket, Key=f"fetches/{fetch_id}.json", Body=json.dumps(
        {"fetch_id": fetch_id, "http_status": 200, "body_key": "bodies/ab/ab0123"}).encode())
    record, body = storage.blobs.get_raw_fetch(raw_fetch_key(fetch_id))
    assert body == b"<rss>stored before</rss>" and record["http_status"] == 200
    assert storage.blobs.get_raw_fetch(raw_fetch_key("f" * 32)) is None
    s3.put_object(Bucket=bucket, Key=raw_fetch_key("e" * 32), Body=b"not a record\n<rss/>")  # replaced by hand
    assert storage.blobs.get_raw_fetch(raw_fetch_key("e" * 32)) is None

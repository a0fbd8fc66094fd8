"""The starfeed command against the local stack, as a person reads it: what `source add` found,
`source list` in 100 columns, OPML imports with progress, and one-line errors."""

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, body_of, http_get, row_of
from conftest import run_cli as run
from origin import Reply, rss


def test_add_says_what_the_first_fetch_keeps_and_list_fits_100_columns(stack, capsys, origin):
    url = origin.serve("/cli.xml", Reply(200, rss(("x", "X"), ("y", "Y"), title="CLI feed")))
    code, out, _ = run(capsys, "source", "add", url)
    assert code == 0 and out.startswith("added ")
    source_id = out.split()[1]
    lines = out.splitlines()
    assert 'found: RSS 2.0 "CLI feed", 2 entries' in lines
    # Published a minute before the subscription: the first-fetch filter (docs/design.md#first-fetch), in words.
    assert ("first fetch: 2 entries, 0 published since you subscribed: they stay out, as a new subscription "
            "keeps only what is published after it; --backfill N keeps the newest N") in lines
    assert run(capsys, "source", "add", url)[1].startswith(f"already subscribed: {source_id}")
    stack.run_cycle()
    code, out, _ = run(capsys, "source", "list")
    header = out.splitlines()[0]
    assert header.split() == ["ID", "STATE", "POLL", "NEXT", "ENTRIES", "DROPPED", "ROOT", "TITLE"]
    assert all(len(line) <= 100 for line in out.splitlines()), max(out.splitlines(), key=len)
    row = row_of(out, source_id)
    assert row.split()[1:4] == ["ok", "on", "in"] and row.split()[5:8] == ["0", "2", "127.0.0.1"]
    assert "CLI feed" in row
    assert "DROPPED: entries the last fetch left out by the date filters" in out
    wide = row_of(run(capsys, "source", "list", "--wide")[1], source_id)
    assert url in wide and "published before you subscribed" in wide
    listed = {s["source_id"]: s for s in json.loads(run(capsys, "source", "list", "--json")[1])}
    assert listed[source_id]["last_dropped"] == {"published before you subscribed": 2}
    assert run(capsys, "source", "remove", source_id)[0] == 0
    assert source_id not in run(capsys, "source", "list")[1]
    code, _, err = run(capsys, "source", "remove", source_id)
    assert code == 1 and "removed already" in err
    assert run(capsys, "source", "purge", source_id)[0] == 0
    code, _, err = run(capsys, "source", "remove", source_id)
    assert code == 1 and "no source with id" in err


def test_backfill_keeps_the_newest_n_of_the_first_fetch(stack, capsys, origin):
    old = rss(*[(f"bf{n}", f"Backfilled {n}") for n in range(4)], title="Backlog",
              newest=time.time() - 30 * 86400)  # a month old: both date filters apply (docs/design.md#filters)
    url = origin.serve("/backfill.xml", Reply(200, old))
    code, out, _ = run(capsys, "source", "add", url, "--backfill", "2")
    assert code == 0, out
    source_id = out.split()[1]
    assert "first fetch: 4 entries, 2 shown after the first fetch: 2 older than 7 days stay out by " \
           "the age filter; --backfill 2 keeps the newest 2 whatever their dates" in out
    stack.run_cycle()
    served = json.loads(body_of(http_get(stack, f"/s/{source_id}/feed.json")))
    assert [i["title"] for i in served["items"]] == ["Backfilled 0", "Backfilled 1"]
    row = row_of(run(capsys, "source", "list")[1], source_id)
    assert row.split()[5:7] == ["2", "2"]  # after "ok on in 1d": entries stored, dropped by the filters
    show = run(capsys, "source", "show", source_id)[1]
    assert "dropped:        2 older than 7 days (last fetch)" in show
    assert "backfill:       the first fetch kept the newest 2" in show


def test_an_unreachable_url_is_refused_in_one_line_unless_no_check(stack, capsys):
    url = "http://127.0.0.1:9/nothing.xml"
    code, out, err = run(capsys, "source", "add", url)
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert "could not connect" in err and "not subscribed" in err and "--no-check" in err
    assert url not in run(capsys, "source", "list", "--wide")[1]
    code, out, _ = run(capsys, "source", "add", url, "--no-check")
    assert code == 0 and out.startswith("added ") and "not checked" in out
    source_id = out.split()[1]
    stack.run_cycle()
    out = run(capsys, "source", "list")[1]
    row = row_of(out, source_id)
    assert "failing: could not connect" in row and " in " in row
    assert all(len(line) <= 100 for line in out.splitlines())
    reasons = out.split("why they fail", 1)[1]
    assert "could not connect" in reasons  # the full error, below the table (sources sharing it grouped)
    assert "could not connect" in run(capsys, "source", "show", source_id)[1]
    assert run(capsys, "source", "remove", source_id)[0] == 0
    assert run(capsys, "source", "purge", source_id)[0] == 0


def test_a_missing_feed_and_a_page_without_one_are_refused(stack, capsys, origin):
    code, _, err = run(capsys, "source", "add", origin.url + "/gone.xml")
    assert code == 1 and "404 Not Found" in err and "remove the source" not in err
    origin.serve("/page", Reply(200, b"<html><head><title>p</title></head><body>hi</body></html>",
                                {"Content-Type": "text/html"}))
    code, _, err = run(capsys, "source", "add", origin.url + "/page")
    assert code == 1 and "announces no feed" in err and "--website" in err


def test_a_bad_url_is_refused_with_a_reason(stack, capsys):
    code, _, err = run(capsys, "source", "add", "ftp://example.org/feed")
    assert code == 1 and "not an http(s) URL" in err
    code, _, err = run(capsys, "source", "add", "https://example.org/feed", "--backfill", "-3")
    assert code == 2 and "0 or more" in err and len(err.splitlines()) == 1 and "--help" in err


def test_list_clips_long_titles_and_keeps_every_field_for_wide_and_json(stack, storage, capsys):
    from starfeed.sources import add_source

    stack.tick()  # the scheduler's first run sets the pace that --wide shows
    long_url = "https://example.org/" + "very-long-path/" * 12 + "feed.xml"
    source, _ = add_source(storage, long_url, time.time())
    storage.sources.change(source.source_id, {
        "title": "A title far longer than any terminal column could hold " * 3, "status": "error",
        "next_check_at": time.time() + 7200, "consecutive_failures": 4,
        "last_error": "parse: not a feed (no RSS, Atom or JSON Feed found): " + "detail " * 30})
    try:
        out = run(capsys, "source", "list")[1]
        assert all(len(line) <= 100 for line in out.splitlines()), max(out.splitlines(), key=len)
        row = row_of(out, source.source_id)
        assert "failing: parse error" in row and row.rstrip().endswith("…") and "in 1h" in row
        wide = run(capsys, "source", "list", "--wide")[1]
        assert long_url in wide and "detail " * 30 in row_of(wide, source.source_id) + " "
        assert "pace: an active source waits at most" in wide
        show = run(capsys, "source", "show", source.source_id)[1]
        assert f"url:            {long_url}" in show and ("detail " * 30).strip() in show
    finally:
        storage.sources.delete(source.source_id)


def test_a_closed_pipe_ends_the_listing_quietly(stack):
    """`starfeed source list | head`: the reader goes, the command stops without a traceback."""
    process = subprocess.Popen([sys.executable, "-m", "starfeed.cli", "source", "list", "--json"],
                               cwd=ROOT, env=os.environ.copy(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()  # before it writes a byte
    _, err = process.communicate(timeout=60)
    assert err.decode() == "" and process.returncode == 141


FOLDERS = """<?xml version="1.0"?><opml version="2.0"><head><title>exported</title></head><body>
<outline text="loose" type="rss" xmlUrl="{0}"/>
<outline text="Tech News"><outline text="Python Stuff">
  <outline text="nested" type="rss" xmlUrl="{1}"/></outline>
  <outline text="twice" type="rss" xmlUrl="{2}"/></outline>
<outline text="Café &amp; Life"><outline text="twice again" type="rss" xmlUrl="{2}"/>
  <outline text="dead" type="rss" xmlUrl="{3}"/>
  <outline text="not http" type="rss" xmlUrl="gopher://example.org/feed"/></outline>
<outline text="empty folder"/>
</body></opml>"""


def test_opml_import_keeps_folders_and_shows_progress(stack, storage, capsys, tmp_path, origin):
    urls = [origin.serve(f"/o{n}.xml", Reply(200, rss((f"o{n}", f"O {n}"), title=f"Imported {n}")))
            for n in range(3)] + [origin.url + "/dead.xml"]
    opml = tmp_path / "subs.opml"
    opml.write_text(FOLDERS.format(*urls))
    code, out, _ = run(capsys, "opml", "import", str(opml))
    assert code == 0, out
    assert 'folder "Tech News/Python Stuff" becomes the collection tech-news-python-stuff' in out
    assert 'folder "Café & Life" becomes the collection cafe-life' in out
    progress = [line for line in out.splitlines() if line.startswith("[")]
    assert len(progress) == 5 and {line.split("]")[0] for line in progress} == {f"[{n}/5" for n in range(1, 6)}
    assert any(line.startswith("[") and "failed: " + urls[3] in line and "404 Not Found" in line
               for line in progress)
    assert any("failed: not an http(s) URL: 'gopher://example.org/feed'" in line for line in progress)
    assert f"imported {opml}: 3 added, 2 failed" in out
    assert "--no-check" in out and "--backfill N keeps the newest N" in out
    # Each added line says what its first fetch keeps; the summary says why the rest stay out.
    assert "3 of the 3 added show nothing until they publish again; their first fetches leave out " \
           "entries: 3 published before you subscribed (the first-fetch filter)" in out
    assert sum("1 entry, 0 published since you subscribed" in line for line in progress) == 3
    sources = {s.url: s for s in stack_sources(stack)}
    assert sources[urls[0]].collections == []
    assert sources[urls[1]].collections == ["tech-news-python-stuff"]
    assert sorted(sources[urls[2]].collections) == ["cafe-life", "tech-news"]
    assert urls[3] not in sources
    checks = [sources[u].next_check_at for u in urls[:3]]
    assert all(c <= time.time() + 60 for c in checks)  # spread over 60 s
    # Again: nothing new, and nothing twice.
    code, out, _ = run(capsys, "opml", "import", str(opml))
    assert f"imported {opml}: 0 added, 3 already subscribed, 2 failed" in out
    assert sorted(s.url for s in stack_sources(stack)).count(urls[2]) == 1
    assert sources[urls[2]].source_id in storage.collections.members("cafe-life")


def test_opml_import_no_check_subscribes_without_fetching(stack, capsys, tmp_path, origin):
    url = origin.serve("/unchecked.xml", Reply(200, rss(("u", "U"))))
    opml = tmp_path / "one.opml"
    opml.write_text(f'<opml version="1.0"><body><outline text="u" xmlUrl="{url}"/></body></opml>')
    code, out, _ = run(capsys, "opml", "import", "--no-check", "--backfill", "3", str(opml))
    assert code == 0 and "[1/1] added: " in out and "(not checked)" in out
    assert origin.requests == []
    assert next(s for s in stack_sources(stack) if s.url == url).backfill == 3


@pytest.mark.parametrize("content, words", [
    ("<html/>", "is not OPML"), ("not xml at all <", "is not OPML"), (None, "no such file")])
def test_opml_import_of_something_else_fails_in_one_line(capsys, tmp_path, content, words):
    bad = tmp_path / "bad.opml"
    if content is not None:
        bad.write_text(content)
    code, out, err = run(capsys, "opml", "import", str(bad))
    assert code == 1 and out == "" and words in err and len(err.strip().splitlines()) == 1


def test_inspect_reads_files_and_names_a_missing_one(capsys, tmp_path):
    feed = tmp_path / "feed.xml"
    feed.write_bytes(rss(("f", "From a file"), newest=time.time() + 60))
    code, out, err = run(capsys, "inspect", str(feed))
    assert code == 0 and "From a file" in out and "format:   rss20" in err
    code, out, err = run(capsys, "inspect", str(tmp_path / "missing.xml"))
    assert code == 1 and err == f"starfeed: {tmp_path / 'missing.xml'}: no such file\n"
    code, _, err = run(capsys, "inspect", "example.org/feed.xml")
    assert code == 1 and "no such file (for a web address, write https://example.org/feed.xml)" in err


def fake_local_stack(tmp_path, monkeypatch, pid: int, environment: dict) -> None:
    """What `make run` leaves in its state folder for the CLI, with no stack in this process's
    environment."""
    for name in [k for k in os.environ if k.startswith(("SOURCES_", "STARFEED_ALLOW"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("STARFEED_STATE_DIR", str(tmp_path))
    (tmp_path / "stack.json").write_text(json.dumps({"pid": pid, "environment": environment}))


def test_inspect_follows_the_private_network_setting_of_the_running_stack(capsys, tmp_path, monkeypatch, origin):
    url = origin.serve("/private.xml", Reply(200, rss(("p", "P"))))
    fake_local_stack(tmp_path, monkeypatch, os.getpid(), {"STARFEED_ALLOW_PRIVATE_NETWORKS": "1"})
    code, _, err = run(capsys, "inspect", url)
    assert code == 0 and "format:   rss20" in err  # as `make run` would fetch it
    (tmp_path / "stack.json").unlink()  # no stack: the shell's setting, which refuses loopback
    code, _, err = run(capsys, "inspect", url)
    assert code == 1 and "refused" in err and "STARFEED_ALLOW_PRIVATE_NETWORKS" in err


def test_a_stack_file_left_by_a_killed_stack_is_not_a_running_stack(capsys, tmp_path, monkeypatch):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    fake_local_stack(tmp_path, monkeypatch, ended.pid, {"SOURCES_TABLE": "t"})
    code, _, err = run(capsys, "source", "list")
    assert code == 1 and "no local stack is running" in err and "make run" in err


def test_an_unexpected_failure_is_one_line(capsys, monkeypatch):
    from botocore.exceptions import EndpointConnectionError

    def unreachable(stack_name):
        raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1/")

    monkeypatch.setattr("starfeed.deployment.connect", unreachable)
    code, out, err = run(capsys, "source", "list")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert "cannot reach the stack's AWS endpoint" in err and "make run" in err


def test_without_a_stack_the_cli_says_how_to_start_one(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("SOURCES_TABLE", raising=False)
    monkeypatch.setenv("STARFEED_STATE_DIR", str(tmp_path))
    code, _, err = run(capsys, "source", "list")
    assert code == 1 and "make run" in err


def test_stack_name_reads_the_deployed_stacks_outputs(stack, capsys, monkeypatch, origin):
    """--stack NAME finds the tables through CloudFormation outputs (moto implements them)."""
    import boto3

    outputs = {"SourcesTableName": stack.environment["SOURCES_TABLE"],
               "EntriesTableName": stack.environment["ENTRIES_TABLE"]}
    template = {"Resources": {"Nothing": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
                "Outputs": {k: {"Value": v} for k, v in outputs.items()}}
    boto3.client("cloudformation").create_stack(StackName="starfeed-prod",
                                                TemplateBody=json.dumps(template))
    monkeypatch.setenv("SOURCES_TABLE", "a-table-that-does-not-exist")
    url = origin.serve("/via-stack.xml", Reply(200, rss(("s", "S"))))
    assert run(capsys, "--stack", "starfeed-prod", "source", "add", url)[0] == 0
    assert url in run(capsys, "--stack", "starfeed-prod", "source", "list", "--wide")[1]
    code, _, err = run(capsys, "--stack", "no-such-stack", "source", "list")
    assert code == 1 and "cannot read the stack no-such-stack" in err and len(err.splitlines()) == 1


def stack_sources(stack):
    from starfeed.settings import Settings
    from starfeed.store import Storage

    return Storage(Settings.from_env(stack.environment)).sources.all()

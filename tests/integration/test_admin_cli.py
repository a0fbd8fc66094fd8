"""The admin commands (docs/design.md#source-states, docs/design.md#resurrection) against the local
stack, as an operator sees them: remove is a soft delete that restore undoes and purge finishes,
sync refuses what it must, `--no-root-domain`, the root-domain commands, and what `source list`
shows of each source."""

import time

from conftest import http_get, row_of
from conftest import run_cli as run
from origin import Reply, rss


def added(capsys, *argv) -> str:
    code, out, err = run(capsys, "source", "add", *argv)
    assert code == 0, err
    return out.split()[1]


def test_remove_restore_and_purge(stack, storage, capsys, origin):
    url = origin.serve("/admin.xml", Reply(200, rss(*[(f"adm{n}", f"Admin {n}") for n in range(3)],
                                                    title="Admin feed")))
    source_id = added(capsys, url, "--collection", "admin", "--backfill", "3")
    stack.run_cycle()
    assert http_get(stack, f"/s/{source_id}/feed.xml")["statusCode"] == 200
    assert len(storage.entries.recent(source_id, 50)) == 3
    assert {e.feed_id for e in storage.collections.recent("admin", 50)} == {source_id}

    code, out, err = run(capsys, "source", "remove", source_id)
    assert code == 0, err
    assert f"starfeed source restore {source_id}" in out and f"starfeed source purge {source_id}" in out
    assert http_get(stack, f"/s/{source_id}/feed.xml")["statusCode"] == 404
    assert source_id not in run(capsys, "source", "list")[1]
    deleted = run(capsys, "source", "list", "--deleted")[1]
    assert all(len(line) <= 100 for line in deleted.splitlines()), max(deleted.splitlines(), key=len)
    state = row_of(deleted, source_id).split()[1:4]
    assert state[0] == "removed" and state[1] in ("0s", "1s", "2s") and state[2] == "ago"
    assert "starfeed source restore ID" in deleted
    # Never fetched again, even when something makes it due.
    fetched = len(origin.requests)
    storage.sources.change(source_id, {"next_check_at": time.time() - 60})
    stack.run_cycle()
    assert len(origin.requests) == fetched
    assert storage.sources.take_lease(source_id, time.time()) is None
    # Kept until purged: its entries are still stored.
    assert len(storage.entries.recent(source_id, 50)) == 3
    code, out, err = run(capsys, "source", "remove", source_id)
    assert code == 1 and out == "" and len(err.splitlines()) == 1 and "removed already" in err
    code, _, err = run(capsys, "source", "sync", source_id)
    assert code == 1 and len(err.splitlines()) == 1 and f"source restore {source_id}" in err

    code, out, err = run(capsys, "source", "restore", source_id)
    assert code == 0 and out.startswith(f"restored {source_id}: due now"), err
    assert source_id in run(capsys, "source", "list")[1]
    assert source_id not in run(capsys, "source", "list", "--deleted")[1]
    stack.run_cycle()
    assert len(origin.requests) == fetched + 1
    assert http_get(stack, f"/s/{source_id}/feed.xml")["statusCode"] == 200
    code, _, err = run(capsys, "source", "restore", source_id)
    assert code == 1 and len(err.splitlines()) == 1 and "is not removed" in err
    code, _, err = run(capsys, "source", "purge", source_id)
    assert code == 1 and len(err.splitlines()) == 1 and f"source remove {source_id}` first" in err
    assert len(storage.entries.recent(source_id, 50)) == 3
    # Asking for a removed source again undoes the remove.
    assert run(capsys, "source", "remove", source_id)[0] == 0
    code, out, err = run(capsys, "source", "add", url)
    assert code == 0 and out.startswith(f"restored {source_id} {url}: it had been removed"), err
    assert source_id in run(capsys, "source", "list")[1]

    assert run(capsys, "source", "remove", source_id)[0] == 0
    code, out, err = run(capsys, "source", "purge", source_id)
    assert code == 0 and "3 stored entries" in out, err
    assert storage.entries.recent(source_id, 50) == [] and storage.entries.digests([source_id]) == {}
    assert source_id not in {e.feed_id for e in storage.collections.recent("admin", 50)}
    assert source_id not in storage.collections.members("admin")
    assert source_id not in run(capsys, "source", "list", "--deleted")[1]
    assert source_id not in run(capsys, "source", "list", "--json")[1]
    assert http_get(stack, f"/s/{source_id}/feed.xml")["statusCode"] == 404
    code, _, err = run(capsys, "source", "purge", source_id)
    assert code == 1 and "no source with id" in err


def test_sync_refuses_a_disabled_or_unknown_source(stack, storage, capsys, origin):
    url = origin.serve("/admin-sync.xml", Reply(200, rss(("as", "Sync"))))
    source_id = added(capsys, url, "--no-check")
    try:
        assert run(capsys, "source", "disable", source_id)[0] == 0
        code, out, err = run(capsys, "source", "sync", source_id)
        assert code == 1 and out == "" and len(err.splitlines()) == 1
        assert f"source enable {source_id}` first" in err
        assert run(capsys, "source", "enable", source_id)[0] == 0
        code, out, _ = run(capsys, "source", "sync", source_id)
        assert code == 0 and "due now" in out
        code, _, err = run(capsys, "source", "sync", "000000000000")
        assert code == 1 and "no source with id 000000000000" in err
    finally:
        storage.sources.delete(source_id)


def domain_counts(out: str) -> list[tuple[str, int]]:
    lines = out.splitlines()
    assert lines[0].split() == ["ROOT", "DOMAIN", "SOURCES"]
    return [(line.split()[0], int(line.split()[1].replace(",", ""))) for line in lines[1:]]


def test_root_domains_derived_left_empty_set_and_cleared(stack, storage, capsys):
    blog = "https://blog.starfeed-admin.net/feed.xml"
    news = "https://news.starfeed-admin.net/feed.xml"
    bare = "https://bare.starfeed-admin.net/feed.xml"
    ids = [added(capsys, blog, "--no-check"), added(capsys, news, "--no-check")]
    code, out, _ = run(capsys, "source", "add", bare, "--no-check", "--no-root-domain")
    assert code == 0 and "root domain: none" in out
    ids.append(out.split()[1])
    try:
        assert storage.sources.get(ids[0]).root_domain == "starfeed-admin.net"
        assert storage.sources.get(ids[2]).root_domain is None
        assert "root domain:    -" in run(capsys, "source", "show", ids[2])[1]
        counts = domain_counts(run(capsys, "root-domain", "list")[1])
        assert ("starfeed-admin.net", 2) in counts
        named = [d for d, _ in counts if d != "(none)"]
        assert named == sorted(named) and counts[-1][0] == "(none)"
        none_before = counts[-1][1]
        assert http_get(stack, "/api/site?root=starfeed-admin.net")["statusCode"] == 200

        # set, by id and by URL: lower-cased and stripped; shown in `source list` and `source show`.
        code, out, err = run(capsys, "root-domain", "set", ids[2], "  Adm.TEST ")
        assert code == 0 and out.strip() == f"{ids[2]}: root domain adm.test", err
        assert storage.sources.get(ids[2]).root_domain == "adm.test"
        listed = run(capsys, "source", "list")[1]
        assert row_of(listed, ids[2]).split()[1:10] == ["new:", "not", "fetched", "yet", "on", "now", "0", "-",
                                                        "adm.test"]
        assert "root domain:    adm.test" in run(capsys, "source", "show", ids[2])[1]
        assert http_get(stack, "/api/site?root=adm.test")["statusCode"] == 200
        assert run(capsys, "root-domain", "set", news, "adm.test")[0] == 0
        counts = dict(domain_counts(run(capsys, "root-domain", "list")[1]))
        assert counts["adm.test"] == 2 and counts["starfeed-admin.net"] == 1
        assert counts.get("(none)", 0) == none_before - 1

        for bad in ("not a domain!", "x_y.test", "a..b", "b.-x.test", ""):
            code, out, err = run(capsys, "root-domain", "set", ids[0], bad)
            assert code == 1 and out == "" and len(err.splitlines()) == 1 and "not a domain name" in err
        assert storage.sources.get(ids[0]).root_domain == "starfeed-admin.net"
        code, _, err = run(capsys, "root-domain", "set", "000000000000", "x.test")
        assert code == 1 and "no source with id 000000000000" in err
        code, _, err = run(capsys, "root-domain", "clear", "https://nowhere.test/feed")
        assert code == 1 and "no source with URL https://nowhere.test/feed" in err

        # clear, by URL: the attribute goes; the source leaves /api/site.
        code, out, _ = run(capsys, "root-domain", "clear", blog)
        assert code == 0 and out.strip() == f"{ids[0]}: no root domain (was starfeed-admin.net)"
        assert storage.sources.get(ids[0]).root_domain is None
        assert http_get(stack, "/api/site?root=starfeed-admin.net")["statusCode"] == 404
        counts = dict(domain_counts(run(capsys, "root-domain", "list")[1]))
        assert "starfeed-admin.net" not in counts and counts["(none)"] == none_before

        # Removed sources are not counted.
        assert run(capsys, "source", "remove", ids[1])[0] == 0
        assert dict(domain_counts(run(capsys, "root-domain", "list")[1]))["adm.test"] == 1
    finally:
        for source_id in ids:
            storage.sources.delete(source_id)


def test_list_shows_state_polling_next_root_and_why_within_100_columns(stack, storage, capsys):
    from starfeed.sources import add_source

    quiet, _ = add_source(storage, "https://adm.net/quiet.xml", time.time())
    failing, _ = add_source(storage, "https://adm.net/failing.xml", time.time())
    off, _ = add_source(storage, "https://adm.net/off.xml", time.time())
    storage.sources.change(quiet.source_id, {
        "polling": False, "status": "ok", "next_check_at": time.time() + 3 * 3600, "title": "Quiet one",
        "root_domain": "a-rather-long-root-domain-name-for-a-column.example"})
    storage.sources.change(failing.source_id, {
        "status": "error", "last_error": "could not connect: connection refused; check it or remove the source",
        "next_check_at": time.time() + 7200, "title": "Failing one"})
    storage.sources.change(off.source_id, {"enabled": False, "title": "Disabled one"})
    try:
        out = run(capsys, "source", "list")[1]
        assert all(len(line) <= 100 for line in out.splitlines()), max(out.splitlines(), key=len)
        assert out.splitlines()[0].split() == ["ID", "STATE", "POLL", "NEXT", "ENTRIES", "DROPPED", "ROOT", "TITLE"]
        row = row_of(out, quiet.source_id).split()
        assert row[1:5] == ["polling", "off", "off", "in"] and row[5] in ("2h", "3h") and row[6:8] == ["0", "-"]
        assert row[8].startswith("a-rather-") and row[8].endswith("…") and "Quiet" in row[9]
        row = row_of(out, failing.source_id)
        assert row.split()[1:6] == ["failing:", "could", "not", "connect", "on"]
        assert "adm.net" in row and "Failing one" in row and " in 1h " in row
        assert "could not connect: connection refused; check it or remove the source" in \
            out.split("why they fail", 1)[1]
        row = row_of(out, off.source_id).split()
        assert row[1:4] == ["disabled", "on", "-"] and row[6] == "adm.net"
        show = run(capsys, "source", "show", quiet.source_id)[1]
        assert "polling:        off" in show and "removed:        -" in show
        assert "root domain:    a-rather-long-root-domain-name-for-a-column.example" in show
    finally:
        for source in (quiet, failing, off):
            storage.sources.delete(source.source_id)

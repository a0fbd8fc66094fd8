"""The NDJSON taps (docs/design.md#ndjson-taps): new entries as NDJSON in the raw bucket,
partitioned by day, and `starfeed tap export` writing their layout with the raw bytes each fetch
received."""

import json
import time

from starfeed.cli import main
from starfeed.sources import add_source

from conftest import run_cli
from origin import Reply, rss


def test_tap_export_writes_the_seeds_layout(stack, storage, origin, capsys, tmp_path):
    document = rss(("tap-1", "Tapped one"), ("tap-2", "Tapped two"), title="Tapped")
    url = origin.serve("/tapped.xml", Reply(200, document))
    source = add_source(storage, url, time.time() - 3600)[0]
    neighbour = add_source(storage, origin.serve("/tapped-too.xml", Reply(200, rss(("tap-n", "Next door")))),
                           time.time() - 3600)[0]
    stack.run_cycle()
    today = time.strftime("%Y-%m-%d", time.gmtime())
    # One fetcher invocation, one tap object for its batch (the two sources share a host's group).
    tapped = {k: storage.blobs.get_tap(k) for k in storage.blobs.tap_keys(today)}
    ours = [k for k, lines in tapped.items() if source.source_id.encode() in lines]
    assert len(ours) == 1 and ours[0].startswith(f"taps/entries/dt={today}/")
    assert neighbour.source_id.encode() in tapped[ours[0]]
    main(["source", "remove", neighbour.source_id])

    code, out, err = run_cli(capsys, "tap", "export", "--since", today, str(tmp_path))
    assert code == 0, err
    assert "entries in 1 day file(s) under entries/" in out
    lines = [json.loads(line) for line in (tmp_path / "entries" / f"{today}.ndjson").read_text().splitlines()]
    ours = [entry for entry in lines if entry["feed_id"] == source.source_id]
    assert sorted(e["entry_uid"] for e in ours) == ["tap-1", "tap-2"]
    assert {e["title"] for e in ours} == {"Tapped one", "Tapped two"}
    fetch_id = ours[0]["raw_refs"][0]["fetch_id"]
    assert (tmp_path / "raw" / today / f"{fetch_id}.blob").read_bytes() == document  # the bytes served

    # Fetched again with one more: the tap holds the new one only, once.
    origin.serve("/tapped.xml", Reply(200, rss(("tap-3", "Tapped three"), ("tap-1", "Tapped one"),
                                               ("tap-2", "Tapped two"), title="Tapped")))
    storage.sources.change(source.source_id, {"next_check_at": time.time() - 1, "locked_until": None})
    stack.run_cycle()
    assert run_cli(capsys, "tap", "export", "--since", today, str(tmp_path))[0] == 0
    again = [json.loads(line) for line in (tmp_path / "entries" / f"{today}.ndjson").read_text().splitlines()]
    assert sorted(e["entry_uid"] for e in again if e["feed_id"] == source.source_id) == ["tap-1", "tap-2", "tap-3"]
    code, _, err = run_cli(capsys, "tap", "export", "--since", "yesterday", str(tmp_path))
    assert code == 2 and "'yesterday' is not a day as YYYY-MM-DD" in err
    main(["source", "remove", source.source_id])

"""Save and restore times of the local stack's state, and the snapshot's size.

    python -m starfeed.bench.snapshot [--sources 10000] [--entries 100000]

The target (docs/design.md#target-restore): 10,000 sources and 100,000 entries restore in under 10 s.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

import requests

from starfeed.local.snapshot import SNAPSHOT_FILE, _backends, restore, save
from starfeed.local.stack import LocalStack
from starfeed.model import Entry, Source
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.store.records import entry_record
from starfeed.store.sources import source_record

RESTORE_TARGET_S = 10.0


def populate(stack: LocalStack, sources: int, entries: int) -> None:
    """Realistic items, written straight into moto (setting up is not what is measured)."""
    storage = Storage(Settings.from_env(stack.environment))
    dynamodb, s3, _ = _backends()
    now = time.time()
    for n in range(sources):
        source = Source(source_id=f"{n:012x}", url=f"https://site{n}.example/feed.xml",
                        title=f"Site {n}", created_at=now, status="ok", http_status=200,
                        etag=f'"{n}"', interval=900, reason="new-entries", next_check_at=now + n,
                        last_fetch_at=now, last_success_at=now)
        dynamodb.get_table(stack.stack.refs["SourcesTable"]).put_item(
            source_record(storage.records, source, storage.settings).serialize())
        for extension in ("xml", "atom", "json"):
            s3.put_object(stack.stack.refs["FeedsBucket"], f"s/{source.source_id}/feed.{extension}",
                          b"<rss>" + b"x" * 2000 + b"</rss>")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    table = dynamodb.get_table(stack.stack.refs["EntriesTable"])
    for n in range(entries):
        entry = Entry(entry_uid=f"urn:entry:{n}", feed_id=f"{n % sources:012x}",
                      canonical_link=f"https://site{n % sources}.example/post/{n}",
                      title=f"Post number {n}", summary="A summary of the post. " * 8,
                      content="<p>" + "Body text of the post. " * 20 + "</p>",
                      authors=[{"name": "Author", "email": None, "uri": None}],
                      categories=["news"], published=stamp, first_seen=stamp, last_seen=stamp,
                      content_hash=f"{n:064x}")
        table.put_item(entry_record(storage.records, entry, storage.settings).serialize())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=100_000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    folder = Path(tempfile.mkdtemp(prefix="starfeed-bench-"))
    path = folder / SNAPSHOT_FILE

    first = LocalStack(state=folder)
    started = time.monotonic()
    populate(first, args.sources, args.entries)
    populate_s = time.monotonic() - started
    started = time.monotonic()
    counts, size = save(first.stack, path)
    save_s = time.monotonic() - started
    requests.post(first.endpoint + "/moto-api/reset", timeout=30)  # a fresh, empty AWS
    first.close()

    second = LocalStack(state=folder)
    started = time.monotonic()
    restored = restore(second.stack, path)
    restore_s = time.monotonic() - started
    second.close()
    assert restored == counts, (restored, counts)

    print(json.dumps({
        "sources": args.sources, "entries": args.entries, "items": counts.items,
        "objects": counts.objects, "snapshot_bytes": size, "populate_s": round(populate_s, 2),
        "save_s": round(save_s, 2), "restore_s": round(restore_s, 2),
        "restore_target_s": RESTORE_TARGET_S,
        "restore_ratio_to_target": round(restore_s / RESTORE_TARGET_S, 3)}, indent=1))


if __name__ == "__main__":
    main()

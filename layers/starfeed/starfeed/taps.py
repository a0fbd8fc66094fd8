"""`starfeed tap export`: the taps' file layout (docs/design.md#ndjson-taps), from the taps in the raw bucket.

    DIR/entries/YYYY-MM-DD.ndjson        the entries first stored that day, one per line
    DIR/raw/YYYY-MM-DD/<fetch_id>.blob   the bytes each of those fetches received, as stored
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from starfeed.store import Storage
from starfeed.store.blobs import TAP_PREFIX, raw_fetch_key


@dataclass
class Exported:
    days: int = 0
    entries: int = 0
    raw: int = 0


def export(storage: Storage, since: str, directory: Path) -> Exported:
    """Write every tap of `since` (YYYY-MM-DD) and later under directory; a day's file is written
    whole, so exporting again gives the same files."""
    done = Exported()
    by_day: dict[str, list[bytes]] = {}
    for key in storage.blobs.tap_keys(since):
        day = key.removeprefix(f"{TAP_PREFIX}dt=").split("/", 1)[0]
        by_day.setdefault(day, []).append(storage.blobs.get_tap(key))
    for day, taps in by_day.items():
        entries = directory / "entries" / f"{day}.ndjson"
        entries.parent.mkdir(parents=True, exist_ok=True)
        body = b"".join(taps)
        entries.write_bytes(body)
        done.days += 1
        done.entries += body.count(b"\n")
        for fetch_id in sorted(_fetches_named(body)):
            stored = storage.blobs.get_raw_fetch(raw_fetch_key(fetch_id))
            if stored is None:  # its payload expired (RawRetentionDays) before the tap
                continue
            record, raw = stored
            blob = directory / "raw" / str(record["fetched_at"])[:10] / f"{fetch_id}.blob"
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(raw)
            done.raw += 1
    return done


def _fetches_named(lines: bytes) -> set[str]:
    """The fetches whose bytes the tapped entries came from (their raw_refs)."""
    out = set()
    for line in lines.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:  # a line that is not one (an object edited by hand) is exported as it is
            continue
        refs = entry.get("raw_refs") if isinstance(entry, dict) else None
        out |= {str(ref["fetch_id"]) for ref in refs or [] if isinstance(ref, dict) and ref.get("fetch_id")}
    return out

"""`starfeed tap export`: seed 003 §9.3's file layout, from the taps in the raw bucket.

    DIR/entries/YYYY-MM-DD.ndjson        the entries first stored that day, one per line
    DIR/raw/YYYY-MM-DD/<fetch_id>.blob   the bytes each of those fetches received, as stored
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from starfeed.store import Storage
from starfeed.store.blobs import TAP_PREFIX


@dataclass
class Exported:
    days: int = 0
    entries: int = 0
    raw: int = 0


def export(storage: Storage, since: str, directory: Path) -> Exported:
    """Write every tap of `since` (YYYY-MM-DD) and later under directory; a day's file is written
    whole, so exporting again gives the same files."""
    done = Exported()
    by_day: dict[str, list[tuple[bytes, str | None]]] = {}
    for key in storage.blobs.tap_keys(since):
        day = key.removeprefix(f"{TAP_PREFIX}dt=").split("/", 1)[0]
        by_day.setdefault(day, []).append(storage.blobs.get_tap(key))
    for day, taps in by_day.items():
        entries = directory / "entries" / f"{day}.ndjson"
        entries.parent.mkdir(parents=True, exist_ok=True)
        body = b"".join(lines for lines, _ in taps)
        entries.write_bytes(body)
        done.days += 1
        done.entries += body.count(b"\n")
        for record_key in {raw for _, raw in taps if raw}:
            stored = storage.blobs.get_raw_fetch(record_key)
            if stored is None:  # its payload expired (RawRetentionDays) before the tap
                continue
            record, raw = stored
            blob = directory / "raw" / str(record["fetched_at"])[:10] / f"{record['fetch_id']}.blob"
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(raw)
            done.raw += 1
    return done

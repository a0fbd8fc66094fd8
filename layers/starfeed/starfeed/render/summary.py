"""The sources summary: what the admin views show about every source, written by the renderer
(the SOURCES_SUMMARY target) so that no request scans the sources table. Redacted: it holds no
subscription credentials, so anything built from it may be public.

The renderer writes three objects to the feeds bucket from one read of every source:
PUBLISHED_OPML (/opml.xml), SUBSCRIPTIONS_OPML (/subscriptions.opml) and SUMMARY (/stats).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Protocol

from starfeed.model import Source
from starfeed.render import clean

SUMMARY = "stats/sources.json"
PUBLISHED_OPML = "opml.xml"
SUBSCRIPTIONS_OPML = "subscriptions.opml"
OPML_TYPE = "text/x-opml; charset=utf-8"
JSON_TYPE = "application/json"


class StoredObject(Protocol):
    @property
    def body(self) -> bytes: ...


class FeedObjects(Protocol):
    """Where the summary is read from: the feeds bucket (store.blobs.Blobs)."""

    def get_feed(self, key: str) -> StoredObject | None: ...


@dataclass(frozen=True)
class SourceRow:
    source_id: str
    title: str  # the source's title, else its redacted URL
    url: str  # redacted
    status: str
    enabled: bool
    published: bool  # its feed is in /opml.xml: enabled and fetched at least once
    http_status: int | None = None
    interval: float = 0
    ewma_interarrival: float | None = None
    reason: str | None = None
    consecutive_failures: int = 0
    next_check_at: float | None = None
    last_fetch_at: float | None = None
    last_error: str | None = None  # with any URL in it redacted
    entry_count: int = 0


def row_of(source: Source, published: bool) -> SourceRow:
    """published: its feed is built, as its kind says (starfeed.kinds)."""
    shown = clean.shown(source)
    return SourceRow(
        source_id=source.source_id, title=shown.title, url=shown.url,
        status=clean.text(source.status) or "unknown", enabled=bool(source.enabled),
        published=published, http_status=source.http_status, interval=source.interval or 0,
        ewma_interarrival=source.ewma_interarrival, reason=clean.text(source.reason),
        consecutive_failures=source.consecutive_failures or 0,
        next_check_at=source.next_check_at if source.live else None,  # a disabled one keeps it, unused
        last_fetch_at=source.last_fetch_at, last_error=clean.redacted_text(source.last_error),
        entry_count=source.entry_count or 0)


def dumps(rows: list[SourceRow], built_at: float) -> bytes:
    return json.dumps({"built_at": built_at, "sources": [asdict(r) for r in rows]},
                      ensure_ascii=False, separators=(",", ":")).encode()


_ROW_FIELDS = {f.name for f in fields(SourceRow)}


def loads(body: bytes) -> tuple[list[SourceRow], float]:
    """(rows, built_at); fields this version does not know are ignored."""
    document = json.loads(body)
    rows = [SourceRow(**{k: v for k, v in row.items() if k in _ROW_FIELDS}) for row in document["sources"]]
    return rows, float(document["built_at"])


def load_sources_summary(blobs: FeedObjects) -> tuple[list[SourceRow], float] | None:
    """(rows, built_at) as the renderer last wrote them; None before it first has."""
    obj = blobs.get_feed(SUMMARY)
    return None if obj is None else loads(obj.body)

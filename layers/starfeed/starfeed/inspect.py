"""`starfeed inspect URL|FILE`: the fetcher's own code path (SSRF rules, limits, parse, normalize,
filters as for a new source) without storing anything. What a user runs first when asking
"why doesn't this feed show up?"."""

from __future__ import annotations

import json
import mimetypes
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from starfeed.fetch.http import fetch
from starfeed.model import Source, source_id_for
from starfeed.parse.ingest import Ingested, ingest
from starfeed.settings import Settings

FILE_TYPES = {".atom": "application/atom+xml", ".rss": "application/rss+xml",
              ".json": "application/feed+json", ".xml": "application/xml"}


@dataclass
class Inspection:
    target: str
    ingested: Ingested
    http_status: int | None = None
    fetch_seconds: float | None = None
    parse_seconds: float = 0.0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        return self.ingested.error


def inspect(target: str, settings: Settings, *, website: bool = False, unfiltered: bool = False,
            now: float | None = None) -> Inspection:
    """As for a new source; unfiltered keeps every parsed entry (no age or domain filters)."""
    now = time.time() if now is None else now
    path = Path(target)
    if "://" not in target and path.exists():
        body, url = path.read_bytes(), path.resolve().as_uri()
        content_type = FILE_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
        status, fetch_seconds, warnings = None, None, []
    else:
        result = fetch(target, settings)
        if result.error:
            return Inspection(target, Ingested(error=result.error), result.status, result.elapsed)
        if result.not_modified:
            return Inspection(target, Ingested(error="304 Not Modified to a request without validators"),
                              result.status, result.elapsed)
        body, url, content_type = result.body, result.url, result.headers.get("Content-Type")
        status, fetch_seconds = result.status, result.elapsed
        warnings = [f"redirected to {result.url}"] if result.url != target else []
    # As for a new source: created now, never polled, with the default settings.
    source = Source(source_id=source_id_for(target), url=url, created_at=now,
                    kind="website" if website else "feed")
    if unfiltered:
        source.created_at, source.last_success_at = 0.0, now
        settings = replace(settings, max_article_age_days=10 ** 6)
    started = time.process_time()
    ingested = ingest(body, url, content_type, source, now, settings)
    return Inspection(target, ingested, status, fetch_seconds, time.process_time() - started,
                      len(body), warnings + ingested.warnings)


def entry_lines(inspection: Inspection) -> list[str]:
    return [json.dumps(asdict(e), ensure_ascii=False) for e in inspection.ingested.entries]


def summary_lines(inspection: Inspection) -> list[str]:
    ingested = inspection.ingested
    lines = [f"source:   {inspection.target}"]
    if inspection.http_status is not None:
        lines.append(f"http:     {inspection.http_status} in {inspection.fetch_seconds:.2f} s, "
                     f"{inspection.bytes} bytes")
    lines.append(f"format:   {ingested.format or '-'}" + (f" ({ingested.title})" if ingested.title else ""))
    lines.append(f"entries:  {len(ingested.entries)} kept of {ingested.parsed_count} parsed"
                 f" in {inspection.parse_seconds * 1000:.1f} ms CPU")
    for reason, count in ingested.dropped.items():
        lines.append(f"dropped:  {count} {reason}")
    if ingested.parsed_count and not ingested.entries:
        lines.append("note:     a new subscription would show none of these yet; "
                     "--all prints every parsed entry")
    for warning in inspection.warnings:
        lines.append(f"warning:  {warning}")
    return lines

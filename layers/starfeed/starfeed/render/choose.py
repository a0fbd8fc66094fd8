"""Which stored entries a feed shows, in which order. Pure.

One article once (docs/design.md#one-article-once), applied where readers see it: the same article (the same
canonical link) reached through two sources appears once in an aggregate or a collection, under
the source that had it first. GitHub stars are events, not articles: two people starring one
repository are two items (docs/design.md#github-feed), so they are never merged.
"""

from __future__ import annotations

from collections.abc import Iterable

from starfeed.model import Entry

STAR_EVENT = "github-star://"  # the GitHub stars' GUIDs (docs/design.md#github-feed)


def newest_first(entries: Iterable[Entry]) -> list[Entry]:
    """By sort_time (a trustworthy date, else the backlog position, else first_seen), newest
    first; ties keep a stable, meaningful order: the entry seen first, then its uid."""
    ordered = sorted(entries, key=lambda e: (e.first_seen, e.entry_uid))
    return sorted(ordered, key=lambda e: e.sort_time, reverse=True)


def for_readers(entries: Iterable[Entry], limit: int) -> list[Entry]:
    """At most limit entries, newest first, one per article: of entries sharing a canonical link
    the one first seen stays (ties go to the older date, then the smaller feed id)."""
    entries = list(entries)
    keep: dict[str, Entry] = {}
    for entry in entries:
        link = entry.canonical_link
        if not link or entry.entry_uid.startswith(STAR_EVENT):
            continue
        held = keep.get(link)
        if held is None or _earlier(entry, held):
            keep[link] = entry
    chosen = [e for e in entries
              if not e.canonical_link or e.entry_uid.startswith(STAR_EVENT) or keep[e.canonical_link] is e]
    return newest_first(chosen)[:limit]


def _earlier(entry: Entry, held: Entry) -> bool:
    return (entry.first_seen, entry.sort_time, entry.feed_id) < (held.first_seen, held.sort_time, held.feed_id)

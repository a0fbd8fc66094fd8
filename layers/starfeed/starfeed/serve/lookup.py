"""The lookups (docs/design.md#item-lookup, docs/design.md#site-lookup): an item by its URL, and a
site's recent items interleaved fairly. Pure."""

from __future__ import annotations

from dataclasses import asdict

from starfeed.model import Entry, Source
from starfeed.render import clean
from starfeed.urlpolicy import redact


def public(entry: Entry) -> dict:
    """The stored entry as JSON, its URLs held to the policy every output follows (entries stored
    before it held may carry a javascript: enclosure or author)."""
    document = asdict(entry)
    safe = clean.entry(entry, entry.first_seen)
    document.update(canonical_link=safe.canonical_link if safe else None,
                    authors=safe.authors if safe else [], enclosures=safe.enclosures if safe else [])
    return document


def item_json(entry: Entry, source: Source) -> dict:
    document = public(entry)
    document["source"] = {"id": entry.feed_id, "title": source.title, "url": redact(source.url)}
    return document


def interleave(per_feed: list[list[Entry]], limit: int) -> list[Entry]:
    """Round-robin over the feeds' newest-first lists, distinct by URL, so one prolific feed
    cannot crowd out the others: each round takes every feed's next unseen entry."""
    out: list[Entry] = []
    seen: set[str] = set()
    feeds = [iter(entries) for entries in per_feed]
    while feeds and len(out) < limit:
        still_going = []
        for feed in feeds:
            for entry in feed:
                key = entry.canonical_link or f"{entry.feed_id}:{entry.entry_uid}"
                if key not in seen:
                    seen.add(key)
                    out.append(entry)
                    still_going.append(feed)
                    break
            if len(out) >= limit:
                break
        feeds = still_going
    return out


def site_json(root: str, sources: list[Source], items: list[Entry]) -> dict:
    return {"root": root,
            "feeds": [{"id": s.source_id, "title": s.title, "url": redact(s.url)} for s in sources],
            "items": [public(e) for e in items]}

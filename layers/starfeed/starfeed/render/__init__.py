"""Rendering stored entries as RSS 2.0, Atom, JSON Feed 1.1 and an HTML index. Pure.

This module stays light (no lxml): the fetcher and the CLI import it to name render targets.
"""

from __future__ import annotations

from starfeed.model import Source


def targets_for(source: Source) -> list[str]:
    """The feeds a source's new entries appear in (when its kind publishes any: starfeed.kinds)."""
    return ["feed", f"s/{source.source_id}/feed", *(f"c/{c}/feed" for c in source.collections)]


# Not a feed: the renderer rebuilds the views that list every source (/subscriptions.opml,
# /opml.xml, the dashboard's source table) from one Scan, so the api never scans per request.
SOURCES_SUMMARY = "sources"

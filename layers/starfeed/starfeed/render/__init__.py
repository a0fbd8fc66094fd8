"""Rendering stored entries as RSS 2.0, Atom, JSON Feed 1.1 and an HTML index. Pure.

This module stays light (no lxml): the fetcher and the CLI import it to name render targets.
"""

from __future__ import annotations

from starfeed.model import GITHUB_HELPERS


def targets_for(source) -> list[str]:
    """The feeds a source's new entries appear in; none for the GitHub follow list and timeline,
    which have no entries."""
    if source.kind in GITHUB_HELPERS:
        return []
    return ["feed", f"s/{source.source_id}/feed", *(f"c/{c}/feed" for c in source.collections)]


# Not a feed: the renderer rebuilds the views that list every source (/subscriptions.opml,
# /opml.xml, the dashboard's source table) from one Scan, so the api never scans per request.
SOURCES_SUMMARY = "sources"

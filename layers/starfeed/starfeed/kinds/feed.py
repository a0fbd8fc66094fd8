"""A feed: RSS 0.9x/1.0/2.0, Atom or JSON Feed, polled at its own rhythm (or pushed by WebSub)."""

from __future__ import annotations

from starfeed.kinds.base import DocumentKind


class Feed(DocumentKind):
    name = "feed"
    reader = "read_feed"
    subscribable = True


KIND = Feed()

"""A feed: RSS 0.9x/1.0/2.0, Atom or JSON Feed, polled at its own rhythm (or pushed by WebSub)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starfeed.kinds.base import DocumentKind
from starfeed.model import Source
from starfeed.settings import Settings

if TYPE_CHECKING:
    from starfeed.parse.ingest import Ingested


class Feed(DocumentKind):
    name = "feed"
    subscribable = True

    def read(self, body: bytes, url: str, content_type: str | None, source: Source, now: float,
             settings: Settings, history: bool = False) -> Ingested:
        from starfeed.parse.ingest import read_feed

        return read_feed(body, url, content_type, source, now, settings, history)


KIND = Feed()

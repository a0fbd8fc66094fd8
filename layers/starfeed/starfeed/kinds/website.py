"""A web page without a feed: its main article (found by readability-lxml) becomes an entry
each time its text changes (`source add URL --website`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starfeed.formats import DEFAULT
from starfeed.kinds.base import DocumentKind
from starfeed.model import Source
from starfeed.render.opml import Subscription
from starfeed.settings import Settings

if TYPE_CHECKING:
    from starfeed.parse.ingest import Ingested


class Website(DocumentKind):
    name = "website"
    crawled = True

    def read(self, body: bytes, url: str, content_type: str | None, source: Source, now: float,
             settings: Settings, history: bool = False) -> Ingested:
        from starfeed.parse.ingest import read_website

        return read_website(body, url, content_type, source, now, settings, history)

    def subscription(self, source: Source, base: str) -> Subscription | None:
        """starfeed's own feed of the page, once its first fetch has built it."""
        if not self.published(source):
            return None
        line = super().subscription(source, base)
        assert line is not None
        return Subscription(line.title, f"{base.rstrip('/')}/" + DEFAULT.file(f"s/{source.source_id}/feed"),
                            line.xml_url, line.folders)


KIND = Website()

"""A web page without a feed: its main article (found by readability-lxml) becomes an entry
each time its text changes (`source add URL --website`)."""

from __future__ import annotations

from starfeed.formats import DEFAULT
from starfeed.kinds.base import DocumentKind
from starfeed.model import Source
from starfeed.render.opml import Subscription


class Website(DocumentKind):
    name = "website"
    reader = "read_website"
    crawled = True

    def subscription(self, source: Source, base: str) -> Subscription | None:
        """starfeed's own feed of the page, once its first fetch has built it."""
        if not self.published(source):
            return None
        line = super().subscription(source, base)
        assert line is not None
        ours = f"{base.rstrip('/')}/" + DEFAULT.file(f"s/{source.source_id}/feed")
        return Subscription(line.title, ours, line.xml_url, line.folders)


KIND = Website()

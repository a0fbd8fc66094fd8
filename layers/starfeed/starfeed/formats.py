"""The feed formats starfeed publishes, each declared once: what negotiation accepts as naming it,
the type it is served as, the file it is stored and linked as, the name a reader is shown, and
the writer that renders it. Negotiation, rendering, the dashboard, OPML, the HTML pages and the
REST API read this and keep no list of their own. Pure.

A leaf module: the api function imports it on its cold start, and the renderers import lxml. So a
format names its writer, a function of render/feeds.py that render() looks up there, instead of
holding it: importing render/ from here would load lxml into every api cold start."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FeedFormat:
    name: str  # what the code, the statistics' counters and the query string call it
    media_type: str  # the type it is served as; negotiation's wildcards (application/*) match it
    aliases: tuple[str, ...]  # other types that name it in an Accept header, when named exactly
    extension: str  # its file: <feed path>.<extension>, in the bucket and in every URL
    title: str  # the name a reader is shown
    writer: str  # the function of render/feeds.py that writes it

    @property
    def content_type(self) -> str:
        return f"{self.media_type}; charset=utf-8"

    @property
    def link_name(self) -> str:
        """Its key among a feed's links in the REST API: its title in snake case ("json_feed")."""
        return self.title.lower().replace(" ", "_")

    def file(self, feed_path: str) -> str:
        """"s/<id>/feed" -> "s/<id>/feed.xml": the object's key, and its URL's path."""
        return f"{feed_path}.{self.extension}"


# In the server's order of preference: a tie in negotiation goes to the first, and the first is
# what a client that names no format we offer gets.
FORMATS = (
    FeedFormat("rss", "application/rss+xml", ("application/x-rss+xml", "application/xml", "text/xml"),
               "xml", "RSS", "write_rss"),
    FeedFormat("atom", "application/atom+xml", ("application/x-atom+xml",), "atom", "Atom", "write_atom"),
    FeedFormat("json", "application/feed+json", ("application/json", "application/x-json-feed"),
               "json", "JSON Feed", "write_json"),
)
DEFAULT = FORMATS[0]
BY_NAME = {f.name: f for f in FORMATS}
BY_EXTENSION = {f.extension: f for f in FORMATS}
# "<feed path>[.xml|.atom|.json]", for a message that says which files a feed has.
EXTENSIONS_SHOWN = "[" + "|".join(f".{f.extension}" for f in FORMATS) + "]"

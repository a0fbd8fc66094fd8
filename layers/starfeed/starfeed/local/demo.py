"""A demo origin on loopback: a few feeds of our own that publish on a cadence, with ETag and
Last-Modified, so a first `make run` has real entries to fetch without the network."""

from __future__ import annotations

import email.utils
import hashlib
import time
from dataclasses import dataclass
from html import escape
from http.server import BaseHTTPRequestHandler

from starfeed.local.loopback import Loopback, reply

VISIBLE = 10  # items a demo feed shows


@dataclass(frozen=True)
class DemoFeed:
    path: str
    title: str
    kind: str  # rss | atom
    every: int  # seconds between posts
    topics: tuple[str, ...]
    deframe: bool = False  # subscribed with deframing on (the mock analyzer, unless STARFEED_ANALYZER says)
    facts: tuple[str, ...] = ()  # what each topic's article reports, plainly (a deframed title comes from it)

    @property
    def slug(self) -> str:
        return self.path.rsplit("/", 1)[-1].split(".")[0]

    def items(self, start: float, now: float) -> list[tuple[int, float]]:
        # Five posts exist when the origin starts; then a new one every `every` seconds.
        first = start - 5 * self.every
        count = int((now - first) // self.every) + 1
        return [(n, first + n * self.every) for n in range(max(0, count - VISIBLE), count)][::-1]


FEEDS = (
    DemoFeed("/feeds/lighthouse.xml", "Lighthouse Notes", "rss", 120,
             ("fog signals", "lens polishing", "keeper's log", "storm watch", "night shift")),
    DemoFeed("/feeds/garden.atom", "Allotment Diary", "atom", 300,
             ("seed trays", "compost", "first frost", "bean poles", "tomato blight")),
    DemoFeed("/feeds/trains.xml", "Branch Line Timetable", "rss", 600,
             ("timetable change", "new rolling stock", "signal upgrade", "station reopening")),
    # A news desk whose headlines are sometimes loud: deframing at work (docs/design.md#deframing).
    DemoFeed("/feeds/harbour.xml", "Harbour Gazette", "rss", 180,
             ("SHOCKING rise in mooring fees!", "council approves the new pier", "fishermen FURIOUS over quota chaos",
              "ferry timetable changes in spring", "harbour master SLAMS critics"), deframe=True,
             facts=("Mooring fees at the harbour rise by 8 percent from April",
                    "The council approved a new 40-metre pier on the east quay",
                    "Fishermen asked the ministry to review this year's cod quota",
                    "The spring ferry timetable adds two sailings on Saturdays",
                    "The harbour master answered questions about the dredging plan")),
)
# The demo origin's robots.txt: its news desk keeps one corner off limits.
ROBOTS = b"User-agent: *\nDisallow: /posts/harbour/private/\n"


def article(feed: DemoFeed, n: int) -> str:
    """A post's page: for the news desk, an article with navigation and a footer around it."""
    index = (n - 1) % len(feed.topics)
    topic = feed.topics[index]
    if not feed.deframe:
        return f"<h1>{escape(feed.slug)}, post {n}</h1><p>A post on the starfeed demo origin.</p>"
    facts = (f"{feed.facts[index]}, the harbour board said on Tuesday (item {n} of its agenda).",
             "Members voted five to two in favour after a short debate.",
             "The change takes effect at the start of next month, the board's minutes say.",
             "Boat owners can comment at the harbour office until the end of the week.")
    return (f"<nav><a href='/'>Home</a> <a href='/posts'>All news</a></nav><article><h1>{escape(topic)}</h1>"
            + "".join(f"<p>{escape(fact)}</p>" for fact in facts)
            + "</article><footer>Harbour Gazette, a starfeed demo</footer>")


def render(feed: DemoFeed, base: str, start: float, now: float) -> bytes:
    items = feed.items(start, now)
    entries = []
    for n, published in items:
        topic = feed.topics[n % len(feed.topics)]
        title = topic if feed.deframe else f"{topic.capitalize()}, part {n + 1}"
        link = f"{base}/posts/{feed.slug}/{n + 1}"
        text = f"Post {n + 1} of {feed.title}: notes on {topic}."
        if feed.kind == "rss":
            entries.append(
                f"<item><title>{escape(title)}</title><link>{link}</link>"
                f"<guid isPermaLink=\"false\">{feed.path}#{n + 1}</guid>"
                f"<pubDate>{email.utils.formatdate(published, usegmt=True)}</pubDate>"
                f"<author>keeper@example.org (Demo Author)</author>"
                f"<description>{escape(text)}</description></item>")
        else:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(published))
            entries.append(
                f"<entry><title>{escape(title)}</title><link href=\"{link}\"/>"
                f"<id>tag:demo.starfeed,2026:{feed.path}:{n + 1}</id><updated>{stamp}</updated>"
                f"<published>{stamp}</published><author><name>Demo Gardener</name></author>"
                f"<summary>{escape(text)}</summary></entry>")
    if feed.kind == "rss":
        return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rss version=\"2.0\"><channel>"
                f"<title>{escape(feed.title)}</title><link>{base}/</link>"
                f"<description>A starfeed demo feed</description>{''.join(entries)}"
                "</channel></rss>").encode()
    updated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(items[0][1] if items else start))
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"
            f"<title>{escape(feed.title)}</title><link href=\"{base}/\"/>"
            f"<id>tag:demo.starfeed,2026:{feed.path}</id><updated>{updated}</updated>"
            f"{''.join(entries)}</feed>").encode()


class DemoOrigin:
    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.start_time = time.time()
        origin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                feed = next((f for f in FEEDS if f.path == self.path), None)
                if feed is None:
                    return self._post_page()
                body = render(feed, origin.url, origin.start_time, time.time())
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/rss+xml" if feed.kind == "rss"
                                 else "application/atom+xml")
                self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _post_page(self):
                if self.path == "/robots.txt":
                    return reply(self, 200, ROBOTS, "text/plain")
                parts = self.path.strip("/").split("/")
                feed = next((f for f in FEEDS if len(parts) == 3 and f.slug == parts[1]), None)
                if feed is None or parts[0] != "posts" or not parts[2].isdigit():
                    return self.send_error(404)
                page = (f"<!doctype html><title>{escape(parts[1])} #{parts[2]}</title>"
                        f"{article(feed, int(parts[2]))}").encode()
                reply(self, 200, page, "text/html; charset=utf-8")

            def log_message(self, *args):
                pass

        self._server = Loopback(Handler, host, port, name="demo-origin")
        self.url = self._server.url

    @property
    def since(self) -> float:
        """When the demo feeds began publishing: what their subscriptions date from, so that
        the first-fetch filter keeps their backlog (docs/design.md#first-fetch)."""
        return self.start_time - 5 * max(f.every for f in FEEDS)

    @property
    def feed_urls(self) -> list[str]:
        return [self.url + f.path for f in FEEDS]

    @property
    def deframed_urls(self) -> list[str]:
        return [self.url + f.path for f in FEEDS if f.deframe]

    def close(self) -> None:
        self._server.close()

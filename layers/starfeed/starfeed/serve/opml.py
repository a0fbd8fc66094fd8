"""OPML 2.0 (seed 001): the feeds this starfeed publishes, and the subscriptions themselves.

Both are public: titles lose XML-illegal characters (ElementTree would write them and break the
document), links pass the URL policy, and subscription URLs are redacted.
"""

from __future__ import annotations

import email.utils
import xml.etree.ElementTree as ET

from starfeed.formats import FORMATS, TITLES
from starfeed.model import Source
from starfeed.render import clean
from starfeed.serve.summary import publishable


def _document(title: str, now: float) -> tuple[ET.Element, ET.Element]:
    opml = ET.Element("opml", version="2.0")
    head = ET.SubElement(opml, "head")
    ET.SubElement(head, "title").text = title
    stamp = email.utils.formatdate(now, usegmt=True)
    ET.SubElement(head, "dateCreated").text = stamp
    ET.SubElement(head, "dateModified").text = stamp
    return opml, ET.SubElement(opml, "body")


def _bytes(opml: ET.Element) -> bytes:
    ET.indent(opml)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(opml, encoding="utf-8")


def _published(parent: ET.Element, title: str, base: str, path: str, html_url: str) -> None:
    folder = ET.SubElement(parent, "outline", text=title, title=title)
    for fmt, (extension, _) in FORMATS.items():
        name = f"{title} ({TITLES[fmt]})"
        ET.SubElement(folder, "outline", type=fmt, text=name, title=name,
                      xmlUrl=f"{base}/{path}.{extension}", htmlUrl=html_url)


def published_opml(base: str, sources: list[Source], collections: dict[str, int], now: float) -> bytes:
    """Every feed this deployment publishes, in every format, with absolute URLs."""
    base = base.rstrip("/")
    opml, body = _document("starfeed: published feeds", now)
    _published(body, "Everything", base, "feed", base + "/")
    for name in filter(None, map(clean.text, collections)):
        _published(body, f"Collection: {name}", base, f"c/{name}/feed", f"{base}/c/{name}/")
    for source in sources:
        if publishable(source):  # seed 004: built feeds only
            # A source's page is its site; failing a safe one, the feed we publish for it.
            home = clean.link(source.site_url) or f"{base}/s/{source.source_id}/feed"
            _published(body, clean.shown(source).title, base, f"s/{source.source_id}/feed", home)
    return _bytes(opml)


def subscriptions_opml(sources: list[Source], now: float) -> bytes:
    """The sources themselves, for moving to another reader; collections become folders. Public,
    so redacted: a URL's credentials are shown by the CLI only (`starfeed source list`)."""
    opml, body = _document("starfeed: subscriptions", now)
    folders: dict[str, ET.Element] = {}
    for source in sources:
        if not source.enabled:
            continue  # unsubscribed means unpublished, here too
        shown = clean.shown(source)
        if not (xml_url := clean.link(shown.url)):
            continue  # stored before the URL policy held: nothing a reader could subscribe to
        attributes = {"type": "rss", "text": shown.title, "title": shown.title, "xmlUrl": xml_url}
        if home := clean.link(source.site_url):
            attributes["htmlUrl"] = home
        names = filter(None, map(clean.text, source.collections or []))
        parents = [folders.setdefault(c, ET.SubElement(body, "outline", text=c, title=c)) for c in names] or [body]
        for parent in parents:
            ET.SubElement(parent, "outline", **attributes)
    return _bytes(opml)

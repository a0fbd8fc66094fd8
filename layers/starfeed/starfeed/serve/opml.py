"""OPML 2.0 (seed 001): the feeds this starfeed publishes, and the subscriptions themselves."""

from __future__ import annotations

import email.utils
import xml.etree.ElementTree as ET

from starfeed.formats import FORMATS, TITLES
from starfeed.model import Source


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
    for name in collections:
        _published(body, f"Collection: {name}", base, f"c/{name}/feed", f"{base}/c/{name}/")
    for source in sources:
        if source.enabled and source.status != "new":  # seed 004: built feeds only
            _published(body, source.title or source.url, base, f"s/{source.source_id}/feed",
                       source.site_url or source.url)
    return _bytes(opml)


def subscriptions_opml(sources: list[Source], now: float) -> bytes:
    """The sources themselves, for moving to another reader; collections become folders."""
    opml, body = _document("starfeed: subscriptions", now)
    folders: dict[str, ET.Element] = {}
    for source in sources:
        parents = [folders.setdefault(c, ET.SubElement(body, "outline", text=c, title=c))
                   for c in source.collections] or [body]
        for parent in parents:
            title = source.title or source.url
            attributes = {"type": "rss", "text": title, "title": title, "xmlUrl": source.url}
            if source.site_url:
                attributes["htmlUrl"] = source.site_url
            ET.SubElement(parent, "outline", **attributes)
    return _bytes(opml)

"""OPML 2.0 (docs/design.md#opml): the feeds this starfeed publishes, and the subscriptions themselves.

Both are public: titles lose XML-illegal characters (ElementTree would write them and break the
document), links pass the URL policy, and subscription URLs are redacted.

/opml.xml lists only feeds that exist: the aggregate, a collection and a source's own feed are
built by the first fetch of a source in them (the GitHub follow list has no feed of its own); a
rule set's feed exists while the set has rules (docs/design.md#rule-sets).

/subscriptions.opml lists what a reader could subscribe to itself, so that importing it (into
starfeed or another reader) gives the same subscriptions and collections. Each kind of source
says what that is (starfeed.kinds: a feed's own URL; for a page without a feed, starfeed's feed
of it; for the GitHub accounts, starfeed's GitHub feed, once), in the folder of each of its
collections (a source in two collections is in both folders, and an OPML reader such as
listparser gives it both folders back; a source in none sits at the top level); no outline twice
in a folder, and no empty folder.
"""

from __future__ import annotations

import email.utils
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from starfeed.formats import FORMATS
from starfeed.model import Source
from starfeed.render import clean

GITHUB = "github"  # sources.GITHUB_COLLECTION (not imported: the api function stays light)
GITHUB_TITLE = "GitHub Followings Stars"  # the GitHub feed's channel title (render/pages.github_meta)
_COLLECTION = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Subscription:
    """One line of /subscriptions.opml: what a reader subscribes to for a source."""

    title: str
    xml_url: str | None
    html_url: str | None = None
    folders: list[str] = field(default_factory=list)  # its collections; none: the top level


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
    document: bytes = ET.tostring(opml, encoding="utf-8")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + document


def _published(parent: ET.Element, title: str, base: str, path: str, html_url: str) -> None:
    folder = ET.SubElement(parent, "outline", text=title, title=title)
    for fmt in FORMATS:
        name = f"{title} ({fmt.title})"
        ET.SubElement(folder, "outline", type=fmt.name, text=name, title=name,
                      xmlUrl=f"{base}/{fmt.file(path)}", htmlUrl=html_url)


def published_opml(base: str, built: list[Source], collections: dict[str, int], now: float,
                   rule_sets: tuple[str, ...] = ()) -> bytes:
    """Every feed this deployment publishes, in every format, with absolute URLs: the aggregate
    once any source has been fetched, each collection once one of its sources has, each rule set
    that has rules, and each fetched source (built: the sources whose feeds are built, as their
    kinds say)."""
    base = base.rstrip("/")
    opml, body = _document("starfeed: published feeds", now)
    if built:
        _published(body, "Everything", base, "feed", base + "/")
    # A collection's name is its path (sources.COLLECTION_NAME); another string names no feed.
    names = {c for s in built for c in s.collections or [] if _COLLECTION.fullmatch(str(c))}
    for name in sorted(names & set(collections)):
        title = GITHUB_TITLE if name == GITHUB else f"Collection: {name}"
        _published(body, title, base, f"c/{name}/feed", f"{base}/c/{name}/")
    for name in sorted(n for n in rule_sets if _COLLECTION.fullmatch(str(n))):  # a set is named as a collection is
        _published(body, f"Rule set: {name}", base, f"r/{name}/feed", f"{base}/r/{name}/")
    for source in built:
        # A source's page is its site; failing a safe one, the feed we publish for it.
        home = clean.link(source.site_url) or f"{base}/s/{source.source_id}/feed"
        _published(body, clean.shown(source).title, base, f"s/{source.source_id}/feed", home)
    return _bytes(opml)


def subscriptions_opml(subscriptions: list[Subscription], now: float) -> bytes:
    """The subscriptions, for moving to another reader (see the module's docstring). Public, so
    each passes the URL policy again: a line without a URL a reader could follow is left out."""
    opml, body = _document("starfeed: subscriptions", now)
    top: dict[str, dict[str, str]] = {}  # xmlUrl -> attributes
    folders: dict[str, dict[str, dict[str, str]]] = {}  # collection -> xmlUrl -> attributes
    for line in subscriptions:
        xml_url, title = clean.link(line.xml_url), clean.text(line.title)
        if not xml_url or not title:
            continue  # stored before the URL policy held: nothing a reader could subscribe to
        attributes = {"type": "rss", "text": title, "title": title, "xmlUrl": xml_url}
        if home := clean.link(line.html_url):
            attributes["htmlUrl"] = home
        names = [n for n in map(clean.text, line.folders) if n]
        for name in names:
            folders.setdefault(name, {}).setdefault(xml_url, attributes)
        if not names:
            top.setdefault(xml_url, attributes)
    for name in sorted(folders):
        folder = ET.SubElement(body, "outline", text=name, title=name)
        for attributes in sorted(folders[name].values(), key=_order):
            ET.SubElement(folder, "outline", attributes)
    for attributes in sorted(top.values(), key=_order):
        ET.SubElement(body, "outline", attributes)
    return _bytes(opml)


def _order(attributes: dict[str, str]) -> tuple[str, str]:
    return attributes["title"].casefold(), attributes["xmlUrl"]

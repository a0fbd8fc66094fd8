"""One feed, three formats: RSS 2.0 and Atom (RFC 4287) as lxml trees, JSON Feed 1.1 as a plain
document. Each must pass the W3C Feed Validator, or JSON Feed 1.1's schemas, without an error.

Rendering never trusts what is stored: the channel's fields and every entry pass render.clean
first, and an entry that still cannot be written is left out (and logged) rather than costing
the whole document.

What each entry keeps, format by format:
- its id: the GUID as stored in RSS and JSON Feed; in Atom, which wants a URI, the stored id when
  it is one, else a urn:uuid derived from the source and the id (atom_id);
- its title when it has one (RSS and JSON Feed allow none; Atom requires the element, left
  empty); its authors, else its feed's (parse.normalize), else its source's title;
- every enclosure in Atom (rel="enclosure" links) and JSON Feed (attachments), the first in RSS,
  which allows one; its type, else one its file name implies; a length only when known (a
  positive one: RSS requires the attribute, and "0" is the RSS Advisory Board's "unknown", so a
  source's length="0" stays "0" in RSS and is no length elsewhere);
- where it came from, in the aggregate and collections (FeedMeta.attribute): RSS <source>,
  Atom <source>, JSON Feed's _starfeed.source and the index's source name.

feedgen is not used: its 1.0.0 Atom writer drops every link's rel, type and length (enclosures
came out as a second alternate link), cannot write atom:source's id, and refuses an entry
without a title.
"""

from __future__ import annotations

import html
import json
import logging
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

from starfeed import PROJECT_URL, __version__
from starfeed.formats import BY_NAME
from starfeed.model import Author, Enclosure, Entry
from starfeed.render import clean
from starfeed.render.clean import Origin

log = logging.getLogger(__name__)

ATOM = "http://www.w3.org/2005/Atom"
DC = "http://purl.org/dc/elements/1.1/"
CONTENT = "http://purl.org/rss/1.0/modules/content/"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
RSS_DOCS = "https://www.rssboard.org/rss-specification"
UNTITLED = "(untitled)"  # RSS only, for an item that has nothing else to show
# Atom ids derived from ids that are no URI: urn:uuid:<UUID v5 of the source and the id>.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, PROJECT_URL)

# The forms of URI the W3C Feed Validator accepts as an atom:id (RFC 3986 characters; tag: as RFC
# 4151 writes it; urn: with a namespace; urn:uuid: with a UUID; http(s) and ftp with a host).
_URI = re.compile(r"[a-zA-Z][0-9a-zA-Z+\-.]*:(//)?[0-9a-zA-Z;/?:@&=+$.\-_!~*'()%,#]+")
_ESCAPES = re.compile(r"%(?![0-9A-Fa-f]{2})")
_TAG = re.compile(r"tag:([a-z0-9\-._]+?@)?[a-z0-9.\-]+?,\d{4}(-\d{2}(-\d{2})?)?:"
                  r"[0-9a-zA-Z;/?:@&=+$.\-_!~*'()%,]*(#[0-9a-zA-Z;/?:@&=+$.\-_!~*'()%,]*)?")
_URN = re.compile(r"[Uu][Rr][Nn]:[a-zA-Z0-9][a-zA-Z0-9-]{1,31}:([a-zA-Z0-9()+,.:=@;$_!*'\-]|%[0-9A-Fa-f]{2})+")
_UUID = re.compile(r"[Uu][Rr][Nn]:[Uu][Uu][Ii][Dd]:[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-"
                   r"[a-fA-F0-9]{4}-[a-fA-F0-9]{12}")
_WITH_HOST = re.compile(r"(?i)(https?|ftp)://[^/]")
# An address a reader can mail (RFC 5322's addr-spec, as the validator reads it).
_EMAIL = re.compile(r"[A-Za-z0-9_\-+.'!#$%&*/=?^`{|}~]+@(?:[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.|"
                    r"(?:[A-Za-z0-9-]+\.)+)[A-Za-z0-9][-A-Za-z0-9]*")
# An enclosure's type from its file name, when the feed gave none: podcast and document formats,
# our own table so the guess is the same on every Python.
_MEDIA_TYPES = {
    "mp3": "audio/mpeg", "m4a": "audio/mp4", "m4b": "audio/mp4", "aac": "audio/aac", "ogg": "audio/ogg",
    "oga": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac", "wav": "audio/wav", "weba": "audio/webm",
    "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm", "ogv": "video/ogg",
    "pdf": "application/pdf", "epub": "application/epub+zip", "zip": "application/zip",
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
    "txt": "text/plain", "html": "text/html", "htm": "text/html"}
_EXTENSION = re.compile(r"\.([A-Za-z0-9]{1,5})$")


@dataclass(frozen=True)
class FeedMeta:
    feed_id: str  # e.g. "feed" or "s/<id>/feed": the path of the feed without extension
    title: str
    description: str
    home_url: str  # the HTML page this feed belongs to
    base_url: str  # the deployment's public URL, for self links
    language: str | None = None  # the feed's language, when all of it has one (a source's feed)
    # The sources behind the entries, by feed_id: their titles credit entries without an author.
    origins: Mapping[str, Origin] = field(default_factory=dict)
    attribute: bool = False  # name each entry's source: the aggregate and collections mix sources
    query: str = ""  # a variant's query string, part of its self link (?max_score=0.5, ?before=…)
    # RFC 5005 section 3, paged feeds: the next (older) page's query when there is one, and on a later
    # page the first page's ("" for the feed itself) and the previous (newer) page's.
    next_query: str | None = None
    first_query: str | None = None
    previous_query: str | None = None
    hub: str | None = None  # a WebSub hub that announces this feed's updates

    def self_url(self, fmt: str) -> str:
        return self.url_with(fmt, self.query)

    def url_with(self, fmt: str, query: str) -> str:
        return f"{self.base_url.rstrip('/')}/{BY_NAME[fmt].file(self.feed_id)}{query}"

    def links(self, fmt: str) -> list[tuple[str, str]]:
        """(rel, href) of the links beside self: the hub, the first, previous and next pages."""
        pages = [(rel, self.url_with(fmt, query)) for rel, query in (
            ("first", self.first_query), ("previous", self.previous_query), ("next", self.next_query))
            if query is not None]
        return ([("hub", self.hub)] if self.hub else []) + pages


def render(fmt: str, meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    meta = _clean_meta(meta)
    ready = clean_entries(meta.feed_id, entries, built_at)
    # formats.py names the writer rather than holding it: see there why.
    writer: Callable[[FeedMeta, list[Entry], float], bytes] = globals()[BY_NAME[fmt].writer]
    try:
        return writer(meta, ready, built_at)
    except Exception:  # find the entry at fault below; the rest are published
        log.warning("renderer: %s as %s failed whole; rendering its entries one by one",
                    meta.feed_id, fmt, exc_info=True)
    fit = []
    for entry in ready:
        try:
            writer(meta, [entry], built_at)
            fit.append(entry)
        except Exception:
            log.warning("renderer: %s entry %r cannot be rendered as %s; left out",
                        meta.feed_id, entry.entry_uid, fmt, exc_info=True)
    return writer(meta, fit, built_at)


def clean_entries(feed_id: str, entries: list[Entry], built_at: float) -> list[Entry]:
    """The entries render.clean makes renderable; the others are logged and left out."""
    fallback = clean.stamp(_dt(built_at))
    ready = []
    for entry in entries:
        try:
            cleaned = clean.entry(entry, fallback)
        except Exception:  # not even an Entry: nothing in it can be trusted
            cleaned = None
            log.warning("renderer: %s entry %r cannot be read", feed_id,
                        getattr(entry, "entry_uid", None), exc_info=True)
        if cleaned is None:
            log.warning("renderer: %s entry %r has no usable id; left out", feed_id,
                        getattr(entry, "entry_uid", None))
        else:
            ready.append(cleaned)
    return ready


def _clean_meta(meta: FeedMeta) -> FeedMeta:
    """The channel passes the same policy as the items: a stored title or site link is data."""
    home = meta.base_url.rstrip("/") + "/"
    origins = meta.origins if isinstance(meta.origins, Mapping) else {}
    cleaned = {k: o for k, o in ((k, clean.clean_origin(v)) for k, v in origins.items()) if o}
    return FeedMeta(clean.text(meta.feed_id) or "feed", clean.text(meta.title) or "starfeed",
                    clean.text(meta.description, clean.TEXT) or "", clean.link(meta.home_url) or home,
                    meta.base_url, clean.language(meta.language), cleaned, bool(meta.attribute), meta.query,
                    meta.next_query, meta.first_query, meta.previous_query, clean.link(meta.hub))


def atom_id(entry: Entry) -> str:
    """The entry's id when the W3C Feed Validator takes it as a URI (an atom:id must be one), else
    urn:uuid:<UUID v5 of its source and id>: the same entry keeps the same id in every render
    and every feed, and two sources' entries of one GUID ("1", "post-42") stay two."""
    uid = entry.entry_uid
    return uid if is_uri(uid) else "urn:uuid:" + str(uuid.uuid5(ID_NAMESPACE, entry.feed_id + "\x1f" + uid))


def is_uri(value: str) -> bool:
    if not (value.isascii() and _URI.fullmatch(value)) or _ESCAPES.search(value):
        return False
    scheme = value.split(":", 1)[0].lower()
    if scheme == "tag":
        return bool(_TAG.fullmatch(value))
    if scheme == "urn":
        return bool(_UUID.fullmatch(value) if value[4:9].lower() == "uuid:" else _URN.fullmatch(value))
    if scheme in ("http", "https", "ftp"):
        return bool(_WITH_HOST.match(value))
    return True


@dataclass
class _Item:
    """An entry element being filled, with the feed it belongs to."""

    element: etree._Element
    meta: FeedMeta


def _entries(parent: etree._Element, tag: str, meta: FeedMeta, entries: list[Entry], fmt: str) -> None:
    for entry in entries:
        element = etree.SubElement(parent, tag)
        try:
            _fill(_Item(element, meta), entry, fmt)
        except Exception:  # a value that cannot be written costs its entry only
            parent.remove(element)
            log.warning("renderer: %s entry %r cannot be written as %s; left out", meta.feed_id,
                        entry.entry_uid, fmt, exc_info=True)


def _fill(item: _Item, entry: Entry, fmt: str) -> None:
    (_fill_rss if fmt == "rss" else _fill_atom)(item, entry)


def _sub(parent: etree._Element, tag: str, text: str | None = None, **attributes: str) -> etree._Element:
    element = etree.SubElement(parent, tag, attributes)
    if text is not None:
        element.text = text
    return element


def write_rss(meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    rss = etree.Element("rss", {"version": "2.0"}, nsmap={"atom": ATOM, "dc": DC, "content": CONTENT})
    channel = _sub(rss, "channel")
    _sub(channel, "title", meta.title)
    _sub(channel, "link", meta.home_url)
    _sub(channel, "description", meta.description or meta.title)  # RSS requires a description
    _sub(channel, f"{{{ATOM}}}link", href=meta.self_url("rss"), rel="self", type=BY_NAME["rss"].media_type)
    for rel, href in meta.links("rss"):
        _sub(channel, f"{{{ATOM}}}link", href=href, rel=rel)
    if meta.language:
        _sub(channel, "language", meta.language)
    _sub(channel, "lastBuildDate", _rfc822(clean.stamp(_dt(built_at))))
    _sub(channel, "generator", f"starfeed {__version__}")
    _sub(channel, "docs", RSS_DOCS)
    _entries(channel, "item", meta, entries, "rss")
    document: bytes = etree.tostring(rss, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return document


def _fill_rss(item: _Item, entry: Entry) -> None:
    element, origin = item.element, item.meta.origins.get(entry.feed_id)
    # RSS wants a title or a description; an item with neither shows its link.
    if entry.title or not (entry.summary or entry.content):
        _sub(element, "title", entry.title or entry.canonical_link or UNTITLED)
    if entry.canonical_link:
        _sub(element, "link", entry.canonical_link)
    # Summaries are plain text: RSS readers read <description> as HTML, so it is escaped into it.
    if entry.summary:
        _sub(element, "description", html.escape(entry.summary, quote=False))
    if entry.content:
        # A CDATA section cannot hold "]]>"; in HTML "&gt;" reads the same.
        body = etree.CDATA(entry.content.replace("]]>", "]]&gt;"))
        _sub(element, f"{{{CONTENT}}}encoded" if entry.summary else "description").text = body
    authors = _authors(entry, origin, item.meta)
    if len(authors) == 1 and _EMAIL.fullmatch(authors[0].get("email") or ""):
        one = authors[0]
        _sub(element, "author", f"{one['email']} ({one['name']})" if one.get("name") else one["email"])
    else:
        # Names without an address (RSS's <author> must hold one): Dublin Core's creator.
        for author in authors:
            _sub(element, f"{{{DC}}}creator", author.get("name") or author.get("email") or author["uri"])
    for category in entry.categories:
        _sub(element, "category", category)
    _sub(element, "guid", entry.entry_uid,
         isPermaLink="true" if entry.entry_uid == entry.canonical_link else "false")
    for enclosure in entry.enclosures[:1]:  # RSS allows one enclosure per item
        _sub(element, "enclosure", url=enclosure["url"], length=str(enclosure.get("length") or 0),
             type=_media_type(enclosure))
    _sub(element, "pubDate", _rfc822(entry.sort_time))
    if item.meta.attribute and origin and origin.feed_url:
        _sub(element, "source", origin.title, url=origin.feed_url)


def write_atom(meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    feed = etree.Element(f"{{{ATOM}}}feed", nsmap={None: ATOM})
    if meta.language:
        feed.set(XML_LANG, meta.language)
    a = _atom_tag
    _sub(feed, a("id"), meta.self_url("atom"))
    _sub(feed, a("title"), meta.title, type="text")
    if meta.description:
        _sub(feed, a("subtitle"), meta.description, type="text")
    _sub(feed, a("link"), href=meta.self_url("atom"), rel="self", type=BY_NAME["atom"].media_type)
    for rel, href in meta.links("atom"):
        _sub(feed, a("link"), href=href, rel=rel)
    _sub(feed, a("link"), href=meta.home_url, rel="alternate", type="text/html")
    _sub(feed, a("updated"), clean.stamp(_dt(built_at)))
    _sub(feed, a("generator"), "starfeed", uri=PROJECT_URL, version=__version__)
    _entries(feed, a("entry"), meta, entries, "atom")
    document: bytes = etree.tostring(feed, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return document


def _atom_tag(name: str) -> str:
    return f"{{{ATOM}}}{name}"


def _fill_atom(item: _Item, entry: Entry) -> None:
    element, meta, a = item.element, item.meta, _atom_tag
    origin = meta.origins.get(entry.feed_id)
    if origin and origin.language and origin.language != meta.language:
        element.set(XML_LANG, origin.language)
    _sub(element, a("id"), atom_id(entry))
    _sub(element, a("title"), entry.title or "", type="text")  # required, and may be empty
    _sub(element, a("updated"), clean.modified(entry) or entry.sort_time)
    _sub(element, a("published"), entry.sort_time)
    for author in _authors(entry, origin, meta):
        person = _sub(element, a("author"))
        _sub(person, a("name"), author.get("name") or author.get("email") or author["uri"])
        if _EMAIL.fullmatch(author.get("email") or ""):
            _sub(person, a("email"), author["email"])
        if author.get("uri"):
            _sub(person, a("uri"), author["uri"])
    if entry.canonical_link:
        _sub(element, a("link"), href=entry.canonical_link, rel="alternate", type="text/html")
    for enclosure in entry.enclosures:
        link = _sub(element, a("link"), href=enclosure["url"], rel="enclosure", type=_media_type(enclosure))
        if enclosure.get("length"):
            link.set("length", str(enclosure["length"]))
    for category in entry.categories:
        _sub(element, a("category"), term=category)
    if entry.summary:
        _text_construct(element, a("summary"), entry.summary)
    if entry.content:
        _sub(element, a("content"), entry.content, type="html")
    elif not entry.canonical_link:
        # RFC 4287: an entry without an alternate link must carry content.
        _text_construct(element, a("content"), entry.summary or entry.title or "")
    if meta.attribute and origin:
        _atom_source(element, entry, origin)


def _text_construct(parent: etree._Element, tag: str, text: str) -> None:
    """Plain text as an Atom text construct that says what it is: type="text", or when the text
    holds "<" or "&" (a URL's query, "a <b> tag"), escaped HTML, which readers show the same
    and no reader or validator takes for undeclared markup."""
    if "<" in text or "&" in text:
        _sub(parent, tag, html.escape(text, quote=False), type="html")
    else:
        _sub(parent, tag, text, type="text")


def _atom_source(element: etree._Element, entry: Entry, origin: Origin) -> None:
    """RFC 4287 section 4.2.11: the feed the entry was copied from, named by its title, an id (its
    subscription URL), its links, and as updated the time starfeed copied the entry from it
    (first_seen), when its metadata was as shown: starfeed keeps no copy of the feed's own."""
    a = _atom_tag
    source = _sub(element, a("source"))
    feed_url = origin.feed_url if origin.feed_url and is_uri(origin.feed_url) else None
    _sub(source, a("id"), feed_url or f"urn:uuid:{uuid.uuid5(ID_NAMESPACE, entry.feed_id)}")
    _sub(source, a("title"), origin.title, type="text")
    _sub(source, a("updated"), entry.first_seen)
    if origin.feed_url:
        _sub(source, a("link"), href=origin.feed_url, rel="self")
    if origin.site_url:
        _sub(source, a("link"), href=origin.site_url, rel="alternate", type="text/html")


def write_json(meta: FeedMeta, entries: list[Entry], built_at: float) -> bytes:
    items = []
    for entry in entries:
        origin = meta.origins.get(entry.feed_id)
        item: dict[str, Any] = {"id": entry.entry_uid, "url": entry.canonical_link, "title": entry.title,
                "content_html": entry.content, "summary": entry.summary,
                "date_published": entry.sort_time, "date_modified": clean.modified(entry),
                "authors": [{k: v for k, v in (("name", a.get("name") or a.get("email")), ("url", a.get("uri"))) if v}
                            for a in _authors(entry, origin, meta)],
                "tags": entry.categories,
                "language": origin.language if origin and origin.language != meta.language else None,
                "attachments": [{"url": e["url"], "mime_type": _media_type(e),
                                 **({"size_in_bytes": e["length"]} if e.get("length") else {})}
                                for e in entry.enclosures]}
        item = {k: v for k, v in item.items() if v not in (None, [], "")}
        if "content_html" not in item:
            item["content_text"] = entry.summary or ""  # JSON Feed requires one of the two
        extension: dict[str, Any] = {}
        if meta.attribute and origin:
            extension["source"] = {k: v for k, v in (
                ("title", origin.title), ("feed_url", origin.feed_url), ("home_page_url", origin.site_url)) if v}
        if given := clean.given_date(entry):  # date_published is where starfeed orders it
            extension["date_published_as_given"] = given
        if extension:
            item["_starfeed"] = extension
        items.append(item)
    links = dict(meta.links("json"))
    document = {"version": "https://jsonfeed.org/version/1.1", "title": meta.title,
                "home_page_url": meta.home_url, "feed_url": meta.self_url("json"),
                "next_url": links.get("next"),
                "hubs": [{"type": "WebSub", "url": meta.hub}] if meta.hub else None,
                "description": meta.description, "language": meta.language,
                # JSON Feed 1.1 links only the next page: an older page's first and previous, as
                # an extension the schemas allow.
                "_starfeed": {f"{rel}_url": links[rel] for rel in ("first", "previous") if rel in links} or None,
                "items": items}
    document = {k: v for k, v in document.items() if v is not None}
    return json.dumps(document, ensure_ascii=False, indent=1).encode()


def _authors(entry: Entry, origin: Origin | None, meta: FeedMeta) -> list[Author]:
    """The entry's authors (its feed's when it names none, parse.normalize), else its source's
    title, else this feed's: every entry credits someone."""
    if entry.authors:
        return entry.authors
    if origin:
        return [{"name": origin.title, **({"uri": origin.site_url} if origin.site_url else {})}]
    return [{"name": meta.title}]


def _media_type(enclosure: Enclosure) -> str:
    """The type the feed gave; else the one its URL's extension names; else "some bytes"."""
    if media_type := enclosure.get("type"):
        return media_type
    extension = _EXTENSION.search(urlsplit(enclosure["url"]).path)
    return _MEDIA_TYPES.get(extension.group(1).lower(), _UNKNOWN) if extension else _UNKNOWN


_UNKNOWN = "application/octet-stream"


def _rfc822(stamp: str) -> str:
    """A stored RFC 3339 UTC time ("2026-11-21T12:00:00Z", as render.clean leaves it) as RFC 822."""
    moment = datetime(int(stamp[:4]), int(stamp[5:7]), int(stamp[8:10]), tzinfo=UTC)
    return f"{_DAYS[moment.weekday()]}, {stamp[8:10]} {_MONTHS[moment.month - 1]} {stamp[:4]} {stamp[11:19]} +0000"


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _dt(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)


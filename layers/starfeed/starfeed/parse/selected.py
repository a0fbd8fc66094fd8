"""A page without a feed, read by CSS selectors (docs/design.md#selectors): its items, and in each
item its title, link, date and summary, as feedparser-shaped entries for the one normalizer.

Pure: bytes, selectors and the page's URL in; entries out, or the selector that found nothing,
by name, so a page that changed shape is the source's error and never an empty feed. Selectors
are compiled by cssselect (lxml's translator) to XPath and evaluated by libxml2; the page is
parsed from bytes the fetch has already bounded, with no network and no entity loading."""

from __future__ import annotations

import codecs
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import lxml.html
from cssselect import SelectorError
from cssselect.parser import tokenize
from lxml import etree
from lxml.cssselect import CSSSelector

from starfeed.model import Selectors
from starfeed.parse.normalize import parse_date, web_link
from starfeed.settings import Settings

DEFAULTS = Settings()
REQUIRED = ("items", "title", "link")
OPTIONAL = ("date", "summary")
# How the error of a selector that found nothing starts: the few words `source list` shows of it.
NONE_FOUND = {"items": "no items", "title": "no titles", "link": "no links", "date": "no dates",
              "summary": "no summaries"}

# Dates as list pages print them, tried after ISO 8601 and RFC 822 (English month names, as
# Python's default C locale reads them).
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y",
                 "%B %d %Y", "%b %d %Y", "%b. %d, %Y", "%d %B, %Y", "%A, %B %d, %Y", "%a, %b %d, %Y")
# A date inside longer text ("Posted on 3 March 2026 by Ana"): ISO first, then day-month-year
# and month-day-year with a month's name.
_DATE_IN_TEXT = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2} [A-Z][a-z]{2,8},? \d{4}|[A-Z][a-z]{2,8}\.? \d{1,2},? \d{4}")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]{1,40})", re.IGNORECASE)
_DECLARED = re.compile(rb"<meta[^>]{0,200}charset", re.IGNORECASE)


@dataclass
class SelectedPage:
    """What the selectors found: the page's title and base URL, its items as feedparser-shaped
    entries, and what was left out; or the error naming the selector that found nothing."""

    title: str | None = None
    base: str = ""
    entries: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


def given(selectors: Selectors) -> list[tuple[str, str]]:
    """(role, selector) for each selector set, in the order they are applied."""
    pairs = [(role, getattr(selectors, role)) for role in (*REQUIRED, *OPTIONAL)]
    return [(role, selector) for role, selector in pairs if selector]


def selectors_problem(selectors: Selectors, limits: Settings = DEFAULTS) -> str | None:
    """Why these selectors cannot read a page (one missing, too long or complex, or one that does
    not compile), or None. limits: the max_selector_* settings."""
    for role in REQUIRED:
        if not (getattr(selectors, role) or "").strip():
            return f"a page read by selectors needs --items, --title and --link: --{role} is missing"
    for role, selector in given(selectors):
        problem = selector_problem(role, selector, limits)
        if problem:
            return problem
    return None


def selector_problem(role: str, selector: str, limits: Settings = DEFAULTS) -> str | None:
    """Why one selector cannot be used: too long, of too many parts (each part is work for every
    element of a page, and nesting is parts too), or not compiled (cssselect's reason); or None."""
    if len(selector) > limits.max_selector_chars:
        return (f"the {role} selector is {len(selector):,} characters long: at most {limits.max_selector_chars:,} "
                "(STARFEED_MAX_SELECTOR_CHARS)")
    parts = selector_parts(selector)
    if parts > limits.max_selector_parts:
        return (f"the {role} selector {_quoted(selector)} has {parts} parts (names, classes, combinators, "
                f"spaces, brackets): at most {limits.max_selector_parts} (STARFEED_MAX_SELECTOR_PARTS), so that no "
                "selector is costly to run on every element of a page")
    try:
        _compiled(selector)
    except (SelectorError, RecursionError) as exc:
        return f"the {role} selector {_quoted(selector)} is not a CSS selector starfeed can use: {exc}"
    return None


def selector_parts(selector: str) -> int:
    """A selector's tokens, read without compiling it (nothing nests yet): a space between two
    names is the descendant combinator, and counts as one."""
    return sum(1 for token in tokenize(selector.strip()) if token.type != "EOF")


def _compiled(selector: str) -> Any:  # an lxml CSSSelector: an XPath evaluated by libxml2
    return CSSSelector(selector, translator="html")


def _quoted(selector: str) -> str:
    return "'" + " ".join(selector.split()) + "'"


def read_page(body: bytes, url: str, content_type: str | None, selectors: Selectors,
              max_items: int, limits: Settings = DEFAULTS) -> SelectedPage:
    """The page's items (the first max_items), each with a title and an http(s) link; a date and
    a summary when their selectors find one. An item without a title or link is left out, with a
    warning; a selector that finds nothing in any item is the page's error. limits: the
    max_selector_* settings, which stored selectors are held to again."""
    problem = selectors_problem(selectors, limits)
    if problem:
        return SelectedPage(error=problem)
    document = _document(body, content_type)
    if document is None:
        return SelectedPage(error="not an HTML page: nothing for the selectors to read")
    base = web_link(str((document.xpath("//base/@href") or [url])[0]), url) or url
    page = SelectedPage(title=_page_title(document), base=base)
    # An item inside another is part of it: items are disjoint, so each selector below reads the
    # page once at most, however deep a hostile page nests them.
    found_items = _compiled(selectors.items)(document)
    outer = set(found_items)
    items = [item for item in found_items if not any(a in outer for a in item.iterancestors())]
    if not items:
        page.error = f"no items: the items selector {_quoted(selectors.items)} found nothing on the page"
        return page
    if len(items) > max_items:
        page.warnings.append(f"the items selector found {len(items):,} items: the first {max_items:,} are read")
        items = items[:max_items]
    found: dict[str, list[list[Any]]] = {}
    for role, selector in given(selectors)[1:]:  # within each item
        select = _compiled(selector)
        found[role] = [select(item) for item in items]
        if not any(found[role]):
            page.error = f"{NONE_FOUND[role]}: the {role} selector {_quoted(selector)} found nothing {_in(items)}"
            return page
    titles = [_first_text(matches) for matches in found["title"]]
    links = [_first_link(matches, base) for matches in found["link"]]
    for role, values, what in (("title", titles, "text"), ("link", links, "http(s) link")):
        if not any(values):
            page.error = (f"{NONE_FOUND[role]}: the {role} selector {_quoted(getattr(selectors, role))} found no "
                          f"{what} {_in(items)}")
            return page
        if missing := sum(not value for value in values):
            page.warnings.append(f"{missing} of {_count(len(items), 'item')} left out: the {role} selector "
                                 f"{_quoted(getattr(selectors, role))} found no {what} in them")
    dates = [_first_date(matches) for matches in found.get("date", [[]] * len(items))]
    summaries = [_first_html(matches) for matches in found.get("summary", [[]] * len(items))]
    unread = []
    for title, link, (published, date_text), summary in zip(titles, links, dates, summaries):
        if title and link:
            page.entries.append({"id": link, "link": link, "title": title, "published_parsed": published,
                                 "summary": summary, "summary_detail": {"base": base}})
            if date_text is not None and published is None:
                unread.append(date_text)
    if unread:
        page.warnings.append(f"{len(unread)} date(s) not understood, so undated (the first: {unread[0][:80]!r})")
    return page


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _in(items: list[Any]) -> str:
    return "in the page's only item" if len(items) == 1 else f"in any of the {len(items):,} items"


def _document(body: bytes, content_type: str | None) -> Any:  # an lxml document, or None
    parser = lxml.html.HTMLParser(encoding=_encoding(body, content_type), no_network=True, remove_comments=True,
                                  remove_pis=True, collect_ids=False)
    try:
        return lxml.html.document_fromstring(body, parser=parser)
    except (etree.ParserError, ValueError, LookupError):
        return None


def _encoding(body: bytes, content_type: str | None) -> str | None:
    """The charset the response names, else the page's own <meta charset> (libxml2 reads it),
    else UTF-8 when the bytes are UTF-8 (libxml2 would take them for Latin-1)."""
    match = _CHARSET.search(content_type or "")
    if match:
        try:
            return codecs.lookup(match.group(1)).name
        except LookupError:
            pass
    if _DECLARED.search(body[:4096]):
        return None
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "utf-8"


def _page_title(document: Any) -> str | None:
    for meta in document.iter("meta"):
        if (meta.get("property") or "").lower() == "og:title" and (meta.get("content") or "").strip():
            return str(meta.get("content")).strip()
    title = document.findtext(".//title")
    return (" ".join(title.split()) or None) if isinstance(title, str) else None


def _text(element: Any) -> str:
    """An element's text, its descendants' joined by spaces (text_content() runs
    "<h2>Post</h2><p>The" together)."""
    if not isinstance(element.tag, str):
        return ""
    return " ".join(" ".join(element.itertext()).split())


def _first_text(matches: list[Any]) -> str | None:
    """The first found element's text, else its title or alt attribute (a linked image)."""
    for element in matches:
        text = _text(element) or (element.get("title") or element.get("alt") or "").strip()
        if text:
            return text
    return None


def _first_link(matches: list[Any], base: str) -> str | None:
    """The first http(s) link: a found element's href, else that of the first link inside it."""
    for element in matches:
        hrefs = [element.get("href")] if element.get("href") is not None else \
            [a.get("href") for a in element.iter("a", "area") if a.get("href") is not None][:1]
        for href in hrefs:
            link = web_link(href.strip(), base)
            if link:
                return link
    return None


def _first_date(matches: list[Any]) -> tuple[time.struct_time | None, str | None]:
    """(the date, the text it was read from): a <time>'s datetime or a meta's content first, else
    the text. A date not understood is (None, its text): the entry is undated."""
    for element in matches:
        text = (element.get("datetime") or element.get("content") or _text(element)).strip()
        if text:
            return read_date(text), text
    return None, None


def read_date(text: str) -> time.struct_time | None:
    """A date as a list page prints it, as a UTC time tuple (no zone: UTC); None when unreadable."""
    text = " ".join(text.split())
    for candidate in (text, *(m.group(0) for m in _DATE_IN_TEXT.finditer(text[:500]))):
        parsed = parse_date(candidate) or _formatted(candidate)
        if parsed is not None:
            return parsed
    return None


def _formatted(text: str) -> time.struct_time | None:
    for pattern in _DATE_FORMATS:
        try:
            return datetime.strptime(text, pattern).timetuple()
        except ValueError:
            continue
    return None


def _first_html(matches: list[Any]) -> str | None:
    """The first found element's markup (its tail left out), for the normalizer to sanitize."""
    for element in matches:
        if isinstance(element.tag, str) and _text(element):
            return str(lxml.html.tostring(element, encoding="unicode", with_tail=False))
    return None

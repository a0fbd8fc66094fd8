"""Text from feeds made safe to store and render: plain text, sanitized HTML, clipped text. Pure."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import overload
from urllib.parse import urlsplit

import nh3

from starfeed.urlpolicy import safe_link

# Characters XML 1.0 forbids; lxml refuses them, so they never reach storage.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# Elements that break a line where they start and end: their tags become a space in plain text.
# The others (a, b, em, code, span...) sit inside a run of text and leave nothing behind, so
# "Hello <a>world</a>." reads "Hello world.", not "Hello world .".
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "caption", "center", "dd", "details", "dir",
    "div", "dl", "dt", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hgroup", "hr", "li", "main", "menu", "nav", "ol", "p", "pre", "section", "summary",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"})


def _trie(names: list[str]) -> str:
    """An alternation of names as a tree of their letters ("d(?:d|iv|l|t)"): the regular
    expression engine tries each name's first letter once, not each name in turn."""
    following: dict[str, list[str]] = {}
    for name in sorted(names):
        following.setdefault(name[0], []).append(name[1:])
    branches = []
    for letter, rests in following.items():
        longer = [rest for rest in rests if rest]
        tail = f"(?:{_trie(longer)})" + ("?" if "" in rests else "") if longer else ""
        branches.append(re.escape(letter) + tail)
    return "|".join(branches)


# Two passes with fixed replacements, each in C (a function per tag costs a call per tag): first
# the tags that part words (a block element's, or one without a name) become a space, then every
# other tag goes.
_GAP_TAGS = re.compile(rf"<(?:/?(?:{_trie(list(_BLOCKS))})(?![A-Za-z0-9])|/(?![A-Za-z])|(?![/A-Za-z]))[^>]*>",
                       re.IGNORECASE | re.ASCII)
_TAGS = re.compile(r"<[^>]*>")
# The attributes nh3 keeps that hold a URL (nh3.ALLOWED_ATTRIBUTES: a href, img src, cite).
_URL_ATTRIBUTES = frozenset({"href", "src", "cite"})
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
ELLIPSIS = "…"


def xml_safe(text: str) -> str:
    return _XML_ILLEGAL.sub("", text)


def _collapsed(text: str) -> str:
    """Each run of whitespace one space, none at the ends. str.split() splits where a regular
    expression's \\s+ would, in C and without a call per run."""
    return " ".join(text.split())


def clean_text(value: str | None) -> str | None:
    """Markup removed, entities decoded, whitespace collapsed: safe as plain text anywhere."""
    if not value or not isinstance(value, str):
        return None
    text = xml_safe(value)
    # Plain text (most titles, names, tags) needs no parser. Decoding may bring back what the
    # first pass removed (&#27;): remove it again.
    if "<" in text:
        text = xml_safe(text_of(nh3.clean(text)) or "")
    elif "&" in text:
        text = xml_safe(html.unescape(text))
    return _collapsed(text) or None


def plain_text(value: str | None) -> str | None:
    """Text that is plain by definition (a GitHub description): kept as written, "<" included,
    for the renderers to escape; only characters illegal in XML go, and runs of whitespace."""
    if not value or not isinstance(value, str):
        return None
    return _collapsed(xml_safe(value)) or None


def clean_html(value: str | None, base: str | None = None, page: str | None = None) -> str | None:
    """Sanitized HTML: no script, event handlers, iframes, javascript: or data: URLs, and no
    character XML forbids (nh3 turns a reference such as &#27; back into the character).

    With a base (an absolute http(s) URL), every relative URL in it is made absolute, so the
    HTML means the same wherever a reader shows it (an RSS reader has no base to resolve
    against): against base, and an in-page anchor ("#note1") against page, the entry's own
    address (base when there is none). The anchor's target is on that page: nh3 keeps no id
    attribute, so a bare "#note1" would lead nowhere in a reader. A URL that cannot be resolved
    to a safe one loses its attribute."""
    if not value or not isinstance(value, str):
        return None
    base = safe_link(base)
    if base:
        cleaned = nh3.clean(xml_safe(value), attribute_filter=_resolver(base, safe_link(page) or base))
    else:
        cleaned = nh3.clean(xml_safe(value))
    return (xml_safe(cleaned) if "&#" in value else cleaned) or None


def _resolver(base: str, page: str) -> Callable[[str, str, str], str | None]:
    page = page.split("#", 1)[0]

    def resolve(_tag: str, attribute: str, value: str) -> str | None:
        if attribute not in _URL_ATTRIBUTES or _SCHEME.match(value):
            return value  # nh3 has already held an absolute URL to its allowed schemes
        value = value.strip()
        if value.startswith("#"):
            return safe_link(page + value)
        # nh3 checks schemes before this filter and never after: what it returns must be safe.
        resolved = safe_link(value, base) if value else None
        return resolved if resolved and urlsplit(resolved).scheme in ("http", "https") else None

    return resolve


def text_of(sanitized_html: str | None) -> str | None:
    """Plain text of HTML that nh3 has already made well-formed and safe: block elements
    (paragraphs, list items, line breaks) part words, inline ones (links, emphasis) do not."""
    if not sanitized_html:
        return None
    text = html.unescape(_TAGS.sub("", _GAP_TAGS.sub(" ", sanitized_html)))
    return _collapsed(xml_safe(text) if "&#" in sanitized_html else text) or None


@overload
def clip(text: str, chars: int) -> str: ...
@overload
def clip(text: str | None, chars: int) -> str | None: ...
def clip(text: str | None, chars: int) -> str | None:
    """text in at most chars characters: cut at a word boundary where one is near, marked "…"."""
    if text is None or len(text) <= chars:
        return text
    cut = text[:chars - 1]
    space = cut.rfind(" ")
    if space > chars * 3 // 4:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def utf8_size(text: str | None) -> int:
    return len(text.encode("utf-8", "surrogatepass")) if text else 0


def truncate_html(sanitized_html: str, max_bytes: int, note: str) -> str:
    """Sanitized HTML in at most max_bytes UTF-8 bytes, note (HTML) included at its end. The cut
    falls between tags where one is near, else between words, never inside a tag or an entity;
    the kept part is sanitized again, which closes the elements the cut left open."""
    budget = max_bytes - utf8_size(note) - 1024  # room for the closing tags nh3 adds
    while budget > 0:
        kept = (clean_html(_cut(sanitized_html, budget)) or "") + note
        over = utf8_size(kept) - max_bytes
        if over <= 0:
            return kept
        budget -= over + 1024
    return note


def _cut(sanitized_html: str, budget: int) -> str:
    """The longest prefix of at most budget bytes that ends outside a tag and an entity. In nh3's
    output "<" and ">" appear only as tag delimiters (text and attributes carry &lt; and &gt;)."""
    prefix = sanitized_html.encode("utf-8", "surrogatepass")[:budget].decode("utf-8", "ignore")
    tag_start, tag_end = prefix.rfind("<"), prefix.rfind(">")
    if tag_start > tag_end:  # the cut falls inside a tag: end before it
        return prefix[:tag_start]
    if tag_end >= 0 and len(prefix) - tag_end <= 2048:  # a tag boundary near the end
        return prefix[:tag_end + 1]
    # A long run of text: end between words, which no entity spans.
    space = max(prefix.rfind(" "), prefix.rfind("\n"))
    end = space if space > tag_end else len(prefix)
    entity = prefix.rfind("&", 0, end)
    if entity > tag_end and ";" not in prefix[entity:end]:
        end = entity
    return prefix[:end]


# ISO 639-1: the two-letter primary subtags a language tag may start with (RSS <language>
# takes these, or ISO 639-2's three letters).
_ISO_639_1 = frozenset("""aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch
co cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi
ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky
la lb lg li ln lo lt lu lv mg mh mi mk ml mn mo mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj
om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg sh si sk sl sm sn so sq sr ss st su sv sw
ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu""".split())
_LANGUAGE = re.compile(r"([A-Za-z]{2,3})((?:-[A-Za-z0-9]{1,8}){0,7})")


def language_tag(value: object) -> str | None:
    """A declared language as a BCP 47 tag in its canonical case ("en_us" -> "en-US",
    "IT-it" -> "it-IT"), or None when it does not look like one ("english", "")."""
    if not isinstance(value, str):
        return None
    match = _LANGUAGE.fullmatch(value.strip().replace("_", "-"))
    if match is None:
        return None
    primary = match.group(1).lower()
    if len(primary) == 2 and primary not in _ISO_639_1:
        return None
    subtags = [primary]
    for subtag in match.group(2).split("-")[1:]:
        if len(subtag) == 2 and subtag.isalpha() or len(subtag) == 3 and subtag.isdigit():
            subtags.append(subtag.upper())  # a region
        elif len(subtag) == 4 and subtag.isalpha():
            subtags.append(subtag.title())  # a script
        else:
            subtags.append(subtag.lower())
    return "-".join(subtags)

"""Text from feeds made safe to store and render: plain text, sanitized HTML, clipped text. Pure."""

from __future__ import annotations

import html
import re

import nh3

# Characters XML 1.0 forbids; feedgen refuses them, so they never reach storage.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_SPACES = re.compile(r"\s+")
_TAGS = re.compile(r"<[^>]*>")
ELLIPSIS = "…"


def xml_safe(text: str) -> str:
    return _XML_ILLEGAL.sub("", text)


def clean_text(value: str | None) -> str | None:
    """Markup removed, entities decoded, whitespace collapsed: safe as plain text anywhere."""
    if not value or not isinstance(value, str):
        return None
    text = xml_safe(value)
    if "<" in text or "&" in text:  # plain text (most titles, names, tags) needs no parser
        # Decoding may bring back what the first pass removed (&#27;): remove it again.
        text = xml_safe(html.unescape(nh3.clean(text, tags=set())))
    text = _SPACES.sub(" ", text).strip()
    return text or None


def plain_text(value: str | None) -> str | None:
    """Text that is plain by definition (a GitHub description): kept as written, "<" included,
    for the renderers to escape; only characters illegal in XML go, and runs of whitespace."""
    if not value or not isinstance(value, str):
        return None
    return _SPACES.sub(" ", xml_safe(value)).strip() or None


def clean_html(value: str | None) -> str | None:
    """Sanitized HTML: no script, event handlers, iframes, javascript: or data: URLs, and no
    character XML forbids (nh3 turns a reference such as &#27; back into the character)."""
    if not value or not isinstance(value, str):
        return None
    cleaned = nh3.clean(xml_safe(value))
    return (xml_safe(cleaned) if "&#" in value else cleaned) or None


def text_of(sanitized_html: str | None) -> str | None:
    """Plain text of HTML that nh3 has already made well-formed and safe."""
    if not sanitized_html:
        return None
    text = html.unescape(_TAGS.sub(" ", sanitized_html))
    text = _SPACES.sub(" ", xml_safe(text) if "&#" in sanitized_html else text).strip()
    return text or None


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

"""Entries fitted to what storage and the renderers accept (docs/design.md#fitting). Pure.

DynamoDB stores an item of at most 400 KB, a sort key of at most 1,024 bytes (sort_key is
"<time>#<entry_uid>") and a GSI partition key (canonical_link) of at most 2,048 bytes. No entry is
refused for its size: an over-long id becomes its hash, an over-long link goes, long text is
shortened; what changed is said in entry.warnings, in sentences a person reads.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace

from starfeed.model import Author, Enclosure, Entry
from starfeed.parse.text import clip, truncate_html, utf8_size, xml_safe
from starfeed.settings import Settings
from starfeed.urlpolicy import WEB_AND_MAIL, WEB_SCHEMES, safe_link

TITLE_CHARS = 1000
SUMMARY_CHARS = 2000  # a plain-text excerpt; the content holds the whole
MAX_CATEGORIES, CATEGORY_CHARS = 50, 100
MAX_AUTHORS, AUTHOR_CHARS = 10, 200
MAX_ENCLOSURES, TYPE_CHARS = 10, 100
# Whatever the input, an entry's stored size (the JSON of its fields) stays under this, which
# leaves DynamoDB's 400 KB room for the keys and attribute names the store adds.
MAX_STORED_BYTES = 300_000


def stored_size(entry: Entry) -> int:
    """About what the entry weighs in DynamoDB: the UTF-8 JSON of its fields (of asdict(entry);
    its __dict__ gives the same JSON without asdict's deep copy)."""
    return utf8_size(json.dumps(vars(entry), ensure_ascii=False))


def fit_uid(uid: str, max_bytes: int) -> str:
    """uid, or when it is longer than max_bytes, "sha256:<hex>" of it: the same id, the same uid."""
    if utf8_size(uid) <= max_bytes:
        return uid
    return "sha256:" + hashlib.sha256(uid.encode("utf-8", "surrogatepass")).hexdigest()


def fit_entry(entry: Entry, limits: Settings) -> Entry:
    """The entry with every field within its bound (limits: the max_*_bytes settings)."""
    warnings = list(entry.warnings)
    uid = fit_uid(entry.entry_uid, limits.max_uid_bytes)
    if uid != entry.entry_uid:
        warnings.append(f"id of {utf8_size(entry.entry_uid):,} bytes stored as its SHA-256: "
                        f"longer than {limits.max_uid_bytes:,}")
    link = entry.canonical_link
    if utf8_size(link) > limits.max_link_bytes:
        warnings.append(f"link of {utf8_size(link):,} bytes dropped: longer than {limits.max_link_bytes:,}")
        link = None
    title = clip(entry.title, TITLE_CHARS)
    if entry.title is not None and title != entry.title:
        warnings.append(f"title of {len(entry.title):,} characters clipped to {TITLE_CHARS:,}")
    fitted = replace(entry, entry_uid=uid, canonical_link=link, title=title,
                     summary=clip(entry.summary, SUMMARY_CHARS),
                     categories=_categories(entry.categories, warnings),
                     authors=_authors(entry.authors, limits.max_link_bytes, warnings),
                     enclosures=_enclosures(entry.enclosures, limits.max_link_bytes, warnings),
                     content=None, warnings=warnings)
    return _with_content(fitted, entry.content, limits.max_content_bytes)


def _with_content(entry: Entry, content: str | None, max_bytes: int) -> Entry:
    """The content in at most max_bytes, and shorter if the entry would weigh MAX_STORED_BYTES
    or more with it (JSON escapes double the weight of a quote)."""
    size, limit = utf8_size(content), max_bytes
    for _ in range(4):
        fitted = replace(entry, content=content)
        if content is not None and size > limit:
            where = "at the link" if entry.canonical_link else "in the original feed"
            kept = truncate_html(content, limit, f"<p><em>starfeed kept the first {limit // 1024:,} KiB of "
                                                 f"this entry's {size // 1024:,} KiB; the rest is {where}.</em></p>")
            why = f"longer than {limit:,}" if limit == max_bytes else \
                f"the entry must weigh less than {MAX_STORED_BYTES:,} bytes stored"
            fitted = replace(entry, content=kept, warnings=entry.warnings + [
                f"content of {size:,} bytes truncated to {utf8_size(kept):,}: {why}"])
        over = stored_size(fitted) - MAX_STORED_BYTES
        if over < 0:
            return fitted
        # Shorter by the excess, in the proportion JSON weighs this content.
        weight = utf8_size(json.dumps(fitted.content, ensure_ascii=False))
        limit = int(utf8_size(fitted.content) * (weight - over) / weight) - 1024
        if limit <= 4096:
            break
    return replace(entry, content=None,
                   warnings=entry.warnings + [f"content of {size:,} bytes dropped: the entry would not fit"])


def _categories(categories: list[str], warnings: list[str]) -> list[str]:
    clipped = list(dict.fromkeys(clip(c, CATEGORY_CHARS) for c in categories))
    if len(clipped) > MAX_CATEGORIES:
        warnings.append(f"{len(clipped):,} categories: kept the first {MAX_CATEGORIES}")
    return clipped[:MAX_CATEGORIES]


def _authors(authors: list[Author], max_link_bytes: int, warnings: list[str]) -> list[Author]:
    if len(authors) > MAX_AUTHORS:
        warnings.append(f"{len(authors):,} authors: kept the first {MAX_AUTHORS}")
    kept: list[Author] = []
    too_long = 0
    for author in authors[:MAX_AUTHORS]:
        uri = author.get("uri")
        if utf8_size(uri) > max_link_bytes:
            uri, too_long = None, too_long + 1
        kept.append(Author(name=clip(author.get("name"), AUTHOR_CHARS), email=clip(author.get("email"), AUTHOR_CHARS),
                           uri=uri))
    if too_long:
        warnings.append(f"{_count(too_long, 'author URI')} dropped: longer than {max_link_bytes:,} bytes")
    return kept


def _enclosures(enclosures: list[Enclosure], max_link_bytes: int, warnings: list[str]) -> list[Enclosure]:
    fitting = [e for e in enclosures if utf8_size(e.get("url")) <= max_link_bytes]
    if len(fitting) < len(enclosures):
        warnings.append(f"{_count(len(enclosures) - len(fitting), 'enclosure')} dropped: "
                        f"URL longer than {max_link_bytes:,} bytes")
    if len(fitting) > MAX_ENCLOSURES:
        warnings.append(f"{len(fitting):,} enclosures: kept the first {MAX_ENCLOSURES}")
    return [{**e, "type": clip(e.get("type"), TYPE_CHARS)} for e in fitting[:MAX_ENCLOSURES]]


def _count(n: int, thing: str) -> str:
    return f"{n:,} {thing}{'' if n == 1 else 's'}"


_DATE = re.compile(r"(\d{4})-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def misfits(entry: Entry, limits: Settings) -> list[str]:
    """What of the entry breaks a bound fit_entry guarantees; empty when it fits. The contract
    the tests check on every corpus file, poisoned feed and generated entry."""
    problems = []
    if not entry.entry_uid or utf8_size(entry.entry_uid) > limits.max_uid_bytes:
        problems.append(f"uid of {utf8_size(entry.entry_uid)} bytes")
    links = [("link", entry.canonical_link, WEB_SCHEMES)] \
        + [("enclosure", e.get("url"), WEB_SCHEMES) for e in entry.enclosures] \
        + [("author URI", a.get("uri"), WEB_AND_MAIL) for a in entry.authors if a.get("uri")]
    for what, url, schemes in links:
        if url is None and what == "link":
            continue
        if not isinstance(url, str) or safe_link(url, None, schemes) != url or utf8_size(url) > limits.max_link_bytes:
            problems.append(f"{what} {str(url)[:80]!r}")
    texts = [entry.entry_uid, entry.title, entry.summary, entry.content, *entry.categories, *entry.warnings,
             *(a.get(k) for a in entry.authors for k in ("name", "email")),
             *(e.get("type") for e in entry.enclosures)]
    if any(t is not None and (not isinstance(t, str) or xml_safe(t) != t) for t in texts):
        problems.append("a character XML forbids")
    for when in (entry.published, entry.updated):
        match = _DATE.fullmatch(when) if isinstance(when, str) else None
        if when is not None and not (match and 1970 <= int(match.group(1)) <= 2100):
            problems.append(f"date {when!r}")
    if len(entry.title or "") > TITLE_CHARS or len(entry.summary or "") > SUMMARY_CHARS:
        problems.append("title or summary too long")
    if utf8_size(entry.content) > limits.max_content_bytes:
        problems.append(f"content of {utf8_size(entry.content):,} bytes")
    if len(entry.categories) > MAX_CATEGORIES or len(entry.authors) > MAX_AUTHORS \
            or len(entry.enclosures) > MAX_ENCLOSURES:
        problems.append("too many categories, authors or enclosures")
    if stored_size(entry) >= MAX_STORED_BYTES:
        problems.append(f"stored size of {stored_size(entry):,} bytes")
    return problems

"""The HTML index: recent entries, readable on a phone and on a desktop. Everything is escaped;
only plain-text summaries appear, so nothing a feed sends can become live markup here, and every
link to elsewhere passes the URL policy (render.clean)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape as _escape
from urllib.parse import quote

from starfeed.formats import FORMATS
from starfeed.model import Entry
from starfeed.parse.normalize import text_of
from starfeed.render import clean

log = logging.getLogger(__name__)

SUMMARY_CHARS = 280

_STYLE = """
:root{color-scheme:light dark;--fg:#1d1d1f;--muted:#6e6e73;--line:#d2d2d7;--accent:#0a66c2}
@media(prefers-color-scheme:dark){:root{--fg:#f5f5f7;--muted:#a1a1a6;--line:#3a3a3c;--accent:#5aa9ff}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,sans-serif;color:var(--fg)}
main{max-width:46rem;margin:0 auto;padding:1rem}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:baseline;border-bottom:1px solid var(--line)}
header h1{margin:.5rem 0;font-size:1.5rem}nav a{margin-right:.75rem}
nav.collections{flex-basis:100%;font-size:.9rem;color:var(--muted);padding-bottom:.5rem}
a{color:var(--accent)}ol{list-style:none;margin:0;padding:0}
li{padding:.9rem 0;border-bottom:1px solid var(--line)}
li h2{font-size:1.05rem;margin:0 0 .2rem;overflow-wrap:anywhere}
.meta{color:var(--muted);font-size:.85rem}p{margin:.3rem 0 0;overflow-wrap:anywhere}
.empty{color:var(--muted);padding:2rem 0}
.notice{border:1px solid #d33;border-radius:.4rem;padding:.6rem .8rem;margin:.8rem 0}
nav.filters a[aria-current]{font-weight:600;text-decoration:none;color:var(--fg)}
"""


@dataclass(frozen=True)
class IndexPage:
    title: str
    feed_path: str  # e.g. "/feed": the page links its file in every format
    collections: dict[str, int] = field(default_factory=dict)  # name -> sources, for navigation
    rule_sets: tuple[str, ...] = ()  # the named rule sets, each a feed of its own (docs/design.md#rule-sets)
    notice: str | None = None  # something the reader should know, e.g. GitHub polling stopped
    filters: tuple[tuple[str, str, bool], ...] = ()  # (label, href, current): e.g. activity tiers


def escape(value: object) -> str:
    """Escaped, and without the characters no HTML or XML document may hold."""
    return _escape(clean.text(value, clean.TEXT) or "")


def render_index(page: IndexPage, entries: list[Entry], source_titles: Mapping[str, str | clean.Origin],
                 built_at_text: str) -> bytes:
    """source_titles names each entry's source by feed_id: a title, or an Origin, whose site the
    name links to."""
    items = "\n".join(filter(None, (_item(page, e, source_titles, built_at_text) for e in entries)))
    if not items:
        items = '<li class="empty">No entries yet. Add a source with <code>starfeed source add URL</code>.</li>'
    feed = escape(page.feed_path)
    alternates = "\n".join(f'<link rel="alternate" type="{f.media_type}" title="{escape(f.title)}" '
                           f'href="{f.file(feed)}">' for f in FORMATS)
    formats = "".join(f'<a href="{f.file(feed)}">{escape(f.title)}</a>' for f in FORMATS)
    navs = _collections_nav(page) + _rule_sets_nav(page) + _filters_nav(page)
    html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(page.title)}</title>
{alternates}
<style>{_STYLE}</style></head>
<body><main>
<header><h1>{escape(page.title)}</h1>
<nav>{formats}\
<a href="/opml.xml">OPML</a><a href="/stats">Stats</a></nav>{navs}</header>
{f'<p class="notice" role="alert">{escape(page.notice)}</p>' if page.notice else ""}
<ol>
{items}
</ol>
<p class="meta">Built {escape(built_at_text)} by starfeed.</p>
</main></body></html>
"""
    return html.encode()


def _collections_nav(page: IndexPage) -> str:
    if not page.collections:
        return ""
    links = "".join(f'<a href="/c/{escape(quote(str(name), safe=""))}/">{escape(name)} '
                    f'<small>{escape(count)}</small></a>' for name, count in page.collections.items())
    return f'<nav class="collections"><a href="/">all</a> {links}</nav>'


def _rule_sets_nav(page: IndexPage) -> str:
    if not page.rule_sets:
        return ""
    links = "".join(f'<a href="/r/{escape(quote(str(name), safe=""))}/">{escape(name)}</a>'
                    for name in page.rule_sets)
    return f'<nav class="collections">Rule sets: {links}</nav>'


def github_notice(pause: dict | None) -> str | None:
    """Why GitHub polling is stopped or paused (the hosts table's pause), for pages people read."""
    if pause is None:
        return None
    if pause["stopped"]:
        return f"GitHub polling has stopped. {pause['reason']}"
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(pause["until"]))
    return f"GitHub polling is paused until {when}. {pause['reason']}"


def _filters_nav(page: IndexPage) -> str:
    if not page.filters:
        return ""
    links = "".join(f'<a href="{escape(href)}"{" aria-current=page" if current else ""}>{escape(label)}</a>'
                    for label, href, current in page.filters)
    return f'<nav class="collections filters">Activity: {links}</nav>'


def _source(named: object) -> str:
    """Where an entry came from: its source's title, linked to the source's site when it has a
    safe one."""
    if not isinstance(named, clean.Origin):
        return escape(named)
    site = clean.link(named.site_url)
    return f'<a href="{escape(site)}">{escape(named.title)}</a>' if site else escape(named.title)


def _item(page: IndexPage, raw: Entry, source_titles: Mapping[str, str | clean.Origin],
          now_text: str) -> str | None:
    """One entry's list item; None (and a log line) when even its cleaned copy cannot be shown."""
    try:
        entry = clean.entry(raw, now_text)
        if entry is None:
            raise ValueError("no usable id")
        title = escape(entry.title or entry.canonical_link or "(untitled)")
        heading = f'<a href="{escape(entry.canonical_link)}">{title}</a>' if entry.canonical_link else title
        summary = entry.summary or text_of(entry.content) or ""
        if len(summary) > SUMMARY_CHARS:
            summary = summary[:SUMMARY_CHARS].rsplit(" ", 1)[0] + "…"
        when, given = escape(entry.sort_time), clean.given_date(entry)
        source = _source(source_titles.get(entry.feed_id, entry.feed_id))
        # Ordered by when it was first seen, the date its source gave it is said beside.
        dated = f' · dated {escape(given).replace("T", " ").rstrip("Z")} UTC by its source' if given else ""
        return (f'<li><h2>{heading}</h2><div class="meta">{source} · '
                f'<time datetime="{when}">{when.replace("T", " ").rstrip("Z")} UTC</time>{dated}</div>'
                + (f"<p>{escape(summary)}</p>" if summary else "") + "</li>")
    except Exception:  # one entry never costs the page
        log.warning("renderer: %s entry %r cannot be shown on the index; left out", page.feed_path,
                    getattr(raw, "entry_uid", None), exc_info=True)
        return None

"""Every file of ../shared/corpora (feedparser's own corpus, real feeds, hostile inputs) goes
through the ingest code path that the fetcher and `starfeed inspect` share, then through every
renderer: nothing crashes, every outcome is a feed or a recorded error, every entry fits storage
(parse.fit.misfits), and nothing produced holds live markup."""

from __future__ import annotations

import json
import time
from pathlib import Path

import lxml.html
import pytest
from lxml import etree

from starfeed.formats import BY_NAME
from starfeed.model import Source
from starfeed.parse.fit import misfits
from starfeed.parse.ingest import ingest, read_feed
from starfeed.parse.text import xml_safe
from starfeed.render.feeds import FeedMeta, render
from starfeed.render.html import IndexPage, render_index
from starfeed.settings import Settings
from starfeed.urlpolicy import safe_link

from conftest import shared_corpus

# Sweeps of the shared corpora: `make test` runs them, `make test-fast` does not.
pytestmark = pytest.mark.slow

NOW = time.time()
# Keep every entry, however old, so that all of them reach the checks.
SETTINGS = Settings(max_article_age_days=1_000_000)
META = FeedMeta("feed", "starfeed", "corpus", "https://feeds.test/", "https://feeds.test")
HTML_ELEMENTS = ("description", "{http://purl.org/rss/1.0/modules/content/}encoded",
                 "{http://www.w3.org/2005/Atom}content")
URL_ATTRIBUTES = ("href", "src", "action", "formaction", "background", "poster", "xlink:href")


def corpus_files(*folders: str) -> list[Path]:
    files = []
    for folder in folders:
        root = shared_corpus(folder)
        files += sorted(p for p in root.rglob("*") if p.is_file()
                        and p.suffix not in (".txt", ".tsv") and not p.name.startswith("LICENSE"))
    return files


def assert_inert(html: str | None, where: str) -> None:
    if not html:
        return
    document = lxml.html.fragment_fromstring(html, create_parent="div")
    for element in document.iter():
        if not isinstance(element.tag, str):
            continue
        assert element.tag not in ("script", "iframe", "object", "embed", "frame", "style"), where
        for name, value in element.attrib.items():
            assert not name.lower().startswith("on"), (where, name)
            if name.lower() in URL_ATTRIBUTES:
                scheme = value.strip().lower().replace("\t", "").replace("\n", "")
                assert not scheme.startswith(("javascript:", "data:", "vbscript:")), (where, value)


def assert_fits(ingested, where: str) -> None:
    """Whatever the input (docs/design.md#failure-isolation), a recorded outcome, and entries that
    fit storage and render."""
    assert ingested.error or ingested.format, where
    assert ingested.error is None or xml_safe(ingested.error) == ingested.error, where
    assert ingested.title is None or xml_safe(ingested.title) == ingested.title, where
    assert ingested.link is None or safe_link(ingested.link) == ingested.link, where
    for entry in ingested.entries:
        assert misfits(entry, SETTINGS) == [], (where, entry.entry_uid[:80])


def check(path: Path) -> int:
    source = Source(source_id="corpus", url="https://example.org/feed", created_at=0)
    content_type = "application/feed+json" if path.suffix == ".json" else None
    ingested = ingest(read_feed, path.read_bytes(), "https://example.org/feed", content_type, source, NOW, SETTINGS)
    assert_fits(ingested, path.name)
    for entry in ingested.entries:
        assert_inert(entry.content, f"{path.name}: content")
    for fmt in BY_NAME:
        document = render(fmt, META, ingested.entries, NOW)
        if fmt == "json":
            for item in json.loads(document)["items"]:
                assert_inert(item.get("content_html"), f"{path.name}: json")
        else:
            # What a reader renders as HTML: RSS description and content:encoded, Atom html.
            root = etree.fromstring(document)
            for element in root.iter(*HTML_ELEMENTS):
                if element.tag.endswith("}content") and element.get("type") not in ("html", "xhtml"):
                    continue
                assert_inert(element.text, f"{path.name}: {fmt} {element.tag}")
    page = render_index(IndexPage("corpus", "/feed"), ingested.entries, {}, "now").decode()
    assert_inert(page.split("<body>", 1)[1], f"{path.name}: index")
    return len(ingested.entries)


@pytest.mark.parametrize("folder", ["feedparser-tests", "real-feeds", "hostile"])
def test_every_corpus_file_ingests_and_renders_inert(folder):
    files = corpus_files(folder)
    entries = sum(check(path) for path in files)
    assert files and entries


def test_the_sanitize_cases_reach_the_checks():
    files = corpus_files("feedparser-tests/wellformed/sanitize")
    assert len(files) > 700
    assert sum(check(path) for path in files) > 500  # some cases test channel fields only


def test_json_feeds_of_the_real_feed_corpus_are_read():
    files = [p for p in corpus_files("real-feeds") if p.suffix == ".json"]
    assert len(files) >= 10
    for path in files:
        source = Source(source_id="j", url="https://example.org/feed.json", created_at=0)
        ingested = ingest(read_feed, path.read_bytes(), "https://example.org/feed.json", "application/feed+json",
                          source, NOW, SETTINGS)
        if ingested.error:
            assert "not a feed" in ingested.error, (path.name, ingested.error)
        else:
            assert ingested.format.startswith("json1"), path.name


def test_inputs_that_make_feedparser_raise_are_recorded_errors():
    """NOTES.md: four files of hostile/generated make feedparser.parse() raise; ingest records
    each as an error (or reads it), the same way for the fetcher and `starfeed inspect`."""
    source = Source(source_id="h", url="https://example.org/feed", created_at=0)
    for path in corpus_files("hostile/generated"):
        body = path.read_bytes()
        for content_type in (None, "application/rss+xml", "application/feed+json", "text/html"):
            for cut in (len(body), len(body) // 2, 7):  # whole, truncated, a stub
                ingested = ingest(read_feed, body[:cut], "https://example.org/feed", content_type, source, NOW,
                                  SETTINGS)
                assert_fits(ingested, f"{path.name} {content_type} {cut}")

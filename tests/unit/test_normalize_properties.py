"""Properties of entry normalization over generated input (docs/design.md#entries): feedparser-shaped entry
dicts whose every member may be of any type, with text that holds control characters, lone
surrogates, markup, entities and megabytes. Whatever comes in, normalization does not raise and
every entry fits storage and rendering (parse.fit.misfits); the same input gives the same uid."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from starfeed.formats import BY_NAME
from starfeed.model import Source
from starfeed.parse.fit import misfits
from starfeed.parse.ingest import ingest, read_feed
from starfeed.parse.normalize import normalize_entries, struct_to_rfc3339
from starfeed.parse.text import xml_safe
from starfeed.render.feeds import FeedMeta, render
from starfeed.settings import Settings

# Hundreds of generated examples each: `make test` runs them, `make test-fast` does not.
pytestmark = pytest.mark.slow

LIMITS = Settings(max_article_age_days=1_000_000)
NOW = 1_795_262_400.0
FEED = "https://feed.example/feed.xml"
META = FeedMeta("feed", "starfeed", "properties", "https://feeds.test/", "https://feeds.test")
QUICK = settings(deadline=None, max_examples=400, suppress_health_check=list(HealthCheck))

TRICKY = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\ud800", "\udfff", "\ufffe", "\uffff",
          "\u2028", "\U0001f600", "é", " ", "\t", "\n", "<", ">", "&", '"', "'", "\\", "#", "/", ":", "%"]
FRAGMENTS = ["<p>", "</p>", "<script>alert(1)</script>", "<a href='javascript:x'>", "</a>", "&amp;", "&#27;",
             "&#x1;", "&#12;", "&#xD800;", "&#0;", "&#1114112;", "&#99999999999;", "&bogus;", "&", "<!--", "-->",
             "<![CDATA[", "]]>", "<img src=x onerror=alert(1)>", "<div", "\"", "&lt;", "word ", "\x1b", "\ud83d"]
characters = st.one_of(st.characters(exclude_categories=()), st.sampled_from(TRICKY))
short_text = st.text(characters, max_size=40)
markup = st.lists(st.one_of(st.sampled_from(FRAGMENTS), short_text), max_size=12).map("".join)
# Long text without generating it character by character: a piece repeated to up to 300,000.
huge = st.builds(lambda piece, size: (piece * (size // max(len(piece), 1) + 1))[:size],
                 st.one_of(st.sampled_from(FRAGMENTS), short_text), st.integers(0, 300_000))
text = st.one_of(short_text, markup, huge)
urls = st.one_of(
    text,
    st.sampled_from(["javascript:alert(1)", " JaVaScRiPt:alert(1)", "java\tscript:x", "data:text/html,x",
                     "vbscript:x", "mailto:a@b.example", "//other.example/p", "/relative#frag", "?q=1", "#top",
                     "http://[::1", "http://[::1]:99999/", "https://EXAMPLE.org/A#F", "http:///nohost",
                     "https://user:pass@host.example/", "ftp://x.example/", "https://ex.example/a b", ""]),
    st.builds(lambda n: "https://long.example/" + "a" * n, st.integers(1900, 2100)),
    st.builds(lambda n: "https://long.example/" + "é" * n, st.integers(980, 1100)),
)
ints = st.one_of(st.integers(-10**30, 10**30), st.integers(-5, 3000))
struct_times = st.one_of(
    st.tuples(*[ints] * 9),
    st.tuples(st.integers(1960, 2110), st.integers(0, 13), st.integers(0, 32), st.integers(-1, 25),
              st.integers(-1, 61), st.integers(-1, 61), st.integers(0, 6), st.integers(0, 366), st.integers(-1, 1)),
    st.builds(time.gmtime, st.integers(-10**11, 10**11)),
    st.lists(ints, max_size=10),
)
scalars = st.one_of(st.none(), st.booleans(), ints, st.floats(), short_text)
anything = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(short_text, inner, max_size=4)),
                        max_leaves=10)


def either(typed):
    """A member of the expected shape, mostly; of any type, sometimes."""
    return st.one_of(typed, typed, typed, anything)


def dicts(**members):
    return st.fixed_dictionaries({}, optional={name: either(s) for name, s in members.items()})


entries = dicts(
    id=st.one_of(text, st.builds(lambda n: "g" * n, st.one_of(st.integers(495, 520), st.integers(1000, 1100)))),
    link=urls, title=text, summary=text, author=text,
    content=st.lists(dicts(value=text, type=short_text), max_size=3),
    published_parsed=struct_times, updated_parsed=struct_times,
    authors=st.lists(dicts(name=text, email=text, href=urls), max_size=15),
    tags=st.one_of(st.lists(dicts(term=text), max_size=8),
                   st.builds(lambda n: [{"term": f"t{i}"} for i in range(n)], st.integers(0, 3000))),
    enclosures=st.lists(dicts(href=urls, type=text, length=st.one_of(ints, short_text, st.just("9" * 5000))),
                        max_size=15),
)


def assert_fits(entry) -> None:
    assert misfits(entry, LIMITS) == []
    assert entry.canonical_link is None or entry.canonical_link.startswith(("http://", "https://"))
    assert all(e["url"].startswith(("http://", "https://")) for e in entry.enclosures)
    assert all(json.dumps(w) for w in entry.warnings)


@QUICK
@given(entries)
def test_any_entry_normalizes_to_one_that_fits_and_its_uid_is_stable(raw):
    entry, = normalize_entries([raw], "src", FEED, NOW, LIMITS)
    assert_fits(entry)
    again, = normalize_entries([raw], "src", FEED, NOW, LIMITS)
    assert again.entry_uid == entry.entry_uid and again.content_hash == entry.content_hash


@settings(QUICK, max_examples=100)
@given(st.lists(entries, max_size=5), st.integers(0, 3))
def test_a_feed_of_such_entries_has_distinct_fitting_uids(raws, repeats):
    # Repeated items, and repeated GUIDs on items that differ.
    raws = raws + raws[:repeats] + [{**raw, "title": "another"} for raw in raws[:repeats]]
    got = normalize_entries(raws, "src", FEED, NOW, LIMITS)
    assert len({e.entry_uid for e in got}) == len(got) <= len(raws)
    for entry in got:
        assert_fits(entry)


@settings(QUICK, max_examples=100)
@given(entries)
def test_fitted_entries_render_in_every_format(raw):
    entry, = normalize_entries([raw], "src", FEED, NOW, LIMITS)
    for fmt in BY_NAME:
        assert render(fmt, META, [entry], NOW)


@settings(QUICK, max_examples=1000)
@given(st.one_of(struct_times, anything))
def test_dates_are_in_range_or_missing_and_never_raise(struct):
    got = struct_to_rfc3339(struct)
    assert got is None or "1970-01-01T00:00:00Z" <= got <= "2100-12-31T23:59:59Z"


json_items = st.one_of(anything, st.fixed_dictionaries({}, optional={
    name: either(s) for name, s in {
        "id": st.one_of(short_text, ints), "url": urls, "external_url": urls, "title": text,
        "content_html": markup, "content_text": text, "summary": text,
        "date_published": st.one_of(st.sampled_from(["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
                                                      "2026-11-20T08:00:00+01:00", "1969-12-31T23:59:59Z"]),
                                    short_text),
        "date_modified": short_text,
        "authors": st.lists(st.one_of(anything, st.fixed_dictionaries({"name": short_text, "url": urls})), max_size=3),
        "author": st.one_of(anything, st.fixed_dictionaries({"name": short_text, "url": urls})),
        "tags": st.lists(st.one_of(short_text, anything), max_size=5),
        "attachments": st.lists(st.one_of(anything, st.fixed_dictionaries(
            {"url": urls}, optional={"mime_type": anything, "size_in_bytes": anything})), max_size=3),
    }.items()}))


@settings(QUICK, max_examples=300)
@given(st.fixed_dictionaries({"version": st.sampled_from(["https://jsonfeed.org/version/1.1",
                                                          "https://jsonfeed.org/version/1"]),
                               "items": st.lists(json_items, max_size=5)},
                              optional={"title": anything, "home_page_url": either(urls),
                                        "feed_url": either(urls), "description": anything}))
def test_a_json_feed_of_any_member_types_ingests(document):
    body = json.dumps(document, allow_nan=True).encode("utf-8", "surrogatepass")
    ingested = ingest(read_feed, body, FEED, "application/feed+json", Source("s", FEED), NOW, LIMITS)
    assert ingested.error is None, ingested.error
    assert ingested.title is None or xml_safe(ingested.title) == ingested.title
    assert ingested.link is None or ingested.link.startswith(("http://", "https://"))
    objects = sum(isinstance(item, dict) for item in document["items"])
    assert min(objects, 1) <= ingested.parsed_count <= objects  # only exact repeats merge
    for entry in ingested.entries:
        assert_fits(entry)


PREFIXES = [b"", b"<?xml version='1.0'?><rss version='2.0'><channel><item><title>", b"{\"version\": ",
            b"<feed xmlns='http://www.w3.org/2005/Atom'><entry><id>", b"<!doctype html><html><body><article>",
            b"\xef\xbb\xbf<rdf:RDF>", b"\xff\xfe<\x00r\x00s\x00s\x00"]


@settings(QUICK, max_examples=300)
@given(st.sampled_from(PREFIXES), st.binary(max_size=300),
       st.sampled_from([None, "", "application/rss+xml", "application/feed+json", "text/html; charset=x-bogus",
                        "application/json", "text/xml; charset=utf-16"]),
       st.sampled_from(["feed", "website"]))
def test_ingest_never_raises_on_any_bytes(prefix, tail, content_type, kind):
    source = Source("s", FEED, kind=kind)
    ingested = ingest(read_feed, prefix + tail, FEED, content_type, source, NOW, LIMITS)
    assert ingested.error is None or (ingested.error and xml_safe(ingested.error) == ingested.error)
    for entry in ingested.entries:
        assert_fits(entry)

"""Whatever the store holds (docs/design.md#failure-isolation), every document the renderer writes is well-formed, links
only to http(s) (mailto where a format has an address), and one bad entry costs itself only."""

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from starfeed.formats import BY_NAME
from starfeed.kinds.registry import FEED
from starfeed.model import Entry, Source
from starfeed.render import feeds
from starfeed.render.feeds import FeedMeta, render
from starfeed.render.html import IndexPage, render_index
from starfeed.render.opml import published_opml, subscriptions_opml

BUILT = 1_795_262_400.0
BASE = "https://feeds.test"
META = FeedMeta("s/abc/feed", "A\x00 title\x07", "From\x0b here", "javascript:alert(1)", BASE)
BAD_URLS = ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "data:text/html,<b>",
            "vbscript:msgbox", "java\tscript:alert(1)", "//evil.example/x", "http://", "https://a b/"]
HOSTILE_TEXT = ["\x00\x01\x08\x0b\x0c\x1f", "\ud800 lone \udfff", "\ufffe\uffff", "a]]>b", "<![CDATA[x]]>",
                "&amp; & <b>", "x" * 300_000]
DATES = ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "not a date", "", "2026-13-45T99:99:99Z",
         "2026-11-20T09:00:00+14:00", "2026-11-20T09:00:00Z"]
XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
SAFE = ("http://", "https://")

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                           lambda inner: (st.lists(inner, max_size=3)
                                          | st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                           max_leaves=8)
texts = st.one_of(st.none(), st.text(), st.sampled_from(HOSTILE_TEXT + BAD_URLS), st.integers())
links = st.one_of(st.none(), st.sampled_from(BAD_URLS + ["https://example.org/ok", "mailto:a@b.example"]), st.text())
people = st.lists(st.one_of(json_values, st.fixed_dictionaries({"name": texts, "email": texts, "uri": links})),
                  max_size=3)
attachments = st.lists(st.one_of(json_values, st.fixed_dictionaries(
    {"url": links, "length": json_values, "type": st.one_of(texts, st.just("audio/mpeg"))})), max_size=3)
hostile_entries = st.builds(
    Entry, entry_uid=st.one_of(texts, st.just("urn:ok")), feed_id=st.just("abc"), canonical_link=links,
    title=texts, summary=texts, content=texts, authors=st.one_of(people, json_values),
    categories=st.one_of(st.lists(json_values, max_size=3), json_values),
    enclosures=st.one_of(attachments, json_values),
    published=st.one_of(st.sampled_from(DATES), texts), updated=st.one_of(st.sampled_from(DATES), texts),
    first_seen=st.one_of(st.sampled_from(DATES), texts), last_seen=st.one_of(st.sampled_from(DATES), texts))


def links_of(fmt: str, document: bytes) -> list[str]:
    """Every URL a reader could follow in the document: hrefs, enclosure and link elements."""
    if fmt == "json":
        found: list[str] = []

        def walk(value, key=None):
            if isinstance(value, dict):
                for k, v in value.items():
                    walk(v, k)
            elif isinstance(value, list):
                for v in value:
                    walk(v, key)
            elif key in ("url", "home_page_url", "feed_url", "external_url"):
                found.append(value)

        walk(json.loads(document))
        return found
    root = etree.fromstring(document)  # strict: raises on anything not well-formed
    urls = [v for e in root.iter() for k, v in e.attrib.items() if k in ("href", "url")]
    urls += [e.text for e in root.iter() if etree.QName(e).localname in ("link", "uri", "comments") and e.text]
    return urls


def assert_safe(fmt: str, document: bytes) -> None:
    assert not XML_ILLEGAL.search(document.decode("utf-8"))
    for url in links_of(fmt, document):
        assert url.startswith(SAFE) or url.startswith("mailto:"), url


def html_items(page: bytes) -> etree._Element:
    """The index's entry list, parsed as XML: every element we write there is closed."""
    text = page.decode("utf-8")
    assert not XML_ILLEGAL.search(text)
    return etree.fromstring(text[text.index("<ol>"):text.index("</ol>") + 5])


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile_entries, max_size=4))
def test_any_stored_entries_render_well_formed_and_safe(entries):
    for fmt in BY_NAME:
        assert_safe(fmt, render(fmt, META, entries, BUILT))
    page = render_index(IndexPage("t\x00", "/feed"), entries, {"abc": "src\x01"}, "2026-11-21T00:00:00Z")
    for href in html_items(page).xpath("//@href"):
        assert href.startswith(SAFE), href


def good(n: int, **fields) -> Entry:
    return Entry(**{"entry_uid": f"urn:{n}", "feed_id": "abc", "canonical_link": f"https://example.org/{n}",
                    "title": f"Post {n}", "first_seen": "2026-11-20T00:00:00Z",
                    "last_seen": "2026-11-21T00:00:00Z", **fields})


WEIRD = [
    good(1, title="bell\x07 nul\x00 \ud83d lone", summary="\ufffe", content="<p>a]]>b</p>"),
    good(2, published="0001-01-01T00:00:00Z", updated="9999-12-31T23:59:59Z"),
    good(3, published="yesterday", first_seen="garbage", last_seen=None),
    good(4, title=None, summary=None, canonical_link=None, content=None),
    good(5, authors="Alice", categories="tech", enclosures={"url": "https://x"}),
    good(6, authors=[1, None, "Bob", {"name": 5, "uri": "javascript:alert(1)"}, {"name": "Eve", "email": "e@x.example",
                                                                                    "uri": "mailto:e@x.example"}],
         categories=[{"a": 1}, None, "ok", 7], enclosures=[{"url": 5}, "x", {"url": "javascript:alert(1)"},
                                                           {"url": "https://x/a.mp3", "length": "n", "type": "<b>"}]),
    good(7, canonical_link="javascript:alert(document.cookie)", title="x" * 5_000_000),
    good(8, canonical_link="data:text/html;base64,PHNjcmlwdD4="),
    Entry(entry_uid=None, feed_id="abc"),  # no id at all: left out
    Entry(entry_uid="\x00\x01", feed_id="abc"),  # nothing left of its id: left out
]


@pytest.mark.parametrize("fmt", list(BY_NAME))
def test_hostile_examples_render_and_keep_every_usable_entry(fmt):
    document = render(fmt, META, WEIRD, BUILT)
    assert_safe(fmt, document)
    ids = ([i["id"] for i in json.loads(document)["items"]] if fmt == "json" else
           [e.text for e in etree.fromstring(document).iter("{*}id", "guid")])
    expected = [f"urn:{n}" for n in range(1, 9)]
    if fmt == "atom":  # an atom:id must be a URI, and "urn:1" names no namespace: Atom's is derived
        expected = [feeds.atom_id(good(n)) for n in range(1, 9)]
    assert [i for i in ids if i.startswith("urn:")] == expected
    assert len(document) < 3_000_000  # a 5 MB title is cut to a line
    text = document.decode()
    assert "javascript:" not in text.lower() and "data:text" not in text
    assert "A title" in text and "bell nul" in text


def test_the_channel_link_falls_back_to_the_deployment_never_to_a_script():
    for fmt in BY_NAME:
        text = render(fmt, META, [], BUILT).decode()
        assert "javascript" not in text
    assert json.loads(render("json", META, [], BUILT))["home_page_url"] == BASE + "/"
    rss = etree.fromstring(render("rss", META, [], BUILT))
    assert rss.findtext("channel/link") == BASE + "/"


def test_an_entry_the_writer_refuses_is_left_out_and_the_rest_published(monkeypatch, caplog):
    fill = feeds._fill

    def refuse_two(fe, entry, fmt):
        if entry.entry_uid == "urn:2":
            raise ValueError("refused")
        fill(fe, entry, fmt)

    monkeypatch.setattr(feeds, "_fill", refuse_two)
    parsed = etree.fromstring(render("atom", META, [good(1), good(2), good(3)], BUILT))
    entry_ids = [e.text for e in parsed.iter("{*}id")][1:]  # [0]: the feed's
    assert entry_ids == [feeds.atom_id(good(1)), feeds.atom_id(good(3))]
    assert "urn:2" in caplog.text and "s/abc/feed" in caplog.text


def test_an_entry_that_breaks_serialization_is_found_and_left_out(monkeypatch, caplog):
    write = feeds.write_json

    def fragile(meta, entries, built_at):
        if any(e.entry_uid == "urn:2" for e in entries):
            raise OverflowError("cannot write")
        return write(meta, entries, built_at)

    monkeypatch.setattr(feeds, "write_json", fragile)
    items = json.loads(render("json", META, [good(1), good(2), good(3)], BUILT))["items"]
    assert [i["id"] for i in items] == ["urn:1", "urn:3"]
    assert "urn:2" in caplog.text


def test_the_index_shows_safe_links_only_and_skips_what_it_cannot_show():
    page = render_index(IndexPage("starfeed", "/feed", {"a b/../x": 1}), WEIRD,
                        {"abc": "https://u:p@example.org/feed?token=s3cret"}, "2026-11-21T00:00:00Z")
    items = html_items(page)
    assert len(items) == 8
    hrefs = items.xpath("//@href")
    assert hrefs and all(h.startswith("https://example.org/") for h in hrefs)
    text = page.decode()
    assert "javascript:" not in text and "data:text" not in text
    assert 'href="/c/a%20b%2F..%2Fx/"' in text


def source(n: int, **fields) -> Source:
    return Source(**{"source_id": f"s{n}", "url": f"https://example.org/{n}.xml", "status": "ok", **fields})


def test_opml_files_are_well_formed_safe_and_redacted():
    sources = [source(1, title="One\x00\x1f", site_url="javascript:alert(1)", collections=["t\x01ech"]),
               source(2, url="https://user:pw@example.org/f?token=s3cret&page=2", title=None,
                      site_url="https://example.org/"),
               source(3, enabled=False, title="Disabled"),
               source(4, status="new", title="Never fetched"),
               source(5, url="javascript:alert(1)", title="Stored before the policy")]
    published = published_opml(BASE, [s for s in sources if FEED.published(s)], {"tech": 1, "\x00": 1}, BUILT)
    subscriptions = subscriptions_opml([FEED.subscription(s, "https://feeds.example") for s in sources if s.enabled],
                                       BUILT)
    for document in (published, subscriptions):
        root = etree.fromstring(document)
        text = document.decode()
        assert "s3cret" not in text and "user:pw" not in text and "javascript:" not in text
        for outline in root.iter("outline"):
            for name in ("xmlUrl", "htmlUrl"):
                assert outline.get(name) is None or outline.get(name).startswith(SAFE)
    titles = {o.get("title") for o in etree.fromstring(published).iter("outline")}
    assert "One" in titles and "Disabled" not in titles and "Never fetched" not in titles
    assert "https://example.org/f?token=REDACTED&page=2" in titles  # the title falls back, redacted
    one = next(o for o in etree.fromstring(published).iter("outline") if o.get("title") == "One (RSS)")
    assert one.get("htmlUrl") == f"{BASE}/s/s1/feed"
    subscribed = {o.get("xmlUrl") for o in etree.fromstring(subscriptions).iter("outline")} - {None}
    assert "https://example.org/f?token=REDACTED&page=2" in subscribed
    assert "https://example.org/3.xml" not in subscribed and len(subscribed) == 3  # disabled: unpublished

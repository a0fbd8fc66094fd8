"""Fidelity (docs/design.md#feed-content), as golden files: each feed in tests/data/render goes through the fetcher's
ingest and the renderer as its own feed would (s/<id>/feed), and all of them together as the
aggregate; every output must equal the expected file beside its input (<case>.expected.xml,
.atom, .json; aggregate.expected.*). Then each trait the inputs were written for is asserted on
its own, so that a regenerated golden file cannot silently lose one.

To regenerate after a deliberate change, read the diff, then:
    STARFEED_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_render_golden.py
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from lxml import etree

from starfeed import __version__
from starfeed.formats import BY_NAME
from starfeed.model import Entry, Source
from starfeed.parse.ingest import ingest, read_feed
from starfeed.render import choose, clean
from starfeed.render.feeds import FeedMeta, render
from starfeed.settings import Settings

DATA = Path(__file__).resolve().parent.parent / "data" / "render"
NOW = 1_795_262_400.0  # 2026-11-21T12:00:00Z: every entry's first sighting
BUILT = NOW + 3600  # the render
BASE = "https://feeds.test"
SETTINGS = Settings(max_article_age_days=1_000_000)
UPDATE = os.environ.get("STARFEED_UPDATE_GOLDEN") == "1"
# Where each input is fetched from: relative URLs without xml:base resolve against it.
URLS = {"podcast.xml": "https://podcast.example.com/feeds/podcast.xml",
        "essay.atom": "https://essais.example.fr/feed.atom",
        "notes.json": "https://notizen.example.de/feed.json"}
A = "{http://www.w3.org/2005/Atom}"
DC = "{http://purl.org/dc/elements/1.1/}"
CONTENT = "{http://purl.org/rss/1.0/modules/content/}encoded"


@dataclass
class Case:
    name: str
    source: Source
    entries: list[Entry]


def load(name: str) -> Case:
    path = DATA / name
    source_id = path.stem
    # Not a first fetch: the first-poll filters (undated, older than the subscription) stay out.
    source = Source(source_id=source_id, url=URLS[name], created_at=0, last_success_at=1.0)
    content_type = "application/feed+json" if path.suffix == ".json" else None
    ingested = ingest(read_feed, path.read_bytes(), URLS[name], content_type, source, NOW, SETTINGS)
    assert ingested.error is None, ingested.error
    source.title, source.site_url, source.language = ingested.title, ingested.link, ingested.language
    return Case(name, source, ingested.entries)


def cases() -> list[Case]:
    return [load(name) for name in URLS]


def source_feed(case: Case, fmt: str) -> bytes:
    """As render.job renders a source's own feed."""
    source = case.source
    meta = FeedMeta(f"s/{source.source_id}/feed", source.title, f"Entries from {source.url}",
                    source.site_url, BASE, language=source.language,
                    origins={source.source_id: clean.origin(source, subscribable=True, site=source.site_url)})
    return render(fmt, meta, choose.newest_first(case.entries), BUILT)


def aggregate(fmt: str) -> bytes:
    """As render.job renders the aggregate: merged, newest first, every item attributed."""
    loaded = cases()
    entries = choose.for_readers([e for case in loaded for e in case.entries], 50)
    meta = FeedMeta("feed", "starfeed", "Everything starfeed follows", BASE + "/", BASE,
                    origins={case.source.source_id:
                             clean.origin(case.source, subscribable=True, site=case.source.site_url)
                             for case in loaded},
                    attribute=True)
    return render(fmt, meta, entries, BUILT)


def outputs() -> list[tuple[str, str]]:
    return [(name, fmt) for name in [*URLS, "aggregate"] for fmt in BY_NAME]


def rendered(name: str, fmt: str) -> str:
    """The document, with starfeed's version (the generator's) as a placeholder: a release does
    not change what these files are about."""
    document = (aggregate(fmt) if name == "aggregate" else source_feed(load(name), fmt)).decode()
    return document.replace(f'version="{__version__}"', 'version="VERSION"').replace(
        f"starfeed {__version__}<", "starfeed VERSION<")


def expected_path(name: str, fmt: str) -> Path:
    return DATA / f"{Path(name).stem}.expected.{BY_NAME[fmt].extension}"


@pytest.mark.parametrize("name, fmt", outputs(), ids=[f"{n}-{f}" for n, f in outputs()])
def test_output_equals_the_golden_file(name, fmt):
    document = rendered(name, fmt)
    path = expected_path(name, fmt)
    if UPDATE:
        path.write_text(document, encoding="utf-8")
    assert path.exists(), f"{path.name} is missing: run with STARFEED_UPDATE_GOLDEN=1 and read it"
    assert document == path.read_text(encoding="utf-8")


def golden(name: str, fmt: str):
    """A golden file, parsed: the traits below are asserted on what is committed."""
    data = expected_path(name, fmt).read_bytes()
    return json.loads(data) if fmt == "json" else etree.fromstring(data)


def rss_item(name: str, guid: str):
    return next(i for i in golden(name, "rss").iter("item") if i.findtext("guid") == guid)


def atom_entry(name: str, link: str):
    return next(e for e in golden(name, "atom").iter(f"{A}entry")
                if e.find(f"{A}link[@rel='alternate']").get("href") == link)


def json_item(name: str, uid: str) -> dict:
    return next(i for i in golden(name, "json")["items"] if i["id"] == uid)


EP12 = "https://podcast.example.com/episodes/12"
EP10 = "https://podcast.example.com/episodes/10"
MAREES = "https://essais.example.fr/blog/marees"
MOOS = "https://notizen.example.de/2026/moos"


def test_name_only_authors_survive_in_rss_and_every_entry_credits_someone():
    assert rss_item("podcast.xml", EP12).findtext(f"{DC}creator") == "Jane Doe"
    assert rss_item("podcast.xml", EP12).find("author") is None  # RSS's <author> needs an address
    # The channel's author (managingEditor) applies to items without one.
    assert rss_item("podcast.xml", EP10).findtext("author") == "editor@podcast.example.com (Ed Itor)"
    assert atom_entry("essay.atom", MAREES).findtext(f"{A}author/{A}name") == "Camille Martin"
    assert json_item("notes.json", MOOS)["authors"] == [{"name": "Greta Berg", "url": "https://notizen.example.de/about"}]
    assert json_item("notes.json", "notiz-41")["authors"] == [{"name": "Jonas Wald"}]
    for name in [*URLS, "aggregate"]:
        assert all(e.find(f"{A}author/{A}name") is not None for e in golden(name, "atom").iter(f"{A}entry"))
        assert all(i.get("authors") for i in golden(name, "json")["items"])


def test_every_enclosure_survives_where_the_format_allows_and_lengths_only_when_known():
    links = atom_entry("podcast.xml", EP12).findall(f"{A}link[@rel='enclosure']")
    assert [(link.get("href"), link.get("type"), link.get("length")) for link in links] == [
        ("https://cdn.podcast.example.com/12.mp3", "audio/mpeg", "24986239"),
        ("https://cdn.podcast.example.com/12.m4a", "audio/mp4", None)]  # its type from its name
    attachments = json_item("podcast.xml", EP12)["attachments"]
    assert [a["url"] for a in attachments] == [link.get("href") for link in links]
    assert "size_in_bytes" not in attachments[1]
    enclosures = rss_item("podcast.xml", EP12).findall("enclosure")  # RSS: one per item
    assert ([(e.get("url"), e.get("length")) for e in enclosures]
            == [("https://cdn.podcast.example.com/12.mp3", "24986239")])
    # length="0" is RSS's "unknown": RSS keeps it; Atom and JSON Feed write no length.
    assert rss_item("podcast.xml", EP10).find("enclosure").get("length") == "0"
    assert atom_entry("podcast.xml", EP10).find(f"{A}link[@rel='enclosure']").get("length") is None
    assert "size_in_bytes" not in json_item("podcast.xml", EP10)["attachments"][0]
    essay = atom_entry("essay.atom", MAREES).findall(f"{A}link[@rel='enclosure']")
    assert ([(link.get("type"), link.get("length")) for link in essay]
            == [("audio/ogg", "1048576"), ("application/pdf", None)])
    notes = json_item("notes.json", MOOS)["attachments"]
    assert [a.get("size_in_bytes") for a in notes] == [5000000, None]


def contents(name: str) -> list[str]:
    """Every HTML body a reader renders, in every format."""
    rss, atom = golden(name, "rss"), golden(name, "atom")
    return ([e.text for e in rss.iter("description", CONTENT) if e.text]
            + [e.text for e in atom.iter(f"{A}content") if e.get("type") == "html"]
            + [i["content_html"] for i in golden(name, "json")["items"] if "content_html" in i])


@pytest.mark.parametrize("name, links", [
    ("podcast.xml", ['href="https://podcast.example.com/notes/12"', 'src="https://podcast.example.com/feeds/covers/12.jpg"',
                     'href="https://elsewhere.example.org/tides"', 'href="https://podcast.example.com/feeds/notes/11.html"']),
    ("essay.atom", ['href="https://essais.example.fr/textes/lune.html"', 'href="https://essais.example.fr/index.html"']),
    ("notes.json", ['href="https://notizen.example.de/themen/moos"', 'src="https://notizen.example.de/bilder/moos.jpg"']),
])
def test_relative_urls_in_content_resolve_against_the_entry_base_in_every_format(name, links):
    bodies = contents(name)
    assert bodies
    for body in bodies:
        document = etree.fromstring(f"<div>{body}</div>", etree.HTMLParser())
        for url in document.xpath("//@href | //@src"):
            assert url.startswith(("https://", "http://")), (name, url)
    for link in links:
        assert any(link in body for body in bodies), (name, link)
    for fmt in BY_NAME:  # each format on its own carries them
        text = expected_path(name, fmt).read_text()
        assert all(link.split('"')[1] in text for link in links), (name, fmt)


@pytest.mark.parametrize("name, anchors", [
    ("podcast.xml", [f"{EP12}#chapter-2", f"{EP12}#fn1"]),
    ("essay.atom", [f"{MAREES}#note1", "https://essais.example.fr/blog/billets/7#suite"]),
    ("notes.json", [f"{MOOS}#karte"]),
])
def test_in_page_anchors_keep_their_href_pointing_into_the_entry_page(name, anchors):
    for fmt in BY_NAME:
        text = expected_path(name, fmt).read_text()
        assert all(anchor in text for anchor in anchors), (name, fmt)


def test_plain_text_summaries_have_no_space_before_punctuation():
    note = json_item("podcast.xml", "note-11")
    assert note["summary"] == "A short note with emphasis, and a link. Second paragraph!"
    assert json_item("podcast.xml", EP12)["summary"] == "We talk about tides, moons and the notes."
    assert json_item("essay.atom", "tag:essais.example.fr,2026:marees")["summary"] == "Un essai sur les marées."
    for name in URLS:
        for item in golden(name, "json")["items"]:
            assert not any(f" {mark}" in item.get("summary", "") for mark in ".,;:!?"), item["summary"]


def test_a_missing_title_stays_missing_where_the_format_allows():
    item = rss_item("podcast.xml", "note-11")
    assert item.find("title") is None and item.findtext("description")  # RSS: a description suffices
    assert "title" not in json_item("podcast.xml", "note-11")
    assert "title" not in json_item("notes.json", "notiz-41")
    assert "title" not in json_item("essay.atom", "https://essais.example.fr/blog/billet 7")
    # Atom requires the element; it may be empty (RFC 4287 section 3.1), and is.
    assert atom_entry("essay.atom", "https://essais.example.fr/blog/billets/7").findtext(f"{A}title") in ("", None)
    assert atom_entry("podcast.xml", "https://podcast.example.com/notes/11").findtext(f"{A}title") in ("", None)


def test_languages_and_atom_ids():
    assert golden("podcast.xml", "rss").findtext("channel/language") == "en-US"
    assert golden("notes.json", "json")["language"] == "de-DE"
    assert golden("essay.atom", "atom").get("{http://www.w3.org/XML/1998/namespace}lang") == "fr"
    # The aggregate mixes languages: none for the whole, each entry's own in Atom and JSON Feed.
    assert golden("aggregate", "rss").find("channel/language") is None
    assert {i.get("language") for i in golden("aggregate", "json")["items"]} == {"en-US", "fr", "de-DE"}
    # An atom:id must be a URI: a tag: URI stays; "billet 7" and "note-11" get derived ones.
    ids = [e.findtext(f"{A}id") for e in golden("essay.atom", "atom").iter(f"{A}entry")]
    assert ids[0] == "tag:essais.example.fr,2026:marees" and ids[1].startswith("urn:uuid:")
    assert rss_item("podcast.xml", "note-11").findtext("guid") == "note-11"  # RSS: as given


def test_every_item_of_the_aggregate_names_its_source():
    rss, atom, feed = golden("aggregate", "rss"), golden("aggregate", "atom"), golden("aggregate", "json")
    titles = {"Harbour Radio", "Essais", "Feldnotizen"}
    assert {i.findtext("source") for i in rss.iter("item")} == titles
    assert all(i.find("source").get("url") in URLS.values() for i in rss.iter("item"))
    for entry in atom.iter(f"{A}entry"):
        source = entry.find(f"{A}source")
        assert source.findtext(f"{A}title") in titles and source.findtext(f"{A}id") in URLS.values()
        assert source.find(f"{A}link[@rel='self']").get("href") in URLS.values()
    assert {i["_starfeed"]["source"]["title"] for i in feed["items"]} == titles
    # A source's own feed names its source in the channel instead.
    assert golden("podcast.xml", "rss").find("channel/item/source") is None

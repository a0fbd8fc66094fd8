import json

import feedparser
import pytest

from starfeed.formats import BY_NAME
from starfeed.model import Entry
from starfeed.parse.normalize import normalize_entries
from starfeed.render.feeds import FeedMeta, atom_id, render
from starfeed.render.html import IndexPage, render_index

from conftest import shared_corpus

META = FeedMeta("feed", "starfeed", "Everything", "https://feeds.test/", "https://feeds.test")
BUILT = 1_795_262_400.0


def entries() -> list[Entry]:
    raw = [{"id": f"urn:{n}", "title": f"Post <b>{n}</b>", "link": f"https://example.org/{n}",
            "published_parsed": (2026, 11, 20, n, 0, 0, 0, 0, 0),
            "summary": f"Summary {n} <script>alert(1)</script>"} for n in (9, 5, 1)]
    return normalize_entries(raw, "src", "https://example.org/feed", BUILT)


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_xml_formats_read_back_newest_first(fmt):
    parsed = feedparser.parse(render(fmt, META, entries(), BUILT))
    assert not parsed.bozo
    # An atom:id must be a URI, and "urn:9" is none (a URN names its namespace): Atom carries
    # one derived from the source and the id; RSS's guid is the id as the source gave it.
    ids = ["urn:9", "urn:5", "urn:1"]
    assert [e.id for e in parsed.entries] == (ids if fmt == "rss" else [atom_id(e) for e in entries()])
    assert parsed.entries[0].title == "Post 9"
    assert parsed.entries[0].link == "https://example.org/9"
    assert "<script" not in render(fmt, META, entries(), BUILT).decode().lower()


def test_rss_channel_links_home_and_carries_the_build_time():
    parsed = feedparser.parse(render("rss", META, entries(), BUILT))
    assert parsed.feed.link == "https://feeds.test/"
    assert parsed.feed.updated_parsed[:6] == (2026, 11, 21, 12, 0, 0)


def test_json_feed_1_1_shape():
    document = json.loads(render("json", META, entries(), BUILT))
    assert document["version"] == "https://jsonfeed.org/version/1.1"
    assert document["feed_url"] == "https://feeds.test/feed.json"
    assert [i["id"] for i in document["items"]] == ["urn:9", "urn:5", "urn:1"]
    assert all("content_html" in i or "content_text" in i for i in document["items"])
    assert document["items"][0]["date_published"] == "2026-11-20T09:00:00Z"


def test_atom_output_is_valid_against_rfc_4287_schema():
    from lxml import etree

    schema = etree.RelaxNG(etree.parse(str(shared_corpus("schemas") / "atom.rng")))
    document = etree.fromstring(render("atom", FeedMeta(
        "feed", "starfeed", "d", "https://feeds.test/", "https://feeds.test"), entries(), BUILT))
    # RFC 4287 wants an author on the feed or on every entry: every entry now credits someone.
    assert all(entry.find("{http://www.w3.org/2005/Atom}author") is not None
               for entry in document.iter("{http://www.w3.org/2005/Atom}entry"))
    assert schema.validate(document), schema.error_log


def test_control_characters_never_reach_the_renderer():
    raw = [{"id": "a\x01b", "title": "bell\x07 and nul\x00", "summary": "x\x0by",
            "link": "https://example.org/\x1f1"}]
    for fmt in BY_NAME:
        assert render(fmt, META, normalize_entries(raw, "s", "https://example.org/", BUILT), BUILT)


def test_html_index_escapes_everything():
    hostile = Entry(entry_uid="u", feed_id="s", canonical_link="https://example.org/x",
                    title="<img src=x onerror=alert(1)>", summary="<script>alert(2)</script>",
                    first_seen="2026-11-21T00:00:00Z", last_seen="2026-11-21T00:00:00Z")
    page = render_index(IndexPage("starfeed", "/feed"), [hostile], {"s": "<b>src</b>"},
                        "2026-11-21T00:00:00Z").decode()
    assert "<img" not in page and "<script>" not in page and "<b>src" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'href="/feed.atom"' in page and 'name="viewport"' in page


def test_an_entry_dated_in_the_future_when_first_seen_is_written_where_it_is_ordered_and_its_date_is_kept():
    """docs/design.md#undated-and-future: each format's date is its place (readers order by it);
    the index and JSON Feed also say the date as the source gave it."""
    far = Entry(entry_uid="https://example.org/far", feed_id="s", title="Far", published="2099-01-01T00:00:00Z",
                updated="2099-01-02T00:00:00Z", first_seen="2026-11-21T00:00:00Z",
                last_seen="2026-11-21T00:00:00Z", ordered_at="2026-11-14T00:00:00Z")
    rss, atom = (feedparser.parse(render(fmt, META, [far], BUILT)).entries[0] for fmt in ("rss", "atom"))
    assert rss.published_parsed[:3] == (2026, 11, 14)
    assert atom.published == atom.updated == "2026-11-14T00:00:00Z"
    item = json.loads(render("json", META, [far], BUILT))["items"][0]
    assert (item["date_published"], item["_starfeed"]) == (
        "2026-11-14T00:00:00Z", {"date_published_as_given": "2099-01-01T00:00:00Z"})
    assert "date_modified" not in item
    page = render_index(IndexPage("starfeed", "/feed"), [far], {"s": "S"}, "2026-11-21T00:00:00Z").decode()
    assert ('<time datetime="2026-11-14T00:00:00Z">2026-11-14 00:00:00 UTC</time>'
            ' · dated 2099-01-01 00:00:00 UTC by its source') in page


def test_attribution_names_a_feed_a_reader_can_subscribe_to():
    from starfeed.model import GitHubAccount, Source
    from starfeed.render.pages import origins

    named = origins({"f": Source("f", "https://e.example/feed.xml", title="F", site_url="https://e.example/"),
                     "t": Source("t", "https://u:pw@e.example/f?token=s3cret", title="T"),
                     "g": Source("g", "https://api.github.com/users/octocat/starred", kind="github-user",
                                 github=GitHubAccount(login="octocat"), title="octocat"),
                     "w": Source("w", "https://e.example/page", kind="website", title="W")}, "https://feeds.test/")
    assert (named["f"].feed_url, named["f"].site_url) == ("https://e.example/feed.xml", "https://e.example/")
    # Redacted credentials, a web page or GitHub's API are no feed to subscribe to: ours of them is.
    assert named["t"].feed_url == "https://feeds.test/s/t/feed.xml"
    assert (named["g"].feed_url, named["g"].site_url) == ("https://feeds.test/s/g/feed.xml", "https://github.com/octocat")
    assert named["w"].feed_url == "https://feeds.test/s/w/feed.xml"


def test_tags_rules_add_are_categories_in_every_format_beside_the_entry_s_own_once():
    from dataclasses import replace

    tagged = [replace(e, categories=["Security", "Linux"], tags=["security", "cve", "CVE"]) for e in entries()]
    expected = ["Security", "Linux", "cve"]
    rss = feedparser.parse(render("rss", META, tagged, BUILT))
    assert [t.term for t in rss.entries[0].tags] == expected
    atom = feedparser.parse(render("atom", META, tagged, BUILT))
    assert [t.term for t in atom.entries[0].tags] == expected
    assert json.loads(render("json", META, tagged, BUILT))["items"][0]["tags"] == expected
    untagged = replace(tagged[0], categories=[], tags=["cve"])
    assert json.loads(render("json", META, [untagged], BUILT))["items"][0]["tags"] == ["cve"]


def test_rule_sets_are_listed_in_opml_and_on_the_index_and_nothing_else_a_name_holds():
    import listparser

    from starfeed.render.opml import published_opml

    hostile = ('cve', '"><script>alert(1)</script>', "a/../b")
    listed = listparser.parse(published_opml("https://feeds.test", [], {}, BUILT, hostile))
    assert {f.url for f in listed.feeds} == {f"https://feeds.test/r/cve/feed.{e}" for e in ("xml", "atom", "json")}
    page = render_index(IndexPage("starfeed", "/feed", rule_sets=hostile), [], {}, "now").decode()
    assert 'href="/r/cve/"' in page and "<script" not in page and 'href="/r/a%2F..%2Fb/"' in page

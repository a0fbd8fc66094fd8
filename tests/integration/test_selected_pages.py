"""A page without a feed read by CSS selectors (docs/design.md#selectors), through the local stack:
tried with `starfeed inspect`, subscribed with `source add URL --items ...`, fetched, served in
every format; then the page changes shape, and the source fails naming the selector that found
nothing while its feed keeps its entries; `source set` gives it new selectors and it recovers."""

import json
import time

import feedparser
import jsonschema
from lxml import etree

from starfeed.parse.normalize import rfc3339
from starfeed.sources import add_source

from conftest import body_of, http_get, row_of, run_cli, shared_corpus
from origin import Reply

HTML = {"Content-Type": "text/html; charset=utf-8"}
SELECTORS = ("--items", "article.post", "--title", ".post-title", "--link", ".post-title a", "--date", "time",
             "--summary", ".excerpt")


def list_page(*posts: tuple[str, str], item: str = "article", heading: str = "h2 class=post-title") -> bytes:
    """A blog's list of posts, (slug, title) each, newest first, dated an hour apart from now."""
    now, title = time.time(), heading.split()[0]
    articles = "".join(
        f'<{item} class="post"><{heading}><a href="/posts/{slug}">{text}</a></{title}>'
        f'<time datetime="{rfc3339(now - 3600 * n)}">{n} hours ago</time>'
        f'<div class="excerpt"><p>About {text}. <script>track("{slug}")</script>'
        f'<a href="../about" onclick="steal()">More</a></p></div></{item}>'
        for n, (slug, text) in enumerate(posts, start=1))
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>Harbour Notes</title></head>'
            f'<body><nav><a href="/">Home</a></nav><main>{articles}</main></body></html>').encode()


POSTS = (("tides", "Tide tables"), ("ferry", "Ferry timetable"), ("lighthouse", "Lighthouse open day"))


def make_due(storage, source_id):
    storage.sources.change(source_id, {"next_check_at": time.time() - 1, "locked_until": None})


def served(stack, path: str) -> str:
    response = http_get(stack, path)
    assert response["statusCode"] == 200, response
    return body_of(response)


def json_feed_schemas() -> list:
    folder = shared_corpus("schemas", "jsonfeed")
    schemas = [json.loads((folder / name).read_text())
               for name in ("schemastore-feed-1.1.bundled.json", "sonicdoe-schema-v1.1.json")]
    return [jsonschema.validators.validator_for(schema)(schema) for schema in schemas]


def assert_valid_everywhere(stack, source_id: str, titles: list[str]) -> None:
    """Its own feed in RSS, Atom and JSON Feed: well-formed, read by feedparser without a fault,
    the JSON Feed valid against both schemas; titles in the page's order, summaries sanitized."""
    for extension, version in (("xml", "rss20"), ("atom", "atom10")):
        document = served(stack, f"/s/{source_id}/feed.{extension}")
        etree.fromstring(document.encode())  # well-formed XML
        feed = feedparser.parse(document)
        assert (feed.bozo, feed.version) == (0, version), feed.get("bozo_exception")
        assert feed.feed.title == "Harbour Notes"
        assert [e.title for e in feed.entries] == titles
        assert "track(" not in document and "onclick" not in document and "steal" not in document
    as_json = json.loads(served(stack, f"/s/{source_id}/feed.json"))
    for validator in json_feed_schemas():
        assert not list(validator.iter_errors(as_json))
    assert [item["title"] for item in as_json["items"]] == titles


def test_a_page_read_by_selectors_is_tried_subscribed_served_and_says_which_selector_broke(
        stack, storage, origin, capsys):
    url = origin.serve("/notes", Reply(200, list_page(*POSTS), HTML))

    # Tried first: what a new subscription keeps (the posts predate it), and why it leaves the rest out.
    code, out, err = run_cli(capsys, "inspect", url, *SELECTORS)
    assert code == 0, err
    assert out == ""
    assert "entries:  0 kept of 3 parsed" in err
    assert "dropped:  3 published before you subscribed, left out by the first-fetch filter" in err
    assert "--backfill N keeps the newest N" in err
    # With --backfill, as it will be subscribed: every item, with its date and link; nothing stored.
    code, out, err = run_cli(capsys, "inspect", url, *SELECTORS, "--backfill", "10")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split("  ")[1] for line in lines] == ["Tide tables", "Ferry timetable", "Lighthouse open day"]
    assert lines[0].endswith(f"{origin.url}/posts/tides")
    assert "format:   selectors (Harbour Notes)" in err and "entries:  3 kept of 3 parsed" in err
    assert storage.sources.all() == []
    code, _, err = run_cli(capsys, "inspect", url, "--items", "li.post", "--title", "h2", "--link", "a")
    assert code == 1
    assert err.strip() == f"starfeed: {url}: no items: the items selector 'li.post' found nothing on the page"

    # Subscribed: checked on the page as its first fetch will read it.
    code, out, err = run_cli(capsys, "source", "add", url, *SELECTORS, "--backfill", "10")
    assert code == 0, err
    source_id = out.split()[1]
    assert 'found: web page read by selectors "Harbour Notes", 3 entries' in out
    stack.run_cycle()
    source = storage.sources.get(source_id)
    assert (source.kind, source.status, source.entry_count) == ("selectors", "ok", 3)
    titles = ["Tide tables", "Ferry timetable", "Lighthouse open day"]
    assert_valid_everywhere(stack, source_id, titles)
    # In the aggregate too, attributed to the page.
    aggregate = feedparser.parse(served(stack, "/feed.xml"))
    assert {e.title for e in aggregate.entries} >= set(titles)
    entries = {e.title: e for e in storage.entries.recent(source_id, 10)}
    assert entries["Ferry timetable"].canonical_link == f"{origin.url}/posts/ferry"
    assert entries["Ferry timetable"].summary == "About Ferry timetable. More"
    code, out, _ = run_cli(capsys, "source", "show", source_id)
    assert ("selectors:      --items article.post --title .post-title --link '.post-title a' --date time "
            "--summary .excerpt") in out

    # A new post appears: one new entry, the others deduplicated.
    origin.serve("/notes", Reply(200, list_page(("regatta", "Regatta results"), *POSTS), HTML))
    make_due(storage, source_id)
    stack.run_cycle()
    assert storage.sources.get(source_id).entry_count == 4

    # The page changes shape: the source fails, naming the selector; its feed keeps its entries.
    origin.serve("/notes", Reply(200, list_page(*POSTS, item="div"), HTML))
    make_due(storage, source_id)
    stack.run_cycle()
    source = storage.sources.get(source_id)
    broken = "no items: the items selector 'article.post' found nothing on the page"
    assert (source.status, source.last_error) == ("error", broken)
    code, out, _ = run_cli(capsys, "source", "list")
    assert "failing: no items" in row_of(out, source_id)
    assert broken in out.split("why they fail")[1]
    assert [e.title for e in feedparser.parse(served(stack, f"/s/{source_id}/feed.xml")).entries] == \
        ["Regatta results", *titles]

    # Its titles move from h2 to h3: the title selector is named, with the count of items it searched.
    origin.serve("/notes", Reply(200, list_page(*POSTS, heading="h3 class=headline"), HTML))
    make_due(storage, source_id)
    stack.run_cycle()
    assert storage.sources.get(source_id).last_error == \
        "no titles: the title selector '.post-title' found nothing in any of the 3 items"

    # `source set` refuses selectors that do not compile or find nothing, and takes ones that read the page.
    code, _, err = run_cli(capsys, "source", "set", source_id, "--title", "h3 >")
    assert code == 1 and "the title selector 'h3 >' is not a CSS selector starfeed can use" in err
    code, _, err = run_cli(capsys, "source", "set", source_id, "--title", "h4")
    assert code == 1 and "the title selector 'h4' found nothing in any of the 3 items" in err
    code, _, err = run_cli(capsys, "source", "set", source_id, "--title", "h3")
    assert code == 1 and "the link selector '.post-title a' found nothing in any of the 3 items" in err
    code, out, err = run_cli(capsys, "source", "set", source_id, "--title", "h3", "--link", "h3 a")
    assert code == 0, err
    assert out.startswith(f"{source_id}: read by --items article.post --title h3 --link 'h3 a' --date time ")
    assert 'found: web page read by selectors "Harbour Notes", 3 entries' in out
    stack.run_cycle()  # due now
    source = storage.sources.get(source_id)
    assert (source.status, source.last_error, source.selectors.title) == ("ok", None, "h3")
    assert source.entry_count == 4  # the same posts: nothing new, nothing lost
    # An empty optional selector removes it; the others stay.
    code, out, err = run_cli(capsys, "source", "set", source_id, "--summary", "", "--no-check")
    assert code == 0, err
    assert storage.sources.get(source_id).selectors.summary is None and "--summary" not in out


def test_source_add_refuses_selectors_that_cannot_read_the_page(stack, storage, origin, capsys):
    url = origin.serve("/notes", Reply(200, list_page(*POSTS), HTML))
    code, _, err = run_cli(capsys, "source", "add", url, "--items", "article.post", "--title", "h2")
    assert code == 1 and "needs --items, --title and --link: --link is missing" in err
    code, _, err = run_cli(capsys, "source", "add", url, "--items", "article.post", "--title", "h2",
                           "--link", "a", "--date", ".when")
    assert code == 1 and "the date selector '.when' found nothing in any of the 3 items; not subscribed" in err
    for command in (("source", "add"), ("inspect",)):
        code, _, err = run_cli(capsys, *command, url, *SELECTORS, "--website")
        assert code == 1 and "give one or the other" in err
    assert storage.sources.all() == []
    # A feed is not read by selectors: it has none to change.
    feed = add_source(storage, url, time.time())[0]
    code, _, err = run_cli(capsys, "source", "set", feed.source_id, "--title", "h2")
    assert code == 1 and f"{feed.source_id} is not a page read by selectors" in err


def test_inspect_of_a_page_shows_what_a_subscription_keeps_where_robots_txt_allows(stack, storage, origin, capsys):
    undated = b"".join(b'<li><a href="/p/%d">Post %d</a></li>' % (n, n) for n in range(1, 6))
    url = origin.serve("/list", Reply(200, b"<html><body><ul>" + undated + b"</ul></body></html>", HTML))
    origin.serve("/robots.txt", Reply(200, b"User-agent: *\nCrawl-delay: 30\n", {"Content-Type": "text/plain"}))
    code, out, err = run_cli(capsys, "inspect", url, "--items", "li", "--title", "a", "--link", "a")
    assert code == 0, err
    assert [line.split("  ")[1] for line in out.splitlines()] == ["Post 1", "Post 2", "Post 3"]
    assert ("dropped:  2 undated beyond the feed's first 3, left out by a new subscription's limit on undated "
            "entries") in err
    assert f"its robots.txt asks for 30 s between requests (Crawl-delay in {origin.url}/robots.txt)" in err
    code, out, _ = run_cli(capsys, "inspect", url, "--items", "li", "--title", "a", "--link", "a", "--all")
    assert len(out.splitlines()) == 5

    # A page its robots.txt keeps crawlers off is not requested: inspect says so, and what to try.
    origin.serve("/robots.txt", Reply(200, b"User-agent: *\nDisallow: /list\n", {"Content-Type": "text/plain"}))
    asked = len(origin.hits("/list"))
    code, out, err = run_cli(capsys, "inspect", url, "--items", "li", "--title", "a", "--link", "a")
    assert code == 1 and out == ""
    assert f"refused by robots.txt: disallowed by {origin.url}/robots.txt (not fetched)" in err
    assert "next:     the site asks crawlers to keep off this page" in err
    assert len(origin.hits("/list")) == asked
    assert storage.sources.all() == []
